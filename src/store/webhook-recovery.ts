// Queries of webhook recovery: sending deliveries again as new deliveries of the same events, and
// a subscription's health (the failing streak that disables it, or a receiver's 410 Gone).
import type { Sql } from './engine/database.js'
import { uuidV7At } from './webhook-outbox.js'
import { DELIVERY_COLUMNS, type DeliveryRow } from './webhook-subscriptions.js'

export type DisabledReason = 'gone' | 'failing'

/** A new pending delivery of the same event as `deliveryId`; its id, or null when there is no such delivery. */
export async function resendDelivery(
  sql: Sql,
  target: { projectId: string; subscriptionId: string; deliveryId: string },
  now: Date,
): Promise<DeliveryRow | null> {
  const [row] = await sql<DeliveryRow[]>`
    INSERT INTO webhook_deliveries (id, subscription_id, project_id, event_id, event_type, payload, status, next_attempt_at, created_at, resend_of)
    SELECT ${uuidV7At(sql, now)}, subscription_id, project_id, event_id, event_type, payload, 'pending', ${now}, ${now}, id
    FROM webhook_deliveries
    WHERE id = ${target.deliveryId} AND subscription_id = ${target.subscriptionId} AND project_id = ${target.projectId}
    RETURNING ${sql.unsafe(DELIVERY_COLUMNS)}`
  return row ?? null
}

/**
 * Sends again every failed delivery created since `since` that is the latest delivery of its event
 * (a failure already sent again is not sent twice). Returns how many.
 */
export async function resendFailedSince(sql: Sql, target: { projectId: string; subscriptionId: string }, since: Date, now: Date): Promise<number> {
  const [row] = await sql<Array<{ resent: number }>>`
    WITH inserted AS (
      INSERT INTO webhook_deliveries (id, subscription_id, project_id, event_id, event_type, payload, status, next_attempt_at, created_at, resend_of)
      SELECT ${uuidV7At(sql, now)}, failed.subscription_id, failed.project_id, failed.event_id, failed.event_type, failed.payload, 'pending', ${now}, ${now}, failed.id
      FROM webhook_deliveries AS failed
      WHERE failed.subscription_id = ${target.subscriptionId} AND failed.project_id = ${target.projectId}
        AND failed.status = 'failed' AND failed.created_at >= ${since}
        AND NOT EXISTS (
          SELECT 1 FROM webhook_deliveries AS later
          WHERE later.subscription_id = failed.subscription_id AND later.event_id = failed.event_id
            AND (later.created_at, later.id) > (failed.created_at, failed.id))
      ORDER BY failed.created_at, failed.id
      RETURNING id)
    SELECT count(*)::int AS resent FROM inserted`
  return row.resent
}

/**
 * After a recorded attempt: a success ends the subscription's failing streak; a failure starts one,
 * or disables the subscription once the streak is `failingForMs` old; 410 Gone disables it at once.
 * Returns the reason when this call disabled it.
 */
export async function recordSubscriptionHealth(
  sql: Sql,
  subscriptionId: string,
  result: 'success' | 'failure' | 'gone',
  at: Date,
  failingForMs: number,
): Promise<DisabledReason | null> {
  if (result === 'success') {
    await sql`UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = ${subscriptionId} AND failing_since IS NOT NULL`
    return null
  }
  const disableBefore = new Date(at.getTime() - failingForMs)
  const [row] = await sql<Array<{ disabled_reason: DisabledReason }>>`
    UPDATE webhook_subscriptions
    SET enabled = false, disabled_reason = ${result === 'gone' ? 'gone' : 'failing'}, failing_since = coalesce(failing_since, ${at}), updated_at = ${at}
    WHERE id = ${subscriptionId} AND enabled AND (${result === 'gone'} OR coalesce(failing_since, ${at}) <= ${disableBefore})
    RETURNING disabled_reason`
  if (row) return row.disabled_reason
  await sql`UPDATE webhook_subscriptions SET failing_since = ${at} WHERE id = ${subscriptionId} AND failing_since IS NULL`
  return null
}
