// One owner per data directory: a second `palmvein serve` on an embedded database another process
// serves would never hear its gallery changes, so it refuses to start and says what to do; the
// CLI's short commands still join. On PostgreSQL several processes are the way to scale: both serve.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { runCli, startServeProcess } from '../support/process.js'

describe(`one owner per data directory (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
  })
  afterAll(async () => {
    await storage.cleanup()
  })

  it(usingPostgres ? 'serves from two processes on one PostgreSQL' : 'refuses a second serve on a served data directory; the CLI still joins', async () => {
    const env = { PALMVEIN_DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl ?? undefined, PORT: '0', HOST: '127.0.0.1' }
    const first = await startServeProcess(env)
    try {
      if (usingPostgres) {
        const second = await startServeProcess(env)
        expect((await fetch(`${second.url}/livez`)).status).toBe(200)
        second.child.kill('SIGTERM')
        expect(await second.exited).toBe(0)
      } else {
        const second = await runCli(['serve'], env)
        expect(second.code).toBe(2)
        expect(second.stderr).toContain(`the data directory ${storage.dataDir} is served by another palmvein process (pid ${first.child.pid})`)
        expect(second.stderr).toContain('run several processes on PostgreSQL (DATABASE_URL)')
        const joined = await runCli(['org', 'create', '--name', 'Joined', '--admin', 'a@example.com'], env)
        expect(joined.code, joined.stderr).toBe(0)
        expect(JSON.parse(joined.stdout)).toMatchObject({ name: 'Joined' })
      }
      expect((await fetch(`${first.url}/livez`)).status).toBe(200)
    } finally {
      first.child.kill('SIGTERM')
      await first.exited
    }
  }, 90_000)
})
