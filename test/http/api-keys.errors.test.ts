import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'

describe('API keys: errors', () => {
  let svc: TestService
  let tenant: Tenant
  let other: Tenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'admin@example.com')
    other = await createTenant(svc, 'other@example.com')
  })
  afterAll(async () => {
    await svc.close()
  })

  const keyCount = async () => (await svc.request('GET', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token })).body.length

  it('refuses invalid bodies with 400 and creates nothing', async () => {
    const before = await keyCount()
    const cases: Array<[unknown, string]> = [
      [{ project_ids: null }, '/name'],
      [{ name: '', project_ids: null }, '/name'],
      [{ name: 'x'.repeat(201), project_ids: null }, '/name'],
      [{ name: 'no scope given' }, '/project_ids'],
      [{ name: 'empty scope', project_ids: [] }, '/project_ids'],
      [{ name: 'not uuids', project_ids: ['abc'] }, '/project_ids/0'],
      [{ name: 'twice', project_ids: [tenant.projectId, tenant.projectId] }, '/project_ids'],
      [{ name: 'typo', project_ids: null, scope: 'all' }, '/scope'],
      [{ name: 42, project_ids: null }, '/name'],
    ]
    for (const [body, path] of cases) {
      const response = await svc.request('POST', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token, body })
      expectProblem(response, 400, 'invalid_request')
      expect(
        response.body.errors.map((error: { path: string }) => error.path),
        JSON.stringify(body),
      ).toContain(path)
    }
    const projectLevel = await svc.request('POST', `/v1/projects/${tenant.projectId}/api-keys`, { auth: tenant.token, body: { name: 'x', project_ids: null } })
    expectProblem(projectLevel, 400, 'invalid_request')
    expect(projectLevel.body.errors).toContainEqual({ path: '/project_ids', message: 'unknown field' })
    expectProblem(await svc.request('POST', `/v1/projects/${tenant.projectId}/api-keys`, { auth: tenant.token, body: {} }), 400, 'invalid_request')
    expectProblem(
      await svc.request('POST', `/v1/organization/${tenant.orgId}/api-keys`, {
        auth: tenant.token,
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_request',
    )
    expect(await keyCount()).toBe(before)
  })

  it("refuses unknown projects and other organizations' projects with 422 invalid_reference", async () => {
    const before = await keyCount()
    for (const projectIds of [[other.projectId], [tenant.projectId, newId()]]) {
      const response = await svc.request('POST', `/v1/organization/${tenant.orgId}/api-keys`, {
        auth: tenant.token,
        body: { name: 'x', project_ids: projectIds },
      })
      expectProblem(response, 422, 'invalid_reference')
      expect(response.body.errors).toEqual([{ path: `/project_ids/${projectIds.length - 1}`, message: 'unknown project' }])
    }
    expect(await keyCount()).toBe(before)
  })

  it('answers 404 for a key of another organization or an unknown key, and leaves the key working', async () => {
    const foreign = await svc.request('DELETE', `/v1/organization/${tenant.orgId}/api-keys/${other.orgKeyId}`, { auth: tenant.token })
    expectProblem(foreign, 404, 'not_found')
    expectStatus(await svc.request('GET', `/v1/projects/${other.projectId}`, { auth: other.orgKey }), 200)
    expectProblem(await svc.request('DELETE', `/v1/organization/${tenant.orgId}/api-keys/${newId()}`, { auth: tenant.token }), 404, 'not_found')
    expectProblem(await svc.request('DELETE', `/v1/organization/${tenant.orgId}/api-keys/not-a-uuid`, { auth: tenant.token }), 400, 'invalid_request')
  })

  it('answers 404 to a user who does not administer the organization, 403 to an API key', async () => {
    const outsider = await svc.token('outsider@example.com')
    for (const [method, path] of [
      ['GET', `/v1/organization/${tenant.orgId}/api-keys`],
      ['POST', `/v1/organization/${tenant.orgId}/api-keys`],
      ['DELETE', `/v1/organization/${tenant.orgId}/api-keys/${tenant.orgKeyId}`],
      ['GET', `/v1/projects/${tenant.projectId}/api-keys`],
      ['POST', `/v1/projects/${tenant.projectId}/api-keys`],
    ]) {
      const body = method === 'POST' ? { name: 'x', ...(path.includes('organization') ? { project_ids: null } : {}) } : undefined
      expectProblem(await svc.request(method, path, { auth: outsider, body }), 404, 'not_found')
      expectProblem(await svc.request(method, path, { auth: tenant.orgKey, body }), 403, 'forbidden')
    }
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.orgKey }), 200)
  })
})
