#!/usr/bin/env node
// Seeds one benchmark environment, in its own process, before the service starts: an organization,
// an environment, an enterprise project and a project-scoped API key, then N synthetic members with
// both hands loaded by `palmvein import` (the real CLI: the same checks, reference templates and
// per-member encryption as POST .../biometrics/enroll), from an NDJSON file generated here first so
// that the import's rate is its own. Like a terminal that captures again when a palm's two captures
// disagree, the identities the import refuses for that are generated again from other attempts and
// imported in a further pass (up to three). It also writes the identify probes the load generator
// sends: new captures of enrolled palms (mated) and palms never enrolled (non-mated), each with the
// member id a correct answer names.
//
// Runs on the compiled service (dist/), honours DATABASE_URL, PALMVEIN_DATA_DIR and
// PALMVEIN_MASTER_KEY like `palmvein serve`. Progress goes to stdout as JSON lines; the output file
// holds the API key and an admin token, so it is written with mode 0600 and never printed.
//   node bench/service/seed.mjs --members 10000 --seed 42 --probes 1000 --out /tmp/x/seed.json
import fs from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { runNode } from './run-node.mjs'

const dist = new URL('../../dist/', import.meta.url)
const load = (path) => import(new URL(path, dist).href)
const [{ loadConfig }, { openDatabase }, { migrate }, keyring, organizations, apiKeys, matcher, { insertOrganization }] = await Promise.all([
  load('config.js'),
  load('store/engine/database.js'),
  load('store/migrate.js'),
  load('keys/keyring.js'),
  load('domain/tenants/organizations.js'),
  load('domain/tenants/api-keys.js'),
  import('@palmvein/matcher'),
  load('store/organizations.js'),
])
const { newId } = await load('ids.js')
const { loadLocalIssuer } = await load('auth/identity-tokens.js')
const CLI = fileURLToPath(new URL('cli/main.js', dist))

const { values } = parseArgs({
  options: {
    members: { type: 'string' },
    seed: { type: 'string', default: '42' },
    probes: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '1000' },
    out: { type: 'string' },
    // Threads generating the import lines (default: one per core).
    threads: { type: 'string', default: String(os.availableParallelism()) },
    // Cluster mode (bench/cluster.ts): the environment's members spread over this many shards.
    shards: { type: 'string', default: '1' },
  },
  strict: true,
})
const members = Number(values.members)
const seed = Number(values.seed)
const probeCount = Number(values.probes)
const batchSize = Number(values.batch)
const generatorThreads = Number(values.threads)
if (
  !Number.isInteger(members) ||
  members < 1 ||
  !values.out ||
  !Number.isInteger(seed) ||
  !Number.isInteger(probeCount) ||
  probeCount < 2 ||
  !Number.isInteger(generatorThreads) ||
  generatorThreads < 1
) {
  console.error('usage: seed.mjs --members <n ≥ 1> --out <file> [--seed <int>] [--probes <n ≥ 2>] [--batch <n>] [--shards <n>] [--threads <n ≥ 1>]')
  process.exit(2)
}

const emit = (message) => process.stdout.write(JSON.stringify(message) + '\n')
const ADMIN = 'bench@palmvein.invalid'
// Far above what the load generator sends: the limiter still counts every request (its cost is
// part of each measured latency) but never refuses one.
const BENCH_REQUESTS_PER_MINUTE = 1_000_000_000
const NON_MATED_IDENTITIES = Math.ceil(probeCount / 2)

// Enrollment attempts per import pass: captures 0 and 1, then other pairs for the identities refused.
const ATTEMPT_PAIRS = [
  [0, 1],
  [0, 2],
  [1, 2],
]

/** Runs `palmvein import` on the file; reports each batch's handled count; resolves with its summary. */
async function runImport(args, onHandled) {
  // Exit 1: some lines were refused (listed in --rejects); anything else is a failure.
  const { lines } = await runNode(
    CLI,
    ['import', ...args],
    {},
    {
      follow: 'stderr',
      okCodes: [0, 1],
      // Progress lines only; a warning on stderr is left for the error message.
      onLine: (line) => {
        if (line.startsWith('{"handled":')) onHandled(JSON.parse(line).handled)
      },
    },
  )
  return JSON.parse(lines.at(-1))
}

