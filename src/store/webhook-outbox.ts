// Queries of the durable outbox: an event written in its cause's transaction, the fan-out into
// one delivery per subscribed, enabled subscription (UNIQUE (subscription_id, event_id) makes it
// idempotent; FOR UPDATE SKIP LOCKED lets several processes dispatch side by side), and the
// webhook.test event of one subscription.
import type postgres from 'postgres'
import type { Queryable, Sql } from './engine/database.js'

/** The body a receiver gets, in this key order. */
export interface Envelope {
  event_id: string
  event_type: string
  timestamp: string
  project_id: string
  data: Record<string, unknown>
}

export interface OutboxEvent {
  id: string
  projectId: string
  eventType: string
  data: Record<string, unknown>
  subscriptionId: string | null
  occurredAt: Date
}

export async function insertEvent(tx: Queryable, event: OutboxEvent): Promise<void> {
  await tx`
    INSERT INTO event_outbox (id, project_id, event_type, data, subscription_id, created_at)
    VALUES (${event.id}, ${event.projectId}, ${event.eventType}, ${tx.json(event.data as postgres.JSONValue)},
            ${event.subscriptionId}, ${event.occurredAt})`
}

/**
 * A webhook.test event for one subscription of the project, in one statement; false when the
 * project has no such subscription.
 */
export async function insertTestEvent(
  sql: Sql,
  event: { id: string; projectId: string; subscriptionId: string; data: Record<string, unknown>; occurredAt: Date },
): Promise<boolean> {
  const rows = await sql`
    INSERT INTO event_outbox (id, project_id, event_type, data, subscription_id, created_at)
    SELECT ${event.id}, project_id, 'webhook.test', ${sql.json(event.data as postgres.JSONValue)}, id, ${event.occurredAt}
    FROM webhook_subscriptions WHERE id = ${event.subscriptionId} AND project_id = ${event.projectId}
    RETURNING id`
  return rows.length > 0
}

// A UUIDv7 made in SQL (the fan-out creates rows in the same statement that finds them): the
// 48-bit millisecond time, then the random bits of gen_random_uuid() with the version set to 7.
export const uuidV7At = (sql: Sql, time: Date) => sql`
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
      ON CONFLICT (subscription_id, event_id) WHERE resend_of IS NULL DO NOTHING
      RETURNING id
    )
    SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM inserted)::int AS deliveries`
  return result
}
