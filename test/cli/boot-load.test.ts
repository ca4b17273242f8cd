// A restart loads a gallery of thousands of rows with its AES-GCM on threads of its own
// (decrypt-pool.ts, from 4 096 rows): the members imported before are identified afterwards,
// exactly as when the main thread decrypts them.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSyntheticPopulation, DEMO_CAPTURES } from '../../src/matcher/index.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { base64url, createPalmTenant, identify, identifyBody, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'
import { bootService, type TestService } from '../support/service.js'

const MEMBERS = 2_100
const palms = createSyntheticPopulation({ seed: 23, dimension: 256, identities: MEMBERS, ...DEMO_CAPTURES })
const memberId = (identity: number) => `0190a6b2-0000-7000-8000-${String(identity).padStart(12, '0')}`

describe('boot load of a large gallery', () => {
  let storage: TestStorage
  let svc: TestService
  let tenant: PalmTenant
  let dir: string
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
    svc = await bootService({ storage })
    tenant = await createPalmTenant(svc, 'boot-admin@example.com')
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-boot-'))
  }, 120_000)
  afterAll(async () => {
    await svc?.stop()
    await storage?.cleanup()
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('identifies every sampled member after restarts that decrypt on threads and on the main thread', async () => {
    const capture = (identity: number, hand: 'left' | 'right', attempt: number) => base64url(palms.template(identity, hand, 0, attempt, { quality: 90 }))
    const lines = Array.from({ length: MEMBERS }, (_, identity) => JSON.stringify({
      member_id: memberId(identity), display_name: `P${identity}`,
      left_hand: { enroll_capture: capture(identity, 'left', 0), identify_capture: capture(identity, 'left', 1) },
      right_hand: { enroll_capture: capture(identity, 'right', 0), identify_capture: capture(identity, 'right', 1) },
    }))
    const file = path.join(dir, 'members.ndjson')
    await fs.writeFile(file, lines.join('\n'))
    const imported = await runCli(['import', '--project', tenant.projectId, '--allow-duplicates', file], { PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined })
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: MEMBERS, rejected: 0 })

    const sample = [0, 1, 777, 1500, MEMBERS - 1]
    const answers = async () => Promise.all(sample.flatMap((identity) => (['left', 'right'] as const).map(async (hand) => {
      const answer = await identify(svc, tenant, identifyBody(palms, identity, hand))
      return [answer.status, answer.member_id, answer.hand]
    })))
    const expected = sample.flatMap((identity) => ['left', 'right'].map((hand) => ['Found', memberId(identity), hand]))
    for (const bootDecryptThreads of [2, 0]) {
      await svc.restart({ bootDecryptThreads })
      await waitUntilReady(svc.url, 60_000)
      expect(await answers()).toEqual(expected)
    }
  }, 180_000)
})
