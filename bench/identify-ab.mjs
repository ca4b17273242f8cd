#!/usr/bin/env node
// A/B: identify latency through HTTP of two (or more) builds of the service, e.g. before and after
// a change on the request path. Each round boots every build in turn (its own process, data
// directory or temporary PostgreSQL database, port), enrolls the same synthetic members through the
// API, and runs the same closed loop of identifies; the report is the median over rounds of each
// build's p50 and p90, and each build's p50 over the first's, also as the median of the per-round
// ratios (paired: a host whose speed drifts between rounds cancels out). Alternating rounds spread
// drift (a noisy neighbour, CPU boost) over both builds. Beside latency, each run reports the CPU time the
// service process (and, on PostgreSQL, the database server's processes) spent per identify: a
// steadier figure than latency on a small, shared machine.
//
//   node bench/identify-ab.mjs <dist-a> <dist-b> [...]   (a dist/ directory of each build)
//
// Environment: AB_ROUNDS (6), AB_SECONDS per run (10), AB_CLIENTS (4), AB_MEMBERS (200),
// DATABASE_URL (a temporary database per run on that server; the embedded PGlite otherwise).
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { scratchDatabase } from './service/scratch-database.mjs'
import { cpuMsOf, postgresCpuMs } from './service/process-cpu.mjs'
import { freePort } from './service/service-process.mjs'

const builds = process.argv.slice(2).map((dist) => path.resolve(dist))
if (builds.length < 2) {
  console.error('usage: node bench/identify-ab.mjs <dist-a> <dist-b> [...]')
  process.exit(2)
}
const ROUNDS = Number(process.env.AB_ROUNDS ?? 6)
const SECONDS = Number(process.env.AB_SECONDS ?? 10)
const CLIENTS = Number(process.env.AB_CLIENTS ?? 4)
const MEMBERS = Number(process.env.AB_MEMBERS ?? 200)
const WARMUP_MS = 1_000

async function temporaryDatabase(round, index) {
  return process.env.DATABASE_URL ? scratchDatabase(process.env.DATABASE_URL, `palmvein_ab_${process.pid}_${round}_${index}`) : null
}

