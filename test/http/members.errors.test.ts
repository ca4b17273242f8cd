import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOrganization } from '../../src/domain/tenants/organizations.js'
import { newId } from '../../src/ids.js'
import { usingPostgres } from '../support/database.js'
import { addProject, createMember, createPalmTenant, enrollBody, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { createProjectOnPlan } from '../support/plans.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

describe(`members and biometrics: refusals (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'refusals@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('on a global environment: members and biometrics answer 403 environment_not_tenant_managed', async () => {
    const platform = await createOrganization(svc.service.app, { name: 'Region', kind: 'platform' }, 'platform@example.com')
    const platformToken = await svc.token('platform@example.com')
    const global = await svc.request('POST', `/v1/organization/${platform.id}/environments`, { auth: platformToken, body: { name: 'nation' } })
    expectStatus(global, 201)
    expect(global.body.kind).toBe('global')
    const project = await createProjectOnPlan(svc, tenant.token, tenant.orgId, { name: 'on global', environment_id: global.body.id, plan: 'enterprise' })
    // A member of that project (as a Device-Com self-enrollment would leave it), so ids are real.
    const memberId = newId()
    await svc.storage.db.sql`INSERT INTO members (id, project_id, environment_id, display_name) VALUES (${memberId}, ${project.id}, ${global.body.id}, 'x')`
    const base = `/v1/projects/${project.id}`
    const palms = population()
    const calls: Array<[string, string, unknown]> = [
      ['GET', `${base}/members`, undefined],
      ['POST', `${base}/members`, { display_name: 'x' }],
      ['GET', `${base}/members/${memberId}`, undefined],
      ['PUT', `${base}/members/${memberId}`, { display_name: 'y' }],
      ['DELETE', `${base}/members/${memberId}`, undefined],
      ['POST', `${base}/biometrics/enroll`, enrollBody(palms, 0, memberId)],
      ['POST', `${base}/biometrics/identify`, identifyBody(palms, 0, 'left')],
    ]
    for (const [method, path, body] of calls) {
      const response = await svc.request(method, path, { auth: tenant.key, body })
      expectStatus(response, 403)
      expect(response.body.code, `${method} ${path}`).toBe('environment_not_tenant_managed')
    }
    const [row] = await svc.storage.db.sql`SELECT display_name FROM members WHERE id = ${memberId}`
    expect(row.display_name).toBe('x')
  })

  it('validates bodies strictly', async () => {
    const path = `/v1/projects/${tenant.projectId}/members`
    const cases: Array<[unknown, string]> = [
      [{}, '/display_name'],
      [{ display_name: '' }, '/display_name'],
      [{ display_name: 'x', nickname: 'y' }, '/nickname'],
      [{ display_name: 'x', metadata: 'a'.repeat(17 * 1024) }, '/metadata'],
    ]
    for (const [body, field] of cases) {
      const response = await svc.request('POST', path, { auth: tenant.key, body })
      expectStatus(response, 400)
      expect(response.body.code).toBe('invalid_request')
      expect(response.body.errors.map((error: { path: string }) => error.path)).toContain(field)
    }
    const memberId = await createMember(svc, tenant)
    const empty = await svc.request('PUT', `${path}/${memberId}`, { auth: tenant.key, body: {} })
    expectStatus(empty, 400)
    const badId = await svc.request('GET', `${path}/not-a-uuid`, { auth: tenant.key })
    expectStatus(badId, 400)
    expect((await svc.request('GET', `${path}/${memberId}`, { auth: tenant.key })).body.display_name).toBe('Member')
  })

  it("another project's member is not found through this project (404), and cannot be enrolled through it (422)", async () => {
    const second = await addProject(svc, tenant)
    const foreignMember = await createMember(svc, tenant, 'elsewhere', second.projectId)
    const read = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${foreignMember}`, { auth: tenant.key })
    expectStatus(read, 404)
    const enrolled = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, {
      auth: tenant.key,
      body: enrollBody(population(), 0, foreignMember),
    })
    expectStatus(enrolled, 422)
    expect(enrolled.body.code).toBe('invalid_reference')
    expect(enrolled.body.errors).toEqual([{ path: '/member_id', message: 'unknown member' }])
  })

  it('biometrics need an API key: a token is refused with 403', async () => {
    const response = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.token,
      body: identifyBody(population(), 0, 'left'),
    })
    expectStatus(response, 403)
    expect(response.body.code).toBe('forbidden')
  })
})
