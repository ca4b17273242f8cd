#!/usr/bin/env node
// npm run bench: does palmvein meet "< 100 ms matching" on this machine? Runs, in order,
//   1. the matcher benchmarks (npm run bench:matcher, in its own process);
//   2. the service under load, per gallery size: bulk-load N members, start the real service from
//      dist/ in its own process, identify at 1 / 16 / 64 clients and REST GETs at a fixed rate,
//      each load from a separate generator process;
//   3. the peer users would build instead, PostgreSQL + pgvector (bench/pgvector), per size, beside
//      palmvein's matcher on the same members and probes (pgvector built by scripts/pgvector-build.sh);
// and writes bench/results/<timestamp>/ (results.json, report.md, SVG charts). Targets are
// printed beside the figures as met / missed; the benchmark itself never fails on them.
// See docs/benchmarks.md for every flag and what each number means.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import cliProgress from 'cli-progress'
import { register } from 'tsx/esm/api'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
register()
const { machineInfo } = await import('./report/machine.ts')
const { RESULT_VERSION } = await import('./report/result.ts')
const { writeReport, resultDirectoryName } = await import('./report/write-report.ts')
const { renderSummary } = await import('./report/markdown.ts')
const { runEnvironment } = await import('./service/environment.mjs')
const { runConsolePhase } = await import('./service/console-load.mjs')

const USAGE = `usage: npm run bench -- [options]
  --quick                 smoke check in under 3 minutes (sizes 1000,10000; 3 s loads; small matcher run)
  --sizes <n,n,...>       enrolled members per environment (default 10000,100000,1000000)
  --duration <seconds>    measured seconds per load (default 10; quick 4)
  --warmup <seconds>      unmeasured seconds before each load (default 2; quick 1)
  --timeout <seconds>     a request unanswered this long is an error (default 10; quick 3)
  --concurrency <c,c,...> identify clients (default 1,16,64)
  --rest-rate <per s>     open-loop rate of the REST GETs (default 1000)
  --database-url <url>    PostgreSQL server for the environments (default: DATABASE_URL, else embedded PGlite)
  --embedded              use the embedded database even when DATABASE_URL is set
  --seed <int>            synthetic population seed (default 42)
  --skip-matcher          do not run the matcher benchmarks
  --matcher-json <file>   do not run them: put this earlier bench:matcher result in the report
  --skip-service          do not run the service phases
  --skip-console          do not measure the web console (main bundle size, first load in Chromium)
  --skip-pgvector         do not run the PostgreSQL + pgvector peer
  --pgvector-url <url>    PostgreSQL server for the pgvector peer (default: --database-url, DATABASE_URL)
  --pgvector-probes <n>   probes of the pgvector comparison (default 1000; quick 200)
  --pgvector-index-timeout <seconds>  longest one pgvector index build may take (default 1800)
  --no-build              use dist/ as it is (default: rebuild it when src/ is newer)
  --out <dir>             results directory (default bench/results/<timestamp>)`

function fail(message) {
  console.error(`bench: ${message}\n\n${USAGE}`)
  process.exit(2)
}

