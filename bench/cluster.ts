// npm run bench:cluster [-- --members 100000 --nodes 4 --shards 4 --replicas 2 --probes 2000 --lease 3000]
// Cluster mode measured on this machine: N real `palmvein serve` processes on loopback and one
// PostgreSQL (DATABASE_URL). It seeds one environment of S shards, then
//   1. one node without cluster mode answers every probe (the reference decisions, and its latency);
//   2. the N nodes answer the same probes (decisions compared one by one; fan-out overhead =
//      cluster p50 − single p50);
//   3. a node holding shards is SIGKILLed while probes run: wrong answers (must be 0), 503s, and the
//      time until its shards are fully replicated again;
// and a model, driven by the measured scan cost per row, overhead and latency spread, predicts p95
// identify latency and node count at 10M, 100M and 1B members. The report says which figures are
// measured and which are modelled. Writes bench/results/<time>-cluster/{report.md,results.json}.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { createMatcher } from '@palmvein/matcher'
import { machineInfo } from './report/machine.js'
import { scratchDatabase } from './service/scratch-database.mjs'
import { runNode } from './service/run-node.mjs'
import { freePort, startService } from './service/service-process.mjs'
import { clusterReport, modelCluster, type ClusterModelInput } from './cluster-model.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const { values } = parseArgs({
  options: {
    members: { type: 'string', default: '100000' },
    nodes: { type: 'string', default: '4' },
    shards: { type: 'string', default: '4' },
    replicas: { type: 'string', default: '2' },
    probes: { type: 'string', default: '2000' },
    lease: { type: 'string', default: '3000' },
  },
  strict: true,
})
const settings = {
  members: Number(values.members),
  nodes: Number(values.nodes),
  shards: Number(values.shards),
  replicas: Number(values.replicas),
  probes: Number(values.probes),
  leaseMs: Number(values.lease),
}
const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error('bench:cluster runs real nodes on one PostgreSQL: set DATABASE_URL (e.g. postgres://postgres:postgres@127.0.0.1:5432/postgres)')
  process.exit(2)
}
if (Object.values(settings).some((value) => !Number.isInteger(value) || value < 1) || settings.nodes < 2) {
  console.error('usage: bench:cluster [-- --members <n> --nodes <n ≥ 2> --shards <n> --replicas <n> --probes <n> --lease <ms>]')
  process.exit(2)
}

interface Probe {
  capture: string
  member_id: string | null
}
interface Answer {
  status: number
  member: string | null
  decision: string
  ms: number
  at: number
}

const log = (line: string) => process.stdout.write(`${line}\n`)
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN)
const summary = (latencies: number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b)
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99), count: sorted.length }
}

async function runSeed(env: Record<string, string>, out: string): Promise<void> {
  let last = 0
  await runNode(
    path.join(here, 'service/seed.mjs'),
    ['--members', String(settings.members), '--probes', String(settings.probes), '--shards', String(settings.shards), '--out', out],
    env,
    {
      onLine: (line) => {
        const message = JSON.parse(line)
        if (message.type === 'progress' && message.done - last >= settings.members / 10) {
          last = message.done
          log(`  seeded ${message.done}/${settings.members}`)
        }
      },
    },
  )
}

