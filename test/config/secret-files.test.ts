// Secrets from files (NAME_FILE, as Docker and Kubernetes secrets are mounted): the configuration,
// and `palmvein serve` and the CLI reading them as separate processes (the built dist/: run
// `node scripts/build.mjs ts` first).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { createTestStorage } from '../support/database.js'
import { freePort, runBuiltCli, startBuiltServeProcess } from '../support/process.js'

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-secret-files-'))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

/** A secret file as a secret store mounts it: the value and a final newline. */
function secretFile(name: string, value: string): string {
  const file = path.join(scratch, name)
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600 })
  return file
}

const masterKey = Buffer.alloc(32, 9).toString('base64')

describe('secrets from files (NAME_FILE)', () => {
  it('reads DATABASE_URL, the master key and the cluster secret from their _FILE variables, less the final newline', () => {
    const config = loadConfig(
      {},
      {
        DATABASE_URL_FILE: secretFile('database-url', 'postgres://palmvein:s3cret@db:5432/palmvein'),
        PALMVEIN_MASTER_KEY_FILE: secretFile('master-key', masterKey),
        PALMVEIN_NODE_URL: 'http://10.0.0.5:8080',
        PALMVEIN_CLUSTER_SECRET_FILE: secretFile('cluster-secret', 'c'.repeat(40)),
        PALMVEIN_TLS_CERT_FILE: '/etc/palmvein/cert.pem',
        PALMVEIN_TLS_KEY_FILE: '/etc/palmvein/key.pem',
        PALMVEIN_TLS_KEY_PASSPHRASE_FILE: secretFile('passphrase', 'open sesame'),
      },
    )
    expect(config.databaseUrl).toBe('postgres://palmvein:s3cret@db:5432/palmvein')
    expect(config.masterKey?.equals(Buffer.alloc(32, 9))).toBe(true)
    expect(config.cluster?.secret).toBe('c'.repeat(40))
    expect(config.tls?.passphrase).toBe('open sesame')
  })

  it('refuses both NAME and NAME_FILE, an unreadable file and an empty one, naming the file and never its content', () => {
    const url = secretFile('both', 'postgres://u:p4ss@db/x')
    expect(() => loadConfig({}, { DATABASE_URL: 'postgres://db/x', DATABASE_URL_FILE: url })).toThrow(
      new ConfigError('set DATABASE_URL or DATABASE_URL_FILE, not both'),
    )
    const missing = path.join(scratch, 'absent')
    expect(() => loadConfig({}, { PALMVEIN_MASTER_KEY_FILE: missing })).toThrow(new ConfigError(`PALMVEIN_MASTER_KEY_FILE: cannot read ${missing} (ENOENT)`))
    const empty = path.join(scratch, 'empty')
    fs.writeFileSync(empty, '\n')
    expect(() => loadConfig({}, { PALMVEIN_MASTER_KEY_FILE: empty })).toThrow(new ConfigError(`PALMVEIN_MASTER_KEY_FILE: ${empty} is empty`))
    // A key of the wrong length is refused as the variable's own would be, without showing it.
    const short = secretFile('short-key', Buffer.alloc(16, 1).toString('base64'))
    expect(() => loadConfig({}, { PALMVEIN_MASTER_KEY_FILE: short })).toThrow(/PALMVEIN_MASTER_KEY must be 32 bytes in base64, got 16 bytes/)
  })

  it('palmvein serve runs on the master key (and on PostgreSQL, the DATABASE_URL) from files; the CLI uses the same key', async () => {
    const storage = await createTestStorage()
    await storage.handOver()
    try {
      const keyFile = secretFile('serve-master-key', masterKey)
      const env = {
        PALMVEIN_DATA_DIR: storage.dataDir,
        PALMVEIN_MASTER_KEY_FILE: keyFile,
        PALMVEIN_METRICS_PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: undefined,
        DATABASE_URL_FILE: storage.databaseUrl ? secretFile('serve-database-url', storage.databaseUrl) : undefined,
      }
      const served = await startBuiltServeProcess({ ...env, PORT: String(await freePort()) })
      try {
        const health = await fetch(`${served.url}/healthz`)
        expect(await health.text()).toContain(storage.databaseUrl ? 'database: ok (postgres' : 'database: ok (embedded)')
      } finally {
        served.child.kill('SIGTERM')
      }
      expect(await served.exited).toBe(0)
      // The key came from the file: none was generated into the data directory.
      expect(fs.existsSync(path.join(storage.dataDir, 'master.key'))).toBe(false)
      // The CLI reads the same file: rotating to that key is refused as rotating to the current one.
      const rotation = await runBuiltCli(['keys', 'rotate-master'], { ...env, PALMVEIN_NEW_MASTER_KEY: masterKey })
      expect(rotation.stderr).toContain('PALMVEIN_NEW_MASTER_KEY is the current master key')
      expect(rotation.code).not.toBe(0)
    } finally {
      await storage.cleanup()
    }
  }, 90_000)

  it('palmvein serve stops at once on an unreadable secret file, saying which, and opens nothing', async () => {
    const dataDir = path.join(scratch, 'never-made')
    const missing = path.join(scratch, 'no-such-secret')
    const result = await runBuiltCli(['serve'], {
      PALMVEIN_DATA_DIR: dataDir,
      PALMVEIN_MASTER_KEY_FILE: missing,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      PALMVEIN_METRICS_PORT: '0',
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(`PALMVEIN_MASTER_KEY_FILE: cannot read ${missing} (ENOENT)`)
    expect(result.stderr).not.toMatch(/^\s+at /m)
    expect(fs.existsSync(dataDir)).toBe(false)
  })
})