const config = loadConfig()
const db = await openDatabase(config)
let setup
try {
  await migrate(db.sql)
  const master = await keyring.loadMasterKey(config)
  const app = { sql: db.sql, keyring: keyring.createKeyring(master.key) }

  const organization = await insertOrganization(db.sql, { id: newId(), name: `bench ${members}`, kind: 'customer' }, ADMIN)
  const environment = await organizations.createEnvironment(app, organization.id, { name: `bench ${members} members`, shards: Number(values.shards) })
  // The platform operator's path: the seed sets the plan as the CLI's `project plan` does.
  const project = await organizations.createProject(
    app,
    organization.id,
    { name: `bench ${members}`, environment_id: environment.id, plan: 'enterprise' },
    'operator',
  )
  const headcount = Math.max(project.headcount, members)
  await db.sql`UPDATE projects SET requests_per_minute = ${BENCH_REQUESTS_PER_MINUTE}, daily_request_limit = ${BENCH_REQUESTS_PER_MINUTE}, headcount = ${headcount} WHERE id = ${project.id}`
  const key = await apiKeys.createApiKey(app, { orgId: organization.id, name: 'bench', projectIds: [project.id], createdBy: ADMIN })
  setup = { organization, environment, project, key }
} finally {
  // The import opens the database itself (the embedded one admits one process at a time).
  await db.close()
}
const { organization, environment, project, key } = setup

// Identities 0..N-1 are enrolled first. Some identities' captures (the generator's hard ones)
// disagree at every attempt, as some people's palms do at a terminal: spare identities after N take
// their places, so the gallery still holds N members. The non-mated probes' palms come after those
// (same population, never enrolled).
const spares = Math.ceil(members * 0.15) + 16
const candidates = members + spares
const populationOptions = { seed, dimension: environment.dimension, identities: candidates + NON_MATED_IDENTITIES }
const population = matcher.createSyntheticPopulation(populationOptions)