async function ask(url: string, projectId: string, key: string, probe: Probe): Promise<Answer> {
  const sent = performance.now()
  const response = await fetch(`${url}/v1/projects/${projectId}/biometrics/identify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ palm: { identify_capture: probe.capture } }),
  })
  const body = (await response.json()) as { status?: string; member_id?: string | null; code?: string }
  const ms = performance.now() - sent
  return {
    status: response.status,
    member: body.member_id ?? null,
    decision: response.status === 200 ? `${body.status}:${body.member_id}` : `${response.status}:${body.code}`,
    ms,
    at: performance.now(),
  }
}

/** The scan cost per row of this machine's matcher, exact and two-stage, one thread (what each node runs here). */
async function scanCostPerRow(rows: number) {
  const matcher = await createMatcher({ dimension: 256, threads: 1, backend: 'auto' })
  try {
    const gallery = matcher.createGallery({ ids: 'uuid' })
    // Random rows (distinct: equal rows would tie and make the search widen its k).
    const vector = new Int8Array(256)
    let state = 12345
    for (let row = 0; row < rows; row++) {
      for (let index = 0; index < 256; index++) {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0
        vector[index] = ((state >>> 24) % 255) - 127
      }
      gallery.upsert(`00000000-0000-4000-8000-${row.toString(16).padStart(12, '0')}`, vector)
    }
    const time = async (mode: 'exact' | 'two_stage') => {
      const probe = Int8Array.from({ length: 256 }, (_, index) => ((index * 13) % 255) - 127)
      for (let warm = 0; warm < 5; warm++) await gallery.search(probe, { k: 2, mode })
      const samples: number[] = []
      for (let run = 0; run < 40; run++) {
        const started = performance.now()
        await gallery.search(probe, { k: 2, mode, candidates: 256 })
        samples.push(performance.now() - started)
      }
      return summary(samples).p50 / rows
    }
    return { rows, exactMsPerRow: await time('exact'), twoStageMsPerRow: await time('two_stage'), backend: `${matcher.backend.name} (${matcher.backend.isa})` }
  } finally {
    await matcher.close()
  }
}

const started = new Date()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-bench-cluster-'))
const database = await scratchDatabase(databaseUrl, `palmvein_bench_cluster_${randomBytes(4).toString('hex')}`)
const env = {
  PALMVEIN_DATA_DIR: dataDir,
  DATABASE_URL: database.url,
  PALMVEIN_MASTER_KEY: randomBytes(32).toString('base64'),
  PALMVEIN_WEBHOOK_WORKER: 'false',
  PALMVEIN_MATCHER_THREADS: '1',
}
const running: Array<{ stop(): Promise<void> }> = []
try {
  log(
    `bench:cluster: ${settings.members} members, ${settings.shards} shards × ${settings.replicas} replicas on ${settings.nodes} nodes, ${settings.probes} probes, lease ${settings.leaseMs} ms`,
  )
  const seedFile = path.join(dataDir, 'seed.json')
  await runSeed(env, seedFile)
  const seeded = JSON.parse(fs.readFileSync(seedFile, 'utf8')) as { project_id: string; api_key: string; probes: Probe[] }
  const probes = seeded.probes
  const askAll = async (urls: string[], which: Probe[] = probes) => {
    const answers: Answer[] = []
    for (const [index, probe] of which.entries()) answers.push(await ask(urls[index % urls.length], seeded.project_id, seeded.api_key, probe))
    return answers
  }
  // Warm-up: connections, JIT, the matcher's pages.
  const WARM_UP = probes.slice(0, 200)

  // 1. One node, no cluster mode: the reference.
  const single = await startService({ env })
  log(`single node ready in ${single.bootSeconds.toFixed(1)} s`)
  await askAll([single.url], WARM_UP)
  const reference = await askAll([single.url])
  await single.stop()
  const singleLatency = summary(reference.map((answer) => answer.ms))
  log(`single node: identify p50 ${singleLatency.p50.toFixed(2)} ms, p95 ${singleLatency.p95.toFixed(2)} ms`)

  // 2. The cluster.
  const secret = randomBytes(24).toString('hex')
  const ports = await Promise.all(Array.from({ length: settings.nodes }, () => freePort()))
  const nodeEnv = (port: number) => ({
    ...env,
    PALMVEIN_NODE_URL: `http://127.0.0.1:${port}`,
    PALMVEIN_CLUSTER_SECRET: secret,
    PALMVEIN_NODE_LEASE_MS: String(settings.leaseMs),
    PALMVEIN_SHARD_REPLICAS: String(settings.replicas),
  })
  const replicated = (health: string) => /^cluster: /m.test(health) && !/^WARNING cluster/m.test(health)
  const bootStarted = performance.now()
  const nodes = await Promise.all(ports.map((port) => startService({ env: nodeEnv(port), port, ready: replicated })))
  running.push(...nodes)
  const clusterBootSeconds = (performance.now() - bootStarted) / 1000
  log(`cluster ready (every shard replicated) in ${clusterBootSeconds.toFixed(1)} s`)
  const urls = nodes.map((node) => node.url)
  await askAll(urls, WARM_UP)
  const clustered = await askAll(urls)
  const clusterLatency = summary(clustered.map((answer) => answer.ms))
  const differing = clustered.filter((answer, index) => answer.decision !== reference[index].decision).length
  log(
    `cluster: identify p50 ${clusterLatency.p50.toFixed(2)} ms, p95 ${clusterLatency.p95.toFixed(2)} ms; fan-out overhead (p50) ${(clusterLatency.p50 - singleLatency.p50).toFixed(2)} ms; ${differing} of ${probes.length} decisions differ from one node's`,
  )

  // 3. Failover: node 0 answers, the last node is killed after 2 s.
  const victim = nodes[nodes.length - 1]
  const coordinator = nodes[0]
  const runFor = settings.leaseMs * 3 + 5_000
  const timeline: Array<Answer & { correct: boolean }> = []
  const loopStarted = performance.now()
  let killedAt = 0
  const killer = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    killedAt = performance.now()
    await victim.kill()
  })()
  let index = 0
  while (performance.now() - loopStarted < runFor) {
    const probeIndex = index++ % probes.length
    const answer = await ask(coordinator.url, seeded.project_id, seeded.api_key, probes[probeIndex])
    timeline.push({ ...answer, correct: answer.decision === reference[probeIndex].decision })
  }
  await killer
  const afterKill = timeline.filter((answer) => answer.at >= killedAt)
  const unavailable = afterKill.filter((answer) => answer.status === 503)
  const wrong = afterKill.filter((answer) => answer.status !== 503 && !answer.correct).length
  const lastUnavailable = unavailable.length ? (unavailable.at(-1)!.at - killedAt) / 1000 : 0
  // Replicas re-created: every survivor's /healthz without the cluster warning.
  let rereplicatedSeconds: number | null = null
  const deadline = performance.now() + settings.leaseMs * 10 + 60_000
  while (performance.now() < deadline) {
    const healths = await Promise.all(nodes.slice(0, -1).map(async (node) => (await fetch(`${node.url}/healthz`)).text()))
    if (healths.every(replicated)) {
      rereplicatedSeconds = (performance.now() - killedAt) / 1000
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const failoverLatency = summary(afterKill.filter((answer) => answer.status === 200).map((answer) => answer.ms))
  log(
    `failover: ${afterKill.length} answers after the kill: ${wrong} wrong, ${unavailable.length} × 503 (last at +${lastUnavailable.toFixed(2)} s), p95 ${failoverLatency.p95.toFixed(2)} ms; every shard replicated again at +${rereplicatedSeconds?.toFixed(1) ?? 'never'} s`,
  )
  for (const node of nodes.slice(0, -1)) await node.stop()
  running.length = 0

  // 4. The model.
  const scan = await scanCostPerRow(1_000_000)
  const spread = clustered.map((answer) => answer.ms - clusterLatency.p50).sort((a, b) => a - b)
  const input: ClusterModelInput = {
    exactMsPerRow: scan.exactMsPerRow,
    twoStageMsPerRow: scan.twoStageMsPerRow,
    baseMs: Math.max(0, singleLatency.p50 - scan.exactMsPerRow * 2 * settings.members),
    fanOutMs: Math.max(0, clusterLatency.p50 - singleLatency.p50 + scan.exactMsPerRow * 2 * settings.members * (1 - 1 / settings.shards)),
    spreadMs: spread,
  }
  const model = modelCluster(input, [10_000_000, 100_000_000, 1_000_000_000])
  const [backend, isa] = [scan.backend.split(' ')[0], /\(([^)]+)\)/.exec(scan.backend)?.[1] ?? '']
  const machine = machineInfo({ backend, isa })
  const result = {
    started: started.toISOString(),
    machine,
    settings,
    scan,
    measured: {
      single: { bootSeconds: single.bootSeconds, identify: singleLatency },
      cluster: {
        bootSeconds: clusterBootSeconds,
        identify: clusterLatency,
        fanOutOverheadP50Ms: clusterLatency.p50 - singleLatency.p50,
        decisionsCompared: probes.length,
        decisionsDiffering: differing,
      },
      failover: {
        answersAfterKill: afterKill.length,
        wrong,
        unavailable: unavailable.length,
        lastUnavailableSeconds: lastUnavailable,
        identifyAfterKill: failoverLatency,
        rereplicatedSeconds,
      },
    },
    modelInput: { ...input, spreadMs: undefined, spreadQuantiles: [0.5, 0.9, 0.95, 0.99, 0.999].map((q) => [q, quantile(spread, q)]) },
    model,
  }
  const directory = path.join(here, 'results', `${started.toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z-cluster`)
  fs.mkdirSync(directory, { recursive: true })
  fs.writeFileSync(path.join(directory, 'results.json'), JSON.stringify(result, null, 2))
  fs.writeFileSync(path.join(directory, 'report.md'), clusterReport(result))
  log(`report: ${path.relative(process.cwd(), directory)}/report.md`)
} finally {
  for (const node of running) await node.stop().catch(() => {})
  await database.drop()
  fs.rmSync(dataDir, { recursive: true, force: true })
}
