// Closed-loop load for maximum throughput (the fallback when wrk is not installed): `connections`
// clients each send their next request as soon as the previous answer arrived.
//
//   import { runClosedLoop } from './load/closed-loop.mjs'
//   const result = await runClosedLoop({ url, headers, connections: 32, durationSeconds: 10 })
//   // → { tool: 'undici', requestsPerSecond, ok, errors, latency: { p50, p95, p99, ... } }
import { fileURLToPath } from 'node:url'
import { runInChild, serveChild } from './child.mjs'
import { summarize } from './stats.mjs'

const SELF = fileURLToPath(import.meta.url)

export function runClosedLoop(options) {
  return runInChild(SELF, options)
}

async function generate({ url, headers = {}, connections = 32, durationSeconds = 10, warmupSeconds = 2, expectStatus = 200 }) {
  const { Pool } = await import('undici')
  const target = new URL(url)
  const pool = new Pool(target.origin, { connections, pipelining: 1 })
  const path = target.pathname + target.search
  const latencies = []
  let errors = 0
  const start = performance.now()
  const measureFrom = start + warmupSeconds * 1000
  const stopAt = measureFrom + durationSeconds * 1000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < stopAt) {
        const sent = performance.now()
        try {
          const response = await pool.request({ path, method: 'GET', headers })
          await response.body.dump()
          if (sent < measureFrom) continue
          if (response.statusCode === expectStatus) latencies.push(performance.now() - sent)
          else errors += 1
        } catch {
          if (sent >= measureFrom) errors += 1
        }
      }
    }),
  )
  await pool.close()
  return {
    tool: 'undici',
    connections,
    durationSeconds,
    ok: latencies.length,
    errors,
    requestsPerSecond: Math.round(latencies.length / durationSeconds),
    latency: summarize(latencies),
  }
}

if (process.argv[1] === SELF && process.send) serveChild(generate)
