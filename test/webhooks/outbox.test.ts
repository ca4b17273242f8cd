// The outbox: events commit with their cause, fan out to the right subscriptions exactly once,
// and disabled subscriptions wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSubscription, updateSubscription, sendTestEvent } from '../../src/domain/webhooks/webhooks.js'
import { createWebhookEngine, enqueueEvent } from '../../src/webhooks/index.js'
import { dispatchEvents } from '../../src/store/webhook-outbox.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createProject, manualClock, webhookConfig, testKeyring } from './fixtures.js'
import { startReceiver, type Receiver } from './receivers.js'

describe(`outbox and fan-out (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  let target: Receiver
  beforeAll(async () => {
    storage = await createTestStorage()
    target = await startReceiver()
  })
  afterAll(async () => {
    await target.close()
    await storage.cleanup()
  })

  const deliveriesOf = async (subscriptionId: string) =>
    await storage.db.sql<{ event_id: string; event_type: string }[]>`
    SELECT event_id, event_type FROM webhook_deliveries WHERE subscription_id = ${subscriptionId} ORDER BY created_at, id`

  it('writes nothing when the causing transaction rolls back', async () => {
    const projectId = await createProject(storage.db.sql)
    let eventId = ''
    await expect(
      storage.db.sql.begin(async (tx) => {
        eventId = await enqueueEvent(tx, { projectId, eventType: 'enrollment.completed', data: { member_id: 'm' } })
        throw new Error('the enrollment failed')
      }),
    ).rejects.toThrow('the enrollment failed')
    expect(eventId).toMatch(/^[0-9a-f-]{36}$/)
    expect(await storage.db.sql`SELECT id FROM event_outbox WHERE id = ${eventId}`).toHaveLength(0)
  })

  it('fans an event out to the enabled subscribers of its type in its project, once', async () => {
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig() })
    const deps = { db: storage.db, guard: engine.guard, secrets: engine.secrets }
    const projectId = await createProject(storage.db.sql)
    const otherProjectId = await createProject(storage.db.sql)
    const make = (project: string, eventTypes: string[], enabled = true) =>
      createSubscription(deps, project, { url: target.url, event_types: eventTypes, enabled })
    const both = await make(projectId, ['enrollment.completed', 'demo.scan.success'])
    const enrollmentOnly = await make(projectId, ['enrollment.completed'])
    const scanOnly = await make(projectId, ['demo.scan.success'])
    const disabled = await make(projectId, ['enrollment.completed'], false)
    const foreign = await make(otherProjectId, ['enrollment.completed'])

    const eventId = await storage.db.sql.begin((tx) =>
      enqueueEvent(tx, {
        projectId,
        eventType: 'enrollment.completed',
        data: { session_id: 's', member_id: 'm', device_id: 'd', completed_at: 'now' },
      }),
    )
    const now = new Date()
    expect(await dispatchEvents(storage.db.sql, { now })).toEqual({ events: 1, deliveries: 2 })
    expect(await deliveriesOf(both.id)).toEqual([{ event_id: eventId, event_type: 'enrollment.completed' }])
    expect(await deliveriesOf(enrollmentOnly.id)).toHaveLength(1)
    expect(await deliveriesOf(scanOnly.id)).toHaveLength(0)
    expect(await deliveriesOf(disabled.id)).toHaveLength(0)
    expect(await deliveriesOf(foreign.id)).toHaveLength(0)

    // Dispatching the same event again (a crash before dispatched_at was visible) creates nothing new.
    await storage.db.sql`UPDATE event_outbox SET dispatched_at = NULL WHERE id = ${eventId}`
    expect(await dispatchEvents(storage.db.sql, { now })).toEqual({ events: 1, deliveries: 0 })
    expect(await dispatchEvents(storage.db.sql, { now })).toEqual({ events: 0, deliveries: 0 })

    const [payload] = await storage.db.sql<{ payload: Record<string, unknown> }[]>`SELECT payload FROM webhook_deliveries WHERE subscription_id = ${both.id}`
    expect(payload.payload).toEqual({
      event_id: eventId,
      event_type: 'enrollment.completed',
      project_id: projectId,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { session_id: 's', member_id: 'm', device_id: 'd', completed_at: 'now' },
    })
    const [{ id }] = await storage.db.sql<{ id: string }[]>`SELECT id FROM webhook_deliveries WHERE subscription_id = ${both.id}`
    // Delivery ids are UUIDv7 like every id the service creates.
    expect(id[14]).toBe('7')
    expect(['8', '9', 'a', 'b']).toContain(id[19])
    expect(Math.abs(parseInt(id.replace(/-/g, '').slice(0, 12), 16) - now.getTime())).toBeLessThan(2)
  })

  it('sends webhook.test only to its subscription, even when disabled; other deliveries wait for re-enabling', async () => {
    const clock = manualClock()
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig(), clock })
    const deps = { db: storage.db, guard: engine.guard, secrets: engine.secrets }
    const projectId = await createProject(storage.db.sql)
    const tested = await createSubscription(deps, projectId, { url: target.url, event_types: ['demo.scan.success'], enabled: false })
    const bystander = await createSubscription(deps, projectId, { url: target.url, event_types: ['demo.scan.success'] })
    const { test_id: testId } = await sendTestEvent(deps, projectId, tested.id)
    // (runOnce also attempts what earlier tests left due.)
    expect(await engine.runOnce()).toMatchObject({ events: 1, deliveries: 1 })
    const tests = target.requests.map((request) => JSON.parse(request.body)).filter((body) => body.event_type === 'webhook.test')
    expect(tests.map((body) => body.data.test_id)).toEqual([testId])
    expect(await deliveriesOf(tested.id)).toEqual([{ event_id: tests[0].event_id, event_type: 'webhook.test' }])
    expect(await deliveriesOf(bystander.id)).toHaveLength(0)
    await expect(sendTestEvent(deps, await createProject(storage.db.sql), tested.id)).rejects.toMatchObject({ code: 'not_found' })

    // A delivery pending for a subscription that gets disabled is not attempted until re-enabled.
    await storage.db.sql.begin((tx) => enqueueEvent(tx, { projectId, eventType: 'demo.scan.success', data: { member_id: 'm' } }))
    await dispatchEvents(storage.db.sql, { now: clock.now() })
    await updateSubscription(deps, projectId, bystander.id, { enabled: false })
    expect((await engine.runOnce()).attempts).toBe(0)
    await updateSubscription(deps, projectId, bystander.id, { enabled: true })
    expect((await engine.runOnce()).attempts).toBe(1)
  })
})
