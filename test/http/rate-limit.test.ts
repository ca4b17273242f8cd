import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { awaitFreshMinute } from '../support/fresh-minute.js'

describe('rate limits', () => {
  let svc: TestService
  let tenant: Tenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'limits@example.com', { plan: 'sandbox' })
  })
  afterAll(async () => {
    await svc.close()
  })

  it('gives a sandbox project exactly 5 requests a minute, then 429 rate_limited with Retry-After', async () => {
    await awaitFreshMinute(15)
    const path = `/v1/projects/${tenant.projectId}`
    for (let index = 0; index < 5; index++) {
      const response = await svc.request('GET', path, { auth: index % 2 ? tenant.token : tenant.orgKey })
      expectStatus(response, 200)
      expect(response.headers.get('ratelimit-limit')).toBe('5')
      expect(response.headers.get('ratelimit-remaining')).toBe(String(4 - index))
      const reset = Number(response.headers.get('ratelimit-reset'))
      expect(reset).toBeGreaterThanOrEqual(1)
      expect(reset).toBeLessThanOrEqual(60)
    }
    for (let index = 0; index < 3; index++) {
      const refused = await svc.request('GET', index === 2 ? `/v1/project/${tenant.projectId}` : path, { auth: tenant.orgKey })
      expectStatus(refused, 429)
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(refused.body.code).toBe('rate_limited')
      const retryAfter = Number(refused.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    }
    // Every route of the project shares the budget; the other project and GET /v1/projects do not.
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}/api-keys`, { auth: tenant.token }), 429)
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.secondProjectId}`, { auth: tenant.orgKey }), 200)
    expectStatus(await svc.request('GET', '/v1/projects', { auth: tenant.orgKey }), 200)
    // Refused requests are not counted, unauthenticated ones never reach the counter.
    const [counter] = await svc.storage.db.sql<{ count: number }[]>`
      SELECT count FROM rate_limit_counters WHERE project_id = ${tenant.projectId} AND bucket = 'minute' ORDER BY window_start DESC LIMIT 1`
    expect(counter.count).toBe(5)
  }, 60_000)

  it('refuses with 429 daily_limit_reached once the daily limit is used, until the next UTC day', async () => {
    await awaitFreshMinute(10)
    await svc.storage.db.sql`UPDATE projects SET daily_request_limit = 3, requests_per_minute = 5000, plan = 'enterprise' WHERE id = ${tenant.secondProjectId}`
    const [{ used }] = await svc.storage.db.sql<{ used: number }[]>`
      SELECT coalesce(sum(count), 0)::int AS used FROM rate_limit_counters WHERE project_id = ${tenant.secondProjectId} AND bucket = 'day'`
    const path = `/v1/projects/${tenant.secondProjectId}`
    for (let index = used; index < 3; index++) {
      const response = await svc.request('GET', path, { auth: tenant.orgKey })
      expectStatus(response, 200)
      expect(response.body.plan.daily_request_limit).toBe(3)
    }
    const refused = await svc.request('GET', path, { auth: tenant.orgKey })
    expectStatus(refused, 429)
    expect(refused.body.code).toBe('daily_limit_reached')
    const retryAfter = Number(refused.headers.get('retry-after'))
    const untilMidnight = Math.ceil((Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000)
    expect(Math.abs(retryAfter - untilMidnight)).toBeLessThanOrEqual(5)
    expect(refused.headers.get('ratelimit-limit')).toBe('3')
  }, 60_000)
})
