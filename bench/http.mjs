#!/usr/bin/env node
// bench:http: GET /v1/projects/{id} with an API key, on the real service (uWebSockets.js, from
// dist/, in its own process, data directory and port) side by side with the same handler on
// node:http (bench/http-baseline.mjs), against the same database. For each target:
//   - open loop at a fixed rate (default 1 000 req/s; undici in a separate process, latency from
//     the time each request was due): p50 / p95 / p99 and the throughput achieved;
//   - maximum throughput with wrk (closed loop), or the undici closed loop if wrk is missing.
// node:http also runs with the rate limiter's leased fast path off (BENCH_MAX_LEASE=1), to show
// what the fast path saves. The HTTP layer alone is compared on GET /livez (no database, no
// credential): the service on uWS against the service on node:http (PALMVEIN_HTTP_SERVER=node, its
// own embedded data directory), the same dispatcher, both with metrics on; maximum throughput,
// target at least 2x.
// Build first: npm run build:ts.
//
// Environment: BENCH_RATE (1000), BENCH_DURATION seconds (10), BENCH_WARMUP seconds (2),
// BENCH_CONNECTIONS for the open loop (64), BENCH_WRK_CONNECTIONS (32), BENCH_WRK_THREADS (1),
// DATABASE_URL (a temporary database is created on that server and dropped afterwards; the
// embedded PGlite otherwise), BENCH_RESULTS_DIR (bench/results: where the JSON goes).
// BENCH_TLS=1 measures the service over HTTPS (TLS 1.3, node:https) alone, with
// BENCH_TLS_CERT_FILE / BENCH_TLS_KEY_FILE or a certificate made for 127.0.0.1, the clients
// trusting BENCH_CA_FILE (default: that certificate); see bench/service/tls.mjs.
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runOpenLoop } from './load/open-loop.mjs'
import { maxThroughput, wrkAvailable, WRK_INSTALL_HINT } from './load/wrk.mjs'
import { freePort } from './service/service-process.mjs'
import { benchTls } from './service/tls.mjs'
import { scratchDatabase } from './service/scratch-database.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = path.join(root, 'dist')
const settings = {
  rate: Number(process.env.BENCH_RATE ?? 1000),
  durationSeconds: Number(process.env.BENCH_DURATION ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
  wrkConnections: Number(process.env.BENCH_WRK_CONNECTIONS ?? 32),
  wrkThreads: Number(process.env.BENCH_WRK_THREADS ?? 1),
}
const TARGET_P95_MS = 5
const TARGET_LAYER_RATIO = 2

async function ensureBuilt() {
  try {
    await fs.access(path.join(dist, 'cli/main.js'))
  } catch {
    console.error('bench:http needs the compiled service: run `npm run build:ts` first')
    process.exit(2)
  }
}

/** Until `url` answers `ready` (a service: /healthz 200; a baseline: any answer short of a 5xx but 503). */
async function waitFor(url, child, what, ready = (status) => status < 500 || status === 503) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`)
    try {
      const response = await fetch(url)
      if (ready(response.status)) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${what} did not answer ${url} within 60 s`)
}

function spawnNode(script, args, env, what) {
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  child.on('exit', (code, signal) => {
    if (code && !child.stopping) console.error(`${what} exited with ${code ?? signal}:\n${stderr}`)
  })
  return child
}

async function stopChild(child) {
  if (child.exitCode !== null) return
  child.stopping = true
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
  if (child.exitCode === null) child.kill('SIGKILL')
}

/** A temporary database on DATABASE_URL's server, or null for the embedded PGlite. */
async function temporaryDatabase() {
  return process.env.DATABASE_URL ? scratchDatabase(process.env.DATABASE_URL, `palmvein_bench_${process.pid}`) : null
}