async function boot(dist, databaseUrl) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-ab-'))
  const port = await freePort()
  const env = {
    ...process.env,
    PALMVEIN_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    PORT: String(port),
    PALMVEIN_METRICS_PORT: String(await freePort()),
    HOST: '127.0.0.1',
    PALMVEIN_LOG_LEVEL: 'warn',
    PALMVEIN_WEBHOOK_WORKER: 'false',
    PALMVEIN_SELF_SERVICE_PLANS: 'sandbox,business,enterprise',
  }
  // Its output goes to a file in its data directory: a boot that fails says why.
  const output = fs.openSync(path.join(dataDir, 'service.log'), 'w')
  const child = spawn(process.execPath, [path.join(dist, 'cli/main.js'), 'serve'], { env, stdio: ['ignore', output, output] })
  fs.closeSync(output)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) break
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      const log = fs.readFileSync(path.join(dataDir, 'service.log'), 'utf8').split('\n').slice(-20).join('\n')
      throw new Error(
        `${dist}: the service did not become healthy (${child.exitCode === null ? 'no answer in 60 s' : `exit code ${child.exitCode}`}); its last output:\n${log}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const token = execFileSync(process.execPath, [path.join(dist, 'cli/main.js'), 'token', '--sub', 'ab@example.com'], { env })
    .toString()
    .trim()
  const cpuMs = () => cpuMsOf(child.pid)
  const stop = () =>
    new Promise((resolve) => {
      child.once('exit', resolve)
      child.kill('SIGTERM')
    })
  return { url, token, dataDir, stop, cpuMs }
}

async function post(url, auth, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (response.status >= 300) throw new Error(`${url}: ${response.status} ${await response.text()}`)
  return response.json()
}

async function run(dist, round, index) {
  // The same captures for both builds: the client's generator, as `palmvein capture --synthetic` makes them.
  const { syntheticCapture } = await import('@palmvein/client')
  const capture = (identity, session) => syntheticCapture({ identity, hand: 'left', session, attempt: 0, dimension: 256, seed: 7, extractorId: 1 })
  const database = await temporaryDatabase(round, index)
  const service = await boot(dist, database?.url)
  try {
    const org = await post(`${service.url}/v1/organizations`, service.token, { name: 'A/B' })
    const environment = await post(`${service.url}/v1/organization/${org.id}/environments`, service.token, { name: 'A/B' })
    const project = await post(`${service.url}/v1/organization/${org.id}/projects`, service.token, {
      name: 'A/B',
      environment_id: environment.id,
      plan: 'enterprise',
    })
    const key = (await post(`${service.url}/v1/organization/${org.id}/api-keys`, service.token, { name: 'ab', project_ids: null })).key
    // The plan's per-minute limit would refuse a closed loop on a fast machine: lift it (it stays on the path).
    const { openDatabase } = await import(path.join(dist, 'store/engine/database.js'))
    const db = await openDatabase({ databaseUrl: database?.url ?? null, dataDir: service.dataDir }, { max: 1 })
    await db.sql`UPDATE projects SET requests_per_minute = 100000000, daily_request_limit = 2000000000 WHERE id = ${project.id}`
    await db.close()
    for (let identity = 0; identity < MEMBERS; identity++) {
      const member = (await post(`${service.url}/v1/projects/${project.id}/members`, key, { display_name: `m${identity}` })).member_id
      await post(`${service.url}/v1/projects/${project.id}/biometrics/enroll`, key, {
        member_id: member,
        left_hand: { enroll_capture: capture(identity, 0), identify_capture: capture(identity, 1) },
      })
    }
    const probes = Array.from({ length: 50 }, (_, identity) => JSON.stringify({ palm: { identify_capture: capture(identity, 3) } }))
    const latencies = []
    const warm = performance.now() + WARMUP_MS
    const until = warm + SECONDS * 1000
    let cpuAtWarm = null
    setTimeout(() => {
      cpuAtWarm = { service: service.cpuMs(), database: database ? postgresCpuMs() : 0 }
    }, WARMUP_MS)
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let n = client; performance.now() < until; n += CLIENTS) {
          const started = performance.now()
          const response = await fetch(`${service.url}/v1/projects/${project.id}/biometrics/identify`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: probes[n % probes.length],
          })
          await response.arrayBuffer()
          if (response.status !== 200) throw new Error(`identify answered ${response.status}`)
          if (started > warm) latencies.push(performance.now() - started)
        }
      }),
    )
    const serviceCpu = service.cpuMs() - cpuAtWarm.service
    const databaseCpu = database ? postgresCpuMs() - cpuAtWarm.database : 0
    latencies.sort((a, b) => a - b)
    return {
      p50: latencies[Math.floor(latencies.length / 2)],
      p90: latencies[Math.floor(latencies.length * 0.9)],
      n: latencies.length,
      cpu: ((serviceCpu + databaseCpu) * 1000) / latencies.length,
      databaseCpu: (databaseCpu * 1000) / latencies.length,
    }
  } finally {
    await service.stop()
    fs.rmSync(service.dataDir, { recursive: true, force: true })
    await database?.drop()
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const results = builds.map(() => [])
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which build goes first, so neither always runs on a warmer machine.
  const order = round % 2 === 0 ? builds.map((_, index) => index) : builds.map((_, index) => index).reverse()
  for (const index of order) {
    const result = await run(builds[index], round, index)
    results[index].push(result)
    console.log(
      `round ${round + 1}/${ROUNDS} ${builds[index]}: p50 ${result.p50.toFixed(3)} ms, p90 ${result.p90.toFixed(3)} ms, ${result.n} identifies, ${result.cpu.toFixed(0)} µs CPU each${process.env.DATABASE_URL ? ` (${result.databaseCpu.toFixed(0)} µs of it in PostgreSQL)` : ''}`,
    )
  }
}
console.log(
  `\nidentify through HTTP, ${CLIENTS} clients, ${MEMBERS} members, ${SECONDS} s × ${ROUNDS} rounds; ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}); Node ${process.version}`,
)
console.log(
  `CPU: the service process${process.env.DATABASE_URL ? ' and the PostgreSQL server' : ' (the embedded database included)'} per identify, from the end of the warm-up`,
)
const baseline = median(results[0].map((result) => result.p50))
const baselineCpu = median(results[0].map((result) => result.cpu))
for (const [index, dist] of builds.entries()) {
  const p50 = median(results[index].map((result) => result.p50))
  const p90 = median(results[index].map((result) => result.p90))
  const cpu = median(results[index].map((result) => result.cpu))
  // Paired: each round's p50 over the first build's in the same round, so drift between rounds cancels.
  const paired = median(results[index].map((result, round) => result.p50 / results[0][round].p50))
  console.log(
    `${dist}: median p50 ${p50.toFixed(3)} ms, median p90 ${p90.toFixed(3)} ms, p50 ÷ first build's ${(p50 / baseline).toFixed(3)} (paired by round: ${paired.toFixed(3)}); CPU ${cpu.toFixed(0)} µs per identify, ÷ first build's ${(cpu / baselineCpu).toFixed(3)}`,
  )
}
