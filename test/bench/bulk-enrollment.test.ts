// The bulk-enrollment fast path the benchmark loads its environments with: members written by
// it must be, to the service, exactly like members enrolled through the API (the service decrypts
// them at boot, identifies them, refuses their palms to another member), and it must keep the
// project's headcount.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBulkLoader, type BulkMember } from '../../src/domain/bulk-enrollment.js'
import { createKeyring, loadMasterKey } from '../../src/domain/keyring.js'
import { bulkWriteFor } from '../../src/store/members.js'
import { environmentById } from '../../src/store/organizations.js'
import { base64url, createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 40 })
const LOADED = 24

function bulkMember(identity: number): BulkMember {
  const hand = (side: 'left' | 'right') => ({
    enroll_capture: base64url(palms.template(identity, side, 0, 0, { elementType: 'int8' })),
    identify_capture: base64url(palms.template(identity, side, 0, 1, { elementType: 'int8' })),
  })
  return { display_name: `bulk ${identity}`, metadata: { identity }, left_hand: hand('left'), right_hand: hand('right') }
}

let svc: TestService
let tenant: PalmTenant
let ids: string[] = []

async function loaderFor(headcount: number, storeCaptures?: boolean) {
  const sql = svc.storage.db.sql
  const master = await loadMasterKey({ masterKey: null, dataDir: svc.storage.dataDir })
  const environment = (await environmentById(sql, tenant.environmentId))!
  return createBulkLoader({ sql, write: bulkWriteFor(svc.storage.db), keyring: createKeyring(master.key), project: { id: tenant.projectId, headcount }, environment, storeCaptures })
}

beforeAll(async () => {
  svc = await bootService()
  tenant = await createPalmTenant(svc, 'bulk@example.com')
  // Loaded while the service is stopped, then found by the service's own boot load.
  await svc.stop()
  const loader = await loaderFor(1_000)
  ids = [...await loader.enroll([...Array(LOADED / 2).keys()].map(bulkMember)), ...await loader.enroll([...Array(LOADED / 2).keys()].map((index) => bulkMember(index + LOADED / 2)))]
  await svc.restart()
  await waitUntilReady(svc.url)
})

afterAll(async () => {
  await svc?.close()
})

describe('bulk enrollment', () => {
  it('gives members the service decrypts at boot and identifies', async () => {
    expect(ids).toHaveLength(LOADED)
    for (const identity of [0, 13, LOADED - 1]) {
      const answer = await identify(svc, tenant, identifyBody(palms, identity, identity % 2 ? 'right' : 'left'))
      expect(answer, JSON.stringify(answer)).toMatchObject({ status: 'Found', member_id: ids[identity] })
    }
    const stranger = await identify(svc, tenant, identifyBody(palms, LOADED + 3, 'left'))
    expect(stranger.status).toBe('NotFound')
  })

  it('stores members like an enrollment does: four encrypted captures, readable through the API', async () => {
    const response = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${ids[5]}`, { auth: tenant.key })
    expectStatus(response, 200)
    expect(response.body).toMatchObject({ member_id: ids[5], display_name: 'bulk 5', metadata: '{"identity":5}', palm_templates_enrolled: 4 })
    expect(response.body.last_enrolled_at).not.toBeNull()
    const [{ count }] = await svc.storage.db.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM palm_templates WHERE member_id = ${ids[5]}`
    expect(count).toBe(6)
  })

  it('puts the palms in the gallery that guards enrollment: another member cannot take them', async () => {
    const other = await createMember(svc, tenant, 'impostor')
    const response = await enroll(svc, tenant, enrollBody(palms, 2, other))
    expectStatus(response, 409)
    expect(response.body.code).toBe('duplicate_palm')
  })

  it('refuses a batch that would exceed the headcount and writes none of it', async () => {
    const sql = svc.storage.db.sql
    const [{ count: before }] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM members WHERE project_id = ${tenant.projectId}`
    const loader = await loaderFor(before + 1)
    await expect(loader.enroll([bulkMember(30), bulkMember(31)])).rejects.toMatchObject({ code: 'conflict' })
    const [{ count: after }] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM members WHERE project_id = ${tenant.projectId}`
    expect(after).toBe(before)
  })

  it('refuses a capture that does not fit the environment, naming it, and writes nothing', async () => {
    const loader = await loaderFor(1_000)
    const bad = bulkMember(32)
    bad.right_hand = { ...bad.right_hand!, identify_capture: base64url(population({ dimension: 128 }).template(32, 'right', 0, 1)) }
    await expect(loader.enroll([bulkMember(33), bad])).rejects.toMatchObject({ code: 'capture_invalid', detail: expect.stringContaining('1.right_hand.identify_capture: dimension 128') })
    const [{ count }] = await svc.storage.db.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM members WHERE display_name = 'bulk 33'`
    expect(count).toBe(0)
  })

  it('stores only the references when asked, and says no capture is stored', async () => {
    const loader = await loaderFor(1_000, false)
    const [id] = await loader.enroll([bulkMember(34)])
    const rows = await svc.storage.db.sql<{ kind: string }[]>`SELECT kind FROM palm_templates WHERE member_id = ${id} ORDER BY hand`
    expect(rows.map((row) => row.kind)).toEqual(['reference', 'reference'])
    const response = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${id}`, { auth: tenant.key })
    expectStatus(response, 200)
    expect(response.body.palm_templates_enrolled).toBe(0)
  })
})
