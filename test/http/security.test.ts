// Every route of the route table, checked by the shared security suite according to its auth list
// and declared access.
// New routes are picked up automatically: the list is the route table itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { routeTable } from '../../src/http/routes/index.js'
import type { Route } from '../../src/http/route.js'
import { VERSION } from '../../src/version.js'
import {
  accepts,
  addressesOrganization,
  addressesProject,
  addressesProjectByPath,
  checkKeyOfAnotherProject,
  checkNoCredential,
  checkOtherProjectsSubResource,
  checkRevokedKey,
  checkStranger,
  checkWrongKinds,
  createSubResources,
  createTenant,
  hasSubResource,
  idValues,
  requestFor,
  send,
  type SecurityFixtures,
} from '../support/security.js'
import {
  answersIdentify,
  appliesPersonChecks,
  checkOneKioskRefusal,
  checkPersonNeverSeesChallenge,
  checkPersonRateLimited,
  checkReadOnlyTerminalWritesNothing,
  checkScoresForNonOwners,
  createTrustFixtures,
  namesKiosk,
  terminalWrites,
  type TrustFixtures,
} from '../support/security-trust.js'
import { waitUntilReady } from '../support/palms.js'
import { bootService } from '../support/service.js'

const routes = routeTable(VERSION)
const name = (route: Route) => `${route.method.toUpperCase()} ${route.path}`
const open = routes.filter((route) => route.access === 'none')
const guarded = routes.filter((route) => route.access !== 'none')

describe('security suite over the whole route table', () => {
  let fixtures: SecurityFixtures
  let ids: Record<string, string>
  let trust: TrustFixtures
  beforeAll(async () => {
    const svc = await bootService()
    await waitUntilReady(svc.url)
    const owner = await createTenant(svc, 'owner@example.com')
    const stranger = await createTenant(svc, 'stranger@example.com')
    const sub = await createSubResources(svc, owner)
    fixtures = { svc, owner, stranger, sub }
    ids = idValues(owner, sub)
    trust = await createTrustFixtures(svc, stranger, await createSubResources(svc, stranger))
  }, 120_000)
  afterAll(async () => {
    await fixtures?.svc.close()
  })

  it('covers every route of the table', () => {
    expect(guarded.length + open.length).toBe(routes.length)
    expect(guarded.length).toBeGreaterThan(10)
  })

  it.each(open.map((route) => [name(route), route] as const))('%s answers without a credential', async (_, route) => {
    const response = await send(fixtures, route, requestFor(route, ids))
    expect(response.status >= 200 && response.status < 300, `${name(route)}: ${response.status} ${response.text.slice(0, 300)}`).toBe(true)
  })

  describe.each(guarded.map((route) => [name(route), route] as const))('%s', (_, route) => {
    it('no credential or a malformed one: 401 with WWW-Authenticate: Bearer', async () => {
      await checkNoCredential(fixtures, route, requestFor(route, ids))
    })
    if ((['token', 'key', 'device'] as const).some((kind) => !accepts(route, kind))) {
      it('a kind of credential the route does not accept: 403', async () => {
        await checkWrongKinds(fixtures, route, requestFor(route, ids))
      })
    }
    it('a key revoked just before: 401 on the very next request', async () => {
      await checkRevokedKey(fixtures, route, requestFor(route, ids))
    })
    if (addressesProject(route) || addressesOrganization(route)) {
      it("another organization's token and key: 404", async () => {
        await checkStranger(fixtures, route, requestFor(route, ids))
      })
    }
    if (addressesProject(route) && accepts(route, 'key')) {
      it('a key scoped to another project: 403 or 404', async () => {
        await checkKeyOfAnotherProject(fixtures, route, requestFor(route, ids))
      })
    }
    // Trust (issue #48): a person's answers, kiosks, read-only projects' terminals, scores.
    if (appliesPersonChecks(route)) {
      it("a person's own answers never carry a kiosk's code", async () => {
        await checkPersonNeverSeesChallenge(trust, route)
      })
      it('a person is rate limited: RateLimit-* on every answer, then 429', async () => {
        await checkPersonRateLimited(trust, route)
      })
    }
    if (namesKiosk(route)) {
      it('every device that is not an open kiosk gets one and the same refusal', async () => {
        await checkOneKioskRefusal(trust, route)
      })
    }
    if (terminalWrites(route)) {
      it('a terminal of a project that only reads its environment writes nothing there', async () => {
        await checkReadOnlyTerminalWritesNothing(trust, route)
      })
    }
    if (answersIdentify(route)) {
      it('a caller that does not own the environment gets no candidate below the threshold and no exact NotFound score', async () => {
        await checkScoresForNonOwners(trust, route)
      })
    }
    if (addressesProjectByPath(route) && hasSubResource(route)) {
      it("another project's sub-resource, addressed through this organization's other project: 404", async () => {
        await checkOtherProjectsSubResource(fixtures, route, requestFor(route, ids))
      })
    }
  })
})
