import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestStorage, type TestStorage } from '../support/database.js'
import { freePort, outputOf, spawnCli, startServeProcess } from '../support/process.js'
import { transport, transportLine } from '../support/transport.js'

/** Send a request whose body arrives in two parts, so it is in flight until we finish it. */
function slowRequest(url: string): { finish(): void; response: Promise<{ status: number; body: string }> } {
  const target = new URL('/v1/organizations', url)
  const request = http.request(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token', 'content-length': '15' },
  })
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (res) => {
      let body = ''
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    request.on('error', reject)
  })
  request.write('{"name":')
  return { finish: () => request.end('"late"}'), response }
}

describe(`graceful shutdown (${transport})`, () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
  })
  afterAll(async () => {
    await storage.cleanup()
  })

  it('answers /livez and /healthz, then on SIGTERM answers requests in flight and exits 0', async () => {
    const server = await startServeProcess({
      PALMVEIN_DATA_DIR: storage.dataDir,
      DATABASE_URL: storage.databaseUrl ?? undefined,
      PORT: '0',
      HOST: '127.0.0.1',
    })
    const livez = await fetch(`${server.url}/livez`)
    expect(livez.status).toBe(200)
    expect(livez.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const healthz = await fetch(`${server.url}/healthz`)
    expect(healthz.status).toBe(200)
    const report = await healthz.text()
    expect(report).toMatch(/^OK\n.*database: ok/s)
    expect(report).toMatch(transportLine)

    const inFlight = [slowRequest(server.url), slowRequest(server.url)]
    await new Promise((resolve) => setTimeout(resolve, 200))
    server.child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 300))
    for (const request of inFlight) request.finish()
    for (const request of inFlight) {
      const answered = await request.response
      // The request completes through the whole pipeline (auth refuses the fake token) rather than being cut off.
      expect(answered.status).toBe(401)
      expect(JSON.parse(answered.body).code).toBe('unauthenticated')
    }
    expect(await server.exited).toBe(0)
    await expect(fetch(`${server.url}/livez`)).rejects.toThrow()
  })

  it('exits 0 at once on SIGTERM while the boot waits for its database (as PID 1 in a container, a signal with no handler does nothing)', async () => {
    // Nothing listens on this port: the boot waits for the database, and says so.
    const child = spawnCli(['serve'], {
      PALMVEIN_LOG_LEVEL: 'info',
      PALMVEIN_DATA_DIR: storage.dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${await freePort()}/nowhere`,
    })
    const output = outputOf(child)
    await new Promise<void>((resolve) => {
      const seen = (chunk: Buffer) => {
        if (/waiting for the database/.test(String(chunk))) resolve()
      }
      child.stdout!.on('data', seen)
      child.stderr!.on('data', seen)
    })
    child.kill('SIGTERM')
    const result = await output
    expect([result.code, result.stdout]).toEqual([0, expect.stringMatching(/SIGTERM during the boot: stopping/)])
  })
})
