// Takes due deliveries and makes one attempt each. The database is the coordinator, so several
// service processes can share the work: a claim is one UPDATE over a FOR UPDATE SKIP LOCKED
// subquery that sets a lease (locked_until, locked_by); the request goes out with no transaction
// open; the result is recorded in one statement that only applies while this worker still holds
// the lease. A worker that dies leaves its claims to expire and be taken again.
import type { WebhookSecrets } from '../keys/webhook-secrets.js'
import type { Sql } from '../store/engine/database.js'
import { claimDueDeliveries, recordAttempt, type ClaimedDelivery } from '../store/webhook-deliveries.js'
import { recordSubscriptionHealth } from '../store/webhook-recovery.js'
import { newId } from '../ids.js'
import type { WebhookAttemptOutcome } from '../metrics/metrics.js'
import type { Clock } from './clock.js'
import type { AttemptOutcome, HttpSender } from './http-sender.js'
import { envelopeBody } from './outbox.js'
import { MAX_ATTEMPTS, honoursRetryAfter, parseRetryAfter, retryDelayMs } from './retry-schedule.js'
import { signatureHeaders } from './signer.js'

export interface WebhookLogger {
  debug(object: object, message?: string): void
  info(object: object, message?: string): void
  warn(object: object, message?: string): void
  error(object: object, message?: string): void
}

export type { ClaimedDelivery }

/** A subscription whose deliveries have all failed this long is disabled (Svix's rule). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600_000

export const silentLogger: WebhookLogger = { debug() {}, info() {}, warn() {}, error() {} }

export interface DeliveryWorkerOptions {
  sql: Sql
  secrets: WebhookSecrets
  sender: HttpSender
  clock: Clock
  workerId: string
  leaseMs: number
  userAgent: string
  random?: () => number
  logger?: WebhookLogger
  /** Each recorded attempt's outcome (the metrics). */
  onAttempt?: (outcome: WebhookAttemptOutcome) => void
}

export interface AttemptResult {
  deliveryId: string
  attemptNumber: number
  status: 'pending' | 'success' | 'failed'
  /** False when the lease was lost before recording (another worker owns the delivery now). */
  recorded: boolean
}

export interface DeliveryWorker {
  /** Leases up to `limit` due deliveries to this worker. */
  claim(limit: number): Promise<ClaimedDelivery[]>
  /** Makes one attempt for a claimed delivery and records it. Never throws for HTTP failures. */
  attempt(delivery: ClaimedDelivery): Promise<AttemptResult>
}

/**
 * The request has gone out; losing its record would resend it after the lease. A transient
 * database error is worth a few quick retries (the statement only applies once: it needs the
 * lease and the attempt count it started from).
 */
async function withRetries<T>(operation: () => Promise<T>, onError: (error: unknown, attempt: number) => void, tries = 4): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation()
    } catch (error) {
      if (attempt >= tries) throw error
      onError(error, attempt)
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt))
    }
  }
}

/** What an attempt's outcome makes of the delivery: done, retried later (when), or failed for good. */
function afterOutcome(outcome: AttemptOutcome, attemptNumber: number, clock: Clock, random?: () => number) {
  // 410 Gone: the receiver says the endpoint is gone for good (Standard Webhooks); no retry.
  const gone = outcome.status === 410
  if (outcome.success) return { status: 'success' as const, nextAttemptAt: null, gone }
  if (gone || attemptNumber >= MAX_ATTEMPTS) return { status: 'failed' as const, nextAttemptAt: null, gone }
  const after = clock.now()
  const retryAfterMs = honoursRetryAfter(outcome.status) ? parseRetryAfter(outcome.retryAfter ?? undefined, after) : null
  return { status: 'pending' as const, nextAttemptAt: new Date(after.getTime() + retryDelayMs(attemptNumber, { random, retryAfterMs })), gone }
}

function logAttempt(
  logger: WebhookLogger,
  attempt: {
    delivery: ClaimedDelivery
    attemptNumber: number
    outcome: AttemptOutcome
    status: AttemptResult['status']
    nextAttemptAt: Date | null
    recorded: boolean
  },
): void {
  const { delivery, outcome, status } = attempt
  const fields = {
    deliveryId: delivery.id,
    subscriptionId: delivery.subscription_id,
    attempt: attempt.attemptNumber,
    responseStatus: outcome.status,
    durationMs: outcome.durationMs,
  }
  if (!attempt.recorded) {
    // The lease expired mid-attempt (attempt slower than the lease, or the subscription was deleted).
    logger.warn(fields, 'webhook attempt not recorded: lease lost or delivery gone')
  } else if (status === 'success') {
    logger.debug(fields, 'webhook delivered')
  } else {
    logger.info({ ...fields, error: outcome.error, status, nextAttemptAt: attempt.nextAttemptAt }, 'webhook attempt failed')
  }
}

