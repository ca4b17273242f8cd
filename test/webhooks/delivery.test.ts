// Attempts against real receivers on loopback: signatures, retries, timeouts, redirects,
// truncated bodies, HTTPS through an extra trusted CA, and the connection pinned to the
// address that was checked.
import { createHmac } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createSubscription, listAttempts, listDeliveries, type CreatedSubscription } from '../../src/domain/webhooks/webhooks.js'
import { createWebhookEngine, enqueueEvent, type WebhookEngine } from '../../src/webhooks/index.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createProject, fakeResolver, manualClock, webhookConfig, type ManualClock, testKeyring } from './fixtures.js'
import { createSelfSignedCertificate, startReceiver, type Receiver, type SelfSignedCertificate } from './receivers.js'

describe(`webhook delivery to real receivers (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  let certificate: SelfSignedCertificate
  let certificateDirectory: string
  const receivers: Receiver[] = []
  const resolver = fakeResolver({ localhost: ['127.0.0.1'] })

  beforeAll(async () => {
    storage = await createTestStorage()
    certificateDirectory = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-webhook-cert-'))
    certificate = createSelfSignedCertificate(certificateDirectory)
  })
  afterAll(async () => {
    await storage.cleanup()
    await fs.rm(certificateDirectory, { recursive: true, force: true })
  })
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  })

  async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> {
    const started = await startReceiver(options)
    receivers.push(started)
    return started
  }

  interface Setup {
    engine: WebhookEngine
    clock: ManualClock
    projectId: string
    subscription: CreatedSubscription
  }

  async function setup(url: string, config = webhookConfig()): Promise<Setup> {
    const clock = manualClock()
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config, clock, resolver })
    const projectId = await createProject(storage.db.sql)
    const subscription = await createSubscription({ db: storage.db, guard: engine.guard, secrets: engine.secrets }, projectId, {
      url,
      event_types: ['enrollment.completed', 'demo.scan.success'],
    })
    return { engine, clock, projectId, subscription }
  }

  async function emit(
    projectId: string,
    data: Record<string, unknown> = { member_id: 'm-1', device_id: 'd-1', scanned_at: new Date().toISOString() },
  ): Promise<string> {
    return storage.db.sql.begin((tx) => enqueueEvent(tx, { projectId, eventType: 'demo.scan.success', data }))
  }

  async function history({ projectId, subscription }: Setup) {
    const { items } = await listDeliveries({ db: storage.db, guard: null as never, secrets: null as never }, projectId, subscription.id, {
      from: new Date(0),
      to: new Date(Date.now() + 365 * 86_400_000),
      page: 1,
      per_page: 10,
    })
    const attempts = items.length
      ? await listAttempts({ db: storage.db, guard: null as never, secrets: null as never }, projectId, subscription.id, items[0].id)
      : []
    return { delivery: items[0], attempts }
  }

  it('signs the raw body with X-Webhook-Signature and the Standard Webhooks headers', async () => {
    const target = await receiver()
    const context = await setup(target.url)
    const eventId = await emit(context.projectId, { member_id: 'm-1', device_id: 'd-1', scanned_at: '2026-01-02T03:04:05.678Z' })
    expect(await context.engine.runOnce()).toEqual({ events: 1, deliveries: 1, attempts: 1 })

    expect(target.requests).toHaveLength(1)
    const [request] = target.requests
    expect(request.method).toBe('POST')
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers['user-agent']).toMatch(/^palmvein-webhooks\/\d+\.\d+\.\d+/)
    const expected = 'sha256=' + createHmac('sha256', context.subscription.secret).update(request.body).digest('hex')
    expect(request.headers['x-webhook-signature']).toBe(expected)
    const body = JSON.parse(request.body)
    expect(Object.keys(body)).toEqual(['event_id', 'event_type', 'timestamp', 'project_id', 'data'])
    expect(body).toMatchObject({
      event_id: eventId,
      event_type: 'demo.scan.success',
      project_id: context.projectId,
      data: { member_id: 'm-1', device_id: 'd-1', scanned_at: '2026-01-02T03:04:05.678Z' },
    })
    expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(request.headers['webhook-id']).toBe(eventId)
    const verified = new Webhook(context.subscription.secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    })
    expect(verified).toEqual(body)

    const { delivery, attempts } = await history(context)
    expect(delivery).toMatchObject({ status: 'success', attempt_count: 1, attempt_pending: false, response_status: 200, response_body: 'ok' })
    expect(attempts).toEqual([expect.objectContaining({ attempt_number: 1, response_status: 200, response_body: 'ok', error_message: null })])
  })

  it('retries a 500 and succeeds on the following 200: two attempts', async () => {
    const target = await receiver({ respond: (_, index) => (index === 0 ? { status: 500, body: 'boom' } : { status: 200, body: 'fine' }) })
    const context = await setup(target.url)
    await emit(context.projectId)
    await context.engine.runOnce()
    let state = await history(context)
    expect(state.delivery).toMatchObject({ status: 'pending', attempt_pending: true, attempt_count: 1, response_status: 500, response_body: 'boom' })

    // Not due yet: nothing is sent before the scheduled time.
    expect((await context.engine.runOnce()).attempts).toBe(0)
    context.clock.advance(5_500)
    expect((await context.engine.runOnce()).attempts).toBe(1)
    state = await history(context)
    expect(state.delivery).toMatchObject({ status: 'success', attempt_pending: false, attempt_count: 2, response_status: 200 })
    expect(state.attempts.map((attempt) => [attempt.attempt_number, attempt.response_status])).toEqual([
      [1, 500],
      [2, 200],
    ])
    expect(target.requests[0].body).toBe(target.requests[1].body)
    expect(target.requests[0].headers['webhook-id']).toBe(target.requests[1].headers['webhook-id'])
  })

  it('records a 401 as 401', async () => {
    const target = await receiver({ respond: () => ({ status: 401, body: 'bad signature' }) })
    const context = await setup(target.url)
    await emit(context.projectId)
    await context.engine.runOnce()
    const { delivery, attempts } = await history(context)
    expect(delivery).toMatchObject({ status: 'pending', response_status: 401, response_body: 'bad signature' })
    expect(attempts[0]).toMatchObject({ response_status: 401, error_message: null })
  })

  it('gives up on a hanging receiver at the timeout: no status, an error, the duration of the timeout', async () => {
    const target = await receiver({ respond: () => 'hang' })
    const context = await setup(target.url, webhookConfig({ webhookTimeoutMs: 400 }))
    await emit(context.projectId)
    await context.engine.runOnce()
    const { delivery, attempts } = await history(context)
    expect(attempts).toHaveLength(1)
    expect(attempts[0].response_status).toBeNull()
    expect(attempts[0].error_message).toMatch(/timed out after 400 ms/)
    expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(390)
    expect(attempts[0].duration_ms).toBeLessThan(1500)
    expect(delivery).toMatchObject({ status: 'pending', attempt_pending: true, response_status: null })
  })

  it('treats a 302 as a failure and never follows it', async () => {
    const redirectTarget = await receiver()
    const target = await receiver({ respond: () => ({ status: 302, headers: { location: redirectTarget.url }, body: '' }) })
    const context = await setup(target.url)
    await emit(context.projectId)
    await context.engine.runOnce()
    const { delivery, attempts } = await history(context)
    expect(delivery).toMatchObject({ status: 'pending', response_status: 302 })
    expect(attempts[0]).toMatchObject({ response_status: 302, error_message: 'redirect not followed' })
    expect(redirectTarget.requests).toHaveLength(0)
    expect(redirectTarget.connections).toBe(0)
  })

  it('stores a 1 MB answer truncated to 100 KB', async () => {
    const target = await receiver({ respond: () => ({ status: 200, body: 'x'.repeat(1024 * 1024) }) })
    const context = await setup(target.url)
    await emit(context.projectId)
    await context.engine.runOnce()
    const { delivery, attempts } = await history(context)
    expect(delivery.status).toBe('success')
    expect(delivery.response_body).toHaveLength(100 * 1024)
    expect(attempts[0].response_body).toHaveLength(100 * 1024)
  })

  it('records a refused connection as an attempt error', async () => {
    const closed = await startReceiver()
    const url = closed.url
    await closed.close()
    const context = await setup(url)
    await emit(context.projectId)
    await context.engine.runOnce()
    const { attempts } = await history(context)
    expect(attempts[0]).toMatchObject({ response_status: null, error_message: expect.stringMatching(/ECONNREFUSED/) })
  })

  it('waits as long as a 503 Retry-After asks', async () => {
    const target = await receiver({ respond: () => ({ status: 503, headers: { 'retry-after': '600' }, body: 'busy' }) })
    const context = await setup(target.url)
    await emit(context.projectId)
    const before = context.clock.now().getTime()
    await context.engine.runOnce()
    const [row] = await storage.db.sql<{ next_attempt_at: Date }[]>`
      SELECT next_attempt_at FROM webhook_deliveries WHERE subscription_id = ${context.subscription.id}`
    expect(row.next_attempt_at.getTime() - before).toBe(600_000)
  })

  it('delivers over HTTPS to a self-signed receiver trusted through webhookCaFile', async () => {
    const target = await receiver({ tls: certificate, urlHost: 'localhost' })
    const context = await setup(target.url, webhookConfig({ webhookCaFile: certificate.certFile }))
    await emit(context.projectId)
    await context.engine.runOnce()
    expect(target.requests).toHaveLength(1)
    expect((await history(context)).delivery).toMatchObject({ status: 'success', response_status: 200 })
  })

  it('refuses the self-signed receiver without the extra CA: a TLS error, no status', async () => {
    const target = await receiver({ tls: certificate, urlHost: 'localhost' })
    const context = await setup(target.url)
    await emit(context.projectId)
    await context.engine.runOnce()
    expect(target.requests).toHaveLength(0)
    const { attempts } = await history(context)
    expect(attempts[0]).toMatchObject({ response_status: null, error_message: expect.stringMatching(/self[- ]signed/i) })
  })

  it('verifies the certificate against the URL host name, not the pinned address', async () => {
    // A trusted certificate for another name, served where localhost points: the connection goes
    // to the checked address, but TLS still verifies "localhost" and refuses.
    const elsewhere = createSelfSignedCertificate(certificateDirectory, ['DNS:elsewhere.test'])
    const target = await receiver({ tls: elsewhere, urlHost: 'localhost' })
    const context = await setup(target.url, webhookConfig({ webhookCaFile: elsewhere.certFile }))
    await emit(context.projectId)
    await context.engine.runOnce()
    const { attempts } = await history(context)
    expect(target.requests).toHaveLength(0)
    expect(attempts[0]).toMatchObject({ response_status: null, error_message: expect.stringMatching(/altnames|ERR_TLS_CERT_ALTNAME_INVALID/) })
  })

  it('connects to the address it checked, without a second lookup', async () => {
    // The system resolver says localhost is 127.0.0.1 or ::1; only our resolver says 127.0.0.2,
    // where the only receiver listens.
    const pinned = fakeResolver({ localhost: ['127.0.0.2'] })
    const target = await startReceiver({ host: '127.0.0.2', urlHost: 'localhost' })
    receivers.push(target)
    const clock = manualClock()
    const engine = createWebhookEngine({ keyring: testKeyring, db: storage.db, config: webhookConfig(), clock, resolver: pinned })
    const projectId = await createProject(storage.db.sql)
    await createSubscription({ db: storage.db, guard: engine.guard, secrets: engine.secrets }, projectId, {
      url: target.url,
      event_types: ['demo.scan.success'],
    })
    pinned.calls.length = 0
    await emit(projectId)
    await engine.runOnce()
    expect(target.requests).toHaveLength(1)
    expect(target.requests[0].headers.host).toBe(`localhost:${target.port}`)
    expect(pinned.calls).toEqual(['localhost'])
  })
})
