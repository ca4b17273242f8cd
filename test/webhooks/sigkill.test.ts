// Crash safety end to end: the service is killed with SIGKILL while deliveries are claimed and in
// flight; started again, it sends every delivery (a claim of the dead process expires with its
// lease). On PGlite the killed process owns the database, so its durability is exercised too.
import fs from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo, Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLocalIssuer } from '../../src/auth/identity-tokens.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { startServeProcess } from '../support/process.js'
import { request } from '../support/service.js'

describe(`webhook deliveries survive SIGKILL (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage | null = null
  let dataDir: string
  let receiver: http.Server
  let receiverUrl: string
  let answering = false
  const hanging = new Set<Socket>()
  const delivered = new Set<string>()
  let attemptsSeen = 0

  beforeAll(async () => {
    if (usingPostgres) {
      storage = await createTestStorage()
      dataDir = storage.dataDir
    } else {
      dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-sigkill-'))
    }
    receiver = http.createServer((req, res) => {
      attemptsSeen += 1
      req.resume()
      if (!answering) {
        hanging.add(req.socket)
        return
      }
      delivered.add(String(req.headers['webhook-id']))
      res.end('ok')
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  })
  afterAll(async () => {
    for (const socket of hanging) socket.destroy()
    await new Promise((resolve) => receiver.close(resolve))
    if (storage) await storage.cleanup()
    else await fs.rm(dataDir, { recursive: true, force: true })
  })

  it('every delivery pending at the crash is sent after the restart', async () => {
    const env = {
      PALMVEIN_DATA_DIR: dataDir,
      DATABASE_URL: storage?.databaseUrl ?? undefined,
      PORT: '0',
      HOST: '127.0.0.1',
      // The operator offers every plan for self-service here: the admin's enterprise project takes the test's bursts.
      PALMVEIN_SELF_SERVICE_PLANS: 'sandbox,business,enterprise',
      WEBHOOK_ALLOW_LOCALHOST: 'true',
      PALMVEIN_WEBHOOK_TIMEOUT_MS: '60000',
      PALMVEIN_WEBHOOK_LEASE_MS: '3000',
    }
    const issuer = await loadLocalIssuer({ dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
    const token = await issuer.sign('crash-admin@example.com', 600)
    const first = await startServeProcess(env)
    const call = (url: string, method: string, route: string, body?: unknown) => request(url, method, route, { auth: token, body })

    const org = (await call(first.url, 'POST', '/v1/organizations', { name: 'Crash Co' })).body
    const env1 = (await call(first.url, 'POST', `/v1/organization/${org.id}/environments`, { name: 'main' })).body
    const project = (await call(first.url, 'POST', `/v1/organization/${org.id}/projects`, { name: 'p', environment_id: env1.id, plan: 'enterprise' })).body
    const subscription = await call(first.url, 'POST', `/v1/projects/${project.id}/webhooks`, { url: receiverUrl, event_types: ['enrollment.completed'] })
    expect(subscription.status).toBe(201)
    const events = 24
    for (let i = 0; i < events; i++) {
      expect((await call(first.url, 'POST', `/v1/projects/${project.id}/webhooks/${subscription.body.id}/test`)).status).toBe(200)
    }
    // Attempts are claimed and hanging at the receiver: kill the process in the middle of them.
    await expect.poll(() => attemptsSeen, { timeout: 20_000 }).toBeGreaterThan(0)
    first.child.kill('SIGKILL')
    await first.exited
    for (const socket of hanging) socket.destroy()
    answering = true

    const second = await startServeProcess({ ...env, PALMVEIN_WEBHOOK_TIMEOUT_MS: '5000' })
    try {
      const window = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}&page=1&per_page=100`
      const deliveries = async () => (await call(second.url, 'GET', `/v1/projects/${project.id}/webhooks/${subscription.body.id}/deliveries?${window}`)).body
      await expect
        .poll(async () => (await deliveries()).items.filter((item: { status: string }) => item.status === 'success').length, { timeout: 60_000, interval: 500 })
        .toBe(events)
      const page = await deliveries()
      expect(page.total_count).toBe(events)
      // Every event reached the receiver with a 2xx (at least once; a claim that outlived the crash may repeat).
      expect(new Set(page.items.map((item: { payload: { event_id: string } }) => item.payload.event_id))).toEqual(delivered)
    } finally {
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    }
  }, 120_000)
})
