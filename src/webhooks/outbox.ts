// The durable outbox. Domain code writes an event in the same transaction as the change that
// caused it (enqueueEvent), then wakes the dispatcher after commit (wakeDispatcher). The
// dispatcher fans each event out into one delivery per subscribed, enabled subscription of the
// event's project (dispatchEvents in store/webhook-outbox.ts).
import type { Database, Queryable, Sql } from '../store/engine/database.js'
import { insertEvent, insertTestEvent, type Envelope } from '../store/webhook-outbox.js'
import { newId } from '../ids.js'

export type { Envelope }

export const OUTBOX_CHANNEL = 'palmvein_outbox'
export const DELIVERIES_CHANNEL = 'palmvein_webhook_deliveries'

export const SUBSCRIBABLE_EVENT_TYPES = ['enrollment.completed', 'demo.scan.success'] as const
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number]
export type EventType = SubscribableEventType | 'webhook.test'

export interface EventInput {
  projectId: string
  eventType: EventType
  data: Record<string, unknown>
  /** Only for webhook.test: the one subscription that receives it. */
  subscriptionId?: string
  /** When the event happened; now by default. */
  occurredAt?: Date
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
  await insertEvent(tx, {
    id,
    projectId: input.projectId,
    eventType: input.eventType,
    data: input.data,
    subscriptionId: input.subscriptionId ?? null,
    occurredAt: input.occurredAt ?? new Date(),
  })
  return id
}

/** Wakes the dispatchers of every process on this database; call after commit. */
export async function wakeDispatcher(db: Pick<Database, 'notify'>): Promise<void> {
  await db.notify(OUTBOX_CHANNEL, '')
}

/**
 * Writes a webhook.test event for one subscription of the project, in one statement; null when
 * the project has no such subscription. Wake the dispatcher afterwards.
 */
export async function enqueueTestEvent(
  sql: Sql,
  input: { projectId: string; subscriptionId: string; data: Record<string, unknown>; occurredAt?: Date },
): Promise<string | null> {
  const id = newId()
  const written = await insertTestEvent(sql, { id, ...input, occurredAt: input.occurredAt ?? new Date() })
  return written ? id : null
}

/** The raw body sent for a stored envelope: always the same bytes for the same delivery. */
export function envelopeBody(payload: Envelope): string {
  const { event_id, event_type, timestamp, project_id, data } = payload
  return JSON.stringify({ event_id, event_type, timestamp, project_id, data })
}
