// The embedded database runs in a thread of its own (store/engine/pglite-thread.ts): a long statement
// does not hold the service's event loop, the files survive a close and a reopen, and a data
// directory PGlite cannot open is refused with a clear error instead of a hung or crashed boot.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createClient, openDatabase } from '../../src/store/engine/database.js'
import { openEmbedded } from '../../src/store/engine/embedded.js'

const directories: string[] = []
async function dataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-embedded-thread-'))
  directories.push(dir)
  return dir
}
afterAll(async () => {
  for (const dir of directories) await fs.rm(dir, { recursive: true, force: true })
})

describe('embedded database thread', () => {
  it('runs a long statement while this thread keeps serving its timers', async () => {
    const embedded = await openEmbedded(await dataDir())
    const sql = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 1 })
    try {
      let last = performance.now()
      let longestGap = 0
      const timer = setInterval(() => {
        const now = performance.now()
        longestGap = Math.max(longestGap, now - last)
        last = now
      }, 5)
      const started = performance.now()
      const [{ total }] = await sql<{ total: string }[]>`SELECT sum(x::bigint * x)::text AS total FROM generate_series(1, 4000000) AS x`
      const statementMs = performance.now() - started
      clearInterval(timer)
      expect(total).toBe('21333341333334000000')
      // Run on this thread, the statement would be one gap as long as itself.
      expect(statementMs).toBeGreaterThan(200)
      expect(longestGap).toBeLessThan(statementMs / 2)
    } finally {
      await sql.end({ timeout: 1 })
      await embedded.close()
    }
  })

  it('keeps a small page cache unless PALMVEIN_EMBEDDED_SHARED_BUFFERS asks for another', async () => {
    for (const [env, expected] of [
      [{}, '8MB'],
      [{ PALMVEIN_EMBEDDED_SHARED_BUFFERS: '48MB' }, '48MB'],
    ] as const) {
      const db = await openDatabase(loadConfig({}, { PALMVEIN_DATA_DIR: await dataDir(), ...env }))
      try {
        const [{ shared_buffers: setting }] = await db.sql<{ shared_buffers: string }[]>`SHOW shared_buffers`
        expect(setting).toBe(expected)
      } finally {
        await db.close()
      }
    }
  })

  it('keeps what was written across a close and a reopen of the thread', async () => {
    const dir = await dataDir()
    for (const step of ['write', 'read'] as const) {
      const embedded = await openEmbedded(dir)
      const sql = createClient({ host: embedded.host, port: embedded.port, password: embedded.password, max: 1 })
      if (step === 'write') await sql`CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')`.simple()
      else expect(await sql`SELECT value FROM kept`).toEqual([{ value: 'still here' }])
      await sql.end({ timeout: 1 })
      await embedded.close()
    }
  })

  it('refuses a data directory PGlite cannot open, naming the embedded database', async () => {
    const dir = await dataDir()
    // Where PGlite keeps its files there is a plain file.
    await fs.writeFile(path.join(dir, 'pglite'), 'not a database')
    await expect(openEmbedded(dir)).rejects.toThrow(/embedded database did not open/)
  })
})
