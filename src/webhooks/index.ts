// The webhook engine: dispatcher (outbox → deliveries) and delivery worker, woken by
// notifications after commits and by a fallback poll, with bounded concurrency. Build it once in
// the composition root; start() when config.webhookWorker is on, stop() on shutdown.
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import type { Config } from '../config.js'
import type { Keyring } from '../keys/keyring.js'
import { createWebhookSecrets, type WebhookSecrets } from '../keys/webhook-secrets.js'
import type { Database, Sql } from '../store/engine/database.js'
import { VERSION } from '../version.js'
import { systemClock, type Clock } from './clock.js'
import { createDeliveryWorker, silentLogger, type DeliveryWorker, type DeliveryWorkerOptions, type WebhookLogger } from './delivery-worker.js'
import { createHttpSender, loadCaPem, type HttpSender } from './http-sender.js'
import { dispatchEvents } from '../store/webhook-outbox.js'
import { DELIVERIES_CHANNEL, OUTBOX_CHANNEL } from './outbox.js'
import { createSsrfGuard, type Resolver, type SsrfGuard, type UrlPolicy } from './ssrf-guard.js'

export { enqueueEvent, wakeDispatcher, SUBSCRIBABLE_EVENT_TYPES, type EventInput, type EventType } from './outbox.js'
export { createSsrfGuard, systemResolver, type Resolver, type SsrfGuard, type UrlPolicy } from './ssrf-guard.js'
export type { Clock } from './clock.js'
export type { WebhookLogger } from './delivery-worker.js'

export type WebhookConfig = Pick<Config, 'webhookAllowLocalhost' | 'webhookCaFile' | 'webhookTimeoutMs' | 'webhookLeaseMs' | 'nodeEnv'>

export interface WebhookEngineOptions {
  db: Database
  /** Opens the subscriptions' sealed secrets to sign deliveries. */
  keyring: Keyring
  config: WebhookConfig
  logger?: WebhookLogger
  clock?: Clock
  resolver?: Resolver
  /** Jitter source in [0, 1); Math.random by default. */
  random?: () => number
  /** Attempts in flight at once in this process (default 16). */
  concurrency?: number
  /** Fallback poll for due retries and other processes' events (default 1000 ms). */
  pollIntervalMs?: number
  /** How long a claim is held before another worker may take it (default config.webhookLeaseMs). */
  leaseMs?: number
  workerId?: string
  /** Replaces the HTTP sender (tests of the engine's bookkeeping). */
  sender?: HttpSender
  /** Each recorded attempt's outcome (the metrics). */
  onAttempt?: DeliveryWorkerOptions['onAttempt']
}

export interface WebhookEngine {
  /** The URL rules of this configuration, for subscription create/update. */
  readonly guard: SsrfGuard
  /** Seals new subscriptions' secrets and opens them to sign. */
  readonly secrets: WebhookSecrets
  start(): Promise<void>
  /** Stops taking work and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
  /** Dispatches every pending event and attempts every due delivery, then resolves (tests). */
  runOnce(): Promise<{ events: number; deliveries: number; attempts: number }>
}

export const USER_AGENT = `palmvein-webhooks/${VERSION}`

export function urlPolicy(config: Pick<Config, 'webhookAllowLocalhost' | 'nodeEnv'>): UrlPolicy {
  return { allowLocalhost: config.webhookAllowLocalhost, production: config.nodeEnv === 'production' }
}

