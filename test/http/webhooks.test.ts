// The webhook endpoints of the spec through the real service: CRUD, the test event delivered to a
// loopback receiver by the service's own worker, delivery history with paging and attempts.
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { expectProblem, expectStatus, type Response } from '../support/service.js'
import { useWebhookService } from '../support/webhook-service.js'

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe('webhook endpoints', () => {
  const w = useWebhookService('webhooks')
  const { path } = w
  const create = (body: unknown, auth = w.tenant.orgKey, projectId = w.tenant.projectId) => w.svc.request('POST', path('', projectId), { auth, body })

  it('creates, lists, reads, updates and deletes a subscription in the spec shapes', async () => {
    const created = await create({ url: 'http://127.0.0.1:9/first', event_types: ['enrollment.completed'] })
    expectStatus(created, 201)
    expect(Object.keys(created.body).sort()).toEqual(['created_at', 'enabled', 'event_types', 'id', 'secret', 'url'])
    expect(created.body).toMatchObject({ url: 'http://127.0.0.1:9/first', event_types: ['enrollment.completed'], enabled: true })
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(created.body.created_at).toMatch(ISO)
    const id = created.body.id

    const listed = await w.svc.request('GET', path(), { auth: w.tenant.token })
    expectStatus(listed, 200)
    const item = listed.body.find((subscription: { id: string }) => subscription.id === id)
    expect(item).toEqual({
      id,
      url: 'http://127.0.0.1:9/first',
      event_types: ['enrollment.completed'],
      enabled: true,
      created_at: created.body.created_at,
      updated_at: created.body.created_at,
    })
    expect(listed.text).not.toContain('whsec_')

    const read = await w.svc.request('GET', path(`/${id}`), { auth: w.tenant.orgKey })
    expectStatus(read, 200)
    expect(read.body).toEqual(item)

    const patched = await w.svc.request('PATCH', path(`/${id}`), {
      auth: w.tenant.token,
      body: { url: 'https://127.0.0.1:9/second', event_types: ['demo.scan.success', 'enrollment.completed'], enabled: false },
    })
    expectStatus(patched, 200)
    expect(patched.body).toMatchObject({ id, url: 'https://127.0.0.1:9/second', event_types: ['demo.scan.success', 'enrollment.completed'], enabled: false })
    expect(patched.body).not.toHaveProperty('secret')
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.created_at))
    const reenabled = await w.svc.request('PATCH', path(`/${id}`), { auth: w.tenant.orgKey, body: { enabled: true } })
    expect(reenabled.body).toMatchObject({ enabled: true, url: 'https://127.0.0.1:9/second' })

    // The singular alias of the guides answers the same.
    expectStatus(await w.svc.request('GET', `/v1/project/${w.tenant.projectId}/webhooks/${id}`, { auth: w.tenant.orgKey }), 200)

    const deleted = await w.svc.request('DELETE', path(`/${id}`), { auth: w.tenant.orgKey })
    expectStatus(deleted, 204)
    expect(deleted.text).toBe('')
    expectProblem(await w.svc.request('GET', path(`/${id}`), { auth: w.tenant.orgKey }), 404, 'not_found')
    expectProblem(await w.svc.request('DELETE', path(`/${id}`), { auth: w.tenant.orgKey }), 404, 'not_found')
  })

  it('refuses invalid bodies (400), event types outside the allowlist and unsafe URLs (422)', async () => {
    expectProblem(await create({ url: 'https://127.0.0.1/x', event_types: ['enrollment.completed'], colour: 'blue' }), 400, 'invalid_request')
    expectProblem(await create({ event_types: ['enrollment.completed'] }), 400, 'invalid_request')
    expectProblem(await create({ url: 'http://127.0.0.1:9/x', event_types: [] }), 400, 'invalid_request')
    expectProblem(await create({ url: 'http://127.0.0.1:9/x', event_types: ['webhook.test'] }), 422, 'event_type_not_allowed')
    expectProblem(await create({ url: 'http://127.0.0.1:9/x', event_types: ['member.deleted'] }), 422, 'event_type_not_allowed')
    for (const url of [
      'https://10.0.0.1/x',
      'https://169.254.169.254/latest',
      'https://[fd00::1]/x',
      'https://[::ffff:10.0.0.1]/x',
      'http://192.168.1.1/x',
      'ftp://127.0.0.1/x',
    ]) {
      const response = await create({ url, event_types: ['enrollment.completed'] })
      expectProblem(response, 422, 'webhook_url_rejected')
      expect(response.body.detail).toBeTruthy()
    }
    const created = await create({ url: 'http://127.0.0.1:9/x', event_types: ['enrollment.completed'] })
    expectStatus(created, 201)
    expectProblem(
      await w.svc.request('PATCH', path(`/${created.body.id}`), { auth: w.tenant.orgKey, body: { url: 'https://172.16.0.1/' } }),
      422,
      'webhook_url_rejected',
    )
    expectProblem(
      await w.svc.request('PATCH', path(`/${created.body.id}`), { auth: w.tenant.orgKey, body: { event_types: ['webhook.test'] } }),
      422,
      'event_type_not_allowed',
    )
    expectProblem(await w.svc.request('PATCH', path(`/${created.body.id}`), { auth: w.tenant.orgKey, body: { secret: 'mine' } }), 400, 'invalid_request')
  })

  it('allows at most 25 subscriptions per project', async () => {
    const projectId = w.tenant.secondProjectId
    for (let index = 0; index < 25; index += 1) {
      expectStatus(await create({ url: `http://127.0.0.1:9/n${index}`, event_types: ['demo.scan.success'] }, w.tenant.orgKey, projectId), 201)
    }
    expectProblem(
      await create({ url: 'http://127.0.0.1:9/too-many', event_types: ['demo.scan.success'] }, w.tenant.orgKey, projectId),
      422,
      'webhook_limit_reached',
    )
    const listed = await w.svc.request('GET', path('', projectId), { auth: w.tenant.orgKey })
    expect(listed.body).toHaveLength(25)
  })

  it("answers 404 for another project's or another organization's subscription", async () => {
    const created = await create({ url: 'http://127.0.0.1:9/mine', event_types: ['enrollment.completed'] })
    const id = created.body.id
    expectProblem(await w.svc.request('GET', path(`/${id}`, w.tenant.secondProjectId), { auth: w.tenant.orgKey }), 404, 'not_found')
    expectProblem(await w.svc.request('POST', path(`/${id}/test`, w.tenant.secondProjectId), { auth: w.tenant.orgKey }), 404, 'not_found')
    expectProblem(await w.svc.request('GET', path(`/${id}`), { auth: w.other.orgKey }), 404, 'not_found')
    expectProblem(await w.svc.request('GET', path(`/${id}`, w.other.projectId), { auth: w.other.orgKey }), 404, 'not_found')
    expectProblem(await w.svc.request('GET', path(`/${newId()}`), { auth: w.tenant.orgKey }), 404, 'not_found')
  })

  it('sends a signed webhook.test event through the worker and shows it in the history', async () => {
    const receiver = await w.receiver()
    const created = await create({ url: receiver.url, event_types: ['enrollment.completed'] })
    const id = created.body.id
    const tested = await w.svc.request('POST', path(`/${id}/test`), { auth: w.tenant.orgKey })
    expectStatus(tested, 200)
    expect(Object.keys(tested.body).sort()).toEqual(['message', 'test_id'])

    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(1)
    const [request] = receiver.requests
    expect(request.headers['x-webhook-signature']).toBe('sha256=' + createHmac('sha256', created.body.secret).update(request.body).digest('hex'))
    const body = JSON.parse(request.body)
    expect(body).toMatchObject({
      event_type: 'webhook.test',
      project_id: w.tenant.projectId,
      data: { test_id: tested.body.test_id, message: tested.body.message },
    })
    expect(body.data.triggered_at).toMatch(ISO)

    const window = `from=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`
    let page: Response = await w.svc.request('GET', path(`/${id}/deliveries?${window}&page=1&per_page=10`), { auth: w.tenant.orgKey })
    await expect
      .poll(
        async () => {
          page = await w.svc.request('GET', path(`/${id}/deliveries?${window}&page=1&per_page=10`), { auth: w.tenant.orgKey })
          return page.body.items?.[0]?.status
        },
        { timeout: 10_000 },
      )
      .toBe('success')
    expectStatus(page, 200)
    expect(page.body.total_count).toBe(1)
    const [delivery] = page.body.items
    expect(delivery).toEqual({
      id: expect.any(String),
      subscription_id: id,
      payload: { event_id: body.event_id, timestamp: body.timestamp, project_id: w.tenant.projectId, data: { event_type: 'webhook.test', ...body.data } },
      attempt_count: 1,
      attempt_pending: false,
      response_status: 200,
      response_body: 'ok',
      status: 'success',
      created_at: expect.stringMatching(ISO),
      last_attempt_at: expect.stringMatching(ISO),
    })

    const attempts = await w.svc.request('GET', path(`/${id}/deliveries/${delivery.id}/attempts`), { auth: w.tenant.token })
    expectStatus(attempts, 200)
    expect(attempts.body).toEqual([
      {
        id: expect.any(String),
        delivery_id: delivery.id,
        attempt_number: 1,
        attempted_at: expect.stringMatching(ISO),
        response_status: 200,
        response_body: 'ok',
        error_message: null,
        duration_ms: expect.any(Number),
      },
    ])
    expectProblem(await w.svc.request('GET', path(`/${id}/deliveries/${newId()}/attempts`), { auth: w.tenant.orgKey }), 404, 'not_found')
  })

  it('pages deliveries newest first within [from, to], with total_count', async () => {
    const created = await create({ url: 'http://127.0.0.1:9/history', event_types: ['enrollment.completed'], enabled: false })
    const id = created.body.id
    const sql = w.svc.storage.db.sql
    const start = Date.parse('2026-02-01T00:00:00.000Z')
    const ids: string[] = []
    for (let index = 0; index < 25; index += 1) {
      const deliveryId = newId()
      ids.push(deliveryId)
      const createdAt = new Date(start + index * 60_000)
      // Already failed: the worker leaves them alone.
      await sql`INSERT INTO webhook_deliveries (id, subscription_id, project_id, event_id, event_type, payload, status, attempt_count, created_at)
        VALUES (${deliveryId}, ${id}, ${w.tenant.projectId}, ${newId()}, 'enrollment.completed',
                ${sql.json({ event_id: 'e', event_type: 'enrollment.completed', timestamp: createdAt.toISOString(), project_id: w.tenant.projectId, data: { member_id: `m${index}` } })},
                'failed', 336, ${createdAt})`
    }
    const get = (query: string) => w.svc.request('GET', path(`/${id}/deliveries?${query}`), { auth: w.tenant.orgKey })
    const all = 'from=2026-02-01T00:00:00.000Z&to=2026-02-01T01:00:00.000Z'
    const first = await get(`${all}&page=1&per_page=10`)
    expectStatus(first, 200)
    expect(first.body.total_count).toBe(25)
    expect(first.body.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(15).reverse())
    expect(first.body.items[0]).toMatchObject({ status: 'failed', attempt_pending: false, response_status: null, response_body: null, last_attempt_at: null })
    expect(first.body.items[0].payload.data).toEqual({ event_type: 'enrollment.completed', member_id: 'm24' })
    const third = await get(`${all}&page=3&per_page=10`)
    expect(third.body.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(0, 5).reverse())
    const beyond = await get(`${all}&page=4&per_page=10`)
    expect(beyond.body).toEqual({ items: [], total_count: 25 })
    const window = await get('from=2026-02-01T00:05:00.000Z&to=2026-02-01T00:09:00.000Z&page=1&per_page=10')
    expect(window.body.total_count).toBe(5)
    expect(window.body.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(5, 10).reverse())

    for (const query of [
      `${all}&page=1&per_page=9`,
      `${all}&page=1&per_page=1001`,
      `${all}&page=0&per_page=10`,
      `${all}&per_page=10`,
      'to=2026-02-01T01:00:00.000Z&page=1&per_page=10',
      'from=yesterday&to=2026-02-01T01:00:00.000Z&page=1&per_page=10',
      'from=2026-02-02T00:00:00.000Z&to=2026-02-01T00:00:00.000Z&page=1&per_page=10',
    ]) {
      expectProblem(await get(query), 400, 'invalid_request')
    }
    expectStatus(await get(`${all}&page=1&per_page=1000`), 200)
  })

  it('filters deliveries by status and event type, total_count counting the filtered ones', async () => {
    const created = await create({ url: 'http://127.0.0.1:9/filtered', event_types: ['enrollment.completed', 'demo.scan.success'], enabled: false })
    const id = created.body.id
    const sql = w.svc.storage.db.sql
    const start = Date.parse('2026-03-01T00:00:00.000Z')
    const kinds = [
      ['enrollment.completed', 'failed'],
      ['demo.scan.success', 'failed'],
      ['enrollment.completed', 'success'],
      ['webhook.test', 'success'],
    ] as const
    const made: Array<{ id: string; type: string; status: string }> = []
    for (let index = 0; index < 12; index += 1) {
      const [type, status] = kinds[index % kinds.length]
      const deliveryId = newId()
      made.push({ id: deliveryId, type, status })
      const createdAt = new Date(start + index * 60_000)
      await sql`INSERT INTO webhook_deliveries (id, subscription_id, project_id, event_id, event_type, payload, status, attempt_count, created_at)
        VALUES (${deliveryId}, ${id}, ${w.tenant.projectId}, ${newId()}, ${type},
                ${sql.json({ event_id: 'e', event_type: type, timestamp: createdAt.toISOString(), project_id: w.tenant.projectId, data: {} })},
                ${status}, 1, ${createdAt})`
    }
    const all = 'from=2026-03-01T00:00:00.000Z&to=2026-03-01T01:00:00.000Z&page=1&per_page=10'
    const get = (filter: string) => w.svc.request('GET', path(`/${id}/deliveries?${all}&${filter}`), { auth: w.tenant.orgKey })
    const expected = (keep: (row: (typeof made)[number]) => boolean) =>
      made
        .filter(keep)
        .map((row) => row.id)
        .reverse()
    const failed = await get('status=failed')
    expectStatus(failed, 200)
    expect(failed.body.total_count).toBe(6)
    expect(failed.body.items.map((item: { id: string }) => item.id)).toEqual(expected((row) => row.status === 'failed'))
    const enrollments = await get('event_type=enrollment.completed')
    expect(enrollments.body.total_count).toBe(6)
    expect(enrollments.body.items.map((item: { id: string }) => item.id)).toEqual(expected((row) => row.type === 'enrollment.completed'))
    const both = await get('status=success&event_type=webhook.test')
    expect(both.body.items.map((item: { id: string }) => item.id)).toEqual(expected((row) => row.status === 'success' && row.type === 'webhook.test'))
    expect(both.body.total_count).toBe(3)
    // A page past the filtered rows still reports their total.
    expect((await get('status=pending')).body).toEqual({ items: [], total_count: 0 })
    for (const filter of ['status=delivered', 'status=', 'event_type=', `event_type=${'x'.repeat(101)}`]) {
      expectProblem(await get(filter), 400, 'invalid_request', filter)
    }
  })

  it('keeps secrets sealed at rest: the stored row does not reveal the secret, and the delivery is still signed with it', async () => {
    const receiver = await w.receiver()
    const created = await create({ url: receiver.url, event_types: ['enrollment.completed'] })
    const secret: string = created.body.secret
    const [row] = await w.svc.storage.db.sql<{ dump: string; secret: string | null; sealed: Buffer | null }[]>`
      SELECT row_to_json(s)::text AS dump, s.secret, s.secret_sealed AS sealed FROM webhook_subscriptions s WHERE s.id = ${created.body.id}`
    expect(row.secret).toBeNull()
    expect(row.sealed).not.toBeNull()
    for (const revealing of [secret, secret.slice('whsec_'.length), Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex')]) {
      expect(row.dump).not.toContain(revealing)
      expect(row.sealed!.includes(Buffer.from(revealing))).toBe(false)
    }
    expectStatus(await w.svc.request('POST', path(`/${created.body.id}/test`), { auth: w.tenant.orgKey }), 200)
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(1)
    expect(receiver.requests[0].headers['x-webhook-signature']).toBe('sha256=' + createHmac('sha256', secret).update(receiver.requests[0].body).digest('hex'))
  })

  it('seals a secret an earlier version stored in plaintext when the service starts, and signs with it as before', async () => {
    const receiver = await w.receiver()
    const legacy = 'whsec_' + Buffer.alloc(32, 7).toString('base64')
    const id = newId()
    await w.svc.storage.db.sql`INSERT INTO webhook_subscriptions (id, project_id, url, secret, event_types)
      VALUES (${id}, ${w.tenant.projectId}, ${receiver.url}, ${legacy}, ${['enrollment.completed']})`
    await w.svc.restart({ webhookWorker: true, webhookAllowLocalhost: true, webhookTimeoutMs: 2000 })
    const [row] = await w.svc.storage.db.sql<{ secret: string | null; sealed: Buffer | null }[]>`
      SELECT secret, secret_sealed AS sealed FROM webhook_subscriptions WHERE id = ${id}`
    expect(row).toEqual({ secret: null, sealed: expect.any(Buffer) })
    expectStatus(await w.svc.request('POST', path(`/${id}/test`), { auth: w.tenant.orgKey }), 200)
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(1)
    expect(receiver.requests[0].headers['x-webhook-signature']).toBe('sha256=' + createHmac('sha256', legacy).update(receiver.requests[0].body).digest('hex'))
  })
})
