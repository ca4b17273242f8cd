// An environment given target_fpir gets its match_threshold from its own non-mated scores
// (domain/accuracy/calibrator.ts), identify uses it, the floor holds, the accuracy endpoint reports it to
// the organization's admins only, and a grown gallery is calibrated again.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, population, vectorBody, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { start } from '../../src/server.js'
import { identifyCaptureSample } from '../../src/store/calibrations.js'
import { bootService, expectProblem, expectStatus, request, serviceConfig, type TestService } from '../support/service.js'

const palms = population({ identities: 48 })
const MEMBERS = 30

/** A capture of identity 0's left palm blurred to cosine ~0.5 with it: Found only under a low threshold. */
function halfMatchingProbe(): ReturnType<typeof vectorBody> {
  const palm = palms.centre(0, 'left')
  const other = palms.centre(47, 'left')
  const along = other.reduce((sum, value, index) => sum + value * palm[index], 0)
  const orthogonal = other.map((value, index) => value - along * palm[index])
  const norm = Math.hypot(...orthogonal)
  return vectorBody(
    palm.map((value, index) => 0.5 * value + (Math.sqrt(0.75) * orthogonal[index]) / norm),
    1,
    'left',
  )
}

describe(`calibration of match_threshold from target_fpir (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let accuracyPath: string
  let environmentPath: string

  async function accuracy() {
    const response = await svc.request('GET', accuracyPath, { auth: tenant.token })
    expectStatus(response, 200)
    return response.body
  }

  /** Reads until `ready` holds (vitest's waitFor, every 100 ms for up to `seconds`); the value read. */
  const eventually = <T>(read: () => Promise<T>, ready: (value: T) => boolean, seconds: number): Promise<T> =>
    vi.waitFor(
      async () => {
        const value = await read()
        if (!ready(value)) throw new Error(`not yet: ${JSON.stringify(value)}`)
        return value
      },
      { timeout: seconds * 1000, interval: 100 },
    )

  const accuracyWhen = (ready: (body: any) => boolean) => eventually(accuracy, ready, 30)
  // The calibrating process takes its new threshold up with a settings read just after the commit
  // that the accuracy endpoint already shows: identify follows within moments, not at once.
  const identifyWhen = (status: string) =>
    eventually(
      () => identify(svc, tenant, halfMatchingProbe()),
      (answer) => answer.status === status,
      10,
    )

  async function enrollIdentities(from: number, to: number) {
    for (let identity = from; identity < to; identity++) {
      const memberId = await createMember(svc, tenant, `identity ${identity}`)
      expectStatus(await enroll(svc, tenant, enrollBody(palms, identity, memberId)), 200)
    }
  }

  beforeAll(async () => {
    svc = await bootService({ config: { calibrationCheckMs: 100 } })
    tenant = await createPalmTenant(svc, 'calibration@example.com', { min_match_threshold: 0.05 })
    environmentPath = `/v1/organization/${tenant.orgId}/environments/${tenant.environmentId}`
    accuracyPath = `${environmentPath}/accuracy`
    await enrollIdentities(0, MEMBERS)
    // Given the target once every member is in: one calibration, at N = 60.
    const targeted = await svc.request('PATCH', environmentPath, { auth: tenant.token, body: { target_fpir: 0.001 } })
    expectStatus(targeted, 200)
    expect(targeted.body).toMatchObject({ target_fpir: 0.001, match_threshold: 0.8 })
  }, 180_000)
  afterAll(async () => {
    await svc.close()
  })

  it('derives the threshold from the non-mated scores, and identify uses it', async () => {
    const body = await accuracyWhen((answer) => answer.status === 'calibrated')
    expect(body).toMatchObject({
      environment_id: tenant.environmentId,
      target_fpir: 0.001,
      min_match_threshold: 0.05,
      status: 'calibrated',
      gallery_size: MEMBERS * 2,
    })
    const { calibration } = body
    // 60 identify captures, each against the 29 other members; 0.06 exceedances expected: fitted.
    expect(calibration).toMatchObject({
      method: 'extreme_value',
      gallery_size: MEMBERS * 2,
      non_mated_samples: MEMBERS * 2,
      floor_applied: false,
      target_fpir: 0.001,
    })
    expect(calibration.tail).toMatchObject({ samples: 20, scale: expect.any(Number) })
    expect(calibration.tail.scale).toBeGreaterThan(0)
    expect(calibration.threshold).toBeGreaterThan(0.05)
    expect(calibration.threshold).toBeLessThan(0.5)
    expect(body.match_threshold).toBe(calibration.threshold)
    expect(calibration.estimated_fpir.rate).toBeCloseTo(0.001, 6)
    expect(calibration.estimated_fpir.low).toBeLessThanOrEqual(0.001)
    expect(calibration.estimated_fpir.high).toBeGreaterThanOrEqual(0.001)
    expect(body.estimated_fpir.rate).toBeCloseTo(0.001, 6)
    expect(body.recalibrates_at).toEqual({ at_most: 54, at_least: 66 })
    // The mated side: every sampled capture against its own member, all of them first and above the threshold.
    expect(calibration.mated_samples).toBe(MEMBERS * 2)
    expect(calibration.fnir).toMatchObject({ rate: 0, low: 0 })
    expect(calibration.fnir.high).toBeGreaterThan(0)
    const det: Array<{ threshold: number; fpir: number; fnir: number }> = calibration.det
    expect(det.length).toBeGreaterThan(10)
    expect(det.length).toBeLessThanOrEqual(64)
    expect(det.find((point) => point.threshold === calibration.threshold)).toEqual({ threshold: calibration.threshold, fpir: 0, fnir: 0 })
    expect(det[0].fpir).toBe(1)
    expect(det.at(-1)!.fnir).toBeGreaterThan(0)
    for (let index = 1; index < det.length; index++) {
      expect(det[index].threshold).toBeGreaterThan(det[index - 1].threshold)
      expect(det[index].fpir).toBeLessThanOrEqual(det[index - 1].fpir)
      expect(det[index].fnir).toBeGreaterThanOrEqual(det[index - 1].fnir)
    }
    const listed = (await svc.request('GET', `/v1/organization/${tenant.orgId}/environments`, { auth: tenant.token })).body
    expect(listed[0]).toMatchObject({ target_fpir: 0.001, min_match_threshold: 0.05, match_threshold: calibration.threshold })
    // The process says so on its metrics listener too.
    const metrics = await (await fetch(svc.service.metricsUrl!)).text()
    expect(metrics).toContain(`palmvein_match_threshold{environment_id="${tenant.environmentId}"} ${calibration.threshold}`)
    // Half the palm: below the default 0.80, above the calibrated threshold.
    const found = await identifyWhen('Found')
    expect(found.status).toBe('Found')
    expect(found.match_score).toBeGreaterThanOrEqual(calibration.threshold)
    expect(found.match_score).toBeLessThan(0.8)
  })

  it('never sets a threshold below the floor', async () => {
    const raised = await svc.request('PATCH', environmentPath, { auth: tenant.token, body: { min_match_threshold: 0.9 } })
    try {
      expectStatus(raised, 200)
      // The raised floor holds from the answer on, before the calibration that follows.
      expect(raised.body).toMatchObject({ min_match_threshold: 0.9, match_threshold: 0.9 })
      expect((await identify(svc, tenant, halfMatchingProbe())).status).toBe('NotFound')
      const body = await accuracyWhen((answer) => answer.status === 'calibrated' && answer.calibration.min_match_threshold === 0.9)
      expect(body.calibration).toMatchObject({ threshold: 0.9, floor_applied: true })
      expect(body.calibration.derived_threshold).toBeLessThan(0.9)
      expect(body.match_threshold).toBe(0.9)
      expect(body.estimated_fpir.rate).toBeLessThan(0.001)
      expect((await identify(svc, tenant, halfMatchingProbe())).status).toBe('NotFound')
    } finally {
      // The tests after this one start from the low floor, whatever happened here.
      expectStatus(await svc.request('PATCH', environmentPath, { auth: tenant.token, body: { min_match_threshold: 0.05 } }), 200)
      await accuracyWhen((answer) => answer.status === 'calibrated' && answer.calibration.min_match_threshold === 0.05)
    }
  })

  it('calibrates again when the gallery has grown by a tenth', async () => {
    const before = (await accuracy()).calibration
    await enrollIdentities(MEMBERS, MEMBERS + 4)
    // From 60 rows, the next calibration runs at 66 or more (after the third or the fourth member).
    const body = await accuracyWhen((answer) => answer.calibration?.gallery_size >= 66)
    expect(body.calibration.gallery_size).toBeGreaterThanOrEqual(66)
    // Every stored capture is sampled. The run records the size it started at; an enrollment that
    // lands while it samples adds its captures to the sample, never beyond the gallery's last size.
    expect(body.calibration.non_mated_samples).toBeGreaterThanOrEqual(body.calibration.gallery_size)
    expect(body.calibration.non_mated_samples).toBeLessThanOrEqual(2 * (MEMBERS + 4))
    expect(Date.parse(body.calibration.computed_at)).toBeGreaterThan(Date.parse(before.computed_at))
  }, 60_000)

  it('refuses a fixed match_threshold while the target derives it, and goes back to fixed on request', async () => {
    const refused = await svc.request('PATCH', environmentPath, { auth: tenant.token, body: { match_threshold: 0.7 } })
    expectProblem(refused, 409, 'conflict')
    expect((await accuracy()).status).toBe('calibrated')
    const fixed = await svc.request('PATCH', environmentPath, { auth: tenant.token, body: { target_fpir: null, match_threshold: 0.7 } })
    expectStatus(fixed, 200)
    expect(fixed.body).toMatchObject({ target_fpir: null, match_threshold: 0.7 })
    expect(await accuracy()).toMatchObject({ status: 'fixed', match_threshold: 0.7, calibration: null, estimated_fpir: null })
    expect((await identify(svc, tenant, halfMatchingProbe())).status).toBe('NotFound')
  })

  it('is one threshold for every service process on the database', async () => {
    const second = await start({ config: serviceConfig(svc.storage, { calibrationCheckMs: 100 }) })
    try {
      // Its galleries load after it listens: until then identify answers 503 (CI met that once).
      await waitUntilReady(second.url)
      const identifyAt = async (url: string) =>
        (await request(url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, { auth: tenant.key, body: halfMatchingProbe() })).body.status
      const statusWhen = (url: string, wanted: string) =>
        eventually(
          () => identifyAt(url),
          (status) => status === wanted,
          10,
        )
      expect(await identifyAt(second.url)).toBe('NotFound')
      // Changed through the first process, calibrated by either: the second identifies with it.
      expectStatus(await svc.request('PATCH', environmentPath, { auth: tenant.token, body: { target_fpir: 0.001 } }), 200)
      await accuracyWhen((answer) => answer.status === 'calibrated')
      expect(await statusWhen(second.url, 'Found')).toBe('Found')
      // Raised through the second: the first takes the floor up.
      const raised = await request(second.url, 'PATCH', environmentPath, { auth: tenant.token, body: { min_match_threshold: 0.9 } })
      expectStatus(raised, 200)
      expect(await statusWhen(svc.url, 'NotFound')).toBe('NotFound')
      expect((await accuracyWhen((answer) => answer.calibration?.min_match_threshold === 0.9)).match_threshold).toBe(0.9)
    } finally {
      await second.close()
    }
  })

  it('samples a large environment by pages rather than sorting all its captures', async () => {
    // As if the environment were 40 times larger: a tenth of the pages are read (TABLESAMPLE).
    const rows = await identifyCaptureSample(svc.storage.db.sql, tenant.environmentId, 10, 40 * (MEMBERS + 4) * 2)
    expect(rows.length).toBeLessThanOrEqual(10)
    const members = await svc.storage.db.sql<{ id: string }[]>`SELECT id FROM members WHERE environment_id = ${tenant.environmentId}`
    const ids = new Set(members.map((member) => member.id))
    for (const row of rows) expect(ids.has(row.member_id)).toBe(true)
    const all = await identifyCaptureSample(svc.storage.db.sql, tenant.environmentId, 1000, (MEMBERS + 4) * 2)
    expect(all).toHaveLength((MEMBERS + 4) * 2)
  })

  it("answers the organization's admins only, and validates the changes", async () => {
    const stranger = await svc.token('stranger@example.com')
    expectProblem(await svc.request('GET', accuracyPath, { auth: stranger }), 404, 'not_found')
    expectProblem(await svc.request('PATCH', environmentPath, { auth: stranger, body: { margin: 0.1 } }), 404, 'not_found')
    expectProblem(await svc.request('GET', accuracyPath, { auth: tenant.key }), 403, 'forbidden')
    for (const body of [{}, { target_fpir: 0 }, { target_fpir: 1 }, { min_match_threshold: 0 }, { dimension: 128 }, { margin: 1 }]) {
      expectProblem(await svc.request('PATCH', environmentPath, { auth: tenant.token, body }), 400, 'invalid_request', JSON.stringify(body))
    }
  })
})
