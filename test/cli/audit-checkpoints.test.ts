// Signed checkpoints kept away from the database: `palmvein audit checkpoints --out <file>` signs
// the end of every chain (the file verifies with nothing but its own public keys); `palmvein audit
// verify --checkpoints <file>` then catches what the database alone cannot show: records cut from
// a chain's end, a chain removed whole. A file edited after export is refused. Master key rotation
// keeps the trail written under the old key verifiable, checkpoints included.
import { createPublicKey, randomBytes, verify } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { runCli } from '../support/process.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

describe('audit checkpoints exported and verified', () => {
  let storage: TestStorage
  let svc: TestService
  let env: Record<string, string | undefined>
  const oldKey = randomBytes(32)
  const newKey = randomBytes(32)
  const withKey = (key: Buffer) => ({ ...env, PALMVEIN_MASTER_KEY: key.toString('base64') })
  beforeAll(async () => {
    storage = await createTestStorage()
    svc = await bootService({ storage, config: { masterKey: oldKey } })
    env = { PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined }
  }, 120_000)
  afterAll(async () => {
    await svc.stop()
    await storage.cleanup()
  })
  const sql = () => svc.storage.db.sql

  async function refusals(tenant: Tenant, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${newId()}`, { auth: tenant.orgKey }), 404)
      await svc.service.app.audit.flush()
    }
  }

  it("exports signed checkpoints that catch records cut from a chain's end and a chain removed whole", async () => {
    const cut = await createTenant(svc, 'checkpoint-cut@example.com')
    const gone = await createTenant(svc, 'checkpoint-gone@example.com')
    await refusals(cut, 3)
    await refusals(gone, 1)
    const file = path.join(storage.dataDir, '..', `checkpoints-${newId()}.json`)
    const exported = await runCli(['audit', 'checkpoints', '--out', file], withKey(oldKey))
    expect(exported.code, exported.stderr + exported.stdout).toBe(0)
    expect(exported.stdout).toMatch(/wrote \d+ signed checkpoint\(s\) to /)

    // The file checks out with its own public keys (as an auditor would, without the service).
    const document = JSON.parse(await fs.readFile(file, 'utf8'))
    expect(document.format).toBe('palmvein-audit-checkpoints/1')
    const [cutEnd] = await sql()<
      { last_seq: number; last_hash: Buffer }[]
    >`SELECT last_seq, last_hash FROM audit_blocks WHERE chain = ${cut.orgId} ORDER BY first_seq DESC LIMIT 1`
    const entry = document.checkpoints.find((candidate: { statement: string }) => JSON.parse(candidate.statement).chain === cut.orgId)
    const statement = JSON.parse(entry.statement)
    expect(statement).toMatchObject({ type: 'palmvein-audit-checkpoint', seq: Number(cutEnd.last_seq), hash: cutEnd.last_hash.toString('hex') })
    expect(verify(null, Buffer.from(entry.statement), createPublicKey(document.public_keys[statement.key_id]), Buffer.from(entry.signature, 'base64'))).toBe(
      true,
    )
    // Nothing secret in it: no master key, no audit secret.
    const text = await fs.readFile(file, 'utf8')
    expect(text).not.toContain(oldKey.toString('base64'))
    expect(text).not.toContain(oldKey.toString('hex'))

    // Someone with the database cuts the newest records of one chain, removes another chain whole,
    // and deletes every checkpoint the database held: the database alone no longer shows it.
    await sql()`DELETE FROM audit_blocks WHERE chain = ${cut.orgId} AND first_seq = (SELECT max(first_seq) FROM audit_blocks WHERE chain = ${cut.orgId})`
    await sql()`DELETE FROM audit_blocks WHERE chain = ${gone.orgId}`
    // The database's own checkpoint (signed by the export) still shows the cut...
    const own = await runCli(['audit', 'verify', '--org', cut.orgId], withKey(oldKey))
    expect(own.code, own.stdout).toBe(1)
    expect(own.stdout).toContain(
      `record ${cutEnd.last_seq}: the signed checkpoint in the database pins this record but the chain ends at record ${Number(cutEnd.last_seq) - 1}`,
    )
    // ...until it is deleted too.
    await sql()`DELETE FROM audit_checkpoints`
    const alone = await runCli(['audit', 'verify'], withKey(oldKey))
    expect(alone.code, alone.stdout).toBe(0)
    expect(alone.stdout).not.toContain(gone.orgId)

    const checked = await runCli(['audit', 'verify', '--checkpoints', file], withKey(oldKey))
    expect(checked.code, checked.stdout).toBe(1)
    expect(checked.stdout).toContain(
      `BROKEN organization ${cut.orgId}: record ${cutEnd.last_seq}: the signed checkpoint in the exported file pins this record but the chain ends at record ${Number(cutEnd.last_seq) - 1} (records were removed from its end)`,
    )
    expect(checked.stdout).toMatch(
      new RegExp(`BROKEN organization ${gone.orgId}: record \\d+: the signed checkpoint in the exported file pins this record but the chain ends at record 0`),
    )
    expect(checked.stdout).toMatch(/checked against \d+ signed checkpoint\(s\) from /)

    // A checkpoint edited in the file (to match the shortened chain) no longer carries a valid signature.
    const forged = structuredClone(document)
    const forgedEntry = forged.checkpoints.find((candidate: { statement: string }) => JSON.parse(candidate.statement).chain === cut.orgId)
    const [shortEnd] = await sql()<
      { last_seq: number; last_hash: Buffer }[]
    >`SELECT last_seq, last_hash FROM audit_blocks WHERE chain = ${cut.orgId} ORDER BY first_seq DESC LIMIT 1`
    forgedEntry.statement = JSON.stringify({ ...statement, seq: Number(shortEnd.last_seq), hash: shortEnd.last_hash.toString('hex') })
    forged.checkpoints = [forgedEntry]
    await fs.writeFile(file, JSON.stringify(forged))
    const refused = await runCli(['audit', 'verify', '--org', cut.orgId, '--checkpoints', file], withKey(oldKey))
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain(
      `BROKEN organization ${cut.orgId}: record ${shortEnd.last_seq}: the signed checkpoint in the exported file at this record: its signature does not hold`,
    )

    await fs.writeFile(file, 'not json')
    expect(await runCli(['audit', 'verify', '--checkpoints', file], withKey(oldKey))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('it is not JSON'),
    })
    expect(await runCli(['audit', 'checkpoints'], withKey(oldKey))).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("required option '--out <file>' not specified"),
    })
    const help = await runCli(['audit', 'verify', '--help'], env)
    expect(help.stdout).toContain('--checkpoints <file>')
    expect(help.stdout).toContain('--org <id>')
    await fs.rm(file, { force: true })
  }, 180_000)

  it('verifies records and checkpoints written under the old master key after rotating to a new one', async () => {
    const tenant = await createTenant(svc, 'checkpoint-rotation@example.com')
    await refusals(tenant, 2)
    const file = path.join(storage.dataDir, '..', `checkpoints-${newId()}.json`)
    expect((await runCli(['audit', 'checkpoints', '--out', file], withKey(oldKey))).code).toBe(0)

    const keys = (subcommand: string, current: Buffer, next?: Buffer) =>
      runCli(['keys', subcommand], {
        ...withKey(current),
        PALMVEIN_NEW_MASTER_KEY: next?.toString('base64'),
      })
    expect((await keys('rotate-master', oldKey, newKey)).code).toBe(0)
    await svc.restart({ masterKey: newKey })
    await refusals(tenant, 2)
    const retired = await keys('retire-master', newKey)
    expect(retired.code, retired.stderr).toBe(0)

    // Two audit keys wrote this chain; the new master key opens both.
    const [{ keys: keyCount }] = await sql()<{ keys: number }[]>`SELECT count(DISTINCT key_id)::int AS keys FROM audit_blocks WHERE chain = ${tenant.orgId}`
    expect(keyCount).toBe(2)
    const verified = await runCli(['audit', 'verify', '--org', tenant.orgId, '--checkpoints', file], withKey(newKey))
    expect(verified.code, verified.stdout).toBe(0)
    expect(verified.stdout).toMatch(new RegExp(`^ok organization ${tenant.orgId}: \\d+ record`, 'm'))
    // The retired key opens nothing any more: the newer records are keyed by an audit key it cannot open.
    const stale = await runCli(['audit', 'verify', '--org', tenant.orgId], withKey(oldKey))
    expect(stale.code).toBe(1)
    expect(stale.stdout).toContain('which this master key does not open')
    await fs.rm(file, { force: true })
  }, 240_000)
})
