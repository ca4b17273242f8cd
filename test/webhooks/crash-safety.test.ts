// Several workers on one database: a delivery leased by a dead worker is taken again once the
// lease expires (and the dead worker's late result is discarded), and two engines running side
// by side send each attempt exactly once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createSubscription } from '../../src/domain/webhooks/webhooks.js'
import { openDatabase, type Database } from '../../src/store/engine/database.js'
import { createWebhookEngine, enqueueEvent, wakeDispatcher } from '../../src/webhooks/index.js'
import type { AttemptOutcome, HttpSender } from '../../src/webhooks/http-sender.js'
import { dispatchEvents } from '../../src/store/webhook-outbox.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createProject, manualClock, webhookConfig, testKeyring } from './fixtures.js'
import { startReceiver, type Receiver } from './receivers.js'

describe(`crash safety and concurrent workers (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  let second: Database
  const receivers: Receiver[] = []
  beforeAll(async () => {
    storage = await createTestStorage()
    // A second client on the same database, as another service process would have.
    second = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir })
  })
  afterAll(async () => {
    await second.close()
    await storage.cleanup()
  })
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  })

  async function subscribed(url: string): Promise<{ projectId: string; subscriptionId: string }> {
    const projectId = await createProject(storage.db.sql)
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig() })
    const { id } = await createSubscription({ db: storage.db, guard: engine.guard, secrets: engine.secrets }, projectId, {
      url,
      event_types: ['enrollment.completed'],
    })
    return { projectId, subscriptionId: id }
  }

  const emit = (db: Database, projectId: string, index: number) =>
    db.sql.begin((tx) =>
      enqueueEvent(tx, {
        projectId,
        eventType: 'enrollment.completed',
        data: { session_id: `s-${index}`, member_id: `m-${index}`, device_id: 'd', completed_at: new Date().toISOString() },
      }),
    )

  it('takes over a delivery whose worker died once the lease expires', async () => {
    const target = await startReceiver()
    receivers.push(target)
    const { projectId, subscriptionId } = await subscribed(target.url)
    await emit(storage.db, projectId, 1)
    const clock = manualClock()
    await dispatchEvents(storage.db.sql, { now: clock.now() })
    // A process claimed it (lease for 90 s) and was killed before recording anything.
    const leaseUntil = new Date(clock.now().getTime() + 90_000)
    await storage.db
      .sql`UPDATE webhook_deliveries SET locked_by = 'dead-host:1234:feed', locked_until = ${leaseUntil} WHERE subscription_id = ${subscriptionId}`

    const survivor = createWebhookEngine({ keyring: testKeyring, db: second, config: webhookConfig(), clock, workerId: 'survivor' })
    expect((await survivor.runOnce()).attempts).toBe(0)
    clock.advance(89_999)
    expect((await survivor.runOnce()).attempts).toBe(0)
    expect(target.requests).toHaveLength(0)
    clock.advance(1)
    expect((await survivor.runOnce()).attempts).toBe(1)
    expect(target.requests).toHaveLength(1)
    const [delivery] = await storage.db.sql`SELECT status, attempt_count, locked_by FROM webhook_deliveries WHERE subscription_id = ${subscriptionId}`
    expect(delivery).toEqual({ status: 'success', attempt_count: 1, locked_by: null })
  })

  it('discards the result of a worker that outlived its lease', async () => {
    const target = await startReceiver()
    receivers.push(target)
    const { projectId, subscriptionId } = await subscribed(target.url)
    await emit(storage.db, projectId, 2)
    const clock = manualClock()
    // The stalled worker's request never finishes until the test lets it.
    let release: (outcome: AttemptOutcome) => void = () => {}
    const stalled: HttpSender = {
      send: () =>
        new Promise((resolve) => {
          release = resolve
        }),
    }
    const stalledEngine = createWebhookEngine({
      keyring: testKeyring,
      db: storage.db,
      config: webhookConfig(),
      clock,
      sender: stalled,
      leaseMs: 60_000,
      workerId: 'stalled',
    })
    const stalledRun = stalledEngine.runOnce()
    await expect
      .poll(async () => (await storage.db.sql`SELECT locked_by FROM webhook_deliveries WHERE subscription_id = ${subscriptionId}`)[0]?.locked_by)
      .toBe('stalled')

    clock.advance(60_000)
    const survivor = createWebhookEngine({ keyring: testKeyring, db: second, config: webhookConfig(), clock, workerId: 'survivor' })
    expect((await survivor.runOnce()).attempts).toBe(1)
    release({ success: true, status: 200, body: 'late', error: null, durationMs: 61_000, retryAfter: null })
    await stalledRun

    const attempts = await storage.db.sql`
      SELECT a.attempt_number, a.response_body FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.subscription_id = ${subscriptionId}`
    expect(attempts).toEqual([{ attempt_number: 1, response_body: 'ok' }])
    expect(target.requests).toHaveLength(1)
  })

  it('two engines on one database send each attempt exactly once (runOnce racing)', async () => {
    const target = await startReceiver()
    receivers.push(target)
    const { projectId, subscriptionId } = await subscribed(target.url)
    const events = 40
    for (let index = 0; index < events; index += 1) await emit(storage.db, projectId, index)
    const first = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig(), concurrency: 3, workerId: 'first' })
    const other = createWebhookEngine({ keyring: testKeyring, db: second, config: webhookConfig(), concurrency: 3, workerId: 'other' })
    const [a, b] = await Promise.all([first.runOnce(), other.runOnce()])
    expect(a.attempts + b.attempts).toBe(events)
    expect(a.deliveries + b.deliveries).toBe(events)
    const ids = target.requests.map((request) => request.headers['webhook-id'])
    expect(ids).toHaveLength(events)
    expect(new Set(ids).size).toBe(events)
    const [{ count }] = await storage.db.sql<{ count: number }[]>`
      SELECT count(*)::int AS count FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = ${subscriptionId}`
    expect(count).toBe(events)
  })

  it('two started engines deliver N events exactly once, including retries', async () => {
    // Every event fails once (500) and then succeeds: 2 attempts each, never 3.
    const seen = new Map<string, number>()
    const target = await startReceiver({
      respond: (request) => {
        const id = String(request.headers['webhook-id'])
        seen.set(id, (seen.get(id) ?? 0) + 1)
        return seen.get(id) === 1 ? { status: 500 } : { status: 204 }
      },
    })
    receivers.push(target)
    const { projectId, subscriptionId } = await subscribed(target.url)
    // A clock running 1000x fast makes the 5 s retry come after about 5 ms.
    const origin = Date.now()
    const fast = { now: () => new Date(origin + (Date.now() - origin) * 1000) }
    // The lease runs on the same fast clock: 1 h of it is 3.6 s of real time, longer than any attempt.
    const options = { config: webhookConfig(), clock: fast, concurrency: 4, pollIntervalMs: 20, leaseMs: 3_600_000 }
    const first = createWebhookEngine({ keyring: testKeyring, db: storage.db, ...options, workerId: 'first' })
    const other = createWebhookEngine({ keyring: testKeyring, db: second, ...options, workerId: 'other' })
    await Promise.all([first.start(), other.start()])
    const events = 30
    try {
      for (let index = 0; index < events; index += 1) {
        const db = index % 2 ? second : storage.db
        await emit(db, projectId, index)
        await wakeDispatcher(db)
      }
      await expect
        .poll(
          async () =>
            (
              await storage.db.sql`
        SELECT count(*)::int AS count FROM webhook_deliveries WHERE subscription_id = ${subscriptionId} AND status = 'success'`
            )[0].count,
          { timeout: 20_000, interval: 50 },
        )
        .toBe(events)
    } finally {
      await Promise.all([first.stop(), other.stop()])
    }
    expect(seen.size).toBe(events)
    expect([...seen.values()].filter((count) => count !== 2)).toEqual([])
    expect(target.requests).toHaveLength(2 * events)
    const [{ count }] = await storage.db.sql<{ count: number }[]>`
      SELECT count(*)::int AS count FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = ${subscriptionId}`
    expect(count).toBe(2 * events)
  })

  it('stop() waits for the attempt in flight and records it', async () => {
    const target = await startReceiver({ respond: () => 'hang' })
    receivers.push(target)
    const { projectId, subscriptionId } = await subscribed(target.url)
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig({ webhookTimeoutMs: 600 }), pollIntervalMs: 50 })
    await engine.start()
    await emit(storage.db, projectId, 99)
    await wakeDispatcher(storage.db)
    await expect.poll(() => target.requests.length, { timeout: 5000 }).toBe(1)
    await engine.stop()
    const attempts = await storage.db.sql`
      SELECT a.response_status, a.error_message FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.subscription_id = ${subscriptionId}`
    expect(attempts).toEqual([{ response_status: null, error_message: 'timed out after 600 ms' }])
    const [delivery] = await storage.db.sql`SELECT locked_by FROM webhook_deliveries WHERE subscription_id = ${subscriptionId}`
    expect(delivery.locked_by).toBeNull()
  })
})
