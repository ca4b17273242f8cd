// The matcher's memory budget (PALMVEIN_MATCHER_MAX_MEMORY) in the service: past it an enrollment
// is refused with 503 and changes nothing, and /healthz stays up with a warning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 4 })

describe(`matcher memory full (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  beforeAll(async () => {
    // 4 MiB cannot hold one chunk of 65 536 rows x 256 (19 MB).
    svc = await bootService({ config: { matcherMaxMemoryBytes: 4 << 20 } })
    await waitUntilReady(svc.url)
    tenant = await createPalmTenant(svc, 'full@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc?.close()
  })

  it('refuses the enrollment with 503, stores nothing, and warns in /healthz', async () => {
    const memberId = await createMember(svc, tenant, 'too many')
    const response = await enroll(svc, tenant, enrollBody(palms, 1, memberId))
    expectStatus(response, 503)
    expect(response.body).toMatchObject({ code: 'unavailable', detail: expect.stringMatching(/^matcher memory is full: .*; the reference cannot be stored$/) })
    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.key })
    expect(member.body.palm_templates_enrolled).toBe(0)
    expect((await identify(svc, tenant, identifyBody(palms, 1, 'left'))).status).toBe('NotFound')
    const health = await svc.request('GET', '/healthz')
    expectStatus(health, 200)
    expect(health.text).toMatch(/warning: matcher memory is full, [1-9]\d* reference row\(s\) not stored/)
  })
})
