// Prometheus metrics on their own listener: the text parses (with a parser), counters and
// histograms move with the requests that cause them, route labels are templates, and the public
// port has no /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { scrape, valueOf } from '../support/metrics.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'
import { startReceiver } from '../webhooks/receivers.js'

const palms = population({ identities: 10 })

describe('Prometheus metrics', () => {
  let svc: TestService
  let tenant: PalmTenant
  beforeAll(async () => {
    svc = await bootService({ config: { registrationsPerMinute: 1, webhookWorker: true, webhookAllowLocalhost: true, webhookTimeoutMs: 2000 } })
    await waitUntilReady(svc.url)
    tenant = await createPalmTenant(svc, 'metrics@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('serves the default process metrics and every palmvein family on the metrics listener, not on the public port', async () => {
    expect(new URL(svc.service.metricsUrl!).port).not.toBe(new URL(svc.url).port)
    const families = await scrape(svc)
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'process_resident_memory_bytes',
      'palmvein_http_requests_total',
      'palmvein_http_request_duration_seconds',
      'palmvein_identify_total',
      'palmvein_matcher_scan_seconds',
      'palmvein_gallery_rows',
      'palmvein_gallery_loading',
      'palmvein_match_threshold',
      'palmvein_webhook_attempts_total',
      'palmvein_webhook_pending_deliveries',
      'palmvein_rate_limited_total',
      'palmvein_db_query_duration_seconds',
    ]) {
      expect(families.has(name), name).toBe(true)
    }
    expectProblem(await svc.request('GET', '/metrics'), 404, 'not_found')
    expect((await fetch(svc.service.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404)
  })

  it('serves on without metrics when their port is taken, and /healthz warns', async () => {
    const taken = new URL(svc.service.metricsUrl!)
    const other = await bootService({ config: { metrics: { host: '127.0.0.1', port: Number(taken.port) } } })
    try {
      expect(other.service.metricsUrl).toBeNull()
      const health = await fetch(`${other.url}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.text()).toMatch(new RegExp(`WARNING metrics: cannot listen on 127\\.0\\.0\\.1:${taken.port} \\(EADDRINUSE\\)`))
    } finally {
      await other.close()
    }
  })

  it('counts requests by route template and status, never by a path with ids', async () => {
    const route = '/v1/projects/{project_id}'
    const before = await scrape(svc)
    for (let index = 0; index < 3; index++) expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.key }), 200)
    expectStatus(await svc.request('GET', '/v1/projects/00000000-0000-7000-8000-000000000000', { auth: tenant.key }), 404)
    const after = await scrape(svc)
    expect(
      valueOf(after, 'palmvein_http_requests_total', { method: 'GET', route, status: '200' }) -
        valueOf(before, 'palmvein_http_requests_total', { method: 'GET', route, status: '200' }),
    ).toBe(3)
    expect(
      valueOf(after, 'palmvein_http_requests_total', { method: 'GET', route, status: '404' }) -
        valueOf(before, 'palmvein_http_requests_total', { method: 'GET', route, status: '404' }),
    ).toBe(1)
    expect(
      valueOf(after, 'palmvein_http_request_duration_seconds', { method: 'GET', route }) -
        valueOf(before, 'palmvein_http_request_duration_seconds', { method: 'GET', route }),
    ).toBe(4)
    expect(valueOf(after, 'palmvein_db_query_duration_seconds')).toBeGreaterThan(valueOf(before, 'palmvein_db_query_duration_seconds'))
    const labels = [...after.values()].flatMap((family) => family.data.map((metric) => JSON.stringify(metric.labels)))
    expect(labels.some((text) => text.includes(tenant.projectId))).toBe(false)
  })

  it('counts identifications by status, matcher passes, and the gallery rows of each environment', async () => {
    const memberId = await createMember(svc, tenant, 'Counted')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 0, memberId)), 200)
    const before = await scrape(svc)
    expect(valueOf(before, 'palmvein_gallery_rows', { environment_id: tenant.environmentId })).toBe(2)
    expect(valueOf(before, 'palmvein_gallery_loading', { environment_id: tenant.environmentId })).toBe(0)
    expect(valueOf(before, 'palmvein_match_threshold', { environment_id: tenant.environmentId })).toBe(0.8)
    expect((await identify(svc, tenant, identifyBody(palms, 0, 'left'))).status).toBe('Found')
    expect((await identify(svc, tenant, identifyBody(palms, 0, 'right'))).status).toBe('Found')
    expect((await identify(svc, tenant, identifyBody(palms, 7, 'left'))).status).toBe('NotFound')
    const after = await scrape(svc)
    const moved = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels)
    expect(moved('palmvein_identify_total', { status: 'Found' })).toBe(2)
    expect(moved('palmvein_identify_total', { status: 'NotFound' })).toBe(1)
    expect(moved('palmvein_matcher_scan_seconds', { batch: '1' })).toBeGreaterThanOrEqual(3)
  })

  it('counts requests refused with 429', async () => {
    const before = valueOf(await scrape(svc), 'palmvein_rate_limited_total')
    const register = () => svc.request('POST', '/v1/device-com/registration', { body: { hardware_platform: 'android', mode: 'enrollment' } })
    await register()
    expectProblem(await register(), 429, 'rate_limited')
    expect(valueOf(await scrape(svc), 'palmvein_rate_limited_total') - before).toBe(1)
  })

  it('counts webhook attempts by outcome and shows the deliveries still pending', async () => {
    const receiver = await startReceiver({ respond: (_request, index) => ({ status: index === 0 ? 500 : 200 }) })
    try {
      const created = await svc.request('POST', `/v1/projects/${tenant.projectId}/webhooks`, {
        auth: tenant.key,
        body: { url: receiver.url, event_types: ['enrollment.completed'] },
      })
      expectStatus(created, 201)
      const before = await scrape(svc)
      expectStatus(await svc.request('POST', `/v1/projects/${tenant.projectId}/webhooks/${created.body.id}/test`, { auth: tenant.key }), 200)
      await expect
        .poll(
          async () =>
            valueOf(await scrape(svc), 'palmvein_webhook_attempts_total', { outcome: 'retry' }) -
            valueOf(before, 'palmvein_webhook_attempts_total', { outcome: 'retry' }),
          { timeout: 10_000 },
        )
        .toBe(1)
      // The retry waits its backoff: the delivery is pending meanwhile.
      expect(valueOf(await scrape(svc), 'palmvein_webhook_pending_deliveries')).toBe(1)
    } finally {
      await receiver.close()
    }
  })
})
