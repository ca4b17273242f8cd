// The durable outbox. Domain code writes an event in the same transaction as the change that
// caused it (enqueueEvent), then wakes the dispatcher after commit (wakeDispatcher). The
// dispatcher fans each event out into one delivery per subscribed, enabled subscription of the
// event's project; UNIQUE (subscription_id, event_id) makes the fan-out idempotent, and
// FOR UPDATE SKIP LOCKED lets several processes dispatch side by side.
import type postgres from 'postgres'
import type { Database, Sql } from '../store/database.js'
import { newId } from '../ids.js'

export const OUTBOX_CHANNEL = 'palmvein_outbox'
export const DELIVERIES_CHANNEL = 'palmvein_webhook_deliveries'

export const SUBSCRIBABLE_EVENT_TYPES = ['enrollment.completed', 'demo.scan.success'] as const
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number]
export type EventType = SubscribableEventType | 'webhook.test'

/** A client or an open transaction (`sql.begin(tx => ...)`). */
export type Queryable = Sql | postgres.TransactionSql<Record<string, never>>

export interface EventInput {
  projectId: string
  eventType: EventType
  data: Record<string, unknown>
  /** Only for webhook.test: the one subscription that receives it. */
  subscriptionId?: string
  /** When the event happened; now by default. */
  occurredAt?: Date
}

/** The body a receiver gets, in this key order. */
export interface Envelope {
  event_id: string
  event_type: string
  timestamp: string
  project_id: string
  data: Record<string, unknown>
}

/**
 * Writes an event to the outbox inside the caller's transaction and returns its id. Call
 * wakeDispatcher(db) after the transaction commits.
 */
export async function enqueueEvent(tx: Queryable, input: EventInput): Promise<string> {
  if (input.eventType === 'webhook.test' && !input.subscriptionId) {
    throw new Error('webhook.test events need a subscriptionId')
  }
  const id = newId()
  await tx`
    INSERT INTO event_outbox (id, project_id, event_type, data, subscription_id, created_at)
    VALUES (${id}, ${input.projectId}, ${input.eventType}, ${tx.json(input.data as postgres.JSONValue)},
            ${input.subscriptionId ?? null}, ${input.occurredAt ?? new Date()})`
  return id
}

/** Wakes the dispatchers of every process on this database; call after commit. */
export async function wakeDispatcher(db: Pick<Database, 'notify'>): Promise<void> {
  await db.notify(OUTBOX_CHANNEL, '')
}

// A UUIDv7 made in SQL (the fan-out creates rows in the same statement that finds them): the
// 48-bit millisecond time, then the random bits of gen_random_uuid() with the version set to 7.
const uuidV7At = (sql: Sql, time: Date) => sql`
  encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    placing substring(int8send(floor(extract(epoch FROM ${time}::timestamptz) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
  52, 1), 53, 1), 'hex')::uuid`

/**
 * Fans out up to `limit` undispatched events. One statement, so no transaction stays open (the
 * embedded database serves every connection through one session). Returns how many events were
 * dispatched and how many deliveries were created.
 */
export async function dispatchEvents(sql: Sql, options: { now: Date; limit?: number }): Promise<{ events: number; deliveries: number }> {
  const limit = options.limit ?? 100
  const [result] = await sql<{ events: number; deliveries: number }[]>`
    WITH events AS (
      SELECT id, project_id, event_type, data, subscription_id, created_at FROM event_outbox
      WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), marked AS (
      UPDATE event_outbox AS outbox SET dispatched_at = ${options.now}
      FROM events WHERE outbox.id = events.id
      RETURNING outbox.id
    ), targets AS (
      -- webhook.test goes to its one subscription; other events to every enabled subscriber.
      SELECT events.*, subscription.id AS target_id FROM events
      JOIN webhook_subscriptions AS subscription ON subscription.project_id = events.project_id
      WHERE CASE WHEN events.subscription_id IS NULL
                 THEN subscription.enabled AND events.event_type = ANY(subscription.event_types)
                 ELSE subscription.id = events.subscription_id END
    ), inserted AS (
      INSERT INTO webhook_deliveries (id, subscription_id, project_id, event_id, event_type, payload, status, next_attempt_at, created_at)
      SELECT ${uuidV7At(sql, options.now)}, target_id, project_id, id, event_type,
             jsonb_build_object('event_id', id, 'event_type', event_type,
               'timestamp', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'project_id', project_id, 'data', data),
             'pending', ${options.now}, ${options.now}
      FROM targets
      ORDER BY created_at, id
      ON CONFLICT (subscription_id, event_id) DO NOTHING
      RETURNING id
    )
    SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM inserted)::int AS deliveries`
  return result
}

/**
 * Writes a webhook.test event for one subscription of the project, in one statement; null when
 * the project has no such subscription. Wake the dispatcher afterwards.
 */
export async function enqueueTestEvent(sql: Sql, input: { projectId: string; subscriptionId: string; data: Record<string, unknown>; occurredAt?: Date }): Promise<string | null> {
  const id = newId()
  const rows = await sql`
    INSERT INTO event_outbox (id, project_id, event_type, data, subscription_id, created_at)
    SELECT ${id}, project_id, 'webhook.test', ${sql.json(input.data as postgres.JSONValue)}, id, ${input.occurredAt ?? new Date()}
    FROM webhook_subscriptions WHERE id = ${input.subscriptionId} AND project_id = ${input.projectId}
    RETURNING id`
  return rows.length > 0 ? id : null
}

/** The raw body sent for a stored envelope: always the same bytes for the same delivery. */
export function envelopeBody(payload: Envelope): string {
  const { event_id, event_type, timestamp, project_id, data } = payload
  return JSON.stringify({ event_id, event_type, timestamp, project_id, data })
}
