import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCapture, referenceTemplate } from '../../src/domain/identification/captures.js'
import { openSilhouette, openTemplate, unwrapMemberKey } from '../../src/keys/template-crypto.js'
import { environmentById } from '../../src/store/organizations.js'
import { usingPostgres } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 10 })

/** Every value of every table, as bytes (bytea) and as text (everything else, JSON-encoded). */
async function dumpDatabase(svc: TestService): Promise<{ bytes: Buffer[]; text: string }> {
  const sql = svc.storage.db.sql
  const tables = await sql<
    { table_name: string }[]
  >`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
  const bytes: Buffer[] = []
  const texts: string[] = []
  for (const { table_name: table } of tables) {
    for (const row of await sql.unsafe(`SELECT * FROM "${table}"`)) {
      for (const value of Object.values(row)) {
        if (Buffer.isBuffer(value)) bytes.push(value)
        else texts.push(JSON.stringify(value))
      }
    }
  }
  return { bytes, text: texts.join('\n') }
}

describe(`encryption at rest and crypto-shredding (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  let memberId: string
  let body: { left_hand: { enroll_capture: string; identify_capture: string; silhouette?: string } }
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'crypto@example.com')
    memberId = await createMember(svc, tenant)
    body = enrollBody(palms, 1, memberId) as typeof body
    body.left_hand.silhouette = Buffer.from('outline of a left hand').toString('base64')
    expectStatus(await enroll(svc, tenant, body), 200)
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('stores no template bytes in plain form anywhere in the database', async () => {
    const environment = (await environmentById(svc.storage.db.sql, tenant.environmentId))!
    const captures = [body.left_hand.enroll_capture, body.left_hand.identify_capture].map((text) => parseCapture(text, '/x', environment, 'left'))
    const reference = Buffer.from(referenceTemplate(captures, '/x').buffer)
    // Needles: the whole PVT1 captures, 64-byte stretches of their float payloads and of the int8 reference.
    const needles = [
      ...captures.flatMap(({ bytes }) => [bytes, bytes.subarray(24, 88), bytes.subarray(500, 564)]),
      reference.subarray(0, 64),
      reference.subarray(192, 256),
    ]
    const { bytes, text } = await dumpDatabase(svc)
    expect(bytes.length).toBeGreaterThan(0)
    for (const needle of needles) {
      for (const value of bytes) expect(value.includes(needle)).toBe(false)
      for (const encoding of ['base64', 'base64url', 'hex'] as const) expect(text.includes(needle.toString(encoding).slice(0, 60))).toBe(false)
    }
    expect(text.includes(body.left_hand.enroll_capture.slice(0, 60))).toBe(false)
    expect(text.includes(body.left_hand.silhouette!)).toBe(false)
    expect(text.includes('outline of a left hand')).toBe(false)

    // The control: with the member's key (master → environment → member) the same rows do decrypt.
    const [member] = await svc.storage.db.sql`SELECT wrapped_key FROM members WHERE id = ${memberId}`
    const key = unwrapMemberKey(svc.service.app.keyring, environment, memberId, member.wrapped_key)
    const [row] = await svc.storage.db
      .sql`SELECT ciphertext, silhouette FROM palm_templates WHERE member_id = ${memberId} AND hand = 'left' AND kind = 'enroll'`
    expect(openTemplate(key, memberId, 'left', 'enroll', row.ciphertext).equals(captures[0].bytes)).toBe(true)
    expect(openSilhouette(key, memberId, 'left', row.silhouette)).toBe(body.left_hand.silhouette)
    // A ciphertext moved to another row (kind) does not decrypt.
    expect(() => openTemplate(key, memberId, 'left', 'identify', row.ciphertext)).toThrow()
  })

  it('member delete shreds its key: identify no longer finds it and its old ciphertexts decrypt under no stored key', async () => {
    const sql = svc.storage.db.sql
    const environment = (await environmentById(sql, tenant.environmentId))!
    const other = await createMember(svc, tenant, 'stays')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 2, other)), 200)
    const saved = await sql<{ hand: string; kind: 'enroll' | 'identify' | 'reference'; ciphertext: Buffer }[]>`
      SELECT hand, kind, ciphertext FROM palm_templates WHERE member_id = ${memberId}`
    expect(saved).toHaveLength(6)
    const scansBefore = await sql`SELECT count(*)::int AS count FROM scan_results WHERE project_id = ${tenant.projectId}`

    expectStatus(await svc.request('DELETE', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.key }), 204)
    expect((await identify(svc, tenant, identifyBody(palms, 1, 'left'))).status).toBe('NotFound')
    expect(await identify(svc, tenant, identifyBody(palms, 2, 'left'))).toMatchObject({ status: 'Found', member_id: other })
    expect(await sql`SELECT 1 FROM members WHERE id = ${memberId}`).toHaveLength(0)
    expect(await sql`SELECT 1 FROM palm_templates WHERE member_id = ${memberId}`).toHaveLength(0)
    // History stays.
    const [scansAfter] = await sql`SELECT count(*)::int AS count FROM scan_results WHERE project_id = ${tenant.projectId}`
    expect(scansAfter.count).toBeGreaterThanOrEqual(scansBefore[0].count)

    const remainingKeys = await sql<{ id: string; wrapped_key: Buffer }[]>`SELECT id, wrapped_key FROM members WHERE wrapped_key IS NOT NULL`
    for (const { hand, kind, ciphertext } of saved) {
      for (const candidate of remainingKeys) {
        const key = unwrapMemberKey(svc.service.app.keyring, environment, candidate.id, candidate.wrapped_key)
        expect(() => openTemplate(key, memberId, hand, kind, ciphertext)).toThrow()
      }
    }
  })
})
