// Open-loop load at a fixed rate (what wrk2 does): request i is due at start + i / rate whatever
// happened to earlier ones (and sent then: due-clock.mjs), and its latency is measured from when
// it was due, not from when it was sent, so a stalled server cannot hide its queueing delay (no
// coordinated omission).
//
//   import { runOpenLoop } from './load/open-loop.mjs'
//   const result = await runOpenLoop({ url, headers, rate: 1000, durationSeconds: 10, warmupSeconds: 2 })
//   // → { rate, sent, ok, errors, statuses, achievedRps, latency: { p50, p95, p99, max, mean }, sendLag: { … } }
import { fileURLToPath } from 'node:url'
import { runInChild, serveChild } from './child.mjs'
import { fireOnSchedule } from './due-clock.mjs'
import { summarize } from './stats.mjs'

const SELF = fileURLToPath(import.meta.url)

/** Runs in a separate process. */
export function runOpenLoop(options) {
  return runInChild(SELF, options)
}

async function generate({ url, headers = {}, rate = 1000, durationSeconds = 10, warmupSeconds = 2, connections = 64, expectStatus = 200 }) {
  const { Pool } = await import('undici')
  const target = new URL(url)
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
  const path = target.pathname + target.search
  const interval = 1000 / rate
  const total = Math.round(rate * (warmupSeconds + durationSeconds))
  const warmup = Math.round(rate * warmupSeconds)
  const latencies = []
  const statuses = {}
  let errors = 0
  let done = 0
  let measuredFirstDue = 0
  let measuredLastDone = 0
  const start = performance.now() + 50

  const sendLags = []
  let finishAll
  const allDone = new Promise((resolve) => {
    finishAll = resolve
  })
  const fire = (index, due) => {
    if (index === warmup) measuredFirstDue = due
    if (index >= warmup) sendLags.push(performance.now() - due)
    pool
      .request({ path, method: 'GET', headers })
      .then(
        async (response) => {
          await response.body.dump()
          const finished = performance.now()
          if (index >= warmup) {
            statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
            if (response.statusCode === expectStatus) latencies.push(finished - due)
            else errors += 1
            measuredLastDone = Math.max(measuredLastDone, finished)
          }
        },
        () => {
          if (index >= warmup) errors += 1
        },
      )
      .finally(() => {
        done += 1
        if (done === total) finishAll()
      })
  }
  await fireOnSchedule({ start, interval, total, fire })
  await allDone
  await pool.close()
  const measured = total - warmup
  return {
    rate,
    durationSeconds,
    connections,
    sent: measured,
    ok: latencies.length,
    errors,
    statuses,
    achievedRps: Math.round((latencies.length / ((measuredLastDone - measuredFirstDue) / 1000)) * 10) / 10,
    latency: summarize(latencies),
    // How late requests left (ms): part of every latency, the generator's error, not the server's.
    sendLag: summarize(sendLags),
  }
}

if (process.argv[1] === SELF && process.send) serveChild(generate)
