#!/usr/bin/env node
// What the audit trail costs per record: appends as the service makes them (createAuditTrail,
// flushes of 250 records of an identify's shape), on the PostgreSQL named by DATABASE_URL or an
// embedded PGlite; reports wall time, this process's CPU (PGlite's included) and the PostgreSQL
// server's, per record. Set against the CPU an identify costs (bench/identify-ab.mjs reports it),
// this is the audit's share of the hot path without the noise of a latency run.
//
//   node bench/audit-append.mjs [dist]     (default: this checkout's dist/)
import os from 'node:os'
import fs from 'node:fs/promises'
import path from 'node:path'
import pino from 'pino'
import { postgresCpuMs } from './service/process-cpu.mjs'
import { scratchDatabase } from './service/scratch-database.mjs'
const dist = path.resolve(process.argv[2] ?? new URL('../dist', import.meta.url).pathname)
const { openDatabase } = await import(`${dist}/store/engine/database.js`)
const { migrate } = await import(`${dist}/store/migrate.js`)
const { createAuditTrail } = await import(`${dist}/domain/audit/audit.js`)
const { newId } = await import(`${dist}/ids.js`)
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-audit-bench-'))
// On PostgreSQL, a temporary database of its own (dropped at the end).
const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL, `palmvein_audit_bench_${process.pid}`) : null
const db = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir })
await migrate(db.sql)

const trail = createAuditTrail({ sql: db.sql, log: pino({ level: 'silent' }), retentionDays: 400, purge: false })
const org = newId()
const project = newId()
const key = newId()
const record = (n) => ({
  org_id: org,
  created_at: new Date(),
  request_id: `${key}-${n}`,
  project_id: project,
  actor_kind: 'api_key',
  actor_id: key,
  action: 'POST /v1/projects/{project_id}/biometrics/identify',
  resource_ids: { project_id: project },
  status: 200,
  client_address: '127.0.0.1',
  user_agent: 'undici',
})
const FLUSHES = 40
const BATCH = 250
let n = 0
for (let round = 0; round < 4; round++) {
  const batches = Array.from({ length: FLUSHES }, () => Array.from({ length: BATCH }, () => record(n++)))
  const database0 = process.env.DATABASE_URL ? postgresCpuMs() : 0
  const cpu0 = process.cpuUsage()
  const started = performance.now()
  for (const records of batches) {
    for (const r of records) trail.record(r)
    await trail.flush()
  }
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpu0)
  const records = FLUSHES * BATCH
  const database = process.env.DATABASE_URL ? `, PostgreSQL ${(((postgresCpuMs() - database0) * 1000) / records).toFixed(1)} µs` : ''
  console.log(
    `round ${round + 1}: ${records} records, wall ${((ms * 1000) / records).toFixed(1)} µs/record, this process ${((cpu.user + cpu.system) / records).toFixed(1)} µs${database}`,
  )
}
await trail.close()
await db.close()
await scratch?.drop()
await fs.rm(dataDir, { recursive: true, force: true })
console.log(
  `audit append, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}, ${dist}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}); Node ${process.version}`,
)
