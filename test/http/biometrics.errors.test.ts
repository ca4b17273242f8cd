import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enrollMember } from '../../src/domain/enrollment/enrollment.js'
import { encodeTemplate } from '@palmvein/matcher'
import { projectById } from '../../src/store/projects.js'
import { usingPostgres } from '../support/database.js'
import {
  addProject,
  base64url,
  createMember,
  createPalmTenant,
  enroll,
  enrollBody,
  identify,
  identifyBody,
  population,
  type PalmTenant,
} from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 20 })

describe(`biometrics: refusals leave nothing behind (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let owner: string
  const stored = async (memberId: string) => {
    const sql = svc.storage.db.sql
    const [templates] = await sql`SELECT count(*)::int AS count FROM palm_templates WHERE member_id = ${memberId}`
    const [events] = await sql`SELECT count(*)::int AS count FROM event_outbox WHERE data->>'member_id' = ${memberId}`
    const [member] = await sql`SELECT palm_templates_enrolled, last_enrolled_at FROM members WHERE id = ${memberId}`
    return { templates: templates.count, events: events.count, enrolled: member.palm_templates_enrolled, last: member.last_enrolled_at }
  }
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'refuse-palms@example.com')
    owner = await createMember(svc, tenant, 'owner')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 0, owner)), 200)
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('refuses a hand whose two captures are of two people with 400 capture_invalid, storing nothing', async () => {
    const mixed = await createMember(svc, tenant, 'mixed')
    const body = enrollBody(palms, 7, mixed) as Record<string, any>
    // The left hand's identify capture is another person's (identity 8).
    body.left_hand.identify_capture = (enrollBody(palms, 8, mixed, ['left']) as Record<string, any>).left_hand.identify_capture
    const refused = await enroll(svc, tenant, body)
    expectStatus(refused, 400)
    expect(refused.body).toMatchObject({ code: 'capture_invalid', errors: [{ path: '/left_hand/identify_capture' }] })
    expect(refused.body.detail).toMatch(
      /^left_hand\.identify_capture: the enroll and identify captures disagree \(similarity -?0\.\d+ is under the environment's match threshold 0\.8\)/,
    )
    expect(await stored(mixed)).toEqual({ templates: 0, events: 0, enrolled: 0, last: null })
    // The same person's two captures enroll.
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 7, mixed)), 200)
  })

  it("refuses another member's palm with 409 duplicate_palm, storing nothing and leaving the gallery as it was", async () => {
    const copycat = await createMember(svc, tenant, 'copycat')
    // Identity 5's left hand is new, but the right hand is the owner's.
    const body = enrollBody(palms, 5, copycat)
    body.right_hand = (enrollBody(palms, 0, copycat, ['right']) as Record<string, unknown>).right_hand
    const refused = await enroll(svc, tenant, body)
    expectStatus(refused, 409)
    expect(refused.body).toMatchObject({ code: 'duplicate_palm', status: 409 })
    expect(refused.body.detail).toMatch(/right hand matches another member/)
    expect(await stored(copycat)).toEqual({ templates: 0, events: 0, enrolled: 0, last: null })
    expect(await identify(svc, tenant, identifyBody(palms, 0, 'right'))).toMatchObject({ status: 'Found', member_id: owner })
    expect((await identify(svc, tenant, identifyBody(palms, 5, 'left'))).status).toBe('NotFound')
  })

  it('refuses bad captures with 400 capture_invalid naming the field, and stores nothing', async () => {
    const memberId = await createMember(svc, tenant, 'bad captures')
    const good = enrollBody(palms, 6, memberId) as { member_id: string; left_hand: Record<string, string>; right_hand: Record<string, string> }
    const goodBytes = Buffer.from(good.left_hand.enroll_capture, 'base64url')
    const corrupted = Buffer.from(goodBytes)
    corrupted[100] ^= 0xff
    const vector = palms.capture(6, 'left', 0, 0)
    // 1048 bytes end in one byte of two characters: the last one's low 4 bits carry no data and
    // must be zero. Setting one decodes to the same bytes, but is not the canonical text.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const text = good.left_hand.identify_capture
    const stray = `${text.slice(0, -1)}${alphabet[alphabet.indexOf(text.at(-1)!) | 1]}`
    expect(Buffer.from(stray, 'base64url')).toEqual(Buffer.from(text, 'base64url'))
    const cases: Array<[string, string, RegExp]> = [
      ['/left_hand/identify_capture', stray, /not canonical base64url \(non-zero trailing bits\)/],
      // The schema's rules (the document states them): the alphabet and the length of a PVT1 template.
      [
        '/left_hand/enroll_capture',
        `not*${good.left_hand.enroll_capture.slice(4)}`,
        /is not base64: expected base64url without padding or standard base64 with padding/,
      ],
      ['/left_hand/enroll_capture', 'AAAA', /must NOT have fewer than 203 characters/],
      ['/left_hand/enroll_capture', `${good.left_hand.enroll_capture}${'A'.repeat(2764)}`, /must NOT have more than 2764 characters/],
      // The domain's: one alphabet, canonical text, and a PVT1 template that fits the environment.
      ['/left_hand/enroll_capture', `${good.left_hand.enroll_capture.slice(0, -8)}+/+/+/+/`, /mixes base64 alphabets/],
      // Trailing garbage: one more byte than the header announces.
      ['/left_hand/enroll_capture', `${good.left_hand.enroll_capture}A`, /1049 bytes, expected 1048 for 256 components/],
      ['/left_hand/enroll_capture', `${good.left_hand.enroll_capture}AAA`, /not valid base64url \(truncated\)/],
      ['/left_hand/identify_capture', Buffer.alloc(280, 'hello world, not a template').toString('base64url'), /PVT1/],
      ['/right_hand/enroll_capture', base64url(corrupted), /CRC/],
      ['/right_hand/identify_capture', base64url(palms.template(6, 'left', 0, 1)), /flagged as a left-hand capture/],
      ['/left_hand/enroll_capture', base64url(population({ dimension: 128 }).template(6, 'left')), /dimension 128, but the environment uses 256/],
      ['/left_hand/identify_capture', base64url(encodeTemplate({ vector, extractorId: 2, extractorVersion: 1, hand: 'left' })), /extractor 2 version 1/],
    ]
    for (const [field, value, detail] of cases) {
      const body = structuredClone(good)
      const [, hand, capture] = field.split('/')
      ;(body as unknown as Record<string, Record<string, string>>)[hand][capture] = value
      const response = await enroll(svc, tenant, body)
      expectStatus(response, 400)
      expect(response.body.code).toBe('capture_invalid')
      expect(response.body.errors[0].path).toBe(field)
      expect(response.body.detail).toMatch(detail)
    }
    const probe = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.key,
      body: { palm: { identify_capture: 'x'.repeat(5) } },
    })
    expectStatus(probe, 400)
    expect(probe.body.errors[0].path).toBe('/palm/identify_capture')
    expect(await stored(memberId)).toEqual({ templates: 0, events: 0, enrolled: 0, last: null })
  })

  it("refuses a capture under the environment's minimum quality", async () => {
    const strict = await addProject(svc, tenant, { min_quality: 50 })
    const memberId = await createMember(svc, tenant, 'strict', strict.projectId)
    const body = enrollBody(palms, 7, memberId, ['left']) as { left_hand: Record<string, string> }
    body.left_hand.identify_capture = base64url(palms.template(7, 'left', 0, 1, { quality: 20 }))
    const response = await enroll(svc, tenant, body, strict.projectId)
    expectStatus(response, 400)
    expect(response.body.detail).toMatch(/quality 20 is under the environment's minimum 50/)
    body.left_hand.identify_capture = base64url(palms.template(7, 'left', 0, 1))
    expect((await enroll(svc, tenant, body, strict.projectId)).body.detail).toMatch(/quality is unknown/)
  })

  it('needs at least one hand and a known member', async () => {
    const memberId = await createMember(svc, tenant, 'no hands')
    expectStatus(await enroll(svc, tenant, { member_id: memberId }), 400)
    const unknown = await enroll(svc, tenant, enrollBody(palms, 8, '0190a000-0000-7000-8000-000000000000'))
    expectStatus(unknown, 422)
    expect(unknown.body.code).toBe('invalid_reference')
  })

  it('rolls back everything when the transaction fails after the templates are written, and restores the gallery', async () => {
    const app = svc.service.app
    const project = (await projectById(app.sql, tenant.projectId))!
    const memberId = await createMember(svc, tenant, 'rollback')
    const failing = {
      callerType: 'api_key' as const,
      inTransaction: async () => {
        throw new Error('session completion failed')
      },
    }
    await expect(enrollMember(app, project, enrollBody(palms, 9, memberId) as never, failing)).rejects.toThrow('session completion failed')
    expect(await stored(memberId)).toEqual({ templates: 0, events: 0, enrolled: 0, last: null })
    expect((await identify(svc, tenant, identifyBody(palms, 9, 'left'))).status).toBe('NotFound')

    // Enrolled once for real; a failed re-enrollment with another palm leaves the first one in place.
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 9, memberId)), 200)
    const before = await stored(memberId)
    await expect(enrollMember(app, project, enrollBody(palms, 10, memberId, ['left']) as never, failing)).rejects.toThrow()
    expect(await stored(memberId)).toEqual(before)
    expect(await identify(svc, tenant, identifyBody(palms, 9, 'left'))).toMatchObject({ status: 'Found', member_id: memberId, hand: 'left' })
    expect((await identify(svc, tenant, identifyBody(palms, 10, 'left'))).status).toBe('NotFound')
  })
})
