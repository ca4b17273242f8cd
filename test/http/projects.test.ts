import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectProblem, expectStatus, type Response, type TestService } from '../support/service.js'

describe('projects', () => {
  let svc: TestService
  let tenant: Tenant
  let other: Tenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'projects@example.com')
    other = await createTenant(svc, 'projects-other@example.com')
  })
  afterAll(async () => {
    await svc.close()
  })

  const ids = (response: Response) => response.body.map((project: { id: string }) => project.id)

  it('reads a project with a token or a key, exactly in the spec shape, with RateLimit-* headers', async () => {
    for (const auth of [tenant.token, tenant.orgKey]) {
      const response = await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth })
      expectStatus(response, 200)
      expect(response.body).toEqual({
        id: tenant.projectId,
        name: 'first',
        mcc: null,
        icon_path: null,
        payment_account_id: null,
        phone_number: null,
        website: null,
        plan: { id: 'enterprise', name: 'Enterprise', headcount: 1_000_000, daily_request_limit: 10_000_000 },
        environment_id: tenant.environmentId,
        enable_server_lookup: false,
        environment_enables_server_lookup: true,
      })
      expect(response.headers.get('ratelimit-limit')).toBe('5000')
      expect(Number(response.headers.get('ratelimit-remaining'))).toBeLessThan(5000)
      expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThan(0)
    }
    // The singular alias of the guides answers the same.
    const alias = await svc.request('GET', `/v1/project/${tenant.projectId}`, { auth: tenant.orgKey })
    expectStatus(alias, 200)
    expect(alias.body.id).toBe(tenant.projectId)
  })

  it('lists the projects of administered organizations (token) or reachable by the key, without rate-limit headers', async () => {
    const byToken = await svc.request('GET', '/v1/projects', { auth: tenant.token })
    expectStatus(byToken, 200)
    expect(ids(byToken)).toEqual([tenant.projectId, tenant.secondProjectId])
    expect(byToken.headers.get('ratelimit-limit')).toBeNull()
    const byOrgKey = await svc.request('GET', '/v1/projects', { auth: tenant.orgKey })
    expect(byOrgKey.body).toEqual(byToken.body)
    const byScopedKey = await svc.request('GET', '/v1/projects', { auth: tenant.secondProjectKey })
    expect(ids(byScopedKey)).toEqual([tenant.secondProjectId])
    const stranger = await svc.request('GET', '/v1/projects', { auth: await svc.token('nobody@example.com') })
    expect(stranger.body).toEqual([])
  })

  it('enables and disables server lookup (token only), refusing environments that do not allow it', async () => {
    const put = (projectId: string, enable: boolean) =>
      svc.request('PUT', `/v1/projects/${projectId}/server-lookup`, { auth: tenant.token, body: { enable_server_lookup: enable } })
    const enabled = await put(tenant.projectId, true)
    expectStatus(enabled, 204)
    expect(enabled.text).toBe('')
    expect((await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.token })).body.enable_server_lookup).toBe(true)
    expectStatus(await put(tenant.projectId, false), 204)
    expect((await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.token })).body.enable_server_lookup).toBe(false)

    // An environment that does not allow it, and a project without an environment: 422, unchanged.
    const closedEnv = (await svc.request('POST', `/v1/organization/${tenant.orgId}/environments`, { auth: tenant.token, body: { name: 'closed' } })).body
    for (const environmentId of [closedEnv.id, null]) {
      const project = (
        await svc.request('POST', `/v1/organization/${tenant.orgId}/projects`, {
          auth: tenant.token,
          body: { name: 'no lookup', environment_id: environmentId, plan: 'sandbox' },
        })
      ).body
      expectProblem(await put(project.id, true), 422, 'server_lookup_not_allowed')
      expect((await svc.request('GET', `/v1/projects/${project.id}`, { auth: tenant.token })).body.enable_server_lookup).toBe(false)
      expectStatus(await put(project.id, false), 204)
    }
  })

  it('validates the server-lookup body and refuses API keys and strangers', async () => {
    const path = `/v1/projects/${tenant.projectId}/server-lookup`
    for (const body of [{}, { enable_server_lookup: 'yes' }, { enable_server_lookup: true, extra: 1 }]) {
      expectProblem(await svc.request('PUT', path, { auth: tenant.token, body }), 400, 'invalid_request')
    }
    expectProblem(await svc.request('PUT', path, { auth: tenant.orgKey, body: { enable_server_lookup: true } }), 403, 'forbidden')
    expectProblem(await svc.request('PUT', path, { auth: other.token, body: { enable_server_lookup: true } }), 404, 'not_found')
    expect((await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.token })).body.enable_server_lookup).toBe(false)
  })

  it('answers 404 for unknown and foreign projects, 403 for a key scoped elsewhere, 400 for a bad id', async () => {
    expectProblem(await svc.request('GET', `/v1/projects/${newId()}`, { auth: tenant.token }), 404, 'not_found')
    expectProblem(await svc.request('GET', `/v1/projects/${other.projectId}`, { auth: tenant.token }), 404, 'not_found')
    expectProblem(await svc.request('GET', `/v1/projects/${other.projectId}`, { auth: tenant.orgKey }), 404, 'not_found')
    expectProblem(await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.secondProjectKey }), 403, 'forbidden')
    expectProblem(await svc.request('GET', '/v1/projects/123', { auth: tenant.token }), 400, 'invalid_request')
  })
})
