// `npm run bench:dedup`: deduplication of planted registers in memory (no service, no database),
// the cell search (src/domain/dedup/dedup-cells.ts) against the exact all-pairs search (every palm
// scanned against every palm with the same int8 kernel), at each size:
//   time, pairs, recall (pairs of the exact search the cell search reports), pairs below the
//   threshold (must be 0), candidate scores, and the ratio of the times.
// Above --exact-max members the exact search is not run; its time is the quadratic model fitted
// at the largest size measured (t = a N^2) and marked as a model.
// Settings: --sizes=10000,100000 (members), --seed=, --threshold=, --probes=, --cells=,
// --exact-max=, --threads=, --register-cache=folder, --no-split, --no-gate (or PALMVEIN_BENCH_DEDUP_SIZES, ..._SEED, ..._THRESHOLD, ..._PROBES).
import { execSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { findPairsByCells, type PalmPair, type PalmRegister } from '../src/domain/dedup/dedup-cells.js'
import { createMatcher, quantizeFloat } from '@palmvein/matcher'
import { findPairsExhaustively } from './dedup-exact.js'
import { createPlantedRegister } from './dedup-register.js'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    seed: { type: 'string' },
    threshold: { type: 'string' },
    probes: { type: 'string' },
    cells: { type: 'string' },
    'exact-max': { type: 'string' },
    threads: { type: 'string' },
    out: { type: 'string' },
    'register-cache': { type: 'string' },
    'progress-lines': { type: 'boolean' },
    'no-split': { type: 'boolean' },
    'no-gate': { type: 'boolean' },
  },
})
const env = (name: string) => process.env[`PALMVEIN_BENCH_DEDUP_${name}`]
const sizes = (values.sizes ?? env('SIZES') ?? '10000,100000').split(',').map(Number)
const seed = Number(values.seed ?? env('SEED') ?? 52)
const threshold = Number(values.threshold ?? env('THRESHOLD') ?? 0.8)
const probes = values.probes ?? env('PROBES')
const cells = values.cells ?? env('CELLS')
const exactMax = Number(values['exact-max'] ?? env('EXACT_MAX') ?? 100_000)
const threads = Number(values.threads ?? 2)
// A folder where made registers are kept (int8 palms, one file per size and seed): making 1M
// members' palms takes longer than deduplicating them.
const registerCache = values['register-cache']
// One stamped line on stderr per percent of the search, with the CLI's ETA (to judge it after the run).
const progressLines = values['progress-lines'] ?? false
// The cell search on k-means' cells as trained, oversized ones not split (to measure the split against).
const split = !(values['no-split'] ?? false)
// Every candidate pair scored, without the Hamming gate (to measure the gate against).
const gate = !(values['no-gate'] ?? false)
const dimension = 256

const cpu = (() => {
  try {
    return execSync("lscpu | grep 'Model name'", { encoding: 'utf8' }).split(':')[1].trim()
  } catch {
    return cpus()[0]?.model ?? 'unknown'
  }
})()

interface Row {
  members: number
  palms: number
  cells: number
  probes: number
  planted: number
  cellSeconds: number
  exactSeconds: number
  exactModelled: boolean
  exactPairs: number | null
  cellPairs: number
  recall: number | null
  belowThreshold: number
  candidateShare: number
  /** Palm x palm scores the cell search computed, and the rows of its largest cell. */
  candidateScores: number
  /** Of them, scored exactly (within the Hamming gate's radius). */
  exactScores: number
  largestCell: number
  /** Of the exact pairs found, the largest probed-cell rank that found one (probes - 1 = found in the last cell searched). */
  worstRank: number
  cellCpuSeconds: number
  exactCpuSeconds: number | null
  /** (ETA-predicted total − actual) / actual, at 10 %, 25 % and 50 % of the work. */
  etaError: Record<string, number>
  /** The same in CPU time (the ETA's error on an otherwise idle machine). */
  etaCpuError: Record<string, number>
  /** Planted pairs at or above the threshold, and of them those reported (recall without the exact search). */
  plantedAbove: number
  plantedFound: number
}

function loadRegister(members: number): { register: PalmRegister; vectors: Int8Array; planted: number; source: (member: number) => number | null } {
  // 1 % duplicates, 0.5 % look-alikes around the threshold.
  const duplicates = Math.max(10, Math.round(members * 0.01))
  const lookAlikes = Math.max(10, Math.round(members * 0.005))
  const cached = registerCache && join(registerCache, `dedup-register-${members}-${seed}-${threshold}-${dimension}.int8`)
  let vectors: Int8Array<ArrayBuffer>
  const planted = createPlantedRegister({ seed, dimension, base: members - duplicates - lookAlikes, duplicates, lookAlikes, threshold })
  if (cached && existsSync(cached)) {
    const bytes = readFileSync(cached)
    vectors = new Int8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength)
  } else {
    vectors = new Int8Array(members * 2 * dimension)
    for (let member = 0; member < members; member++) {
      for (const hand of [0, 1] as const)
        quantizeFloat(planted.palm(member, hand), vectors.subarray((2 * member + hand) * dimension, (2 * member + hand + 1) * dimension))
    }
    if (cached) {
      mkdirSync(registerCache, { recursive: true })
      writeFileSync(cached, vectors)
    }
  }
  const register: PalmRegister = {
    count: members * 2,
    dimension,
    vector: (palm) => vectors.slice(palm * dimension, (palm + 1) * dimension),
    owner: (palm) => palm >> 1,
  }
  return { register, vectors, planted: duplicates + lookAlikes, source: (member) => planted.source(member) }
}

