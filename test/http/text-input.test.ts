// Input that is not text, or too deep, over every operation that takes a body: generated from the
// route table and its schemas (as the security suite is), so a new route is covered the day it lands.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { routeTable } from '../../src/http/routes/index.js'
import type { Route } from '../../src/http/route.js'
import { VERSION } from '../../src/version.js'
import { usingPostgres } from '../support/database.js'
import { accepts, createSubResources, createTenant, idValues, requestFor, type SecurityFixtures } from '../support/security.js'
import { bootService, expectProblem } from '../support/service.js'

const routes = routeTable(VERSION).filter((route) => route.body)
const name = (route: Route) => `${route.method.toUpperCase()} ${route.path}`

/** JSON pointers of every string in a value. */
function stringPaths(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return [path]
  if (Array.isArray(value)) return value.flatMap((item, index) => stringPaths(item, `${path}/${index}`))
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => stringPaths(item, `${path}/${key}`))
  return []
}

function withStringAt(body: unknown, pointer: string, text: string): unknown {
  const copy = structuredClone(body) as Record<string, unknown>
  const parts = pointer.split('/').slice(1)
  let target: any = copy
  for (const part of parts.slice(0, -1)) target = target[part]
  target[parts.at(-1)!] = text
  return copy
}

describe(`text input over every operation with a body (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let fixtures: SecurityFixtures
  let ids: Record<string, string>
  beforeAll(async () => {
    const svc = await bootService()
    const owner = await createTenant(svc, 'text@example.com')
    const stranger = await createTenant(svc, 'text-stranger@example.com')
    fixtures = { svc, owner, stranger, sub: await createSubResources(svc, owner) }
    ids = idValues(owner, fixtures.sub)
  })
  afterAll(async () => {
    await fixtures?.svc.close()
  })

  const credentialFor = (route: Route) =>
    accepts(route, 'none')
      ? undefined
      : accepts(route, 'token')
        ? fixtures.owner.token
        : accepts(route, 'key')
          ? fixtures.owner.orgKey
          : fixtures.sub.deviceToken
  const sendRaw = (route: Route, path: string, rawBody: string | Buffer) =>
    fixtures.svc.request(route.method.toUpperCase(), path, { auth: credentialFor(route), rawBody, headers: { 'content-type': 'application/json' } })

  it('covers the operations that take a body', () => {
    expect(routes.length).toBeGreaterThan(15)
  })

  describe.each(routes.map((route) => [name(route), route] as const))('%s', (_, route) => {
    it('refuses NUL and lone surrogates in every string field, naming the field', async () => {
      const request = requestFor(route, ids)
      const paths = stringPaths(request.body)
      for (const pointer of paths) {
        for (const [label, text] of [
          ['NUL', 'a\u0000b'],
          ['lone surrogate', 'a\ud800b'],
        ] as const) {
          const answer = await sendRaw(route, request.path + request.query, JSON.stringify(withStringAt(request.body, pointer, text)))
          expectProblem(answer, 400, 'invalid_request', `${name(route)} ${label} at ${pointer}`)
          expect(answer.body.errors?.[0]?.path, `${name(route)} ${label} at ${pointer}`).toBe(pointer)
        }
      }
    })

    it('refuses NUL in a field name, invalid UTF-8, and nesting past 32 levels', async () => {
      const request = requestFor(route, ids)
      const base = JSON.stringify(request.body).slice(1, -1)
      const comma = base ? ',' : ''
      const cases: Array<[string, string | Buffer, RegExp]> = [
        ['NUL in a name', `{${base}${comma}"na\\u0000me":"x"}`, /field name must not contain NUL/],
        ['invalid UTF-8', Buffer.concat([Buffer.from(`{${base}${comma}"x":"bad`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]), /not valid UTF-8/],
        ['100 000 levels', `{${base}${comma}"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, /nests deeper than 32 levels/],
      ]
      for (const [label, raw, detail] of cases) {
        const answer = await sendRaw(route, request.path + request.query, raw)
        expectProblem(answer, 400, 'invalid_request', `${name(route)}: ${label}`)
        expect(answer.body.detail, `${name(route)}: ${label}`).toMatch(detail)
      }
    })
  })

  it('keeps a well-formed astral character (a surrogate pair) and nesting of 32 levels', async () => {
    const { svc, owner } = fixtures
    const metadata = { deep: JSON.parse(`${'['.repeat(30)}"🖐️ palm"${']'.repeat(30)}`) }
    const created = await svc.request('POST', `/v1/projects/${owner.projectId}/members`, { auth: owner.orgKey, body: { display_name: 'Zoë 🖐️', metadata } })
    expect(created.status, created.text).toBe(201)
    expect(created.body.display_name).toBe('Zoë 🖐️')
    expect(JSON.parse(created.body.metadata)).toEqual(metadata)
  })
})
