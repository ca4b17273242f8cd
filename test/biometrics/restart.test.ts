import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 20 })

describe(`galleries survive a restart (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let second: PalmTenant
  const members: string[] = []
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'restart@example.com')
    // A second environment of another dimension: one gallery (and matcher) per environment.
    second = await createPalmTenant(svc, 'restart-128@example.com', { dimension: 128 })
    for (let identity = 0; identity < 6; identity++) {
      const memberId = await createMember(svc, tenant, `m${identity}`)
      expectStatus(await enroll(svc, tenant, enrollBody(palms, identity, memberId)), 200)
      members.push(memberId)
    }
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('reloads every environment from the database, and identify still finds every member (and not the deleted one)', async () => {
    const small = population({ dimension: 128, identities: 5 })
    const smallMember = await createMember(svc, second)
    expectStatus(await enroll(svc, second, enrollBody(small, 1, smallMember, ['left'])), 200)
    expectStatus(await svc.request('DELETE', `/v1/projects/${tenant.projectId}/members/${members[5]}`, { auth: tenant.key }), 204)

    await svc.restart()
    await waitUntilReady(svc.url)
    const health = await svc.request('GET', '/healthz')
    expect(health.text).toMatch(/galleries: ready, 2 environment\(s\), 11 rows/)
    expect(health.text).toMatch(/exactness audit 0 disagreement\(s\) in 0 two-stage search\(es\)/)

    for (let identity = 0; identity < 5; identity++) {
      for (const hand of ['left', 'right'] as const) {
        expect(await identify(svc, tenant, identifyBody(palms, identity, hand, 2))).toMatchObject({ status: 'Found', member_id: members[identity], hand })
      }
    }
    expect((await identify(svc, tenant, identifyBody(palms, 5, 'left', 2))).status).toBe('NotFound')
    expect(await identify(svc, second, identifyBody(small, 1, 'left', 2))).toMatchObject({ status: 'Found', member_id: smallMember })
  }, 180_000)
})
