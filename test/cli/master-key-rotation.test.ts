// Master key rotation through the CLI while the service runs: both keys work during the rolling
// restart (a process still on the old key creates an environment the new key opens), identify
// works after restarting with the new key, and after retire-master the old key opens nothing.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKeyring } from '../../src/keys/keyring.js'
import { masterKeyId } from '../../src/keys/master-keys.js'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, waitUntilReady, type PalmTenant } from '../support/palms.js'
import { runCli } from '../support/process.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ identities: 10 })

async function enrolled(svc: TestService, tenant: PalmTenant, identity: number): Promise<string> {
  const memberId = await createMember(svc, tenant, `identity ${identity}`)
  expectStatus(await enroll(svc, tenant, enrollBody(palms, identity, memberId)), 200)
  return memberId
}

async function found(svc: TestService, tenant: PalmTenant, identity: number): Promise<string | null> {
  await waitUntilReady(svc.url)
  const result = await identify(svc, tenant, identifyBody(palms, identity, 'left'))
  return result.status === 'Found' ? result.member_id : null
}

describe('master key rotation', () => {
  let storage: TestStorage
  let svc: TestService
  let env: Record<string, string | undefined>
  const oldKey = randomBytes(32)
  const newKey = randomBytes(32)
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
    svc = await bootService({ storage, config: { masterKey: oldKey } })
    env = { PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined }
  }, 120_000)
  afterAll(async () => {
    await svc.stop()
    await storage.cleanup()
  })
  const keys = (subcommand: string, current: Buffer, next?: Buffer) =>
    runCli(['keys', subcommand], {
      ...env,
      PALMVEIN_MASTER_KEY: current.toString('base64'),
      PALMVEIN_NEW_MASTER_KEY: next?.toString('base64'),
    })

  it('rotates while the service runs, serves on both keys meanwhile, and retires the old key', { timeout: 180_000 }, async () => {
    const first = await createPalmTenant(svc, 'rotation@example.com')
    const firstMember = await enrolled(svc, first, 0)

    // Refused, changing nothing: the wrong current key, the same key twice, no new key, retiring with no rotation.
    expect(await keys('rotate-master', randomBytes(32), newKey)).toMatchObject({ code: 2, stderr: expect.stringContaining('does not open environment') })
    expect(await keys('rotate-master', oldKey, oldKey)).toMatchObject({ code: 2, stderr: expect.stringContaining('is the current master key') })
    expect(await keys('rotate-master', oldKey)).toMatchObject({ code: 2, stderr: expect.stringContaining('PALMVEIN_NEW_MASTER_KEY') })
    expect(await keys('retire-master', oldKey)).toMatchObject({ code: 2, stderr: expect.stringContaining('no master key rotation is under way') })

    const rotated = await keys('rotate-master', oldKey, newKey)
    expect(rotated.code).toBe(0)
    expect(JSON.parse(rotated.stdout)).toEqual({ environments: 1, webhook_secrets: 0, old_key_id: masterKeyId(oldKey), new_key_id: masterKeyId(newKey) })
    // Run again, with both keys from files (Docker and Kubernetes secrets): idempotent, and the advice names the file.
    const secrets = await fs.mkdtemp(path.join(storage.dataDir, 'secrets-'))
    await fs.writeFile(path.join(secrets, 'old'), `${oldKey.toString('base64')}\n`)
    await fs.writeFile(path.join(secrets, 'new'), `${newKey.toString('base64')}\n`)
    const fromFiles = await runCli(['keys', 'rotate-master'], {
      ...env,
      PALMVEIN_MASTER_KEY_FILE: path.join(secrets, 'old'),
      PALMVEIN_NEW_MASTER_KEY_FILE: path.join(secrets, 'new'),
    })
    expect(fromFiles).toMatchObject({ code: 0, stderr: expect.stringContaining(`Put the new key in ${path.join(secrets, 'old')}`) })
    expect(JSON.parse(fromFiles.stdout)).toMatchObject({ old_key_id: masterKeyId(oldKey), new_key_id: masterKeyId(newKey) })
    // A second rotation to another key is refused until this one is retired.
    expect(await keys('rotate-master', oldKey, randomBytes(32))).toMatchObject({ code: 2, stderr: expect.stringContaining('is under way') })

    // The process on the old key goes on, and what it creates now opens with the new key too.
    expect(await found(svc, first, 0)).toBe(firstMember)
    const second = await createPalmTenant(svc, 'rotation-second@example.com')
    const secondMember = await enrolled(svc, second, 1)
    expect(await keys('retire-master', oldKey)).toMatchObject({ code: 2, stderr: expect.stringContaining('run it with the new master key') })

    await svc.restart({ masterKey: newKey })
    expect(await found(svc, first, 0)).toBe(firstMember)
    expect(await found(svc, second, 1)).toBe(secondMember)

    const retired = await keys('retire-master', newKey)
    expect(retired.code).toBe(0)
    expect(JSON.parse(retired.stdout)).toEqual({ environments: 2, webhook_secrets: 0, retired_key_id: masterKeyId(oldKey) })
    expect(await keys('retire-master', newKey)).toMatchObject({ code: 2, stderr: expect.stringContaining('no master key rotation is under way') })

    const environments = await svc.service.app.sql<Array<{ id: string; wrapped_key: Buffer }>>`SELECT id, wrapped_key FROM environments`
    expect(environments).toHaveLength(2)
    for (const environment of environments) {
      expect(() => createKeyring(oldKey).environmentKey(environment.id, environment.wrapped_key)).toThrow(/not by this process's/)
      expect(createKeyring(newKey).environmentKey(environment.id, environment.wrapped_key)).toHaveLength(32)
    }
    await svc.restart({ masterKey: newKey })
    expect(await found(svc, second, 1)).toBe(secondMember)
  })
})

describe('master key rotation with the key in the data directory', () => {
  it('writes the new key into the key file, which the next start uses', { timeout: 180_000 }, async () => {
    const storage = await createTestStorage()
    await storage.handOver()
    const svc = await bootService({ storage })
    try {
      const tenant = await createPalmTenant(svc, 'rotation-file@example.com')
      const member = await enrolled(svc, tenant, 2)
      const env = { PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined, PALMVEIN_MASTER_KEY: undefined }
      const newKey = randomBytes(32)
      const rotated = await runCli(['keys', 'rotate-master'], { ...env, PALMVEIN_NEW_MASTER_KEY: newKey.toString('base64') })
      expect(rotated.code).toBe(0)
      expect((await fs.readFile(path.join(storage.dataDir, 'master.key'), 'utf8')).trim()).toBe(newKey.toString('base64'))
      await svc.restart()
      expect(await found(svc, tenant, 2)).toBe(member)
      expect((await runCli(['keys', 'retire-master'], env)).code).toBe(0)
      await svc.restart()
      expect(await found(svc, tenant, 2)).toBe(member)
    } finally {
      await svc.stop()
      await storage.cleanup()
    }
  })
})
