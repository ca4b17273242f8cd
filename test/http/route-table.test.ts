// The route table's declarations agree with each other: the access a route declares is what its
// path and credential kinds can support, and every route that reaches a project, or is a person's own, is rate limited.
import { describe, expect, it } from 'vitest'
import { RATE_LIMITED_ACCESS } from '../../src/auth/credentials.js'
import type { Access, Route } from '../../src/http/route.js'
import { routeTable } from '../../src/http/routes/index.js'
import { VERSION } from '../../src/version.js'

const routes = routeTable(VERSION)
const name = (route: Route) => `${route.method.toUpperCase()} ${route.path}`

/** The path parameter each access resolves, if any. */
const ADDRESSED_BY: Record<Access, string | null> = {
  none: null,
  caller: null,
  'org-admin': 'org_id',
  project: 'project_id',
  'tenant-project': 'project_id',
  device: 'device_id',
  'tenant-device': 'device_id',
  terminal: null,
  'end-user': null,
  operator: null,
}

describe('route table declarations', () => {
  it.each(routes.map((route) => [name(route), route] as const))('%s: access fits its path, credentials and rate limit', (_, route) => {
    expect(route.access === 'none').toBe(route.auth.length === 1 && route.auth[0] === 'none')
    const param = ADDRESSED_BY[route.access]
    if (param) expect(route.path).toContain(`:${param}`)
    if (route.access === 'org-admin') expect(route.auth).toEqual(['token'])
    if (route.access === 'terminal') expect(route.auth).toEqual(['device'])
    if (route.access === 'end-user' || route.access === 'operator') expect(route.auth).toEqual(['token'])
    expect(Boolean(route.rateLimited)).toBe(RATE_LIMITED_ACCESS.includes(route.access))
  })

  it('has no route whose path names a project or organization without access to it', () => {
    const unresolved = routes.filter((route) => {
      const named = Object.entries(ADDRESSED_BY).filter(([, param]) => param && route.path.includes(`:${param}`))
      return named.length > 0 && !named.some(([access]) => access === route.access)
    })
    expect(unresolved.map(name)).toEqual([])
  })
})
