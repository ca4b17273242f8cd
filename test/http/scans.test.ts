import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 30 })
const posture = { x: 3, y: -4, z: 55.5, pitch: 1, roll: 2, yaw: 3 }

describe(`scan results (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let memberId: string
  let from: string
  const list = (query: Record<string, string | number>, auth = tenant.key) =>
    svc.request('GET', `/v1/projects/${tenant.projectId}/scans/results?${new URLSearchParams(query as Record<string, string>)}`, { auth })
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'scans@example.com')
    from = new Date(Date.now() - 1000).toISOString()
    memberId = await createMember(svc, tenant)
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 0, memberId)), 200)
    const found = identifyBody(palms, 0, 'right')
    await identify(svc, tenant, { palm: { ...found.palm, palm_position: posture } }, '?k=2')
    await identify(svc, tenant, identifyBody(palms, 20, 'left'))
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('records every enroll and identify, newest first, with the spec keys', async () => {
    const response = await list({ from, to: new Date(Date.now() + 1000).toISOString(), page: 1, per_page: 10 })
    expectStatus(response, 200)
    expect(response.body).toHaveLength(3)
    const [notFound, found, enrolled] = response.body
    const keys = ['id', 'caller_type', 'operation_type', 'response_time_ms', 'success', 'created_at', 'posture', 'results', 'member_id']
    for (const scan of response.body) expect(Object.keys(scan).sort()).toEqual([...keys].sort())
    expect(notFound).toMatchObject({ caller_type: 'api_key', operation_type: 'identify', success: 'false', member_id: null, posture: null })
    expect(notFound.results).toEqual([{ match_score: expect.any(Number), position: 1 }])
    expect(found).toMatchObject({ caller_type: 'api_key', operation_type: 'identify', success: 'true', member_id: memberId, posture })
    expect(found.results).toEqual([{ match_score: expect.any(Number), position: 1 }])
    expect(found.results[0].match_score).toBeGreaterThan(0.8)
    expect(enrolled).toMatchObject({ caller_type: 'api_key', operation_type: 'enroll', success: 'true', member_id: null, results: [] })
    expect(enrolled.posture).toEqual({ x: 1, y: 2, z: 60, pitch: 0, roll: 1.5, yaw: -2 })
    for (const scan of response.body) {
      expect(Number.isInteger(scan.response_time_ms) && scan.response_time_ms >= 0).toBe(true)
      expect(scan.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
    expect(notFound.created_at >= found.created_at && found.created_at >= enrolled.created_at).toBe(true)
    // A token of the organization's admin reads the same page.
    expect((await list({ from, to: new Date(Date.now() + 1000).toISOString(), page: 1, per_page: 10 }, tenant.token)).body).toEqual(response.body)
  })

  it('filters by the window and pages', async () => {
    const to = new Date(Date.now() + 1000).toISOString()
    expect((await list({ from, to, page: 2, per_page: 10 })).body).toEqual([])
    expect((await list({ from: '2020-01-01T00:00:00Z', to: '2020-12-31T00:00:00Z', page: 1, per_page: 10 })).body).toEqual([])
    const all = (await list({ from, to, page: 1, per_page: 10000 })).body
    expect(all).toHaveLength(3)
  })

  it('refuses bad query parameters with 400', async () => {
    const to = new Date().toISOString()
    for (const query of [
      { from, to, page: 1, per_page: 9 },
      { from, to, page: 1, per_page: 10001 },
      { from, to, page: 0, per_page: 10 },
      { from: 'yesterday', to, page: 1, per_page: 10 },
      { to, page: 1, per_page: 10 },
      { from: to, to: from, page: 1, per_page: 10 },
    ]) {
      const response = await list(query as Record<string, string | number>)
      expectStatus(response, 400)
      expect(response.body.code).toBe('invalid_request')
    }
  })
})
