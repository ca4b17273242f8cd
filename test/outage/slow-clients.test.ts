// Hostile clients do not starve the others: 200 connections sending their headers a byte every two
// seconds (slowloris), then 2 000 connections that connect and send nothing. Meanwhile ordinary
// requests (liveness, and an authenticated read that reaches the database) are answered within
// 100 ms (90th percentile; none slower than a second), and the process's memory stays bounded.
// Once per HTTP transport this Node has. Run in the outage stage: one file at a time, so the timing
// is not another suite's.
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadUwsBuild } from '../../src/http/adapters/uws-build.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { bootService, type TestService } from '../support/service.js'

const SLOW_CLIENTS = 200
const IDLE_CLIENTS = 2_000
const ANSWER_MS = 100
const MEMORY_GROWTH_LIMIT = 128 * 1024 * 1024

const transports = loadUwsBuild().ok ? (['uws', 'node'] as const) : (['node'] as const)

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]

describe.each(transports)('slow and idle clients (%s)', (transport) => {
  let svc: TestService
  let tenant: PalmTenant
  const sockets: net.Socket[] = []

  beforeAll(async () => {
    svc = await bootService({ config: { httpServer: transport } })
    tenant = await createPalmTenant(svc, `slow-${transport}@example.com`)
  }, 60_000)
  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await svc?.close()
  })

  const port = () => Number(new URL(svc.url).port)
  const open = (count: number) =>
    Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const socket = net.connect(port(), '127.0.0.1', () => resolve(socket))
            socket.on('error', () => {}).once('error', reject)
            sockets.push(socket)
          }),
      ),
    )

  /** Ordinary requests one after another for `ms`; their latencies. */
  async function ordinaryTraffic(ms: number) {
    const latencies: number[] = []
    const statuses = new Set<number>()
    const until = performance.now() + ms
    while (performance.now() < until) {
      for (const [path, auth] of [
        ['/livez', undefined],
        [`/v1/projects/${tenant.projectId}`, tenant.key],
      ] as const) {
        const started = performance.now()
        const answer = await svc.request('GET', path, { auth })
        latencies.push(performance.now() - started)
        statuses.add(answer.status)
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return { latencies, statuses: [...statuses] }
  }

  function expectServed(label: string, traffic: { latencies: number[]; statuses: number[] }, rssGrowth: number) {
    const p90 = percentile(traffic.latencies, 0.9)
    const slowest = Math.max(...traffic.latencies)
    console.log(
      `[${label} ${transport}] ${traffic.latencies.length} ordinary requests: p50 ${percentile(traffic.latencies, 0.5).toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms; RSS +${(rssGrowth / 2 ** 20).toFixed(1)} MiB`,
    )
    expect(traffic.statuses).toEqual([200])
    expect(p90).toBeLessThanOrEqual(ANSWER_MS)
    expect(slowest).toBeLessThan(1_000)
    expect(rssGrowth).toBeLessThan(MEMORY_GROWTH_LIMIT)
  }

  it(`${SLOW_CLIENTS} clients sending headers a byte every two seconds do not slow the others`, async () => {
    const rssBefore = process.memoryUsage().rss
    const slow = await open(SLOW_CLIENTS)
    for (const socket of slow) socket.write('GET /livez HTTP/1.1\r\nHost: slow.example\r\nX-Slow: ')
    const drip = setInterval(() => {
      for (const socket of slow) if (!socket.destroyed) socket.write('a')
    }, 2_000)
    try {
      const traffic = await ordinaryTraffic(6_000)
      expectServed('slow clients', traffic, process.memoryUsage().rss - rssBefore)
    } finally {
      clearInterval(drip)
      for (const socket of slow) socket.destroy()
    }
  }, 60_000)

  it(`${IDLE_CLIENTS} idle connections do not slow the others`, async () => {
    const rssBefore = process.memoryUsage().rss
    const idle = await open(IDLE_CLIENTS)
    try {
      const traffic = await ordinaryTraffic(3_000)
      expectServed('idle connections', traffic, process.memoryUsage().rss - rssBefore)
      // They were really held open: most are still connected.
      expect(idle.filter((socket) => !socket.destroyed).length).toBeGreaterThan(IDLE_CLIENTS * 0.9)
    } finally {
      for (const socket of idle) socket.destroy()
    }
  }, 60_000)
})