let parsed
try {
  parsed = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      sizes: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      timeout: { type: 'string' },
      concurrency: { type: 'string' },
      'rest-rate': { type: 'string' },
      'database-url': { type: 'string' },
      embedded: { type: 'boolean', default: false },
      seed: { type: 'string' },
      'skip-matcher': { type: 'boolean', default: false },
      'matcher-json': { type: 'string' },
      'skip-service': { type: 'boolean', default: false },
      'skip-console': { type: 'boolean', default: false },
      'skip-pgvector': { type: 'boolean', default: false },
      'pgvector-url': { type: 'string' },
      'pgvector-probes': { type: 'string' },
      'pgvector-index-timeout': { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values
} catch (error) {
  fail(error.message)
}
if (parsed.help) {
  console.log(USAGE)
  process.exit(0)
}

const positiveList = (text, name) => {
  const list = text.split(',').map((item) => Number(item.trim()))
  if (!list.length || list.some((value) => !Number.isInteger(value) || value < 1))
    fail(`--${name} must be a comma-separated list of positive integers, got "${text}"`)
  return list
}
const positive = (text, name, integer = false) => {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) fail(`--${name} must be a positive number, got "${text}"`)
  return value
}
const quick = parsed.quick
const databaseUrl = parsed.embedded ? null : (parsed['database-url'] ?? process.env.DATABASE_URL ?? null)
const options = {
  quick,
  sizes: positiveList(parsed.sizes ?? (quick ? '1000,10000' : '10000,100000,1000000'), 'sizes'),
  durationSeconds: positive(parsed.duration ?? (quick ? '3' : '10'), 'duration'),
  timeoutSeconds: positive(parsed.timeout ?? (quick ? '3' : '10'), 'timeout'),
  warmupSeconds: parsed.warmup === undefined ? (quick ? 1 : 2) : Number(parsed.warmup),
  concurrency: positiveList(parsed.concurrency ?? '1,16,64', 'concurrency'),
  restRate: positive(parsed['rest-rate'] ?? '1000', 'rest-rate', true),
  database: databaseUrl ? 'postgres' : 'embedded',
  seed: parsed.seed === undefined ? 42 : Number(parsed.seed),
}
const pgvectorProbes = positive(parsed['pgvector-probes'] ?? (quick ? '200' : '1000'), 'pgvector-probes', true)
const pgvectorIndexTimeout = positive(parsed['pgvector-index-timeout'] ?? '1800', 'pgvector-index-timeout')
if (!Number.isInteger(options.seed)) fail(`--seed must be an integer, got "${parsed.seed}"`)
if (!(options.warmupSeconds >= 0)) fail(`--warmup must be a number ≥ 0, got "${parsed.warmup}"`)

// ---- output: one progress bar per long phase, plain lines otherwise -----------------------------
const tty = process.stdout.isTTY
const ui = {
  log: (line) => console.log(line),
  phase(name, total, unit) {
    const started = performance.now()
    if (!tty || total <= 0) {
      if (total <= 0) process.stdout.write(`  ${name} …\n`)
      else console.log(`  ${name} …`)
      let lastPrinted = 0
      return {
        update(value, newTotal) {
          // Without a terminal, a line every 10 s keeps CI logs alive without flooding them.
          if (total > 0 && performance.now() - lastPrinted > 10_000) {
            lastPrinted = performance.now()
            console.log(`    ${value.toLocaleString('en-US')}/${(newTotal ?? total).toLocaleString('en-US')} ${unit}`)
          }
        },
        stop() {},
      }
    }
    const bar = new cliProgress.SingleBar(
      {
        format: `  ${name.padEnd(44)} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted} (eta {eta_formatted})`,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    )
    bar.start(total, 0)
    return {
      update(value, newTotal) {
        if (newTotal !== undefined && newTotal !== bar.getTotal()) bar.setTotal(newTotal)
        bar.update(value)
      },
      stop() {
        bar.stop()
        void started
      },
    }
  },
}

// ---- dist/ must be the code in src/: the service and the seeder run from it ----------------------
function newestMtime(directory) {
  let newest = 0
  for (const entry of fs.readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs)
  }
  return newest
}
if (!parsed['skip-service']) {
  const cli = path.join(root, 'dist', 'cli', 'main.js')
  const stale = !fs.existsSync(cli) || newestMtime(path.join(root, 'src')) > fs.statSync(cli).mtimeMs
  if (!fs.existsSync(cli) && parsed['no-build']) fail('dist/ is missing; run npm run build (or drop --no-build)')
  if (stale && parsed['no-build']) console.log('warning: dist/ is older than src/ (--no-build: running it as it is)')
  else if (stale) {
    console.log('dist/ is older than src/: building (node scripts/build.mjs ts)')
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), 'ts'], { cwd: root, stdio: 'inherit' })
    if (build.status !== 0) {
      console.error('bench: the TypeScript build failed; fix it, or pass --no-build to run the dist/ you have')
      process.exit(1)
    }
  }
}

