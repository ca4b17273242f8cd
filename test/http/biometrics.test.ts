import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import {
  addProject,
  createMember,
  createPalmTenant,
  enroll,
  enrollBody,
  identify,
  identifyBody,
  population,
  vectorBody,
  waitUntilReady,
  type PalmTenant,
} from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 40 })

/** A random unit vector, deterministic per seed. */
function unit(seed: number, dimension = 256): Float32Array {
  let state = seed
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648 - 0.5
  }
  const values = Float32Array.from({ length: dimension }, next)
  const norm = Math.hypot(...values)
  return values.map((value) => value / norm)
}

describe(`biometrics: enroll and identify (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  const members: string[] = []
  beforeAll(async () => {
    svc = await bootService()
    await waitUntilReady(svc.url)
    tenant = await createPalmTenant(svc, 'palms@example.com')
    for (let identity = 0; identity < 4; identity++) {
      const memberId = await createMember(svc, tenant, `identity ${identity}`)
      const enrolled = await enroll(svc, tenant, enrollBody(palms, identity, memberId))
      expectStatus(enrolled, 200)
      expect(enrolled.body).toEqual({ member_id: memberId })
      members.push(memberId)
    }
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('finds every enrolled member from a later capture of either hand, and says which hand', async () => {
    for (let identity = 0; identity < members.length; identity++) {
      for (const hand of ['left', 'right'] as const) {
        const result = await identify(svc, tenant, identifyBody(palms, identity, hand))
        expect(result).toEqual({ status: 'Found', member_id: members[identity], match_score: expect.any(Number), hand })
        expect(result.match_score).toBeGreaterThanOrEqual(0.8)
        expect(result.match_score).toBeLessThanOrEqual(1)
      }
    }
  })

  it('answers NotFound, with the best score, for a synthetic identity never enrolled', async () => {
    const result = await identify(svc, tenant, identifyBody(palms, 30, 'left'))
    expect(result.status).toBe('NotFound')
    expect(result.member_id).toBeNull()
    expect(result.hand).toBeNull()
    expect(result.match_score).toBeGreaterThanOrEqual(0)
    expect(result.match_score).toBeLessThan(0.8)
  })

  it('returns the best k members as candidates when ?k= is given', async () => {
    const result = await identify(svc, tenant, identifyBody(palms, 2, 'right'), '?k=3')
    expect(result.status).toBe('Found')
    expect(result.candidates).toHaveLength(3)
    expect(result.candidates![0]).toEqual({ member_id: members[2], match_score: result.match_score, hand: 'right' })
    const scores = result.candidates!.map((candidate) => candidate.match_score)
    expect([...scores].sort((a, b) => b - a)).toEqual(scores)
    expect(new Set(result.candidates!.map((candidate) => candidate.member_id)).size).toBe(3)
    const tooMany = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/identify?k=11`, {
      auth: tenant.key,
      body: identifyBody(palms, 2, 'right'),
    })
    expectStatus(tooMany, 400)
  })

  it('counts the stored captures on the member and keeps enrollment times', async () => {
    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${members[0]}`, { auth: tenant.key })
    expectStatus(member, 200)
    expect(member.body.palm_templates_enrolled).toBe(4)
    expect(member.body.last_enrolled_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it('replaces a hand on re-enrollment of the same member, keeping the other hand', async () => {
    const memberId = await createMember(svc, tenant, 'changes hands')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 10, memberId)), 200)
    // The same member re-enrolls the left hand with another palm: allowed, and the old left palm is gone.
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 11, memberId, ['left'])), 200)
    expect(await identify(svc, tenant, identifyBody(palms, 11, 'left'))).toMatchObject({ status: 'Found', member_id: memberId, hand: 'left' })
    expect((await identify(svc, tenant, identifyBody(palms, 10, 'left'))).status).toBe('NotFound')
    expect(await identify(svc, tenant, identifyBody(palms, 10, 'right'))).toMatchObject({ status: 'Found', member_id: memberId, hand: 'right' })
    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.key })
    expect(member.body.palm_templates_enrolled).toBe(4)
  })

  it('compares a capture flagged with its hand with that hand only, and one of unknown hand with both', async () => {
    const memberId = await createMember(svc, tenant, 'left hand only')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 12, memberId, ['left'])), 200)
    const leftPalm = palms.capture(12, 'left', 1, 0)
    // The left palm presented with the right-hand flag: the right references do not hold it.
    const asRight = await identify(svc, tenant, vectorBody(leftPalm, 1, 'right'))
    expect(asRight.status).toBe('NotFound')
    expect(asRight.match_score).toBeLessThan(0.8)
    expect(await identify(svc, tenant, vectorBody(leftPalm, 1, 'left'))).toEqual({
      status: 'Found',
      member_id: memberId,
      match_score: expect.any(Number),
      hand: 'left',
    })
    // Unknown hand: both hands' references, so the left one is found.
    const unknown = await identify(svc, tenant, vectorBody(leftPalm), '?k=2')
    expect(unknown).toMatchObject({ status: 'Found', member_id: memberId, hand: 'left' })
    expect(unknown.candidates![0]).toEqual({ member_id: memberId, match_score: unknown.match_score, hand: 'left' })
  })

  it('identifies through a two-stage environment with the exact scores', async () => {
    const { projectId } = await addProject(svc, tenant, { search_mode: 'two_stage', candidates: 2 })
    const enrolled: string[] = []
    for (let identity = 20; identity < 23; identity++) {
      const memberId = await createMember(svc, tenant, `two-stage ${identity}`, projectId)
      expectStatus(await enroll(svc, tenant, enrollBody(palms, identity, memberId), projectId), 200)
      enrolled.push(memberId)
    }
    for (let index = 0; index < 3; index++) {
      const result = await identify(svc, tenant, identifyBody(palms, 20 + index, 'right'), '?k=3', projectId)
      expect(result).toMatchObject({ status: 'Found', member_id: enrolled[index], hand: 'right' })
      // Two candidates per worker reach stage 2: at most those, each with its exact score.
      expect(result.candidates!.length).toBeGreaterThanOrEqual(1)
      expect(result.candidates![0].match_score).toBe(result.match_score)
    }
  })

  it('answers Ambiguous when two members pass the threshold within the margin', async () => {
    // A and B have cosine 0.7 (so neither is a duplicate of the other); their bisector scores ≈ 0.92 with both.
    const a = unit(1)
    const noise = unit(2)
    let along = 0
    for (let index = 0; index < 256; index++) along += noise[index] * a[index]
    const orthogonal = noise.map((value, index) => value - along * a[index])
    const orthogonalNorm = Math.hypot(...orthogonal)
    const b = a.map((value, index) => 0.7 * value + (Math.sqrt(1 - 0.49) * orthogonal[index]) / orthogonalNorm)
    const bisector = a.map((value, index) => value + b[index])
    const twinA = await createMember(svc, tenant, 'twin a')
    const twinB = await createMember(svc, tenant, 'twin b')
    for (const [memberId, vector] of [
      [twinA, a],
      [twinB, b],
    ] as const) {
      const capture = vectorBody(vector).palm.identify_capture
      const response = await enroll(svc, tenant, { member_id: memberId, left_hand: { enroll_capture: capture, identify_capture: capture } })
      expectStatus(response, 200)
    }
    const result = await identify(svc, tenant, vectorBody(bisector), '?k=2')
    expect(result.status).toBe('Ambiguous')
    expect(result.member_id).toBeNull()
    expect(result.hand).toBeNull()
    expect(result.match_score).toBeGreaterThan(0.9)
    expect(result.candidates!.map((candidate) => candidate.member_id).sort()).toEqual([twinA, twinB].sort())
    // Exactly A still finds A: B scores 0.7, under the threshold.
    expect(await identify(svc, tenant, vectorBody(a))).toMatchObject({ status: 'Found', member_id: twinA })
  })

  it('writes enrollment.completed into the outbox with the enrollment', async () => {
    const events = await svc.storage.db.sql<{ data: Record<string, unknown> }[]>`
      SELECT data FROM event_outbox WHERE project_id = ${tenant.projectId} AND event_type = 'enrollment.completed' AND data->>'member_id' = ${members[1]}`
    expect(events).toHaveLength(1)
    expect(events[0].data).toEqual({ session_id: null, member_id: members[1], device_id: null, completed_at: expect.stringMatching(/Z$/) })
  })

  it('accepts standard base64 with padding as well as base64url', async () => {
    const body = identifyBody(palms, 3, 'left')
    const standard = Buffer.from(body.palm.identify_capture, 'base64url').toString('base64')
    expect(await identify(svc, tenant, { palm: { identify_capture: standard } })).toMatchObject({ status: 'Found', member_id: members[3] })
  })

  it('gives a data key at enrollment to a member inserted without one (an import)', async () => {
    const sql = svc.storage.db.sql
    const memberId = '0190a000-0000-7000-8000-0000000000aa'
    await sql`INSERT INTO members (id, project_id, environment_id, display_name) VALUES (${memberId}, ${tenant.projectId}, ${tenant.environmentId}, 'imported')`
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 15, memberId, ['right'])), 200)
    expect(await identify(svc, tenant, identifyBody(palms, 15, 'right'))).toMatchObject({ status: 'Found', member_id: memberId })
    const [row] = await sql`SELECT wrapped_key, palm_templates_enrolled FROM members WHERE id = ${memberId}`
    expect(row.wrapped_key).toBeInstanceOf(Buffer)
    expect(row.palm_templates_enrolled).toBe(2)
  })

  it('is served under the singular /v1/project/ alias too', async () => {
    const response = await svc.request('POST', `/v1/project/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.key,
      body: identifyBody(palms, 0, 'left'),
    })
    expectStatus(response, 200)
    expect(response.body.member_id).toBe(members[0])
  })
})