/** A success ends the subscription's failing streak; a 410 or 5 days of failures disable it. */
async function noteSubscriptionHealth(
  sql: Sql,
  logger: WebhookLogger,
  delivery: ClaimedDelivery,
  result: 'success' | 'failure' | 'gone',
  at: Date,
): Promise<void> {
  try {
    const disabled = await recordSubscriptionHealth(sql, delivery.subscription_id, result, at, DISABLE_AFTER_FAILING_MS)
    if (disabled) {
      logger.warn(
        { subscriptionId: delivery.subscription_id, reason: disabled },
        disabled === 'gone'
          ? 'webhook subscription disabled: the receiver answered 410 Gone'
          : 'webhook subscription disabled: every delivery failed for 5 days',
      )
    }
  } catch (error) {
    // The attempt is recorded; the streak is caught up by the next attempt's record.
    logger.warn({ err: error, subscriptionId: delivery.subscription_id }, "recording the subscription's delivery health failed")
  }
}

const UNOPENABLE_SECRET: AttemptOutcome = {
  success: false,
  status: null,
  body: null,
  error: 'the subscription secret cannot be opened',
  durationMs: 0,
  retryAfter: null,
}

/** Sends the delivery's body signed with the subscription's secret at the attempt's time. */
function sendSigned(
  sender: HttpSender,
  userAgent: string,
  request: { delivery: ClaimedDelivery; body: string; secret: string; attemptedAt: Date },
): Promise<AttemptOutcome> {
  const { delivery, body, secret, attemptedAt } = request
  const timestampSeconds = Math.floor(attemptedAt.getTime() / 1000)
  return sender.send({
    url: delivery.url,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': userAgent,
      ...signatureHeaders({ secret, eventId: delivery.payload.event_id, timestampSeconds, body }),
    },
  })
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { sql, sender, clock, workerId, leaseMs, userAgent } = options
  const logger = options.logger ?? silentLogger

  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return []
    const now = clock.now()
    const leaseUntil = new Date(now.getTime() + leaseMs)
    return claimDueDeliveries(sql, { now, leaseUntil, workerId, limit })
  }

  function openSecret(delivery: ClaimedDelivery): string | null {
    try {
      return options.secrets.open(delivery, delivery)
    } catch (error) {
      logger.error({ subscriptionId: delivery.subscription_id, reason: (error as Error).message }, 'webhook secret cannot be opened')
      return null
    }
  }

  async function attempt(delivery: ClaimedDelivery): Promise<AttemptResult> {
    const attemptNumber = delivery.attempt_count + 1
    const attemptedAt = clock.now()
    const body = envelopeBody(delivery.payload)
    const secret = openSecret(delivery)
    // A secret that cannot be opened (wrong master key, damaged row) fails the attempt unsent.
    const outcome: AttemptOutcome = secret === null ? UNOPENABLE_SECRET : await sendSigned(sender, userAgent, { delivery, body, secret, attemptedAt })

    const { status, nextAttemptAt, gone } = afterOutcome(outcome, attemptNumber, clock, options.random)

    const record = () =>
      recordAttempt(sql, {
        id: newId(),
        deliveryId: delivery.id,
        workerId,
        attemptNumber,
        previousCount: delivery.attempt_count,
        status,
        attemptedAt,
        nextAttemptAt,
        outcome,
      })
    const recorded = await withRetries(record, (error, attempt) =>
      logger.warn({ err: error, deliveryId: delivery.id, try: attempt }, 'recording a webhook attempt failed; retrying'),
    )

    if (recorded) {
      options.onAttempt?.(gone ? 'gone' : status === 'pending' ? 'retry' : status)
      await noteSubscriptionHealth(sql, logger, delivery, outcome.success ? 'success' : gone ? 'gone' : 'failure', attemptedAt)
    }
    logAttempt(logger, { delivery, attemptNumber, outcome, status, nextAttemptAt, recorded })
    return { deliveryId: delivery.id, attemptNumber, status, recorded }
  }

  return { claim, attempt }
}
