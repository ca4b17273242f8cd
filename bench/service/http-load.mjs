#!/usr/bin/env node
// The HTTP load generator, run as its own process so its CPU use is not the service's. Two modes:
//   closed loop (--concurrency C): C clients, each sends its next request when the previous answer
//     has arrived; measures latency and throughput at a fixed number of clients in flight;
//   open loop (--rate R): requests leave on a fixed schedule whatever the server does (on time to
//     the tenth of a millisecond: due-clock.mjs); latency is counted from the scheduled send time,
//     so a server that falls behind shows it (no coordinated omission).
// The plan file (JSON, mode 0600: it holds the API key) gives the base URL, the credential and the
// requests to cycle through; identify requests carry the member id a correct answer names. The
// result is one JSON line on stdout.
//   node bench/service/http-load.mjs --plan plan.json --concurrency 16 --duration 10 --warmup 2
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { fireOnSchedule } from '../load/due-clock.mjs'
import { summarize } from '../load/stats.mjs'

const { values } = parseArgs({
  options: {
    plan: { type: 'string' },
    concurrency: { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    timeout: { type: 'string', default: '10' },
  },
  strict: true,
})
const plan = JSON.parse(fs.readFileSync(values.plan, 'utf8'))
const durationMs = Number(values.duration) * 1000
const warmupMs = Number(values.warmup) * 1000
const timeoutMs = Number(values.timeout) * 1000
const concurrency = values.concurrency ? Number(values.concurrency) : null
const rate = values.rate ? Number(values.rate) : null
if ((concurrency === null) === (rate === null) || !(durationMs > 0) || !(warmupMs >= 0) || !plan.requests?.length) {
  console.error('usage: http-load.mjs --plan <file> (--concurrency <n> | --rate <per second>) [--duration <s>] [--warmup <s>]')
  process.exit(2)
}

const origin = new URL(plan.url).origin
// Open loop: enough connections that the generator never becomes the queue (1 000/s at a few ms
// each needs only a handful; 64 leaves room for a slow server).
const pool = new Pool(origin, { connections: concurrency ?? 64, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
const headers = { authorization: `Bearer ${plan.credential}`, 'content-type': 'application/json' }
const requests = plan.requests.map((request) => ({ ...request, body: request.body === undefined ? undefined : JSON.stringify(request.body) }))

const latencies = []
const sendLags = []
const outcomes = {}
const errorSamples = new Map()
let errors = 0
let matedProbes = 0
let matedCorrect = 0
let nonMatedProbes = 0
let nonMatedFound = 0
let next = 0
let measuring = false
// 2xx answers that arrived inside the measured window: the throughput actually served. (Open loop:
// requests still in flight at the end are awaited for their latency, not counted as served.)
let completedInWindow = 0

function noteError(reason) {
  errors += 1
  errorSamples.set(reason, (errorSamples.get(reason) ?? 0) + 1)
}

/** Sends one request; records it when it was sent (or scheduled) inside the measured window. */
async function send(scheduledAt) {
  const request = requests[next++ % requests.length]
  const record = measuring
  const started = scheduledAt ?? performance.now()
  // The generator's own error: how late after its due time the request was handed to the pool.
  if (record && scheduledAt !== null) sendLags.push(performance.now() - scheduledAt)
  try {
    const response = await pool.request({ method: request.method, path: request.path, headers, body: request.body })
    const text = await response.body.text()
    const finished = performance.now()
    const elapsed = finished - started
    // Served rate: every 2xx answer that arrived inside the measured window, whenever it was sent.
    if (response.statusCode >= 200 && response.statusCode < 300 && measureStarted > 0 && finished <= end) completedInWindow += 1
    if (!record) return
    if (response.statusCode < 200 || response.statusCode >= 300) {
      noteError(`HTTP ${response.statusCode}: ${text.slice(0, 160)}`)
      return
    }
    latencies.push(elapsed)
    if (request.expect !== undefined) {
      const answer = JSON.parse(text)
      outcomes[answer.status] = (outcomes[answer.status] ?? 0) + 1
      if (request.expect === null) {
        nonMatedProbes += 1
        if (answer.status === 'Found') nonMatedFound += 1
      } else {
        matedProbes += 1
        if (answer.status === 'Found' && answer.member_id === request.expect) matedCorrect += 1
      }
    }
  } catch (error) {
    if (record) noteError(error.code ?? error.message)
  }
}

const begin = performance.now()
setTimeout(() => {
  measuring = true
}, warmupMs)
let measureStarted = 0
const end = begin + warmupMs + durationMs
setTimeout(() => {
  measureStarted = performance.now()
}, warmupMs)

if (concurrency !== null) {
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) await send(null)
    }),
  )
} else {
  // Request k is due at begin + k / rate, sent then by the clock thread's wake-up, whatever
  // happened to earlier ones.
  const inFlight = new Set()
  await fireOnSchedule({
    start: begin,
    interval: 1000 / rate,
    total: Math.ceil(((end - begin) / 1000) * rate),
    fire(_index, due) {
      const promise = send(due).finally(() => inFlight.delete(promise))
      inFlight.add(promise)
    },
  })
  await Promise.all(inFlight)
}
const measuredSeconds = (Math.min(performance.now(), end) - measureStarted) / 1000
await pool.close()

latencies.sort((a, b) => a - b)
const percentile = (fraction) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(fraction * latencies.length) - 1)] : null)
const round = (value) => (value === null || value === undefined ? null : Math.round(value * 1000) / 1000)
process.stdout.write(
  JSON.stringify({
    requests: latencies.length,
    errors,
    errorSamples: Object.fromEntries([...errorSamples].slice(0, 5)),
    durationSeconds: round(measuredSeconds),
    throughput: round(completedInWindow / measuredSeconds),
    p50: round(percentile(0.5)),
    p95: round(percentile(0.95)),
    p99: round(percentile(0.99)),
    max: round(latencies.at(-1) ?? NaN),
    // Open loop: how late requests left (ms); part of every latency above, the generator's not the server's.
    sendLag: rate === null ? null : (({ p50, p95, p99 }) => ({ p50, p95, p99 }))(summarize(sendLags)),
    outcomes,
    matedProbes,
    matedCorrect,
    nonMatedProbes,
    nonMatedFound,
  }) + '\n',
)
