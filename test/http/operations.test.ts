// The platform operator's API (routes/operations.ts) through HTTP: the cluster overview of a
// service that is not clustered, the traffic window filled by real identify requests, the rate-limit
// use of a project that made requests, and problem+json for everyone who is no operator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOrganization } from '../../src/domain/tenants/organizations.js'
import { createMember, createPalmTenant, enrollBody, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'

const OPERATOR = 'operator@platform.example'

describe('operator API', () => {
  let svc: TestService
  let tenant: PalmTenant
  let operatorToken: string
  beforeAll(async () => {
    svc = await bootService()
    await waitUntilReady(svc.url)
    tenant = await createPalmTenant(svc, 'merchant@example.com')
    await createOrganization({ sql: svc.service.app.sql }, { name: 'Region', kind: 'platform' }, OPERATOR)
    operatorToken = await svc.token(OPERATOR)
  }, 60_000)
  afterAll(async () => {
    await svc?.close()
  })

  const paths = ['/v1/operations/cluster', '/v1/operations/traffic', '/v1/operations/rate-limits']

  it.each(paths)('%s: 401 without a credential, 403 for a key and for an admin of a customer organization', async (path) => {
    expectProblem(await svc.request('GET', path), 401, 'unauthenticated')
    expectProblem(await svc.request('GET', path, { auth: tenant.key }), 403, 'forbidden')
    const refused = await svc.request('GET', path, { auth: tenant.token })
    expectProblem(refused, 403, 'forbidden')
    expect(refused.body.detail).toContain('platform operator')
  })

  it('a service that is not clustered says so', async () => {
    const response = await svc.request('GET', '/v1/operations/cluster', { auth: operatorToken })
    expectStatus(response, 200)
    expect(response.body).toEqual({ clustered: false, node_id: null, nodes: [], environments: [], warnings: [] })
  })

  it('the traffic window counts the identify requests answered and their latency percentiles', async () => {
    const palms = population({ identities: 2 })
    const memberId = await createMember(svc, tenant)
    const enrolled = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, { auth: tenant.key, body: enrollBody(palms, 0, memberId) })
    expectStatus(enrolled, 200)
    const before = await svc.request('GET', '/v1/operations/traffic?minutes=1', { auth: operatorToken })
    expectStatus(before, 200)
    const identifiesBefore = before.body.nodes[0].points.reduce((sum: number, point: { identifies: number }) => sum + point.identifies, 0)
    for (let attempt = 0; attempt < 5; attempt++) {
      const identified = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
        auth: tenant.key,
        body: identifyBody(palms, 0, 'left', 2, attempt),
      })
      expectStatus(identified, 200)
    }
    const response = await svc.request('GET', '/v1/operations/traffic?minutes=1', { auth: operatorToken })
    expectStatus(response, 200)
    expect(response.body.window_seconds).toBe(60)
    expect(response.body.nodes).toHaveLength(1)
    const [node] = response.body.nodes
    expect(node).toMatchObject({ node_id: 'standalone', answered: true, error: null })
    expect(node.points).toHaveLength(60 / response.body.slot_seconds)
    const identifies = node.points.reduce((sum: number, point: { identifies: number }) => sum + point.identifies, 0)
    expect(identifies - identifiesBefore).toBe(5)
    expect(node.requests_per_second).toBeGreaterThan(0)
    expect(node.identify_p50_ms).toBeGreaterThan(0)
    expect(node.identify_p95_ms).toBeGreaterThanOrEqual(node.identify_p50_ms)
  })

  it('rate-limit use names the project that made requests, against its plan', async () => {
    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/members`, { auth: tenant.key })
    expectStatus(listed, 200)
    const response = await svc.request('GET', '/v1/operations/rate-limits', { auth: operatorToken })
    expectStatus(response, 200)
    const row = response.body.projects.find((project: { project_id: string }) => project.project_id === tenant.projectId)
    expect(row).toMatchObject({ org_id: tenant.orgId, plan: 'enterprise', requests_per_minute: 5_000, daily_request_limit: 10_000_000 })
    expect(row.minute_count).toBeGreaterThanOrEqual(1)
    expect(row.day_count).toBeGreaterThanOrEqual(row.minute_count)
  })

  it('bad query parameters are 400 problems', async () => {
    expectProblem(await svc.request('GET', '/v1/operations/traffic?minutes=16', { auth: operatorToken }), 400, 'invalid_request')
    expectProblem(await svc.request('GET', '/v1/operations/rate-limits?limit=0', { auth: operatorToken }), 400, 'invalid_request')
  })
})