/** The import lines of `identities`, in order, written by `--threads` worker threads (seed-lines.mjs). */
async function writeLines(identities, file) {
  const threads = Math.min(generatorThreads, identities.length)
  const share = Math.ceil(identities.length / threads)
  const parts = Array.from({ length: threads }, (_, index) => `${file}.part${index}`)
  try {
    await Promise.all(
      parts.map((part, index) => {
        const slice = identities.slice(index * share, (index + 1) * share)
        const worker = new Worker(new URL('./seed-lines.mjs', import.meta.url), {
          workerData: {
            distUrl: dist.href,
            population: populationOptions,
            identities: Uint32Array.from(slice),
            tries,
            attemptPairs: ATTEMPT_PAIRS,
            memberIds: slice.map((identity) => memberIds[identity]).join(','),
            file: part,
          },
        })
        return new Promise((resolve, reject) => {
          worker.once('error', reject)
          worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seed-lines worker exited with ${code}`))))
        })
      }),
    )
    // In pieces: at 10M members a part is several GB, past what one read may return.
    const out = fs.openSync(file, 'w', 0o600)
    const buffer = Buffer.allocUnsafe(16 << 20)
    for (const part of parts) {
      const input = fs.openSync(part, 'r')
      for (let read; (read = fs.readSync(input, buffer, 0, buffer.length, null)) > 0; ) fs.writeSync(out, buffer, 0, read)
      fs.closeSync(input)
    }
    fs.closeSync(out)
  } finally {
    for (const part of parts) fs.rmSync(part, { force: true })
  }
}
const capture = (identity, hand, session, attempt, elementType) =>
  Buffer.from(population.template(identity, hand, session, attempt, { elementType })).toString('base64url')

const memberIds = Array.from({ length: candidates }, () => newId())
const enrolled = new Uint8Array(candidates)
const tries = new Uint8Array(candidates)
const linesFile = `${values.out}.members.ndjson`
const rejectsFile = `${values.out}.rejects.ndjson`
let generateSeconds = 0
let importSeconds = 0
let imported = 0
let refusedTotal = 0
// The first pass carries (nearly) every member: its rate is the import's own, without the fixed
// cost of each small retry pass.
let firstPass = null
let nextSpare = members
let pending = Array.from({ length: members }, (_, identity) => identity)
emit({ type: 'start', total: members })
try {
  while (pending.length) {
    const generating = performance.now()
    await writeLines(pending, linesFile)
    generateSeconds += (performance.now() - generating) / 1000

    const before = imported
    const summary = await runImport(
      ['--project', project.id, '--allow-duplicates', '--batch', String(batchSize), '--progress-lines', '--rejects', rejectsFile, linesFile],
      (handled) => emit({ type: 'progress', done: Math.min(members, before + handled), total: members }),
    )
    imported += summary.imported
    importSeconds += summary.seconds
    firstPass ??= { members: summary.imported, seconds: summary.seconds }
    const refused = fs
      .readFileSync(rejectsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text))
    // Only captures that disagree are worth another attempt; anything else is a bug here.
    const other = refused.find((rejection) => rejection.code !== 'capture_invalid')
    if (other) throw new Error(`palmvein import refused line ${other.line}: ${other.code} ${other.detail}`)
    refusedTotal += refused.length
    const refusedLines = new Set(refused.map((rejection) => rejection.line))
    const next = []
    for (const [index, identity] of pending.entries()) {
      if (!refusedLines.has(index + 1)) enrolled[identity] = 1
      else if (++tries[identity] < ATTEMPT_PAIRS.length) next.push(identity)
      else if (nextSpare < candidates) next.push(nextSpare++)
    }
    pending = next
  }
} finally {
  fs.rmSync(linesFile, { force: true })
  fs.rmSync(rejectsFile, { force: true })
}
emit({ type: 'progress', done: imported, total: members })

// Mated probes: evenly spread enrolled identities, so every part of the gallery is probed.
const matedCount = probeCount - Math.floor(probeCount / 2)
const matedIdentities = new Map()
for (let index = 0; index < matedCount; index++) {
  let identity = Math.floor(((index + 0.5) * members) / matedCount)
  while (identity < candidates && (!enrolled[identity] || matedIdentities.has(identity))) identity++
  if (identity < candidates) matedIdentities.set(identity, memberIds[identity])
}

// Probes: a later session (1) than enrollment (0), float32 as a capture device sends them.
const hands = ['left', 'right']
const probes = []
let index = 0
// Each probe says whose palm it is and what the generator made of that identity (the accuracy
// section explains misses by it: hard identities have noisier captures, related ones resemble another).
const describe = (identity) => {
  const profile = population.profile(identity)
  return { identity, hard: profile.hard, related: profile.relatedTo !== null }
}
for (const [identity, memberId] of matedIdentities) {
  probes.push({ capture: capture(identity, hands[index++ % 2], 1, 0, 'float32'), member_id: memberId, ...describe(identity) })
}
for (let offset = 0; offset < probeCount - matedCount; offset++) {
  probes.push({ capture: capture(candidates + offset, hands[offset % 2], 1, 0, 'float32'), member_id: null, ...describe(candidates + offset) })
}
// Interleave mated and non-mated so any slice of the run mixes both.
const mated = probes.length - (probeCount - matedCount)
const mixed = []
for (let position = 0; position < Math.max(mated, probes.length - mated); position++) {
  if (position < mated) mixed.push(probes[position])
  if (mated + position < probes.length) mixed.push(probes[mated + position])
}
const sample = [...matedIdentities.values()].slice(0, 200)
// The organization admin's token (the service trusts the data directory's local issuer), for the
// calibration pass's admin calls.
const adminToken = await (await loadLocalIssuer(config)).sign(ADMIN, 24 * 3600)
fs.writeFileSync(
  values.out,
  JSON.stringify({
    org_id: organization.id,
    admin_token: adminToken,
    project_id: project.id,
    environment_id: environment.id,
    api_key: key.key,
    members: imported,
    dimension: environment.dimension,
    seconds: importSeconds,
    members_per_second: firstPass.members / firstPass.seconds,
    generate_seconds: generateSeconds,
    refused: refusedTotal,
    member_sample: sample,
    probes: mixed,
  }),
  { mode: 0o600 },
)
emit({
  type: 'done',
  members: imported,
  seconds: importSeconds,
  members_per_second: firstPass.members / firstPass.seconds,
  generate_seconds: generateSeconds,
  refused: refusedTotal,
})