/** Organization, environment, enterprise project and an API key, created through the HTTP API. */
async function createFixtures(baseUrl, dataDir, databaseUrl) {
  const { loadLocalIssuer } = await import(path.join(dist, 'auth/identity-tokens.js'))
  const issuer = await loadLocalIssuer({ dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
  const token = await issuer.sign('bench@example.com', 3600)
  const post = async (pathName, body) => {
    const response = await fetch(baseUrl + pathName, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (response.status !== 201) throw new Error(`POST ${pathName}: ${response.status} ${await response.text()}`)
    return response.json()
  }
  const org = await post('/v1/organizations', { name: 'bench' })
  const environment = await post(`/v1/organization/${org.id}/environments`, { name: 'bench' })
  const project = await post(`/v1/organization/${org.id}/projects`, { name: 'bench', environment_id: environment.id, plan: 'enterprise' })
  const key = await post(`/v1/organization/${org.id}/api-keys`, { name: 'bench', project_ids: [project.id] })
  // 1 000 req/s for minutes is far above the enterprise plan's 5 000 a minute: raise this project's
  // limits so the limiter stays on the request path without refusing (it is measured, not hit).
  const { openDatabase } = await import(path.join(dist, 'store/engine/database.js'))
  const db = await openDatabase({ databaseUrl, dataDir }, { max: 1 })
  await db.sql`UPDATE projects SET requests_per_minute = 100000000, daily_request_limit = 2000000000 WHERE id = ${project.id}`
  await db.close()
  return { projectId: project.id, apiKey: key.key }
}

async function measure(name, baseUrl, fixtures) {
  const url = `${baseUrl}/v1/projects/${fixtures.projectId}`
  const headers = { authorization: `Bearer ${fixtures.apiKey}` }
  const check = await fetch(url, { headers })
  if (check.status !== 200) throw new Error(`${name}: GET ${url} answered ${check.status}: ${await check.text()}`)
  await check.arrayBuffer()
  process.stderr.write(`${name}: open loop at ${settings.rate} req/s for ${settings.durationSeconds} s ...\n`)
  const openLoop = await runOpenLoop({
    url,
    headers,
    rate: settings.rate,
    durationSeconds: settings.durationSeconds,
    warmupSeconds: settings.warmupSeconds,
    connections: settings.connections,
  })
  process.stderr.write(`${name}: maximum throughput (${wrkAvailable() ? 'wrk' : 'undici'}) for ${settings.durationSeconds} s ...\n`)
  const max = await maxThroughput({
    url,
    headers,
    connections: settings.wrkConnections,
    threads: settings.wrkThreads,
    durationSeconds: settings.durationSeconds,
  })
  return { name, openLoop, max }
}

/** The HTTP layer alone: maximum throughput of GET /livez (no database, no credential). */
async function measureLayer(name, baseUrl) {
  process.stderr.write(`${name}: HTTP layer alone (GET /livez), maximum throughput for ${settings.durationSeconds} s ...\n`)
  const max = await maxThroughput({
    url: `${baseUrl}/livez`,
    headers: {},
    connections: settings.wrkConnections,
    threads: settings.wrkThreads,
    durationSeconds: settings.durationSeconds,
  })
  return max.requestsPerSecond
}

function printTable(results) {
  const rows = [['target', `p50 ms @${settings.rate}/s`, 'p95 ms', 'p99 ms', 'sent late p95 ms', 'achieved req/s', 'errors', 'max req/s', 'max-load p99 ms']]
  for (const { name, openLoop, max } of results) {
    rows.push(
      [
        name,
        openLoop.latency.p50,
        openLoop.latency.p95,
        openLoop.latency.p99,
        openLoop.sendLag.p95,
        openLoop.achievedRps,
        openLoop.errors,
        max.requestsPerSecond,
        max.latency.p99,
      ].map(String),
    )
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
  for (const [index, row] of rows.entries()) {
    console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  '))
    if (index === 0) console.log(widths.map((width) => '-'.repeat(width)).join('  '))
  }
}

async function main() {
  await ensureBuilt()
  if (!wrkAvailable()) console.error(WRK_INSTALL_HINT)
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-bench-http-'))
  const database = await temporaryDatabase()
  const databaseUrl = database?.url ?? null
  const env = {
    PALMVEIN_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    PALMVEIN_LOG_LEVEL: 'warn',
    PALMVEIN_WEBHOOK_WORKER: 'false',
    PALMVEIN_MATCHER_THREADS: '1',
    HOST: '127.0.0.1',
    // The operator offers every plan for self-service here: the bench's admin creates an enterprise project.
    PALMVEIN_SELF_SERVICE_PLANS: 'sandbox,business,enterprise',
  }
  const children = []
  try {
    const tls = await benchTls(dataDir)
    const servicePort = await freePort()
    const service = spawnNode(
      path.join(dist, 'cli/main.js'),
      ['serve'],
      { ...env, ...tls?.serviceEnv, PORT: String(servicePort), PALMVEIN_METRICS_PORT: String(await freePort()) },
      'service',
    )
    children.push(service)
    const serviceUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${servicePort}`
    await waitFor(`${serviceUrl}/healthz`, service, 'the service', (status) => status === 200)
    const fixtures = await createFixtures(serviceUrl, dataDir, databaseUrl)

    if (tls) {
      // TLS is served by node:https (uWS cannot hold TLS 1.3 only); the plain baselines do not compare.
      const result = await measure('node:https (service, TLS 1.3)', serviceUrl, fixtures)
      console.log(
        `\nGET /v1/projects/{id} with an API key over HTTPS (clients trust ${tls.caFile}); ${databaseUrl ? 'PostgreSQL' : 'embedded PGlite'}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}); Node ${process.version}\n`,
      )
      printTable([result])
      return
    }
    const results = [await measure('uWS (service)', serviceUrl, fixtures)]
    const layer = { uws: await measureLayer('uWS (service)', serviceUrl), node: 0 }
    for (const [name, extra] of [
      ['node:http (same handler)', {}],
      ['node:http, limiter without leases', { BENCH_MAX_LEASE: '1' }],
    ]) {
      const port = await freePort()
      const baseline = spawnNode(path.join(root, 'bench/http-baseline.mjs'), [], { ...env, BENCH_PORT: String(port), ...extra }, name)
      children.push(baseline)
      const url = `http://127.0.0.1:${port}`
      await waitFor(`${url}/v1/projects/${fixtures.projectId}`, baseline, name)
      results.push(await measure(name, url, fixtures))
      await stopChild(baseline)
    }

    {
      const nodeDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-bench-http-node-'))
      const nodePort = await freePort()
      const nodeService = spawnNode(
        path.join(dist, 'cli/main.js'),
        ['serve'],
        {
          ...env,
          PALMVEIN_DATA_DIR: nodeDataDir,
          DATABASE_URL: '',
          PALMVEIN_HTTP_SERVER: 'node',
          PORT: String(nodePort),
          PALMVEIN_METRICS_PORT: String(await freePort()),
        },
        'the service on node:http',
      )
      try {
        await waitFor(`http://127.0.0.1:${nodePort}/healthz`, nodeService, 'the service on node:http', (status) => status === 200)
        layer.node = await measureLayer('node:http (service)', `http://127.0.0.1:${nodePort}`)
      } finally {
        await stopChild(nodeService)
        await fs.rm(nodeDataDir, { recursive: true, force: true })
      }
    }
    const [uws, node, noLease] = results
    const ratios = {
      max_throughput_uws_over_node: Math.round((uws.max.requestsPerSecond / node.max.requestsPerSecond) * 100) / 100,
      p95_node_over_uws: Math.round((node.openLoop.latency.p95 / uws.openLoop.latency.p95) * 100) / 100,
      max_throughput_leases_over_no_leases: Math.round((node.max.requestsPerSecond / noLease.max.requestsPerSecond) * 100) / 100,
      http_layer_uws_over_node: Math.round((layer.uws / layer.node) * 100) / 100,
    }
    console.log(
      `\nGET /v1/projects/{id} with an API key; ${databaseUrl ? 'PostgreSQL' : 'embedded PGlite'}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), load average ${os
        .loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}; Node ${process.version}\n`,
    )
    printTable(results)
    console.log(
      `\nuWS / node:http max throughput: ${ratios.max_throughput_uws_over_node}x; node:http / uWS p95 at ${settings.rate}/s: ${ratios.p95_node_over_uws}x; leased limiter / one write per request (node:http max throughput): ${ratios.max_throughput_leases_over_no_leases}x`,
    )
    const p95 = uws.openLoop.latency.p95
    const met = p95 !== null && p95 < TARGET_P95_MS && uws.openLoop.errors === 0 && uws.openLoop.achievedRps >= settings.rate * 0.95
    console.log(
      `target p95 < ${TARGET_P95_MS} ms at ${settings.rate} req/s on the service: ${met ? 'met' : 'NOT met'} (p95 ${p95} ms, ${uws.openLoop.achievedRps} req/s, ${uws.openLoop.errors} errors)`,
    )
    const layerMet = ratios.http_layer_uws_over_node >= TARGET_LAYER_RATIO
    console.log(
      `target HTTP layer (GET /livez, max throughput) uWS >= ${TARGET_LAYER_RATIO}x node:http: ${layerMet ? 'met' : 'NOT met'} (${layer.uws} vs ${layer.node} req/s: ${ratios.http_layer_uws_over_node}x)`,
    )

    const stamp = new Date().toISOString().replace(/[:.]/g, '-')
    const file = path.join(process.env.BENCH_RESULTS_DIR ?? path.join(root, 'bench/results'), `http-${stamp}.json`)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(
      file,
      JSON.stringify(
        {
          benchmark: 'http',
          endpoint: 'GET /v1/projects/{id} (API key)',
          date: new Date().toISOString(),
          node: process.version,
          database: databaseUrl ? 'postgres' : 'embedded',
          cpus: os.cpus().length,
          cpuModel: os.cpus()[0]?.model,
          loadAverage: os.loadavg(),
          settings,
          maxThroughputTool: wrkAvailable() ? 'wrk' : 'undici',
          targetP95Ms: TARGET_P95_MS,
          targetMet: met,
          results,
          ratios,
          httpLayer: { endpoint: 'GET /livez', uwsRps: layer.uws, nodeRps: layer.node, targetRatio: TARGET_LAYER_RATIO, targetMet: layerMet },
        },
        null,
        2,
      ) + '\n',
    )
    console.log(`written ${path.relative(process.cwd(), file)}`)
  } finally {
    for (const child of children.reverse()) await stopChild(child)
    await database?.drop().catch((error) => console.error('could not drop the temporary database:', error.message))
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
