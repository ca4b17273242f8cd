import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { startNpmStart } from '../support/process.js'

// npm runs the start script through `sh -c`: without `exec` the shell took npm's forwarded signal
// and the service was orphaned, still serving.
describe('npm start', () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
  })
  afterAll(async () => {
    await storage.cleanup()
  })

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops the service gracefully on one %s to the npm process',
    async (signal) => {
      const server = await startNpmStart({
        PALMVEIN_DATA_DIR: storage.dataDir,
        DATABASE_URL: storage.databaseUrl ?? undefined,
        PORT: '0',
        HOST: '127.0.0.1',
      })
      expect((await fetch(`${server.url}/livez`)).status).toBe(200)
      server.child.kill(signal)
      await server.exited
      expect(server.output()).toContain(`${signal}: shutting down`)
      expect(server.output()).toMatch(/"msg":"stopped"/)
      await expect(fetch(`${server.url}/livez`)).rejects.toThrow()
    },
    60_000,
  )
})