export function createWebhookEngine(options: WebhookEngineOptions): WebhookEngine {
  const { db, config } = options
  const logger = options.logger ?? silentLogger
  const clock = options.clock ?? systemClock
  const concurrency = options.concurrency ?? 16
  const pollIntervalMs = options.pollIntervalMs ?? 1000
  const guard = createSsrfGuard({ policy: urlPolicy(config), resolver: options.resolver })
  const sender = options.sender ?? createHttpSender({ guard, timeoutMs: config.webhookTimeoutMs, caPem: loadCaPem(config.webhookCaFile) })
  const secrets = createWebhookSecrets(options.keyring)
  const worker = engineWorker(options, secrets, sender, clock, logger)

  const inFlight = new Set<Promise<unknown>>()
  let running = false
  let poller: NodeJS.Timeout | undefined
  const listeners: Array<{ unlisten(): Promise<void> }> = []

  function track(promise: Promise<unknown>): void {
    inFlight.add(promise)
    void promise.finally(() => {
      inFlight.delete(promise)
      wake()
    })
  }

  async function runCycle(): Promise<void> {
    const dispatched = await dispatchAll(db.sql, clock)
    if (dispatched.deliveries > 0) await db.notify(DELIVERIES_CHANNEL, '')
    const claimed = await worker.claim(concurrency - inFlight.size)
    for (const delivery of claimed) {
      track(
        worker.attempt(delivery).catch((error: unknown) => {
          logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded')
        }),
      )
    }
  }

  const cycles = coalescedCycles(
    runCycle,
    () => running,
    (error) => logger.error({ err: error }, 'webhook cycle failed; retrying at the next poll'),
  )
  const wake = cycles.wake

  return {
    guard,
    secrets,
    async start() {
      if (running) return
      running = true
      listeners.push(await db.listen(OUTBOX_CHANNEL, wake), await db.listen(DELIVERIES_CHANNEL, wake))
      poller = setInterval(wake, pollIntervalMs)
      poller.unref()
      logger.info({ concurrency, pollIntervalMs }, 'webhook worker started')
      wake()
    },
    async stop() {
      if (!running) return
      running = false
      clearInterval(poller)
      await Promise.all(listeners.splice(0).map((listener) => listener.unlisten()))
      await cycles.current()
      await Promise.all([...inFlight])
      logger.info({}, 'webhook worker stopped')
    },
    runOnce: () => runOnce(db.sql, clock, worker, concurrency),
  }
}

/**
 * Runs a cycle now, or right after the current one: wake-ups that arrive while a cycle runs
 * coalesce into one more cycle. A failed cycle is reported and waits for the next wake-up.
 */
function coalescedCycles(runCycle: () => Promise<void>, running: () => boolean, onError: (error: unknown) => void) {
  let cycle: Promise<void> | null = null
  let again = false
  function wake(): void {
    if (!running()) return
    if (cycle) {
      again = true
      return
    }
    cycle = (async () => {
      do {
        again = false
        try {
          await runCycle()
        } catch (error) {
          onError(error)
        }
      } while (again && running())
    })().finally(() => {
      cycle = null
    })
  }
  /** The cycle running now, if any (stop waits for it). */
  const current = (): Promise<void> | null => cycle
  return { wake, current }
}

function engineWorker(options: WebhookEngineOptions, secrets: WebhookSecrets, sender: HttpSender, clock: Clock, logger: WebhookLogger): DeliveryWorker {
  return createDeliveryWorker({
    sql: options.db.sql,
    secrets,
    sender,
    clock,
    workerId: options.workerId ?? `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    leaseMs: options.leaseMs ?? options.config.webhookLeaseMs,
    userAgent: USER_AGENT,
    random: options.random,
    logger,
    onAttempt: options.onAttempt,
  })
}

/** Turns every pending event into deliveries, a batch at a time until none is left. */
async function dispatchAll(sql: Sql, clock: Clock): Promise<{ events: number; deliveries: number }> {
  const total = { events: 0, deliveries: 0 }
  for (;;) {
    const batch = await dispatchEvents(sql, { now: clock.now() })
    total.events += batch.events
    total.deliveries += batch.deliveries
    if (batch.events === 0) return total
  }
}

async function runOnce(sql: Sql, clock: Clock, worker: DeliveryWorker, concurrency: number) {
  const dispatched = await dispatchAll(sql, clock)
  let attempts = 0
  for (;;) {
    const claimed = await worker.claim(concurrency)
    if (claimed.length === 0) break
    await Promise.all(claimed.map((delivery) => worker.attempt(delivery)))
    attempts += claimed.length
  }
  return { ...dispatched, attempts }
}
