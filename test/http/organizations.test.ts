import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOrganization } from '../../src/domain/tenants/organizations.js'
import { createProjectOnPlan, operatorSetsPlan } from '../support/plans.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'

describe('admin extensions: organizations, environments, projects', () => {
  let svc: TestService
  let token: string
  let otherToken: string
  beforeAll(async () => {
    svc = await bootService()
    token = await svc.token('alice@example.com')
    otherToken = await svc.token('mallory@example.com')
  })
  afterAll(async () => {
    await svc.close()
  })

  it('creates an organization whose admin is the caller, and lists it only for that caller', async () => {
    const created = await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'Acme' } })
    expectStatus(created, 201)
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Acme',
      kind: 'customer',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    })
    const mine = await svc.request('GET', '/v1/organizations', { auth: token })
    expect(mine.body.map((org: { id: string }) => org.id)).toContain(created.body.id)
    const theirs = await svc.request('GET', '/v1/organizations', { auth: otherToken })
    expect(theirs.body).toEqual([])
  })

  it('creates environments with defaults and projects on them; another user gets 404', async () => {
    const org = (await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'Org' } })).body
    const env = await svc.request('POST', `/v1/organization/${org.id}/environments`, { auth: token, body: { name: 'HQ' } })
    expectStatus(env, 201)
    expect(env.body).toMatchObject({
      owner_org_id: org.id,
      name: 'HQ',
      kind: 'organization',
      dimension: 256,
      extractor_id: 1,
      extractor_version: 1,
      match_threshold: 0.8,
      margin: 0.03,
      min_quality: 0,
      enables_server_lookup: false,
      search_mode: 'auto',
      candidates: 256,
    })
    const twoStage = await svc.request('POST', `/v1/organization/${org.id}/environments`, {
      auth: token,
      body: { name: 'Nation', search_mode: 'two_stage', candidates: 64 },
    })
    expectStatus(twoStage, 201)
    expect(twoStage.body).toMatchObject({ search_mode: 'two_stage', candidates: 64 })
    for (const body of [
      { name: 'x', search_mode: 'fast' },
      { name: 'x', candidates: 0 },
      { name: 'x', candidates: 65537 },
    ]) {
      expectStatus(await svc.request('POST', `/v1/organization/${org.id}/environments`, { auth: token, body }), 400)
    }
    const project = await svc.request('POST', `/v1/organization/${org.id}/projects`, {
      auth: token,
      body: { name: 'Shop', environment_id: env.body.id, plan: 'sandbox', mcc: 5411 },
    })
    expectStatus(project, 201)
    expect(project.body).toEqual({
      id: expect.any(String),
      name: 'Shop',
      mcc: 5411,
      icon_path: null,
      payment_account_id: null,
      phone_number: null,
      website: null,
      plan: { id: 'sandbox', name: 'Sandbox', headcount: 100, daily_request_limit: 1000 },
      environment_id: env.body.id,
      enable_server_lookup: false,
      environment_enables_server_lookup: false,
    })
    const listed = await svc.request('GET', `/v1/organization/${org.id}/projects`, { auth: token })
    expect(listed.body).toEqual([project.body])
    for (const path of [`/v1/organization/${org.id}/projects`, `/v1/organization/${org.id}/environments`]) {
      const foreign = await svc.request('GET', path, { auth: otherToken })
      expectStatus(foreign, 404)
      expect(foreign.body.code).toBe('not_found')
    }
  })

  it("refuses a project on another organization's environment with 422 invalid_reference", async () => {
    const mine = (await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'A' } })).body
    const theirs = (await svc.request('POST', '/v1/organizations', { auth: otherToken, body: { name: 'B' } })).body
    const env = (await svc.request('POST', `/v1/organization/${theirs.id}/environments`, { auth: otherToken, body: { name: 'theirs' } })).body
    const refused = await svc.request('POST', `/v1/organization/${mine.id}/projects`, {
      auth: token,
      body: { name: 'x', environment_id: env.id, plan: 'sandbox' },
    })
    expectStatus(refused, 422)
    expect(refused.body.code).toBe('invalid_reference')
  })

  it('validates bodies strictly and path ids as UUIDs', async () => {
    const unknownField = await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'x', nmae: 'typo' } })
    expectStatus(unknownField, 400)
    expect(unknownField.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(unknownField.body).toMatchObject({ code: 'invalid_request', status: 400, errors: [{ path: '/nmae', message: 'unknown field' }] })
    const badId = await svc.request('GET', '/v1/organization/not-a-uuid/projects', { auth: token })
    expectStatus(badId, 400)
    // Authentication comes first: without a credential the caller learns nothing about the route's rules.
    expectStatus(await svc.request('GET', '/v1/organization/not-a-uuid/projects'), 401)
    const badEnv = await svc.request('POST', '/v1/organizations', { auth: token, rawBody: '{"name":', headers: { 'content-type': 'application/json' } })
    expectStatus(badEnv, 400)
    const wrongType = await svc.request('POST', '/v1/organizations', {
      auth: token,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectStatus(wrongType, 415)
    const tooLarge = await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'x'.repeat(1024 * 1024 + 10) } })
    expectStatus(tooLarge, 413)
  })

  it("refuses an organization admin's plan change and non-self-service plans with 403; the operator's plan change is followed at once", async () => {
    const org = (await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'Upgrading' } })).body
    const env = (await svc.request('POST', `/v1/organization/${org.id}/environments`, { auth: token, body: { name: 'main' } })).body
    for (const plan of ['business', 'enterprise']) {
      const refused = await svc.request('POST', `/v1/organization/${org.id}/projects`, { auth: token, body: { name: 'Big', environment_id: env.id, plan } })
      expectProblem(refused, 403, 'forbidden')
      expect(refused.body.detail).toMatch(/set by a platform operator; an organization admin creates projects on the sandbox plan/)
    }
    const project = (
      await svc.request('POST', `/v1/organization/${org.id}/projects`, { auth: token, body: { name: 'Trial', environment_id: env.id, plan: 'sandbox' } })
    ).body
    const key = (await svc.request('POST', `/v1/organization/${org.id}/api-keys`, { auth: token, body: { name: 'k', project_ids: null } })).body.key
    const read = () => svc.request('GET', `/v1/projects/${project.id}`, { auth: key })
    for (let i = 0; i < 5; i += 1) expectStatus(await read(), 200)
    expectProblem(await read(), 429, 'rate_limited')

    const path = `/v1/organization/${org.id}/projects/${project.id}`
    const upgrade = await svc.request('PATCH', path, { auth: token, body: { plan: 'enterprise', name: 'Live' } })
    expectProblem(upgrade, 403, 'forbidden')
    expect(upgrade.body.detail).toMatch(/plan is changed by a platform operator/)
    expect((await svc.request('GET', `/v1/organization/${org.id}/projects`, { auth: token })).body[0]).toMatchObject({ name: 'Trial', plan: { id: 'sandbox' } })
    // The plan it already has is no change; the other fields are the admin's.
    const renamed = await svc.request('PATCH', path, { auth: token, body: { plan: 'sandbox', name: 'Live', website: 'https://shop.example' } })
    expectStatus(renamed, 200)
    expect(renamed.body).toMatchObject({ name: 'Live', website: 'https://shop.example', plan: { id: 'sandbox' } })

    await operatorSetsPlan(svc, project.id, 'business')
    const after = await read()
    expectStatus(after, 200)
    expect(after.headers.get('ratelimit-limit')).toBe('100')
    expect(after.body).toMatchObject({
      id: project.id,
      name: 'Live',
      environment_id: env.id,
      plan: { id: 'business', name: 'Business', headcount: 10_000, daily_request_limit: 100_000 },
    })
  })

  it('a platform operator (an admin of a platform organization) creates projects on any plan and changes plans through the API', async () => {
    const operator = await svc.token('operator@platform.example')
    const platform = await createOrganization(svc.service.app, { name: 'Region', kind: 'platform' }, 'operator@platform.example')
    const project = await svc.request('POST', `/v1/organization/${platform.id}/projects`, { auth: operator, body: { name: 'kiosks', plan: 'enterprise' } })
    expectStatus(project, 201)
    expect(project.body.plan.id).toBe('enterprise')
    const changed = await svc.request('PATCH', `/v1/organization/${platform.id}/projects/${project.body.id}`, { auth: operator, body: { plan: 'business' } })
    expectStatus(changed, 200)
    expect(changed.body.plan).toEqual({ id: 'business', name: 'Business', headcount: 10_000, daily_request_limit: 100_000 })
  })

  it('refuses a project change that is empty, moves the environment, or reaches another organization', async () => {
    const org = (await svc.request('POST', '/v1/organizations', { auth: token, body: { name: 'Mine' } })).body
    const project = await createProjectOnPlan(svc, token, org.id, { name: 'p', plan: 'business' })
    const theirs = (await svc.request('POST', '/v1/organizations', { auth: otherToken, body: { name: 'Theirs' } })).body
    const theirProject = await createProjectOnPlan(svc, otherToken, theirs.id, { name: 'q', plan: 'business' })
    const patch = (orgId: string, projectId: string, body: unknown, auth = token) =>
      svc.request('PATCH', `/v1/organization/${orgId}/projects/${projectId}`, { auth, body })
    expectProblem(await patch(org.id, project.id, {}), 400, 'invalid_request')
    expectProblem(await patch(org.id, project.id, { environment_id: null }), 400, 'invalid_request')
    expectProblem(await patch(org.id, project.id, { plan: 'platinum' }), 400, 'invalid_request')
    // Their project under my organization's path, and my project under theirs: neither exists for the caller.
    expectProblem(await patch(org.id, theirProject.id, { plan: 'sandbox' }), 404, 'not_found')
    expectProblem(await patch(theirs.id, theirProject.id, { plan: 'sandbox' }), 404, 'not_found')
    const untouched = await svc.request('GET', `/v1/projects/${theirProject.id}`, { auth: otherToken })
    expect(untouched.body.plan.id).toBe('business')
  })
})

describe('self-service plans set by the operator (PALMVEIN_SELF_SERVICE_PLANS)', () => {
  let open: TestService
  beforeAll(async () => {
    open = await bootService({ config: { selfServicePlans: ['sandbox', 'business'] } })
  }, 120_000)
  afterAll(async () => {
    await open?.close()
  })

  it('lets an organization admin create projects on the listed plans only', async () => {
    const admin = await open.token('self-service@example.com')
    const org = (await open.request('POST', '/v1/organizations', { auth: admin, body: { name: 'Open' } })).body
    expectStatus(await open.request('POST', `/v1/organization/${org.id}/projects`, { auth: admin, body: { name: 'b', plan: 'business' } }), 201)
    const refused = await open.request('POST', `/v1/organization/${org.id}/projects`, { auth: admin, body: { name: 'e', plan: 'enterprise' } })
    expectProblem(refused, 403, 'forbidden')
    expect(refused.body.detail).toMatch(/sandbox or business plan/)
  })
})
