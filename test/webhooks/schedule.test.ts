// The whole retry schedule, driven by the injected clock against a real receiver that always
// answers 500: 336 attempts, spaced 5 s doubling to 1 h (±10 %), then `failed`. Every 5 days of
// failures disable the subscription (its delivery waits); the test enables it again at once, as
// an operator would, and the schedule goes on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSubscription, listAttempts, listDeliveries, updateSubscription } from '../../src/domain/webhooks/webhooks.js'
import { createWebhookEngine, enqueueEvent } from '../../src/webhooks/index.js'
import { DISABLE_AFTER_FAILING_MS } from '../../src/webhooks/delivery-worker.js'
import { MAX_ATTEMPTS, scheduledDelayMs } from '../../src/webhooks/retry-schedule.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createProject, manualClock, webhookConfig, testKeyring } from './fixtures.js'
import { startReceiver, type Receiver } from './receivers.js'

describe(`retry schedule end to end (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  let target: Receiver
  beforeAll(async () => {
    storage = await createTestStorage()
    target = await startReceiver({ respond: () => ({ status: 500, body: 'down' }) })
  })
  afterAll(async () => {
    await target.close()
    await storage.cleanup()
  })

  it('makes 336 attempts on schedule, then fails the delivery', { timeout: 120_000 }, async () => {
    const clock = manualClock(new Date('2026-03-01T00:00:00.000Z'))
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig(), clock })
    const deps = { db: storage.db, guard: engine.guard, secrets: engine.secrets }
    const projectId = await createProject(storage.db.sql)
    const subscription = await createSubscription(deps, projectId, { url: target.url, event_types: ['enrollment.completed'] })
    await storage.db.sql.begin((tx) =>
      enqueueEvent(tx, {
        projectId,
        eventType: 'enrollment.completed',
        data: { session_id: 's', member_id: 'm', device_id: 'd', completed_at: clock.now().toISOString() },
      }),
    )

    const disabledAt: number[] = []
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const [due] = await storage.db.sql<{ next_attempt_at: Date | null }[]>`
        SELECT next_attempt_at FROM webhook_deliveries WHERE subscription_id = ${subscription.id}`
      if (due) {
        // One millisecond early, nothing is sent; at the scheduled time, exactly one attempt.
        clock.set(new Date(due.next_attempt_at!.getTime() - 1))
        expect((await engine.runOnce()).attempts).toBe(0)
        clock.set(due.next_attempt_at!)
      }
      expect((await engine.runOnce()).attempts).toBe(1)
      const [state] = await storage.db.sql<{ enabled: boolean; disabled_reason: string | null }[]>`
        SELECT enabled, disabled_reason FROM webhook_subscriptions WHERE id = ${subscription.id}`
      if (!state.enabled) {
        expect(state.disabled_reason).toBe('failing')
        disabledAt.push(clock.now().getTime())
        await updateSubscription(deps, projectId, subscription.id, { enabled: true })
      }
    }
    expect(target.requests).toHaveLength(MAX_ATTEMPTS)

    clock.advance(30 * 86_400_000)
    expect((await engine.runOnce()).attempts).toBe(0)
    expect(target.requests).toHaveLength(MAX_ATTEMPTS)

    const { items } = await listDeliveries(deps, projectId, subscription.id, { from: new Date(0), to: clock.now(), page: 1, per_page: 10 })
    expect(items[0]).toMatchObject({ status: 'failed', attempt_count: MAX_ATTEMPTS, attempt_pending: false, response_status: 500 })
    const attempts = await listAttempts(deps, projectId, subscription.id, items[0].id)
    expect(attempts.map((attempt) => attempt.attempt_number)).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, index) => index + 1))
    const times = attempts.map((attempt) => Date.parse(attempt.attempted_at))
    for (let index = 1; index < times.length; index += 1) {
      const interval = times[index] - times[index - 1]
      const scheduled = scheduledDelayMs(index)
      expect(interval, `interval before attempt ${index + 1}`).toBeGreaterThanOrEqual(Math.floor(scheduled * 0.9))
      expect(interval, `interval before attempt ${index + 1}`).toBeLessThanOrEqual(Math.ceil(scheduled * 1.1))
    }
    // Disabled at the first failure 5 days into each streak (attempts are at most 1.1 h apart).
    expect(disabledAt).toHaveLength(2)
    for (const [index, at] of disabledAt.entries()) {
      const streakStart = index === 0 ? times[0] : times.find((time) => time > disabledAt[index - 1])!
      expect(at - streakStart).toBeGreaterThanOrEqual(DISABLE_AFTER_FAILING_MS)
      expect(at - streakStart).toBeLessThanOrEqual(DISABLE_AFTER_FAILING_MS + 1.1 * 3_600_000)
    }
    const days = (times[times.length - 1] - times[0]) / 86_400_000
    expect(days).toBeGreaterThan(12)
    expect(days).toBeLessThan(15.5)
    // Jitter is real: the capped intervals are not all equal.
    expect(new Set(times.slice(20).map((time, index) => time - times[19 + index])).size).toBeGreaterThan(1)
  })
})
