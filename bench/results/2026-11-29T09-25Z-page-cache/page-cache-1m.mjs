#!/usr/bin/env node
// The embedded database's page cache (shared_buffers) at 1M members: does 8MB serve the service's
// reads and writes as well as 16MB? Runs the statements the service runs (store/members.ts's member
// by id, store/scans.ts's newest scan results, an identify's UPDATE last_used_at and INSERT into
// scan_results) through the service's own database layer (dist/store: the PGlite thread and its
// wire-protocol server), on 1M member rows and 1M scan-result rows made with generate_series.
//   node page-cache-1m.mjs make <dir>            (migrations and the rows, once; ROWS=1000 for a try)
//   node page-cache-1m.mjs measure <dir> <size>  (on a copy of <dir>, so each size starts alike)
import { performance } from 'node:perf_hooks'

const load = (path) => import(new URL(`../../../dist/${path}`, import.meta.url).href)
const { openDatabase } = await load('store/engine/database.js')
const { migrate } = await load('store/migrate.js')

const [mode, dir, size] = process.argv.slice(2)
const db = await openDatabase({ databaseUrl: null, dataDir: dir, embeddedSharedBuffers: size ?? '16MB' })
const sql = db.sql
const MEMBERS = Number(process.env.ROWS ?? 1_000_000)
const SCANS = MEMBERS

function quantiles(times) {
  times.sort((a, b) => a - b)
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(3)
  return `p50 ${q(0.5)} ms, p95 ${q(0.95)} ms, p99 ${q(0.99)} ms, max ${times.at(-1).toFixed(1)} ms`
}

async function timed(label, count, run) {
  const times = []
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const t = performance.now()
    await run(i)
    times.push(performance.now() - t)
  }
  const seconds = (performance.now() - started) / 1000
  console.log(`${label}: ${count} in ${seconds.toFixed(1)} s (${Math.round(count / seconds)}/s), ${quantiles(times)}`)
}

if (mode === 'make') {
  await migrate(sql)
  const org = crypto.randomUUID()
  const env = crypto.randomUUID()
  const project = crypto.randomUUID()
  // The parents, with what their NOT NULL columns need.
  await sql`INSERT INTO organizations (id, name, kind) VALUES (${org}, 'page cache 1M', 'customer')`
  await sql`INSERT INTO environments (id, name, owner_org_id, wrapped_key) VALUES (${env}, 'page cache 1M', ${org}, '\\x00')`
  await sql`INSERT INTO projects (id, org_id, name, environment_id, plan, headcount, daily_request_limit, requests_per_minute)
    VALUES (${project}, ${org}, 'page cache 1M', ${env}, 'enterprise', ${MEMBERS}, 1000000, 1000000)`
  let t = performance.now()
  for (let from = 0; from < MEMBERS; from += Math.min(100_000, MEMBERS)) {
    await sql`
      INSERT INTO members (id, project_id, environment_id, display_name, metadata, wrapped_key, palm_templates_enrolled, created_at)
      SELECT gen_random_uuid(), ${project}, ${env}, 'Member ' || g, jsonb_build_object('ref', g), decode(md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text), 'hex'), 2,
             now() - interval '1 second' * (${MEMBERS} - g)
      FROM generate_series(${from + 1}::int, ${from + Math.min(100_000, MEMBERS)}::int) g`
  }
  console.log(`members: ${MEMBERS} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  t = performance.now()
  for (let from = 0; from < SCANS; from += Math.min(100_000, MEMBERS)) {
    await sql`
      INSERT INTO scan_results (id, project_id, caller_type, operation_type, response_time_ms, success, member_id, results, created_at)
      SELECT gen_random_uuid(), ${project}, 'api_key', 'identify', 3, true, NULL,
             jsonb_build_array(jsonb_build_object('member_id', gen_random_uuid(), 'score', 0.9, 'decision', 'match')),
             now() - interval '1 millisecond' * (${SCANS} - g)
      FROM generate_series(${from + 1}::int, ${from + Math.min(100_000, MEMBERS)}::int) g`
  }
  console.log(`scan_results: ${SCANS} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  await sql`ANALYZE`
  const [{ bytes }] = await sql`SELECT pg_database_size(current_database())::int8 AS bytes`
  console.log(`database: ${(Number(bytes) / 2 ** 20).toFixed(0)} MiB`)
} else {
  const [{ shared_buffers }] = await sql`SHOW shared_buffers`
  const [{ project_id }] = await sql`SELECT project_id FROM members LIMIT 1`
  const ids = (await sql`SELECT id FROM members`).map((row) => row.id)
  console.log(`shared_buffers ${shared_buffers}, ${ids.length} members`)
  // A fixed pseudo-random order, the same for every size.
  let state = 42
  const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31), state)
  const pick = () => ids[next() % ids.length]
  const member = (id) => sql`
    SELECT id, project_id, environment_id, display_name, metadata, palm_templates_enrolled, created_at, updated_at, last_enrolled_at, last_used_at
    FROM members WHERE project_id = ${project_id} AND id = ${id}`
  const newest = () => sql`
    SELECT id, project_id, caller_type, operation_type, response_time_ms, success, member_id, device_id, posture, results, created_at
    FROM scan_results WHERE project_id = ${project_id} AND created_at >= ${new Date(0)} AND created_at <= ${new Date()}
    ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 0`
  const identifyWrites = async () => {
    await sql`UPDATE members SET last_used_at = now() WHERE id = ANY(${[pick()]}::uuid[])`
    await sql`INSERT INTO scan_results (id, project_id, caller_type, operation_type, response_time_ms, success, member_id, results)
      VALUES (${crypto.randomUUID()}, ${project_id}, 'api_key', 'identify', 3, true, ${pick()}, ${sql.json([{ score: 0.9 }])})`
  }
  await timed('warm-up: member by id', 2_000, () => member(pick()))
  await timed('identify writes (UPDATE last_used_at, INSERT scan_results)', 20_000, identifyWrites)
  await timed('GET member by id', 20_000, () => member(pick()))
  await timed('GET newest 20 scan results', 20_000, newest)
  await timed('GET member by id, again', 20_000, () => member(pick()))
}
await db.close()