/**
 * The planted pairs (each duplicate or look-alike with the member it was made from) scoring at or
 * above the threshold, and how many of them `reported` holds: recall where the exact search is too
 * slow to run, on the planted pairs only (the population's own look-alikes are not in it).
 */
function plantedRecall(
  vectors: Int8Array,
  members: number,
  source: (member: number) => number | null,
  reported: Set<string>,
): { above: number; found: number } {
  const palm = (index: number) => vectors.subarray(index * dimension, (index + 1) * dimension)
  const cosine = (x: Int8Array, y: Int8Array) => {
    let dot = 0
    let xx = 0
    let yy = 0
    for (let component = 0; component < dimension; component++) {
      dot += x[component] * y[component]
      xx += x[component] * x[component]
      yy += y[component] * y[component]
    }
    return dot / Math.sqrt(xx * yy)
  }
  let above = 0
  let found = 0
  for (let member = 0; member < members; member++) {
    const from = source(member)
    if (from === null) continue
    let best = -1
    for (const hand of [0, 1]) for (const other of [0, 1]) best = Math.max(best, cosine(palm(2 * member + hand), palm(2 * from + other)))
    // A hair above the threshold: the kernel's rounding may put a pair at exactly the threshold either side.
    if (best < threshold + 1e-9) continue
    above++
    if (reported.has(`${Math.min(from, member)}/${Math.max(from, member)}`)) found++
  }
  return { above, found }
}

const pairKey = (pair: PalmPair) => `${pair.a >> 1}/${pair.b >> 1}`
// Process CPU time (every thread): the machine is shared, so wall time alone says little.
const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1e6
}

