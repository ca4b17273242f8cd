// The database goes away under light load, cut two ways by a TCP proxy between the service and
// PostgreSQL: refused (a stopped server) and a black hole (a silent network). Every request gets an
// answer within 2 s, never a 500; requests that need the database get 503 database_unavailable with
// Retry-After; the log says so once per outage; the service answers normally within 2 s of the
// database returning; every acknowledged write is there afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLocalIssuer } from '../../src/auth/identity-tokens.js'
import type { Service } from '../../src/server.js'
import type { TestStorage } from '../support/database.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { startProxiedService, type ProxiedService } from '../support/proxied-service.js'
import { request, type TestService } from '../support/service.js'
import type { ProxyMode, TcpProxy } from '../support/tcp-proxy.js'

const LOAD_CLIENTS = 4
const OUTAGE_MS = 6_000
const ANSWER_LIMIT_MS = 2_000

interface Outcome {
  kind: 'write' | 'read'
  status: number
  ms: number
  code?: string
  retryAfter: string | null
  memberId?: string
  startedAt: number
}

describe('database outage (PostgreSQL behind a TCP proxy)', () => {
  let proxied: ProxiedService
  let storage: TestStorage
  let proxy: TcpProxy
  let service: Service
  let tenant: PalmTenant
  let logLines: string[]

  beforeAll(async () => {
    proxied = await startProxiedService()
    ;({ storage, proxy, service, logLines } = proxied)
    const issuer = await loadLocalIssuer({ dataDir: storage.dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
    const svc = {
      request: (method: string, path: string, options?: object) => request(service.url, method, path, options),
      token: (subject: string) => issuer.sign(subject, 3600),
      storage,
    } as unknown as TestService
    tenant = await createPalmTenant(svc, 'outage@example.com')
  }, 120_000)
  afterAll(async () => {
    await proxied?.close()
  })

  const timed = async (kind: Outcome['kind'], method: string, path: string, body?: unknown): Promise<Outcome> => {
    const startedAt = performance.now()
    const answer = await request(service.url, method, path, { auth: tenant.key, body })
    return {
      kind,
      status: answer.status,
      ms: performance.now() - startedAt,
      code: answer.body?.code,
      retryAfter: answer.headers.get('retry-after'),
      memberId: answer.status === 201 ? answer.body.member_id : undefined,
      startedAt,
    }
  }

  /** Light load until `stop()`: each client alternates a write (a new member) and a read. */
  function load() {
    const outcomes: Outcome[] = []
    let running = true
    let sequence = 0
    const clients = Array.from({ length: LOAD_CLIENTS }, async () => {
      while (running) {
        sequence += 1
        outcomes.push(await timed('write', 'POST', `/v1/projects/${tenant.projectId}/members`, { display_name: `load ${sequence}` }))
        outcomes.push(await timed('read', 'GET', `/v1/projects/${tenant.projectId}`))
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })
    return {
      outcomes,
      async stop() {
        running = false
        await Promise.all(clients)
      },
    }
  }

  async function firstSuccessAfter(restoredAt: number): Promise<number> {
    for (;;) {
      const outcome = await timed('read', 'GET', `/v1/projects/${tenant.projectId}`)
      if (outcome.status === 200) return performance.now() - restoredAt
      if (performance.now() - restoredAt > 10_000) throw new Error(`no success within 10 s of the database returning (last ${outcome.status} ${outcome.code})`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it.each(['refuse', 'blackhole'] as ProxyMode[])(
    '%s: 503 within 2 s during the outage, never 500, back within 2 s, no acknowledged write lost',
    async (mode) => {
      const logsBefore = logLines.length
      const traffic = load()
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      await proxy.set(mode)
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS / 2))
      const health = await request(service.url, 'GET', '/healthz')
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS / 2))
      await proxy.set('open')
      const restoredAt = performance.now()
      const recoveryMs = await firstSuccessAfter(restoredAt)
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      await traffic.stop()

      const outcomes = traffic.outcomes
      const statuses = [...new Set(outcomes.map((outcome) => outcome.status))].sort()
      const slowest = Math.max(...outcomes.map((outcome) => outcome.ms))
      const unavailable = outcomes.filter((outcome) => outcome.status === 503)
      console.log(
        `[outage ${mode}] ${outcomes.length} requests, statuses ${statuses.join('/')}, ${unavailable.length} × 503, slowest ${slowest.toFixed(0)} ms, recovery ${recoveryMs.toFixed(0)} ms`,
      )

      expect(
        statuses.every((status) => [200, 201, 503].includes(status)),
        `statuses ${statuses}`,
      ).toBe(true)
      expect(unavailable.length).toBeGreaterThan(0)
      for (const outcome of unavailable) {
        expect(outcome.code).toBe('database_unavailable')
        expect(outcome.retryAfter).toBe('2')
      }
      expect(slowest).toBeLessThanOrEqual(ANSWER_LIMIT_MS)
      expect(recoveryMs).toBeLessThanOrEqual(ANSWER_LIMIT_MS)
      expect(health.status).toBe(503)
      expect(health.text).toMatch(/FAIL database/)

      // Every member answered 201 is there; nothing answered 503 left a partial member.
      const acknowledged = outcomes.flatMap((outcome) => (outcome.memberId ? [outcome.memberId] : []))
      expect(acknowledged.length).toBeGreaterThan(0)
      for (const memberId of acknowledged) {
        const read = await request(service.url, 'GET', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.key })
        expect(read.status, `member ${memberId} answered 201 before`).toBe(200)
      }

      const outageLog = logLines.slice(logsBefore).map((line) => JSON.parse(line) as { level: number; msg: string })
      expect(outageLog.filter((line) => /is unreachable/.test(line.msg))).toHaveLength(1)
      expect(outageLog.filter((line) => /is reachable again/.test(line.msg))).toHaveLength(1)
      expect(
        outageLog.filter((line) => line.level >= 50),
        JSON.stringify(outageLog.filter((line) => line.level >= 50)).slice(0, 2000),
      ).toEqual([])
    },
    60_000,
  )
})
