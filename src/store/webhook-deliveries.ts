// Queries of webhook deliveries on their way out: the claim (one UPDATE over a FOR UPDATE SKIP
// LOCKED subquery that sets a lease, so several processes share the work) and the record of an
// attempt, which only applies while the worker still holds the lease.
import type { Sql } from './engine/database.js'
import type { Envelope } from './webhook-outbox.js'

export interface ClaimedDelivery {
  id: string
  subscription_id: string
  payload: Envelope
  attempt_count: number
  url: string
  secret_sealed: Buffer | null
  /** Plaintext of a subscription from before secrets were sealed (sealed at the next start). */
  secret: string | null
  environment_id: string | null
  environment_wrapped_key: Buffer | null
}

/** Leases up to `limit` due deliveries to the worker. */
export function claimDueDeliveries(sql: Sql, lease: { now: Date; leaseUntil: Date; workerId: string; limit: number }) {
  // Deliveries of a disabled subscription wait until it is enabled again (test events excepted).
  return sql<ClaimedDelivery[]>`
    UPDATE webhook_deliveries AS delivery
    SET locked_until = ${lease.leaseUntil}, locked_by = ${lease.workerId}
    FROM webhook_subscriptions AS subscription
    JOIN projects AS project ON project.id = subscription.project_id
    LEFT JOIN environments AS environment ON environment.id = project.environment_id
    WHERE subscription.id = delivery.subscription_id
      AND delivery.id IN (
        SELECT due.id FROM webhook_deliveries AS due
        JOIN webhook_subscriptions AS owner ON owner.id = due.subscription_id
        WHERE due.status = 'pending' AND due.next_attempt_at <= ${lease.now}
          AND (due.locked_until IS NULL OR due.locked_until <= ${lease.now})
          AND (owner.enabled OR due.event_type = 'webhook.test')
        ORDER BY due.next_attempt_at, due.id
        LIMIT ${lease.limit}
        FOR UPDATE OF due SKIP LOCKED)
    RETURNING delivery.id, delivery.subscription_id, delivery.payload, delivery.attempt_count,
              subscription.url, subscription.secret_sealed, subscription.secret,
              project.environment_id, environment.wrapped_key AS environment_wrapped_key`
}

export interface AttemptRecord {
  id: string
  deliveryId: string
  workerId: string
  attemptNumber: number
  /** The attempt count the worker started from: the record applies once. */
  previousCount: number
  status: 'pending' | 'success' | 'failed'
  attemptedAt: Date
  nextAttemptAt: Date | null
  outcome: { status: number | null; body: string | null; error: string | null; durationMs: number }
}

/** Records the attempt and the delivery's new state; false when the lease was lost meanwhile. */
export async function recordAttempt(sql: Sql, attempt: AttemptRecord): Promise<boolean> {
  const rows = await sql`
    WITH updated AS (
      UPDATE webhook_deliveries
      SET attempt_count = ${attempt.attemptNumber}, status = ${attempt.status}, last_attempt_at = ${attempt.attemptedAt},
          response_status = ${attempt.outcome.status}::integer, response_body = ${attempt.outcome.body}::text,
          next_attempt_at = ${attempt.nextAttemptAt}::timestamptz, locked_until = NULL, locked_by = NULL
      WHERE id = ${attempt.deliveryId} AND locked_by = ${attempt.workerId} AND attempt_count = ${attempt.previousCount}
      RETURNING id)
    INSERT INTO webhook_attempts (id, delivery_id, attempt_number, attempted_at, response_status, response_body, error_message, duration_ms)
    SELECT ${attempt.id}::uuid, id, ${attempt.attemptNumber}::integer, ${attempt.attemptedAt}::timestamptz, ${attempt.outcome.status}::integer,
           ${attempt.outcome.body}::text, ${attempt.outcome.error}::text, ${attempt.outcome.durationMs}::integer
    FROM updated
    RETURNING id`
  return rows.length > 0
}

/** Deliveries waiting for an attempt, in every process on this database (the metrics). */
export async function countPendingDeliveries(sql: Sql): Promise<number> {
  const [row] = await sql<Array<{ pending: number }>>`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`
  return row.pending
}
