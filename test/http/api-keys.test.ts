import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('API keys', () => {
  let svc: TestService
  let tenant: Tenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'keys-admin@example.com')
  })
  afterAll(async () => {
    await svc.close()
  })

  const createOrgKey = (body: unknown) => svc.request('POST', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token, body })

  it('creates an organization-wide key: plaintext once, {key_id}.{secret}, prefix = first 8 characters of the secret', async () => {
    const created = await createOrgKey({ name: 'backend', project_ids: null })
    expectStatus(created, 201)
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      prefix: expect.any(String),
      name: 'backend',
      key: expect.any(String),
      project_ids: null,
      created_at: expect.stringMatching(TIMESTAMP),
    })
    const [keyId, secret] = created.body.key.split('.')
    expect(keyId).toBe(created.body.id)
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(created.body.prefix).toBe(secret.slice(0, 8))

    // It works at once, and the list never shows the plaintext or the hash.
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: created.body.key }), 200)
    const listed = await svc.request('GET', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token })
    expectStatus(listed, 200)
    const record = listed.body.find((key: { id: string }) => key.id === created.body.id)
    expect(record).toEqual({
      id: created.body.id,
      prefix: created.body.prefix,
      organization_id: tenant.orgId,
      name: 'backend',
      created_by_user_id: 'keys-admin@example.com',
      project_ids: null,
      created_at: created.body.created_at,
      last_used_at: record.last_used_at,
      revoked_at: null,
    })
    // Written off the request path: null or the time of that first use.
    if (record.last_used_at !== null) expect(record.last_used_at).toMatch(TIMESTAMP)
    expect(listed.text).not.toContain(secret)
  })

  it('creates a key scoped to a list of projects: it reaches those and is refused elsewhere (403)', async () => {
    const created = await createOrgKey({ name: 'second only', project_ids: [tenant.secondProjectId] })
    expectStatus(created, 201)
    expect(created.body.project_ids).toEqual([tenant.secondProjectId])
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.secondProjectId}`, { auth: created.body.key }), 200)
    const refused = await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: created.body.key })
    expectStatus(refused, 403)
    expect(refused.body.code).toBe('forbidden')
  })

  it('lists, per project, the organization-wide keys and those scoped to it, never keys of other projects', async () => {
    const scopedHere = await svc.request('POST', `/v1/projects/${tenant.projectId}/api-keys`, { auth: tenant.token, body: { name: 'here' } })
    expectStatus(scopedHere, 201)
    expect(scopedHere.body).toEqual({
      id: expect.stringMatching(UUID),
      prefix: expect.any(String),
      name: 'here',
      key: expect.any(String),
      project_ids: [tenant.projectId],
      created_at: expect.stringMatching(TIMESTAMP),
    })
    const both = (await createOrgKey({ name: 'both', project_ids: [tenant.projectId, tenant.secondProjectId] })).body
    const elsewhere = (await createOrgKey({ name: 'elsewhere', project_ids: [tenant.secondProjectId] })).body

    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/api-keys`, { auth: tenant.token })
    expectStatus(listed, 200)
    const ids = listed.body.map((key: { id: string }) => key.id)
    expect(ids).toEqual(expect.arrayContaining([tenant.orgKeyId, scopedHere.body.id, both.id]))
    expect(ids).not.toContain(elsewhere.id)
    for (const key of listed.body) {
      expect(Object.keys(key).sort()).toEqual([
        'created_at',
        'created_by_user_id',
        'id',
        'last_used_at',
        'name',
        'organization_id',
        'prefix',
        'project_ids',
        'revoked_at',
      ])
      expect(key.project_ids === null || key.project_ids.includes(tenant.projectId)).toBe(true)
    }
    // Oldest first.
    const created = listed.body.map((key: { created_at: string }) => key.created_at)
    expect([...created].sort()).toEqual(created)

    // The project-scoped key reaches its project only.
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: scopedHere.body.key }), 200)
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.secondProjectId}`, { auth: scopedHere.body.key }), 403)
  })

  it('revokes a key: 401 on the very next request, the record stays with revoked_at, revoking again is 204 and keeps the time', async () => {
    const created = (await createOrgKey({ name: 'short-lived', project_ids: null })).body
    expectStatus(await svc.request('GET', '/v1/projects', { auth: created.key }), 200)
    const revoked = await svc.request('DELETE', `/v1/organization/${tenant.orgId}/api-keys/${created.id}`, { auth: tenant.token })
    expectStatus(revoked, 204)
    expect(revoked.text).toBe('')
    const refused = await svc.request('GET', '/v1/projects', { auth: created.key })
    expectStatus(refused, 401)
    expect(refused.body.code).toBe('unauthenticated')
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/)

    const list = async () =>
      (await svc.request('GET', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token })).body.find((key: { id: string }) => key.id === created.id)
    const record = await list()
    expect(record.revoked_at).toMatch(TIMESTAMP)
    expectStatus(await svc.request('DELETE', `/v1/organization/${tenant.orgId}/api-keys/${created.id}`, { auth: tenant.token }), 204)
    expect((await list()).revoked_at).toBe(record.revoked_at)
  })

  it('writes last_used_at at most once a minute per key', async () => {
    const created = (await createOrgKey({ name: 'usage', project_ids: null })).body
    const record = async () =>
      (await svc.request('GET', `/v1/organization/${tenant.orgId}/api-keys`, { auth: tenant.token })).body.find((key: { id: string }) => key.id === created.id)
    expect((await record()).last_used_at).toBeNull()
    expectStatus(await svc.request('GET', '/v1/projects', { auth: created.key }), 200)
    // The write is asynchronous (off the request path): wait for it.
    let first: string | null = null
    for (let attempt = 0; attempt < 50 && !first; attempt++) {
      first = (await record()).last_used_at
      if (!first) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(first).toMatch(TIMESTAMP)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expectStatus(await svc.request('GET', '/v1/projects', { auth: created.key }), 200)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await record()).last_used_at).toBe(first)
  })
})