const startedAt = new Date()
const outDirectory = path.resolve(parsed.out ?? path.join(root, 'bench', 'results', resultDirectoryName(startedAt)))
const loadBefore = os.loadavg()
console.log(
  `palmvein bench (${quick ? 'quick' : 'full'}): sizes ${options.sizes.join(', ')}; clients ${options.concurrency.join(', ')}; ${options.durationSeconds} s per load; ${options.database} database; results in ${path.relative(process.cwd(), outDirectory) || '.'}`,
)
console.log(
  `load average before: ${loadBefore.map((value) => value.toFixed(2)).join(' ')} on ${os.availableParallelism()} CPUs${loadBefore[0] > os.availableParallelism() ? ' (the machine is busy: expect slower figures)' : ''}`,
)

// ---- phase 1: the matcher benchmarks (their own script, their own process) -----------------------
/** The matcher benchmark's rows, reduced to what the report shows. */
function matcherRows(file) {
  const document = JSON.parse(fs.readFileSync(file, 'utf8'))
  return (document.results ?? []).map(({ rows, dimension, engine, batch, threads, medianMs, perProbeMs, vsFloor, vsUsearch, vsFaiss, vsJs }) => ({
    rows,
    dimension,
    engine,
    batch,
    threads,
    medianMs,
    perProbeMs,
    vsFloor,
    vsUsearch,
    vsFaiss,
    vsJs,
  }))
}

async function runMatcherPhase() {
  if (parsed['skip-matcher']) return { status: 'skipped', seconds: 0, resultFile: null, note: null }
  if (parsed['matcher-json']) {
    fs.mkdirSync(outDirectory, { recursive: true })
    const target = path.join(outDirectory, 'matcher.json')
    if (path.resolve(parsed['matcher-json']) !== target) fs.copyFileSync(parsed['matcher-json'], target)
    return {
      status: 'ok',
      seconds: 0,
      resultFile: 'matcher.json',
      note: `Not run again: the result of an earlier run (${path.basename(parsed['matcher-json'])}, written ${JSON.parse(fs.readFileSync(target, 'utf8')).date ?? 'at an unknown time'}).`,
      rows: matcherRows(target),
    }
  }
  console.log('\n== matcher benchmarks (npm run bench:matcher) ==')
  const started = performance.now()
  const args = quick ? ['--sizes=10000,100000', '--budget-ms=200', '--js-max-rows=10000', '--two-stage-rows=100000', '--agreement-probes=2000'] : []
  // Its stdout goes to ours; its last words name the JSON file it wrote ("wrote <file> (...)").
  let written = null
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(root, 'packages', 'matcher', 'bench', 'matcher.ts'), ...args],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      written = /^wrote (\S+\.json)/m.exec(String(chunk))?.[1] ?? written
    })
    child.once('close', resolve)
    child.once('error', () => resolve(1))
  })
  const seconds = (performance.now() - started) / 1000
  // The file belongs to this run: move it into the run's directory.
  let resultFile = null
  if (written && fs.existsSync(written)) {
    fs.mkdirSync(outDirectory, { recursive: true })
    fs.renameSync(written, path.join(outDirectory, 'matcher.json'))
    resultFile = 'matcher.json'
  }
  const rows = resultFile ? matcherRows(path.join(outDirectory, resultFile)) : undefined
  return code === 0
    ? { status: 'ok', seconds, resultFile, note: quick ? 'Quick run: galleries of 10k and 100k rows only.' : null, rows }
    : { status: 'failed', seconds, resultFile, note: `exit code ${code}`, rows }
}

const matcherPhase = await runMatcherPhase()

