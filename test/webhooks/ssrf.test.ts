// The SSRF guard on subscription create/update and again at delivery time (DNS may change after
// the subscription was accepted). A refused target is never contacted.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createSubscription, listAttempts, listDeliveries, updateSubscription } from '../../src/domain/webhooks/webhooks.js'
import { ServiceError } from '../../src/errors.js'
import { createSsrfGuard, createWebhookEngine, enqueueEvent } from '../../src/webhooks/index.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createWebhookSecrets } from '../../src/keys/webhook-secrets.js'
import { createProject, fakeResolver, manualClock, webhookConfig, testKeyring } from './fixtures.js'
import { startReceiver, type Receiver } from './receivers.js'

const refused = (promise: Promise<unknown>) => expect(promise).rejects.toMatchObject({ code: 'webhook_url_rejected', status: 422 })

describe(`SSRF guard (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  const receivers: Receiver[] = []
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage.cleanup()
  })
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  })

  const resolver = fakeResolver({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'internal.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '192.168.0.10'],
    'metadata.example.com': ['fd00:ec2::254'],
    'mapped.example.com': ['::ffff:172.16.5.4'],
  })

  function deps(config = webhookConfig({ webhookAllowLocalhost: false })) {
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config, resolver })
    return { db: storage.db, guard: engine.guard, secrets: engine.secrets }
  }

  it.each([
    'https://10.0.0.1/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.1/hook',
    'https://127.0.0.1/hook',
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'https://localhost/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'https://[fd00::1]/hook',
    'https://[::ffff:10.0.0.1]/hook',
    'https://[64:ff9b::a9fe:a9fe]/hook',
    'https://[fd00:ec2::254]/hook',
    'https://0x7f.1/hook',
    'https://internal.example.com/hook',
    'https://mixed.example.com/hook',
    'https://metadata.example.com/hook',
    'https://mapped.example.com/hook',
    'https://unknown.example.com/hook',
    'http://hooks.example.com/hook',
    'ftp://hooks.example.com/hook',
    'https://user:secret@hooks.example.com/hook',
    'not a url',
  ])('refuses %s at creation (422 webhook_url_rejected)', async (url) => {
    const projectId = await createProject(storage.db.sql)
    await refused(createSubscription(deps(), projectId, { url, event_types: ['enrollment.completed'] }))
    const [{ count }] = await storage.db.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM webhook_subscriptions WHERE project_id = ${projectId}`
    expect(count).toBe(0)
  })

  it('accepts a host that resolves only to public addresses', async () => {
    const projectId = await createProject(storage.db.sql)
    const created = await createSubscription(deps(), projectId, { url: 'https://hooks.example.com/hook', event_types: ['enrollment.completed'] })
    expect(created.url).toBe('https://hooks.example.com/hook')
  })

  it('lets localhost through only with WEBHOOK_ALLOW_LOCALHOST, and never in production', async () => {
    const projectId = await createProject(storage.db.sql)
    const allowed = deps(webhookConfig({ webhookAllowLocalhost: true }))
    for (const url of ['http://localhost:9/hook', 'http://127.0.0.1:9/hook', 'http://[::1]:9/hook', 'https://localhost:9/hook']) {
      resolver.table.localhost = ['127.0.0.1', '::1']
      await expect(createSubscription(allowed, projectId, { url, event_types: ['demo.scan.success'] })).resolves.toMatchObject({ url })
    }
    // Even with the flag, only the loopback names pass: private addresses stay refused.
    await refused(createSubscription(allowed, projectId, { url: 'https://10.0.0.1/hook', event_types: ['demo.scan.success'] }))
    await refused(createSubscription(allowed, projectId, { url: 'http://hooks.example.com/hook', event_types: ['demo.scan.success'] }))
    // In production the guard refuses localhost whatever the flag says.
    const production = {
      db: storage.db,
      guard: createSsrfGuard({ policy: { allowLocalhost: true, production: true }, resolver }),
      secrets: createWebhookSecrets(testKeyring),
    }
    await refused(createSubscription(production, projectId, { url: 'http://localhost:9/hook', event_types: ['demo.scan.success'] }))
  })

  it('applies the same rules on update', async () => {
    const projectId = await createProject(storage.db.sql)
    const context = deps()
    const created = await createSubscription(context, projectId, { url: 'https://hooks.example.com/a', event_types: ['enrollment.completed'] })
    await refused(updateSubscription(context, projectId, created.id, { url: 'https://169.254.169.254/' }))
    await refused(updateSubscription(context, projectId, created.id, { url: 'https://internal.example.com/' }))
    const updated = await updateSubscription(context, projectId, created.id, { url: 'https://hooks.example.com/b' })
    expect(updated.url).toBe('https://hooks.example.com/b')
  })

  it.each([
    ['a loopback address (receiver listening)', '127.0.0.1'],
    ['a private address', '10.0.0.1'],
    ['the cloud metadata address', '169.254.169.254'],
    ['an IPv4-mapped private address', '::ffff:192.168.1.1'],
  ])('refuses at delivery time when DNS later points to %s, without connecting', async (_, address) => {
    const live = await startReceiver()
    receivers.push(live)
    const rebinding = fakeResolver({ 'rebind.example.com': ['93.184.216.34'] })
    const clock = manualClock()
    const engine = createWebhookEngine({
      keyring: testKeyring,
      db: storage.db,
      config: webhookConfig({ webhookAllowLocalhost: false }),
      clock,
      resolver: rebinding,
    })
    const context = { db: storage.db, guard: engine.guard, secrets: engine.secrets }
    const projectId = await createProject(storage.db.sql)
    const subscription = await createSubscription(context, projectId, {
      url: `https://rebind.example.com:${live.port}/hook`,
      event_types: ['demo.scan.success'],
    })
    rebinding.table['rebind.example.com'] = [address]
    await storage.db.sql.begin((tx) => enqueueEvent(tx, { projectId, eventType: 'demo.scan.success', data: { member_id: 'm' } }))
    expect((await engine.runOnce()).attempts).toBe(1)

    expect(live.connections).toBe(0)
    const { items } = await listDeliveries(context, projectId, subscription.id, {
      from: new Date(0),
      to: new Date(Date.now() + 86_400_000),
      page: 1,
      per_page: 10,
    })
    expect(items[0]).toMatchObject({ status: 'pending', attempt_pending: true, response_status: null })
    const attempts = await listAttempts(context, projectId, subscription.id, items[0].id)
    expect(attempts[0]).toMatchObject({ response_status: null, error_message: expect.stringMatching(/^url rejected: host rebind\.example\.com resolves to a/) })
  })

  it('refuses at delivery time a localhost subscription once the flag is off', async () => {
    const live = await startReceiver()
    receivers.push(live)
    const projectId = await createProject(storage.db.sql)
    const subscription = await createSubscription(deps(webhookConfig({ webhookAllowLocalhost: true })), projectId, {
      url: live.url,
      event_types: ['demo.scan.success'],
    })
    const strict = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig({ webhookAllowLocalhost: false }), resolver })
    await storage.db.sql.begin((tx) => enqueueEvent(tx, { projectId, eventType: 'demo.scan.success', data: { member_id: 'm' } }))
    await strict.runOnce()
    expect(live.connections).toBe(0)
    const [attempt] = await storage.db.sql<{ error_message: string }[]>`
      SELECT a.error_message FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = ${subscription.id}`
    expect(attempt.error_message).toMatch(/^url rejected: http to localhost needs WEBHOOK_ALLOW_LOCALHOST/)
  })

  it('gives the reason but not the resolved address in the error', async () => {
    const projectId = await createProject(storage.db.sql)
    const error = await createSubscription(deps(), projectId, { url: 'https://internal.example.com/', event_types: ['enrollment.completed'] }).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).detail).toBe('host internal.example.com resolves to a private address')
  })
})
