#!/usr/bin/env node
// Seeds one benchmark environment, in its own process, before the service starts: an organization,
// an environment, an enterprise project and a project-scoped API key, then N synthetic members with
// both hands through the bulk-enrollment fast path (src/domain/bulk-enrollment.ts: the same capture
// checks, reference templates and per-member encryption as POST .../biometrics/enroll). It also
// writes the identify probes the load generator sends: new captures of enrolled palms (mated) and
// palms never enrolled (non-mated), each with the member id a correct answer names.
//
// Runs on the compiled service (dist/), honours DATABASE_URL, PALMVEIN_DATA_DIR and
// PALMVEIN_MASTER_KEY like `palmvein serve`. Progress goes to stdout as JSON lines; the output file
// holds the API key and an admin token, so it is written with mode 0600 and never printed.
//   node bench/service/seed.mjs --members 10000 --seed 42 --probes 1000 --out /tmp/x/seed.json
import fs from 'node:fs'
import { parseArgs } from 'node:util'

const dist = new URL('../../dist/', import.meta.url)
const load = (path) => import(new URL(path, dist).href)
const [{ loadConfig }, { openDatabase }, { migrate }, keyring, organizations, apiKeys, bulk, matcher, { insertOrganization }] = await Promise.all([
  load('config.js'), load('store/database.js'), load('store/migrate.js'), load('domain/keyring.js'),
  load('domain/organizations.js'), load('domain/api-keys.js'), load('domain/bulk-enrollment.js'), load('matcher/index.js'),
  load('store/organizations.js'),
])
const { newId } = await load('ids.js')
const { loadLocalIssuer } = await load('auth/identity-tokens.js')

const { values } = parseArgs({
  options: {
    members: { type: 'string' }, seed: { type: 'string', default: '42' }, probes: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '1000' }, out: { type: 'string' },
    // Store only the per-hand reference templates (see storeCaptures in bulk-enrollment.ts).
    'references-only': { type: 'boolean', default: false },
    // Cluster mode (bench/cluster.ts): the environment's members spread over this many shards.
    shards: { type: 'string', default: '1' },
  },
  strict: true,
})
const members = Number(values.members)
const seed = Number(values.seed)
const probeCount = Number(values.probes)
const batchSize = Number(values.batch)
if (!Number.isInteger(members) || members < 1 || !values.out || !Number.isInteger(seed) || !Number.isInteger(probeCount) || probeCount < 2) {
  console.error('usage: seed.mjs --members <n ≥ 1> --out <file> [--seed <int>] [--probes <n ≥ 2>] [--batch <n>] [--references-only]')
  process.exit(2)
}

const emit = (message) => process.stdout.write(JSON.stringify(message) + '\n')
const ADMIN = 'bench@palmvein.invalid'
// Far above what the load generator sends: the limiter still counts every request (its cost is
// part of each measured latency) but never refuses one.
const BENCH_REQUESTS_PER_MINUTE = 1_000_000_000
const NON_MATED_IDENTITIES = Math.ceil(probeCount / 2)

