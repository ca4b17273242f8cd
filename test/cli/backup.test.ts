// palmvein backup while the service runs, and palmvein restore into an empty data directory: the
// members enrolled before the backup are identified on the restored database, those after are not,
// and neither the backup nor the restore holds or invents a master key.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady } from '../support/palms.js'
import { runCli } from '../support/process.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 10 })

describe(`backup and restore (${usingPostgres ? 'PostgreSQL: refused' : 'embedded database'})`, () => {
  // Registered per database kind, so nothing is skipped: PostgreSQL has its own tools.
  if (usingPostgres) {
    it('points at pg_dump and pg_restore', async () => {
      const env = { DATABASE_URL: process.env.DATABASE_URL }
      expect(await runCli(['backup', '--out', path.join(os.tmpdir(), 'never.backup')], env)).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('pg_dump'),
      })
      expect(await runCli(['restore', 'never.backup'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('pg_restore') })
    })
    return
  }
  let storage: TestStorage
  let svc: TestService
  let scratch: string
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
    svc = await bootService({ storage })
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-backup-'))
  }, 120_000)
  afterAll(async () => {
    await svc.stop()
    await storage.cleanup()
    await fs.rm(scratch, { recursive: true, force: true })
  })

  it('backs up while the service runs; a restore identifies the members enrolled before it', { timeout: 180_000 }, async () => {
    const tenant = await createPalmTenant(svc, 'backup@example.com')
    const before = await createMember(svc, tenant, 'Before')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 0, before)), 200)

    const file = path.join(scratch, 'palmvein.backup')
    const env = { PALMVEIN_DATA_DIR: storage.dataDir }
    const backedUp = await runCli(['backup', '--out', file], env)
    expect(backedUp.code).toBe(0)
    expect(JSON.parse(backedUp.stdout)).toMatchObject({ file, bytes: (await fs.stat(file)).size })
    expect(backedUp.stderr).toContain('does not hold the master key')
    expect(await runCli(['backup', '--out', file], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('exists') })
    // The service went on serving throughout; what it enrolls now is not in the backup.
    const after = await createMember(svc, tenant, 'After')
    expectStatus(await enroll(svc, tenant, enrollBody(palms, 1, after)), 200)

    const masterKey = await fs.readFile(path.join(storage.dataDir, 'master.key'), 'utf8')
    const tar = gunzipSync(await fs.readFile(file))
    expect(tar.includes(masterKey.trim())).toBe(false)
    expect(tar.includes(Buffer.from(masterKey.trim(), 'base64'))).toBe(false)

    const target = path.join(scratch, 'restored')
    const restoreInto = (extra: Record<string, string> = {}) => runCli(['restore', file], { PALMVEIN_DATA_DIR: target, ...extra })
    // Refused, writing nothing: no key at hand, then a key that does not open the backup.
    expect(await restoreInto()).toMatchObject({ code: 2, stderr: expect.stringContaining('holds no master key') })
    // The erasure ledger goes with the key (erasure-survives-restore.test.ts: a restore refuses without it).
    await fs.mkdir(target, { recursive: true })
    await fs.copyFile(path.join(storage.dataDir, 'erasures.log'), path.join(target, 'erasures.log'))
    expect(await restoreInto({ PALMVEIN_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('does not open environment'),
    })
    expect(await fs.readdir(path.join(target, 'pglite')).catch(() => [])).toEqual([])
    expect(await runCli(['restore', path.join(scratch, 'missing')], { PALMVEIN_DATA_DIR: target, PALMVEIN_MASTER_KEY: masterKey.trim() })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no such file'),
    })

    await fs.mkdir(target, { recursive: true })
    await fs.copyFile(path.join(storage.dataDir, 'master.key'), path.join(target, 'master.key'))
    const restored = await restoreInto()
    expect(restored.code).toBe(0)
    expect(JSON.parse(restored.stdout)).toMatchObject({ data_dir: target, environments: 1 })
    expect(await restoreInto()).toMatchObject({ code: 2, stderr: expect.stringContaining('already holds a database') })

    const copy = await bootService({ storage: { ...storage, dataDir: target } })
    try {
      await waitUntilReady(copy.url)
      expect(await identify(copy, tenant, identifyBody(palms, 0, 'left'))).toMatchObject({ status: 'Found', member_id: before })
      expect((await identify(copy, tenant, identifyBody(palms, 1, 'left'))).status).toBe('NotFound')
    } finally {
      await copy.stop()
    }
  })
})