// ---- phase 2: the service under load ------------------------------------------------------------
const environments = []
let matcher = null
if (!parsed['skip-service']) {
  for (const members of options.sizes) {
    console.log(`\n== service under load: ${members.toLocaleString('en-US')} members (${(2 * members).toLocaleString('en-US')} gallery rows) ==`)
    const { environment, matcher: chosen } = await runEnvironment(
      members,
      {
        databaseUrl,
        seed: options.seed,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        timeoutSeconds: options.timeoutSeconds,
        concurrency: options.concurrency,
        restRate: options.restRate,
        probes: 1000,
      },
      ui,
    )
    environments.push(environment)
    matcher ??= chosen
  }
}

// ---- phase 3: the web console's first visit ---------------------------------------------------------
let consoleResult
if (!parsed['skip-console']) {
  console.log('\n== web console: main bundle and first load in Chromium ==')
  consoleResult = await runConsolePhase(root)
}
// ---- phase 4: the PostgreSQL + pgvector peer ---------------------------------------------------
async function runPgvectorPhase() {
  const skipped = (reason) => {
    console.log(`pgvector: skipped (${reason})`)
    return { status: 'skipped', reason }
  }
  if (parsed['skip-pgvector']) return skipped('--skip-pgvector')
  const serverUrl = parsed['pgvector-url'] ?? parsed['database-url'] ?? process.env.DATABASE_URL
  if (!serverUrl) return skipped('no PostgreSQL server: pass --pgvector-url, --database-url or set DATABASE_URL')
  console.log('\n== PostgreSQL + pgvector, the peer users would build instead ==')
  const build = spawnSync('bash', [path.join(root, 'scripts', 'pgvector-build.sh')], { cwd: root, encoding: 'utf8' })
  if (build.status !== 0) return skipped((build.stderr || `scripts/pgvector-build.sh exited with ${build.status}`).trim().split('\n').at(-1))
  console.log(`  ${build.stdout.trim()}`)
  const { runPgvectorPeer } = await import('./pgvector/pgvector-peer.ts')
  const peerOptions = {
    serverUrl,
    seed: options.seed,
    dimension: 256,
    probes: pgvectorProbes,
    k: 10,
    clients: [...new Set([1, ...options.concurrency.filter((count) => count === 16)])],
    durationSeconds: options.durationSeconds,
    candidates: 256,
    passBudgetSeconds: 300,
    indexTimeoutSeconds: pgvectorIndexTimeout,
    // An HNSW build is fast only while its graph fits (~3 GiB at 2M rows of d = 256).
    maintenanceWorkMem: '4GB',
  }
  const sizes = []
  for (const members of options.sizes) {
    console.log(`  ${members.toLocaleString('en-US')} members (load average ${os.loadavg()[0].toFixed(2)})`)
    try {
      sizes.push(await runPgvectorPeer(members, peerOptions, ui.log))
    } catch (error) {
      console.log(`  pgvector at ${members.toLocaleString('en-US')} members failed: ${error.message}`)
      sizes.push({ members, error: error.message })
    }
  }
  return { status: 'ok', sizes }
}
const pgvector = await runPgvectorPhase()

const loadAfter = os.loadavg()
const result = {
  version: RESULT_VERSION,
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: { ...machineInfo(matcher), loadAverage: { before: loadBefore, after: loadAfter } },
  // Imported members keep their captures, as enrollment does (older results may have references only).
  options: { ...options, storeCaptures: true },
  matcher: matcherPhase,
  environments,
  ...(consoleResult ? { console: consoleResult } : {}),
  pgvector,
}
const files = writeReport(outDirectory, result)
console.log(`\n${renderSummary(result)}`)
console.log(`load average after: ${loadAfter.map((value) => value.toFixed(2)).join(' ')}`)
console.log(
  `report: ${path.relative(
    process.cwd(),
    files.find((file) => file.endsWith('.md')),
  )}`,
)
for (const file of files) console.log(`  ${path.relative(process.cwd(), file)}`)
