// Limits hold in total across service processes sharing one database: two start() services on the
// same storage, each with its own limiter and connection pool (on PGlite they share the one
// in-process database, as two processes would share its socket; on PostgreSQL they are as
// independent as two processes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PERSON_REQUESTS_PER_MINUTE } from '../../src/auth/self-enrollment-limits.js'
import { start, type Service } from '../../src/server.js'
import { createProjectOnPlan } from '../support/plans.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, request, serviceConfig, type TestService } from '../support/service.js'
import { awaitFreshMinute } from '../support/fresh-minute.js'

describe('rate limits across two service processes on one database', () => {
  let svc: TestService
  let second: Service
  let tenant: Tenant
  beforeAll(async () => {
    svc = await bootService()
    second = await start({ config: serviceConfig(svc.storage) })
    tenant = await createTenant(svc, 'shared-limits@example.com', { plan: 'sandbox' })
  })
  afterAll(async () => {
    await second?.close()
    await svc?.close()
  })

  const minuteCount = async (projectId: string) => {
    const [row] = await svc.storage.db.sql<{ count: number }[]>`
      SELECT count FROM rate_limit_counters WHERE project_id = ${projectId} AND bucket = 'minute' ORDER BY window_start DESC LIMIT 1`
    return row?.count ?? 0
  }

  it('a sandbox project gets exactly 5 requests a minute in total, whichever process serves them', async () => {
    await awaitFreshMinute(15)
    const urls = [svc.url, second.url]
    const statuses: number[] = []
    for (let index = 0; index < 12; index++) {
      statuses.push((await request(urls[index % 2], 'GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.orgKey })).status)
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(5)
    expect(statuses.slice(5).every((status) => status === 429)).toBe(true)
    expect(await minuteCount(tenant.projectId)).toBe(5)
  }, 60_000)

  it("a person's self-enrollment budget holds in total, whichever process serves them", async () => {
    await awaitFreshMinute(15)
    const person = await svc.token('shared-person@people.example')
    const urls = [svc.url, second.url]
    const statuses: number[] = []
    for (let index = 0; index < PERSON_REQUESTS_PER_MINUTE + 4; index++) {
      statuses.push((await request(urls[index % 2], 'GET', '/v1/self-enrollment/me', { auth: person })).status)
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(PERSON_REQUESTS_PER_MINUTE)
    expect(statuses.slice(PERSON_REQUESTS_PER_MINUTE).every((status) => status === 429)).toBe(true)
  }, 60_000)

  it('a large limit served from leases never goes over in total, and loses at most a lease per process', async () => {
    await awaitFreshMinute(45)
    const limit = 300 // leases of 3 requests
    await svc.storage.db.sql`UPDATE projects SET plan = 'enterprise', requests_per_minute = ${limit} WHERE id = ${tenant.secondProjectId}`
    const urls = [svc.url, second.url]
    let ok = 0
    let refused = 0
    let next = 0
    // Eight concurrent clients, half on each process, until 30 requests past the limit.
    await Promise.all(
      Array.from({ length: 8 }, async (_, client) => {
        while (next < limit + 30) {
          next += 1
          const response = await request(urls[client % 2], 'GET', `/v1/projects/${tenant.secondProjectId}`, { auth: tenant.orgKey })
          if (response.status === 200) ok += 1
          else if (response.status === 429) refused += 1
          else expectStatus(response, 200)
        }
      }),
    )
    expect(ok).toBeLessThanOrEqual(limit)
    expect(ok).toBeGreaterThanOrEqual(limit - 2 * 2)
    expect(refused).toBeGreaterThanOrEqual(30)
    expect(await minuteCount(tenant.secondProjectId)).toBeLessThanOrEqual(limit)
  }, 120_000)

  it('leases in batches, and gives unused leased requests back when a process stops', async () => {
    await awaitFreshMinute(20)
    const project = await createProjectOnPlan(svc, tenant.token, tenant.orgId, { name: 'leased', environment_id: tenant.environmentId, plan: 'enterprise' })
    await svc.storage.db.sql`UPDATE projects SET requests_per_minute = 1000 WHERE id = ${project.id}`
    const third = await start({ config: serviceConfig(svc.storage) })
    try {
      for (let index = 0; index < 15; index++) {
        const response = await request(third.url, 'GET', `/v1/projects/${project.id}`, { auth: tenant.orgKey })
        expectStatus(response, 200)
        expect(response.headers.get('ratelimit-remaining')).toBe(String(1000 - index - 1))
      }
      // Two leases of 10: 20 counted for 15 served.
      expect(await minuteCount(project.id)).toBe(20)
    } finally {
      await third.close()
    }
    expect(await minuteCount(project.id)).toBe(15)
  }, 60_000)
})
