// While an environment's gallery loads after a restart, /healthz says so (503) and identify
// answers 503 unavailable with Retry-After; once loaded, both recover. Rows that cannot be
// decrypted are skipped (and logged) without stopping the load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 5 })
const FILLER_ROWS = 100_000

describe(`a gallery still loading answers 503 (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let memberId: string
  beforeAll(async () => {
    // Snapshots off: the filler rows below are written behind the galleries' change log, which a
    // boot from a snapshot trusts (gallery-snapshots.ts); this is about a load from the database.
    svc = await bootService({ config: { snapshotIntervalMs: 0 } })
    tenant = await createPalmTenant(svc, 'loading@example.com')
    memberId = await createMember(svc, tenant)
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 0, memberId)), 200)
    // Filler reference rows whose ciphertext is garbage: slow enough to load that the probes below land during the load.
    const filler = await createMember(svc, tenant, 'filler')
    await svc.storage.db.sql`
      INSERT INTO palm_templates (id, member_id, environment_id, hand, kind, ciphertext)
      SELECT gen_random_uuid(), ${filler}, ${tenant.environmentId}, 'left', 'reference', '\\x00'::bytea FROM generate_series(1, ${FILLER_ROWS})`
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('says loading, refuses identify with 503 and Retry-After, then serves once ready', async () => {
    await svc.restart()
    const health = await svc.request('GET', '/healthz')
    expectStatus(health, 503)
    expect(health.text).toMatch(new RegExp(`FAIL galleries: loading \\d+/${FILLER_ROWS + 2} rows`))
    const refused = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.key,
      body: identifyBody(palms, 0, 'left'),
    })
    expectStatus(refused, 503)
    expect(refused.body.code).toBe('unavailable')
    expect(refused.headers.get('retry-after')).toBe('5')

    await waitUntilReady(svc.url, 120_000)
    expect((await svc.request('GET', '/healthz')).text).toMatch(/galleries: ready, 1 environment\(s\), 2 rows/)
    expect(await identify(svc, tenant, identifyBody(palms, 0, 'left'))).toMatchObject({ status: 'Found', member_id: memberId })
  }, 180_000)
})