const config = loadConfig()
const db = await openDatabase(config)
try {
  await migrate(db.sql)
  const master = await keyring.loadMasterKey(config)
  const app = { sql: db.sql, keyring: keyring.createKeyring(master.key) }

  const organization = await insertOrganization(db.sql, { id: newId(), name: `bench ${members}`, kind: 'customer' }, ADMIN)
  const environment = await organizations.createEnvironment(app, organization.id, { name: `bench ${members} members`, shards: Number(values.shards) })
  const project = await organizations.createProject(app, organization.id, { name: `bench ${members}`, environment_id: environment.id, plan: 'enterprise' })
  const headcount = Math.max(project.headcount, members)
  await db.sql`UPDATE projects SET requests_per_minute = ${BENCH_REQUESTS_PER_MINUTE}, daily_request_limit = ${BENCH_REQUESTS_PER_MINUTE}, headcount = ${headcount} WHERE id = ${project.id}`
  const key = await apiKeys.createApiKey(app, { orgId: organization.id, name: 'bench', projectIds: [project.id], createdBy: ADMIN })

  // Identities 0..N-1 are enrolled; N.. are the non-mated probes' palms (same population, never enrolled).
  const population = matcher.createSyntheticPopulation({ seed, dimension: environment.dimension, identities: members + NON_MATED_IDENTITIES })
  const capture = (identity, hand, session, attempt, elementType) =>
    Buffer.from(population.template(identity, hand, session, attempt, { elementType })).toString('base64url')
  // Mated probes: evenly spread identities, so every part of the gallery is probed.
  const matedCount = probeCount - Math.floor(probeCount / 2)
  const matedIdentities = new Map()
  for (let index = 0; index < matedCount; index++) matedIdentities.set(Math.floor(((index + 0.5) * members) / matedCount), null)

  const loader = bulk.createBulkLoader({ sql: db.sql, write: db.kind === 'postgres' ? 'copy' : 'insert', keyring: app.keyring, project: { id: project.id, headcount }, environment, storeCaptures: !values['references-only'] })
  const started = performance.now()
  let prepareMs = 0
  let insertMs = 0
  let pending = null
  let done = 0
  emit({ type: 'start', total: members })
  for (let first = 0; first < members; first += batchSize) {
    const last = Math.min(members, first + batchSize)
    const batch = []
    // Enrollment captures as a terminal sends them: int8 PVT1, session 0, two attempts per hand.
    for (let identity = first; identity < last; identity++) {
      batch.push({
        display_name: `synthetic ${identity}`,
        metadata: { identity },
        left_hand: { enroll_capture: capture(identity, 'left', 0, 0, 'int8'), identify_capture: capture(identity, 'left', 0, 1, 'int8') },
        right_hand: { enroll_capture: capture(identity, 'right', 0, 0, 'int8'), identify_capture: capture(identity, 'right', 0, 1, 'int8') },
      })
    }
    const prepareStarted = performance.now()
    const prepared = loader.prepare(batch)
    prepareMs += performance.now() - prepareStarted
    // Insert batch k while batch k+1 is generated and encrypted (overlaps on PostgreSQL; the
    // embedded database runs in this thread, so there the two simply alternate).
    if (pending) done += (await pending).length
    const insertStarted = performance.now()
    pending = loader.insert(prepared).then((ids) => {
      insertMs += performance.now() - insertStarted
      ids.forEach((id, index) => { if (matedIdentities.has(first + index)) matedIdentities.set(first + index, id) })
      return ids
    })
    emit({ type: 'progress', done, total: members })
  }
  if (pending) done += (await pending).length
  const seconds = (performance.now() - started) / 1000
  emit({ type: 'progress', done, total: members })

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
    probes.push({ capture: capture(members + offset, hands[offset % 2], 1, 0, 'float32'), member_id: null, ...describe(members + offset) })
  }
  // Interleave mated and non-mated so any slice of the run mixes both.
  const mixed = []
  for (let position = 0; position < Math.max(matedCount, probes.length - matedCount); position++) {
    if (position < matedCount) mixed.push(probes[position])
    if (matedCount + position < probes.length) mixed.push(probes[matedCount + position])
  }
  const sample = [...matedIdentities.values()].slice(0, 200)
  // The organization admin's token (the service trusts the data directory's local issuer), for the
  // calibration pass's admin calls.
  const adminToken = await (await loadLocalIssuer(config)).sign(ADMIN, 24 * 3600)
  fs.writeFileSync(values.out, JSON.stringify({
    org_id: organization.id, admin_token: adminToken,
    project_id: project.id, environment_id: environment.id, api_key: key.key, members: done, dimension: environment.dimension,
    seconds, prepare_seconds: prepareMs / 1000, insert_seconds: insertMs / 1000, member_sample: sample, probes: mixed,
  }), { mode: 0o600 })
  emit({ type: 'done', members: done, seconds, prepare_seconds: prepareMs / 1000, insert_seconds: insertMs / 1000 })
} finally {
  await db.close()
}
