import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe(`members (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  const path = () => `/v1/projects/${tenant.projectId}/members`
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'members@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('creates a member with every key of the spec, and reads it back with a token or a key', async () => {
    const created = await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'Ada', metadata: { tier: 'gold', visits: 3 } } })
    expectStatus(created, 201)
    expect(created.body).toEqual({
      member_id: expect.any(String),
      display_name: 'Ada',
      metadata: '{"tier":"gold","visits":3}',
      created_at: expect.stringMatching(TIME),
      updated_at: expect.stringMatching(TIME),
      palm_templates_enrolled: 0,
      last_enrolled_at: null,
      last_used_at: null,
    })
    for (const auth of [tenant.key, tenant.token]) {
      const read = await svc.request('GET', `${path()}/${created.body.member_id}`, { auth })
      expectStatus(read, 200)
      expect(read.body).toEqual(created.body)
    }
  })

  it('gives metadata back as a string: a string as itself, other JSON as its text, null as null', async () => {
    const cases: Array<[unknown, string | null]> = [
      ['vip', 'vip'],
      [42, '42'],
      [[1, 'a'], '[1,"a"]'],
      [null, null],
      [undefined, null],
    ]
    for (const [metadata, expected] of cases) {
      const created = await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'M', metadata } })
      expectStatus(created, 201)
      expect(created.body.metadata).toBe(expected)
    }
  })

  it('lists the members oldest first', async () => {
    const first = (await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'first' } })).body
    const second = (await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'second' } })).body
    const listed = await svc.request('GET', path(), { auth: tenant.key })
    expectStatus(listed, 200)
    const ids = listed.body.map((member: { member_id: string }) => member.member_id)
    expect(ids.indexOf(first.member_id)).toBeLessThan(ids.indexOf(second.member_id))
    expect(listed.body.find((member: { member_id: string }) => member.member_id === second.member_id)).toEqual(second)
  })

  it('lists one page of members, oldest first, when page or per_page is given (an extension; 400 outside 10..1000)', async () => {
    const other = await createPalmTenant(svc, 'members-pages@example.com')
    const pagePath = `/v1/projects/${other.projectId}/members`
    const created = []
    for (let index = 0; index < 12; index++) {
      created.push((await svc.request('POST', pagePath, { auth: other.key, body: { display_name: `m${index}` } })).body.member_id)
    }
    const first = await svc.request('GET', `${pagePath}?page=1&per_page=10`, { auth: other.key })
    expectStatus(first, 200)
    expect(first.body.map((member: { member_id: string }) => member.member_id)).toEqual(created.slice(0, 10))
    const second = await svc.request('GET', `${pagePath}?page=2&per_page=10`, { auth: other.key })
    expect(second.body.map((member: { member_id: string }) => member.member_id)).toEqual(created.slice(10))
    expect((await svc.request('GET', `${pagePath}?page=2`, { auth: other.key })).body).toEqual([])
    expect((await svc.request('GET', pagePath, { auth: other.key })).body).toHaveLength(12)
    for (const query of ['per_page=9', 'per_page=1001', 'page=0', 'page=x', 'cursor=1']) {
      expectProblem(await svc.request('GET', `${pagePath}?${query}`, { auth: other.key }), 400, 'invalid_request', query)
    }
  })

  it('searches members by display name prefix, case-insensitive, in name order, or by id (q, an extension), one page at a time', async () => {
    const other = await createPalmTenant(svc, 'members-search@example.com')
    const searchPath = `/v1/projects/${other.projectId}/members`
    const ids: Record<string, string> = {}
    for (const name of ['Zoë Adams', 'ada lovelace', 'Ada Byron', 'Adam', 'Grace', 'ADA 100%', 'Ada_x', 'Adb']) {
      ids[name] = (await svc.request('POST', searchPath, { auth: other.key, body: { display_name: name } })).body.member_id
    }
    // Another project's Ada is not found here.
    await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'Ada elsewhere' } })
    const search = async (query: string) => {
      const response = await svc.request('GET', `${searchPath}?${query}`, { auth: other.key })
      expectStatus(response, 200, query)
      return response.body.map((member: { display_name: string }) => member.display_name)
    }
    expect(await search('q=ada')).toEqual(['ADA 100%', 'Ada Byron', 'ada lovelace', 'Ada_x', 'Adam'])
    expect(await search('q=ADA%20')).toEqual(['ADA 100%', 'Ada Byron', 'ada lovelace'])
    // LIKE's wildcards are plain characters here.
    expect(await search('q=ada%25')).toEqual([])
    expect(await search('q=ada_')).toEqual(['Ada_x'])
    expect(await search('q=zo%C3%AB')).toEqual(['Zoë Adams'])
    expect(await search(`q=${ids.Grace}`)).toEqual(['Grace'])
    expect(await search(`q=${ids.Grace.toUpperCase()}`)).toEqual(['Grace'])
    expect(await search('q=nobody')).toEqual([])
    // Paged in name order: 10 a page at the least.
    for (let index = 0; index < 12; index++)
      await svc.request('POST', searchPath, { auth: other.key, body: { display_name: `Page ${String(index).padStart(2, '0')}` } })
    expect(await search('q=page&per_page=10')).toEqual(Array.from({ length: 10 }, (_, index) => `Page ${String(index).padStart(2, '0')}`))
    expect(await search('q=page&per_page=10&page=2')).toEqual(['Page 10', 'Page 11'])
    for (const query of ['q=', `q=${'a'.repeat(201)}`, 'q=a%00b']) {
      expectProblem(await svc.request('GET', `${searchPath}?${query}`, { auth: other.key }), 400, 'invalid_request', query)
    }
  })

  it('PUT changes the fields sent and keeps the others; metadata null clears it', async () => {
    const member = (await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'Grace', metadata: 'keep me' } })).body
    const renamed = await svc.request('PUT', `${path()}/${member.member_id}`, { auth: tenant.key, body: { display_name: 'Grace H.' } })
    expectStatus(renamed, 200)
    expect(renamed.body).toMatchObject({ display_name: 'Grace H.', metadata: 'keep me', created_at: member.created_at })
    expect(renamed.body.updated_at >= member.updated_at).toBe(true)
    const cleared = await svc.request('PUT', `${path()}/${member.member_id}`, { auth: tenant.token, body: { metadata: null } })
    expectStatus(cleared, 200)
    expect(cleared.body).toMatchObject({ display_name: 'Grace H.', metadata: null })
    const both = await svc.request('PUT', `${path()}/${member.member_id}`, { auth: tenant.key, body: { display_name: 'G', metadata: { a: true } } })
    expect(both.body).toMatchObject({ display_name: 'G', metadata: '{"a":true}' })
  })

  it('DELETE answers 204, then the member is gone (404 on read, change and delete)', async () => {
    const member = (await svc.request('POST', path(), { auth: tenant.key, body: { display_name: 'Gone' } })).body
    const deleted = await svc.request('DELETE', `${path()}/${member.member_id}`, { auth: tenant.key })
    expectStatus(deleted, 204)
    expect(deleted.text).toBe('')
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { display_name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await svc.request(method, `${path()}/${member.member_id}`, { auth: tenant.key, body })
      expectStatus(response, 404)
      expect(response.body.code).toBe('not_found')
    }
  })

  it("refuses a new member once the plan's headcount is reached (422 headcount_reached), and nothing is created", async () => {
    const other = await createPalmTenant(svc, 'headcount@example.com')
    await svc.storage.db.sql`UPDATE projects SET headcount = 2 WHERE id = ${other.projectId}`
    const membersPath = `/v1/projects/${other.projectId}/members`
    for (let index = 0; index < 2; index++) expectStatus(await svc.request('POST', membersPath, { auth: other.key, body: { display_name: `m${index}` } }), 201)
    const refused = await svc.request('POST', membersPath, { auth: other.key, body: { display_name: 'one too many' } })
    expectStatus(refused, 422)
    expect(refused.body.code).toBe('headcount_reached')
    expect((await svc.request('GET', membersPath, { auth: other.key })).body).toHaveLength(2)
  })
})
