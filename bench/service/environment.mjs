// One "service under load" phase: a fresh database, N members imported by the seeder process,
// the service started from dist/ (timing its boot: decrypting every template into the gallery),
// then identify at each client count and the REST GETs at a fixed rate, each load in its own
// generator process. Cleans up its database and data directory whatever happens.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CALIBRATION_TARGET_FPIR, measureAccuracy, measureCalibration } from './accuracy.mjs'
import { environmentAdmin } from './environment-admin.mjs'
import { runNode } from './run-node.mjs'
import { scratchDatabase } from './scratch-database.mjs'
import { matcherFromHealth, residentMiB, startService } from './service-process.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const RSS_SETTLE_MS = 2_000
const SEARCH_MODES = ['exact', 'two_stage']

/** A temporary database: a PGlite data directory, or a database on DATABASE_URL's server. */
async function createStorage(databaseUrl, members) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `palmvein-bench-${members}-`))
  if (!databaseUrl) return { env: { PALMVEIN_DATA_DIR: dataDir }, dataDir, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) }
  const database = await scratchDatabase(databaseUrl, `palmvein_bench_${members}_${randomBytes(4).toString('hex')}`)
  return {
    env: { PALMVEIN_DATA_DIR: dataDir, DATABASE_URL: database.url },
    dataDir,
    drop: async () => {
      await database.drop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function runLoad(planFile, mode, options) {
  const args = [
    '--plan',
    planFile,
    `--${mode.kind}`,
    String(mode.value),
    '--duration',
    String(options.durationSeconds),
    '--warmup',
    String(options.warmupSeconds),
    '--timeout',
    String(options.timeoutSeconds),
  ]
  const { lines } = await runNode(path.join(here, 'http-load.mjs'), args, {})
  return JSON.parse(lines.at(-1))
}

const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(2)} ms` : 'n/a')
const describe = (result) =>
  `p50 ${ms(result.p50)}, p95 ${ms(result.p95)}, p99 ${ms(result.p99)}, ${result.errors} errors${result.errors ? ` ${JSON.stringify(result.errorSamples)}` : ''}`

function writePlan(directory, name, plan) {
  const file = path.join(directory, `${name}.json`)
  fs.writeFileSync(file, JSON.stringify(plan), { mode: 0o600 })
  return file
}

/**
 * @param {number} members
 * @param {{ databaseUrl: string | null, seed: number, durationSeconds: number, warmupSeconds: number,
 *           timeoutSeconds: number, concurrency: number[], restRate: number, probes: number }} options
 * @param {{ phase(name: string, total: number, unit: string): { update(value: number, total?: number): void, stop(): void }, log(line: string): void }} ui
 */
export async function runEnvironment(members, options, ui) {
  const storage = await createStorage(options.databaseUrl, members)
  const env = { ...storage.env, PALMVEIN_MASTER_KEY: randomBytes(32).toString('base64'), PALMVEIN_WEBHOOK_WORKER: 'false' }
  let service = null
  try {
    const seedFile = path.join(storage.dataDir, 'seed.json')
    const seedBar = ui.phase(`palmvein import ${members.toLocaleString('en-US')} members`, members, 'members')
    const seedArgs = ['--members', String(members), '--seed', String(options.seed), '--probes', String(options.probes), '--out', seedFile]
    await runNode(path.join(here, 'seed.mjs'), seedArgs, env, {
      onLine: (line) => {
        const message = JSON.parse(line)
        if (message.type === 'progress') seedBar.update(message.done)
      },
    })
    seedBar.stop()
    const seeded = JSON.parse(fs.readFileSync(seedFile, 'utf8'))
    ui.log(
      `  import: ${seeded.members.toLocaleString('en-US')} members in ${seeded.seconds.toFixed(1)} s (first pass ${Math.round(seeded.members_per_second).toLocaleString('en-US')}/s; NDJSON generated beforehand in ${seeded.generate_seconds.toFixed(1)} s; ${seeded.refused.toLocaleString('en-US')} lines refused for captures that disagree, imported again from other attempts or replaced in further passes)`,
    )

    const rows = 2 * seeded.members
    const bootBar = ui.phase('boot: decrypt templates into the gallery', rows, 'rows')
    service = await startService({ env, onProgress: (loaded, total) => bootBar.update(loaded, total) })
    bootBar.update(rows)
    bootBar.stop()
    // Read once the service has released its boot load's garbage (just after it says ready).
    await new Promise((resolve) => setTimeout(resolve, RSS_SETTLE_MS))
    const rss = residentMiB(service.pid)
    ui.log(
      `  boot: ${rows.toLocaleString('en-US')} gallery rows ready in ${service.bootSeconds.toFixed(1)} s (${Math.round(rows / service.bootSeconds).toLocaleString('en-US')} rows/s), service RSS ${rss === null ? '?' : Math.round(rss)} MiB`,
    )

    const base = `/v1/projects/${seeded.project_id}`
    const identifyPlan = writePlan(storage.dataDir, 'identify-plan', {
      url: service.url,
      credential: seeded.api_key,
      requests: seeded.probes.map((probe) => ({
        method: 'POST',
        path: `${base}/biometrics/identify`,
        body: { palm: { identify_capture: probe.capture } },
        expect: probe.member_id,
      })),
    })
    const identify = []
    for (const concurrency of options.concurrency) {
      const bar = ui.phase(`identify, ${concurrency} client${concurrency === 1 ? '' : 's'}`, 0, '')
      const result = await runLoad(identifyPlan, { kind: 'concurrency', value: concurrency }, options)
      bar.stop()
      identify.push({ concurrency, ...result })
      ui.log(`  identify ${String(concurrency).padStart(2)} clients: ${result.throughput.toFixed(1)}/s, ${describe(result)}`)
    }

    // The same single client with each search mode forced, so every size shows exact and
    // two-stage side by side (the default, auto, picks one by the gallery's row count).
    const admin = environmentAdmin({ url: service.url, token: seeded.admin_token, orgId: seeded.org_id, environmentId: seeded.environment_id })
    const identifyByMode = []
    for (const mode of SEARCH_MODES) {
      await admin.patch({ search_mode: mode })
      const bar = ui.phase(`identify, 1 client, search_mode ${mode}`, 0, '')
      const result = await runLoad(identifyPlan, { kind: 'concurrency', value: 1 }, options)
      bar.stop()
      identifyByMode.push({ mode, concurrency: 1, ...result })
      ui.log(`  identify  1 client, ${mode}: ${result.throughput.toFixed(1)}/s, ${describe(result)}`)
    }
    await admin.patch({ search_mode: 'auto' })

    // The REST GETs a dashboard or back office calls; none touches the gallery.
    const routes = [
      { route: 'GET /v1/projects/{project_id}', paths: [base] },
      { route: 'GET /v1/projects/{project_id}/members/{member_id}', paths: seeded.member_sample.filter(Boolean).map((id) => `${base}/members/${id}`) },
      {
        route: 'GET /v1/projects/{project_id}/scans/results?per_page=20',
        paths: [
          `${base}/scans/results?${new URLSearchParams({ from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 86_400_000).toISOString(), page: '1', per_page: '20' })}`,
        ],
      },
    ]
    const rest = []
    for (const { route, paths } of routes) {
      const plan = writePlan(storage.dataDir, 'rest-plan', {
        url: service.url,
        credential: seeded.api_key,
        requests: paths.map((requestPath) => ({ method: 'GET', path: requestPath })),
      })
      const bar = ui.phase(`${route} at ${options.restRate}/s`, 0, '')
      const result = await runLoad(plan, { kind: 'rate', value: options.restRate }, options)
      bar.stop()
      rest.push({ route, targetRate: options.restRate, ...result })
      ui.log(`  ${route} at ${options.restRate}/s: ${result.throughput.toFixed(0)}/s answered in time, ${describe(result)}`)
    }

    // After the loads, so its requests do not mix with theirs. The environment has the defaults.
    const accuracyBar = ui.phase('accuracy: every probe once more, with its 10 best candidates', 0, '')
    const { scores, ...accuracy } = await measureAccuracy({
      url: service.url,
      credential: seeded.api_key,
      base,
      probes: seeded.probes,
      threshold: 0.8,
      margin: 0.03,
    })
    accuracyBar.stop()
    // The service calibrates from its members' stored captures (the import keeps them, as enrollment does).
    const calibrationBar = ui.phase(`accuracy: the service calibrates its threshold for FPIR ${CALIBRATION_TARGET_FPIR}`, 0, '')
    accuracy.calibration = await measureCalibration({
      url: service.url,
      token: seeded.admin_token,
      orgId: seeded.org_id,
      environmentId: seeded.environment_id,
      scores,
    })
    calibrationBar.stop()
    const headline = accuracy.points[0]
    ui.log(
      `  accuracy: FNIR ${(accuracy.atThreshold.fnir.rate * 100).toFixed(2)} % at threshold 0.80 (${accuracy.misses.hard} of ${accuracy.misses.total} misses are hard identities)` +
        (headline.threshold === null
          ? ''
          : `; FNIR ${(headline.fnir.rate * 100).toFixed(2)} % at FPIR ${headline.target_fpir} (threshold ${headline.threshold.toFixed(3)})`),
    )
    const calibrated = accuracy.calibration
    if (calibrated)
      ui.log(
        `  calibration for FPIR ${calibrated.targetFpir}: threshold ${calibrated.threshold.toFixed(3)} (${calibrated.method}, ${calibrated.samples} samples, ${calibrated.seconds.toFixed(1)} s); ` +
          `the probes' FPIR there ${calibrated.measuredFpir.errors}/${calibrated.measuredFpir.trials}, FNIR ${(calibrated.fnir.rate * 100).toFixed(2)} %`,
      )

    return {
      environment: {
        members: seeded.members,
        galleryRows: rows,
        dimension: seeded.dimension,
        accuracy,
        seed: { seconds: seeded.seconds, membersPerSecond: seeded.members_per_second },
        boot: { seconds: service.bootSeconds, rowsPerSecond: rows / service.bootSeconds },
        serviceRssMiB: rss,
        identify: identify.map(({ errorSamples, ...load }) => load),
        identifyByMode: identifyByMode.map(({ errorSamples, ...load }) => load),
        rest: rest.map(({ errorSamples, outcomes, matedProbes, matedCorrect, nonMatedProbes, nonMatedFound, ...load }) => load),
      },
      matcher: matcherFromHealth(service.health),
    }
  } finally {
    await service?.stop()
    await storage.drop()
  }
}