const rows: Row[] = []
let model: { members: number; seconds: number; cpu: number } | null = null
console.log(`dedup bench on ${cpu}, ${threads} thread(s), threshold ${threshold}, seed ${seed}`)
for (const members of sizes) {
  const started = performance.now()
  const { register, planted, vectors, source } = loadRegister(members)
  console.log(`${members} members: register made in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const matcher = await createMatcher({ dimension, threads })
  let cellResult
  let cellSeconds
  let cellCpu = 0
  let etaError: Record<string, number> = {}
  let etaCpuError: Record<string, number> = {}
  let exactCpu: number | null = null
  try {
    const cellStarted = performance.now()
    const cpuStarted = process.cpuUsage()
    // The CLI's ETA (elapsed x work left / work done) as it stood at a tenth and a quarter of the work.
    // On a shared machine the wall-clock ETA also measures the neighbours, so it is judged in CPU time as well.
    const predicted: Record<string, number> = {}
    const predictedCpu: Record<string, number> = {}
    let searchStart: { elapsed: number; cpu: number; done: number } | null = null
    let lastPercent = -1
    cellResult = await findPairsByCells(matcher, register, {
      threshold,
      probes: probes ? Number(probes) : undefined,
      cells: cells ? Number(cells) : undefined,
      seed,
      split,
      gate,
      onPhase: (phase) =>
        console.error(
          JSON.stringify({
            at: new Date().toISOString(),
            phase,
            elapsed_s: Number(((performance.now() - cellStarted) / 1000).toFixed(1)),
            cpu_s: Number(cpuSeconds(cpuStarted).toFixed(1)),
          }),
        ),
      onProgress: (done, total) => {
        // As the CLI: the rate from the search's first report on.
        const elapsed = (performance.now() - cellStarted) / 1000
        const cpu = cpuSeconds(cpuStarted)
        searchStart ??= { elapsed, cpu, done }
        const percent = Math.floor((done / Math.max(1, total)) * 100)
        if (progressLines && percent !== lastPercent) {
          lastPercent = percent
          const rate = (done - searchStart.done) / Math.max(1e-9, elapsed - searchStart.elapsed)
          const eta = done >= total ? 0 : rate > 0 ? (total - done) / rate : null
          const at = new Date().toISOString()
          console.error(
            JSON.stringify({
              at,
              percent,
              done,
              total,
              elapsed_s: Number(elapsed.toFixed(1)),
              cpu_s: Number(cpu.toFixed(1)),
              eta_s: eta && Number(eta.toFixed(1)),
            }),
          )
        }
        for (const mark of [0.1, 0.25, 0.5]) {
          if (predicted[mark] !== undefined || done < mark * total) continue
          const share = (done - searchStart.done) / (total - searchStart.done)
          predicted[mark] = searchStart.elapsed + (elapsed - searchStart.elapsed) / share
          predictedCpu[mark] = searchStart.cpu + (cpu - searchStart.cpu) / share
        }
      },
    })
    cellSeconds = (performance.now() - cellStarted) / 1000
    etaError = Object.fromEntries(Object.entries(predicted).map(([mark, total]) => [mark, (total - cellSeconds!) / cellSeconds!]))
    const cpuTotal = cpuSeconds(cpuStarted)
    etaCpuError = Object.fromEntries(Object.entries(predictedCpu).map(([mark, total]) => [mark, (total - cpuTotal) / cpuTotal]))
    cellCpu = cpuSeconds(cpuStarted)
  } finally {
    await matcher.close()
  }
  let exactPairs: PalmPair[] | null = null
  let exactSeconds: number
  if (members <= exactMax) {
    const exactMatcher = await createMatcher({ dimension, threads })
    try {
      const exactStarted = performance.now()
      const cpuStarted = process.cpuUsage()
      exactPairs = await findPairsExhaustively(exactMatcher, register, threshold)
      exactSeconds = (performance.now() - exactStarted) / 1000
      exactCpu = cpuSeconds(cpuStarted)
      model = { members, seconds: exactSeconds, cpu: exactCpu }
    } finally {
      await exactMatcher.close()
    }
  } else {
    exactSeconds = model ? model.seconds * (members / model.members) ** 2 : NaN
    exactCpu = model ? model.cpu * (members / model.members) ** 2 : null
  }
  const reported = new Set(cellResult.pairs.map(pairKey))
  const exactKeys = exactPairs && new Set(exactPairs.map(pairKey))
  const found = exactPairs?.filter((pair) => reported.has(pairKey(pair))).length
  const plantedPairs = plantedRecall(vectors, members, source, reported)
  const row: Row = {
    members,
    palms: members * 2,
    cells: cellResult.cells,
    probes: cellResult.probes,
    planted,
    cellSeconds,
    exactSeconds,
    exactModelled: exactPairs === null,
    exactPairs: exactPairs?.length ?? null,
    cellPairs: cellResult.pairs.length,
    recall: exactPairs ? (exactPairs.length ? found! / exactPairs.length : 1) : null,
    belowThreshold: cellResult.pairs.filter((pair) => pair.score < threshold).length,
    candidateShare: cellResult.candidateScores / ((members * 2 * (members * 2 - 1)) / 2),
    candidateScores: cellResult.candidateScores,
    exactScores: cellResult.exactScores,
    largestCell: cellResult.largestCell,
    worstRank: Math.max(-1, ...cellResult.pairs.filter((pair) => exactKeys === null || exactKeys.has(pairKey(pair))).map((pair) => pair.rank)),
    cellCpuSeconds: cellCpu,
    exactCpuSeconds: exactCpu,
    etaError,
    etaCpuError,
    plantedAbove: plantedPairs.above,
    plantedFound: plantedPairs.found,
  }
  rows.push(row)
  console.log(JSON.stringify(row))
}

const table = [
  '| members | palms | cells × probes | exact all-pairs (wall / CPU) | cell search (wall / CPU) | × less CPU | exact pairs | cell pairs | recall | below threshold | worst rank | candidates / all pairs |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (row) =>
      `| ${row.members.toLocaleString('en')} | ${row.palms.toLocaleString('en')} | ${row.cells} × ${row.probes} | ${row.exactSeconds.toFixed(1)} / ${row.exactCpuSeconds?.toFixed(1) ?? '–'} s${row.exactModelled ? ' (model)' : ''} | ${row.cellSeconds.toFixed(1)} / ${row.cellCpuSeconds.toFixed(1)} s | ${row.exactCpuSeconds === null ? '–' : (row.exactCpuSeconds / row.cellCpuSeconds).toFixed(1)} | ${row.exactPairs ?? '–'} | ${row.cellPairs} | ${row.recall === null ? '–' : `${(row.recall * 100).toFixed(2)} %`} | ${row.belowThreshold} | ${row.worstRank} | ${(row.candidateShare * 100).toFixed(2)} % |`,
  ),
]
console.log(table.join('\n'))
const percents = (errors: Record<string, number>) =>
  Object.entries(errors)
    .map(([mark, error]) => `${Number(mark) * 100} %: ${(error * 100).toFixed(1)} %`)
    .join(', ')
for (const row of rows) console.log(`planted pairs at ${row.members} members: ${row.plantedFound} of ${row.plantedAbove} at or above the threshold reported`)
for (const row of rows) console.log(`ETA error at ${row.members} members: wall ${percents(row.etaError)}; CPU ${percents(row.etaCpuError)}`)
const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\..*/, 'Z')
const out = values.out ?? `bench/results/dedup-${stamp}.json`
mkdirSync('bench/results', { recursive: true })
writeFileSync(out, JSON.stringify({ cpu, threads, threshold, seed, rows }, null, 2) + '\n')
console.log(`written ${out}`)
