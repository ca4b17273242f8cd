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

interface OutboxRow {
  id: string
  project_id: string
  event_type: string
  data: Record<string, unknown>
  subscription_id: string | null
  created_at: Date
}

interface SubscriptionRow {
  id: string
  project_id: string
  event_types: string[]
}

/**
 * Fans out up to `limit` undispatched events in one short transaction. Returns how many events
 * were dispatched and how many deliveries were created.
 */
export async function dispatchEvents(sql: Sql, options: { now: Date; limit?: number }): Promise<{ events: number; deliveries: number }> {
  const limit = options.limit ?? 100
  return sql.begin(async (tx) => {
    const events = await tx<OutboxRow[]>`
      SELECT id, project_id, event_type, data, subscription_id, created_at FROM event_outbox
      WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED`
    if (events.length === 0) return { events: 0, deliveries: 0 }
    const projectIds = [...new Set(events.map((event) => event.project_id))]
    const subscriptions = await tx<SubscriptionRow[]>`
      SELECT id, project_id, event_types FROM webhook_subscriptions
      WHERE project_id = ANY(${projectIds}::uuid[]) AND (enabled OR id = ANY(${events.flatMap((event) => event.subscription_id ?? [])}::uuid[]))`
    const rows = []
    for (const event of events) {
      const targets = event.subscription_id
        ? subscriptions.filter((subscription) => subscription.id === event.subscription_id && subscription.project_id === event.project_id)
        : subscriptions.filter((subscription) => subscription.project_id === event.project_id && subscription.event_types.includes(event.event_type))
      const envelope: Envelope = {
        event_id: event.id,
        event_type: event.event_type,
        timestamp: event.created_at.toISOString(),
        project_id: event.project_id,
        data: event.data,
      }
      for (const subscription of targets) {
        rows.push({
          id: newId(),
          subscription_id: subscription.id,
          project_id: event.project_id,
          event_id: event.id,
          event_type: event.event_type,
          payload: tx.json(envelope as unknown as postgres.JSONValue),
          status: 'pending',
          next_attempt_at: options.now,
          created_at: options.now,
        })
      }
    }
    let created = 0
    if (rows.length > 0) {
      const inserted = await tx`
        INSERT INTO webhook_deliveries ${tx(rows)} ON CONFLICT (subscription_id, event_id) DO NOTHING RETURNING id`
      created = inserted.length
    }
    await tx`UPDATE event_outbox SET dispatched_at = ${options.now} WHERE id = ANY(${events.map((event) => event.id)}::uuid[])`
    return { events: events.length, deliveries: created }
  })
}

/** The raw body sent for a stored envelope: always the same bytes for the same delivery. */
export function envelopeBody(payload: Envelope): string {
  const { event_id, event_type, timestamp, project_id, data } = payload
  return JSON.stringify({ event_id, event_type, timestamp, project_id, data })
}
