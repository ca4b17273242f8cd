// Webhook recovery through HTTP: resend one delivery, recover every failure since a time, a
// receiver's 410 Gone disables its subscription at once, 5 days of failures disable it, and
// PATCH enabled: true brings it back.
import { describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { expectProblem, expectStatus } from '../support/service.js'
import { useWebhookService } from '../support/webhook-service.js'
import type { Receiver } from '../webhooks/receivers.js'

describe('webhook recovery', () => {
  const w = useWebhookService('recovery')
  const { path } = w
  const post = (suffix: string, body?: unknown, auth = w.tenant.orgKey) => w.svc.request('POST', path(suffix), { auth, body })
  async function subscribe(receiver: Receiver): Promise<string> {
    const created = await post('', { url: receiver.url, event_types: ['enrollment.completed'] })
    expectStatus(created, 201)
    return created.body.id
  }
  async function receive(status: number): Promise<Receiver> {
    return w.receiver({ respond: () => ({ status, body: `answered ${status}` }) })
  }
  async function deliveries(id: string) {
    const window = `from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`
    const page = await w.svc.request('GET', path(`/${id}/deliveries?${window}&page=1&per_page=100`), { auth: w.tenant.orgKey })
    expectStatus(page, 200)
    return page.body.items as Array<{ id: string; status: string; payload: { event_id: string } }>
  }
  const subscription = async (id: string) => (await w.svc.request('GET', path(`/${id}`), { auth: w.tenant.orgKey })).body
  const eventIdOf = (receiver: Receiver, index: number) => JSON.parse(receiver.requests[index].body).event_id

  it('resends a delivery as a new delivery of the same event, answered with the new delivery', async () => {
    const receiver = await receive(200)
    const id = await subscribe(receiver)
    expectStatus(await post(`/${id}/test`), 200)
    await expect.poll(async () => (await deliveries(id))[0]?.status, { timeout: 10_000 }).toBe('success')
    const [original] = await deliveries(id)

    const resent = await post(`/${id}/deliveries/${original.id}/resend`)
    expectStatus(resent, 201)
    expect(resent.body).toMatchObject({ subscription_id: id, status: 'pending', attempt_count: 0, payload: original.payload })
    expect(resent.body.id).not.toBe(original.id)
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(2)
    expect(eventIdOf(receiver, 1)).toBe(eventIdOf(receiver, 0))
    await expect.poll(async () => (await deliveries(id)).map((delivery) => delivery.status), { timeout: 10_000 }).toEqual(['success', 'success'])

    expectProblem(await post(`/${id}/deliveries/${newId()}/resend`), 404, 'not_found')
    // Another tenant's project, or its key on this one: not found, and nothing is sent.
    expectProblem(await w.svc.request('POST', path(`/${id}/deliveries/${original.id}/resend`, w.other.projectId), { auth: w.other.orgKey }), 404, 'not_found')
    expectProblem(await post(`/${id}/deliveries/${original.id}/resend`, undefined, w.other.orgKey), 404, 'not_found')
    expect(await deliveries(id)).toHaveLength(2)
  })

  it('disables a subscription whose receiver answers 410 Gone, refuses recovery until it is enabled again, then recovers each failure once', async () => {
    const receiver = await receive(410)
    const id = await subscribe(receiver)
    const since = new Date(Date.now() - 1000).toISOString()
    expectStatus(await post(`/${id}/test`), 200)
    await expect.poll(async () => (await subscription(id)).disabled_reason, { timeout: 10_000 }).toBe('gone')
    expect(await subscription(id)).toMatchObject({ enabled: false, disabled_reason: 'gone' })
    // No retry after a 410: the delivery failed at once.
    expect((await deliveries(id)).map((delivery) => delivery.status)).toEqual(['failed'])
    expect(receiver.requests).toHaveLength(1)

    expectProblem(await post(`/${id}/recover`, { since }), 409, 'webhook_disabled')
    expectProblem(await post(`/${id}/deliveries/${(await deliveries(id))[0].id}/resend`), 409, 'webhook_disabled')
    const enabled = await w.svc.request('PATCH', path(`/${id}`), { auth: w.tenant.orgKey, body: { enabled: true } })
    expectStatus(enabled, 200)
    expect(enabled.body.enabled).toBe(true)
    expect(enabled.body).not.toHaveProperty('disabled_reason')

    receiver.respond = () => ({ status: 200, body: 'back' })
    const recovered = await post(`/${id}/recover`, { since })
    expectStatus(recovered, 200)
    expect(recovered.body).toEqual({ resent: 1 })
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(2)
    expect(eventIdOf(receiver, 1)).toBe(eventIdOf(receiver, 0))
    await expect.poll(async () => (await deliveries(id)).map((delivery) => delivery.status).sort(), { timeout: 10_000 }).toEqual(['failed', 'success'])
    // The failure was sent again already: a second recovery has nothing to send.
    expect((await post(`/${id}/recover`, { since })).body).toEqual({ resent: 0 })
    // Failures before `since` stay as they are.
    expect((await post(`/${id}/recover`, { since: new Date(Date.now() + 60_000).toISOString() })).body).toEqual({ resent: 0 })
  })

  it('disables a subscription whose deliveries have all failed for 5 days; a success ends the streak', async () => {
    const failing = await receive(500)
    const id = await subscribe(failing)
    await w.svc.storage.db.sql`UPDATE webhook_subscriptions SET failing_since = now() - interval '4 days 23 hours' WHERE id = ${id}`
    expectStatus(await post(`/${id}/test`), 200)
    await expect.poll(() => failing.requests.length, { timeout: 10_000 }).toBe(1)
    // Not yet 5 days: still enabled, retrying.
    await expect.poll(async () => (await deliveries(id))[0]?.status, { timeout: 10_000 }).toBe('pending')
    expect(await subscription(id)).toMatchObject({ enabled: true })

    await w.svc.storage.db.sql`UPDATE webhook_subscriptions SET failing_since = now() - interval '5 days 1 hour' WHERE id = ${id}`
    expectStatus(await post(`/${id}/test`), 200)
    await expect.poll(async () => (await subscription(id)).disabled_reason, { timeout: 10_000 }).toBe('failing')
    expect((await subscription(id)).enabled).toBe(false)

    const healthy = await receive(200)
    const recovering = await subscribe(healthy)
    await w.svc.storage.db.sql`UPDATE webhook_subscriptions SET failing_since = now() - interval '6 days' WHERE id = ${recovering}`
    expectStatus(await post(`/${recovering}/test`), 200)
    await expect
      .poll(
        async () => {
          const [row] = await w.svc.storage.db.sql<
            Array<{ failing_since: Date | null }>
          >`SELECT failing_since FROM webhook_subscriptions WHERE id = ${recovering}`
          return row.failing_since
        },
        { timeout: 10_000 },
      )
      .toBeNull()
    expect(await subscription(recovering)).toMatchObject({ enabled: true })
  })

  it('refuses a recovery without a valid since, changing nothing', async () => {
    const id = await subscribe(await receive(200))
    for (const body of [{}, { since: 'yesterday' }, { since: '2026-01-01T00:00:00Z', extra: 1 }]) {
      expectProblem(await post(`/${id}/recover`, body), 400, 'invalid_request')
    }
    expectProblem(await post(`/${newId()}/recover`, { since: '2026-01-01T00:00:00Z' }), 404, 'not_found')
    expect(await deliveries(id)).toEqual([])
  })
})
