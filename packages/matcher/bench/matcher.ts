// npm run bench:matcher: the 1:N scan per backend against baselines measured in the same run:
// the memory-bandwidth floor (read the gallery bytes once, nothing else, on 1 thread and on the
// API's threads; each row is set against the floor of its thread count), usearch's exact search
// over the same int8 rows, and FAISS (Python, where present): its exact int8 scan beside our
// exact scan, its 1-bit scan beside our two-stage search. Plus the TypeScript reference at small
// sizes and the public API (pool + micro-batching) end to end.
//
// Environment (flags --sizes=... etc. take precedence):
//   PALMVEIN_BENCH_CASES   rows x dimension list, default 10000x256,100000x256,1000000x256,2000000x256,1000000x512
//   PALMVEIN_BENCH_SIZES   shorthand: rows at d=256 only (e.g. 10000,100000)
//   PALMVEIN_BENCH_SEED    default 42
//   PALMVEIN_BENCH_JS_MAX_ROWS  largest gallery the JS reference runs on, default 100000
//   PALMVEIN_BENCH_THREADS pool threads for the API rows, default 2
//   PALMVEIN_BENCH_BUDGET_MS  time budget per measurement, default 1000
//   PALMVEIN_BENCH_K       top-k per probe, default 10
//   PALMVEIN_BENCH_TWO_STAGE_ROWS  galleries (rows = 2 x members) for the two-stage and partition
//                          part (bench/matcher-two-stage.ts), default 1000000; 0 skips it
//   PALMVEIN_BENCH_AGREEMENT_PROBES  probes of its agreement measurement, default 100000
//   PALMVEIN_BENCH_POPULATION  'default' or 'hard' (noisier, more hard and look-alike identities)
//   PALMVEIN_BENCH_CANDIDATES  c values whose agreement is measured, default 1,2,4,8,16,32,64,128,256,512,1024
//   PALMVEIN_BENCH_FAISS, PALMVEIN_BENCH_PYTHON, PALMVEIN_BENCH_CACHE  the FAISS peer (bench/peers/faiss.ts)
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as usearch from 'usearch'
import { loadNativeAddon, loadWasmModule, type NativeAddon } from '../src/backend.js'
import { galleryStoreOf } from '../src/gallery.js'
import { createMatcher } from '../src/index.js'
import { createKernel, type ScanKernel } from '../src/kernel.js'
import { createRandom } from '../src/random.js'
import { runScanTask } from '../src/scan-task.js'
import { packSignBits } from '../src/sign-bits.js'
import { measureFaiss, type FaissMeasurement } from './peers/faiss.js'
import { printTable, writeResults, type ResultRow } from './matcher-report.js'
import { benchTwoStage, type TwoStageReport } from './matcher-two-stage.js'
import { createParallelFloor } from './matcher-floor-threads.js'
import { time, type Timing } from './matcher-timing.js'

const flags = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]))
const setting = (flag: string, variable: string, fallback: string) => flags.get(flag) ?? process.env[variable] ?? fallback
const sizes = setting('sizes', 'PALMVEIN_BENCH_SIZES', '')
const cases = (
  sizes
    ? sizes.split(',').map((rows) => `${rows}x256`)
    : setting('cases', 'PALMVEIN_BENCH_CASES', '10000x256,100000x256,1000000x256,2000000x256,1000000x512').split(',')
).map((entry) => entry.trim().split('x').map(Number) as [number, number])
const seed = Number(setting('seed', 'PALMVEIN_BENCH_SEED', '42'))
const jsMaxRows = Number(setting('js-max-rows', 'PALMVEIN_BENCH_JS_MAX_ROWS', '100000'))
const threads = Number(setting('threads', 'PALMVEIN_BENCH_THREADS', '2'))
const budgetMs = Number(setting('budget-ms', 'PALMVEIN_BENCH_BUDGET_MS', '1000'))
const k = Number(setting('k', 'PALMVEIN_BENCH_K', '10'))
const timing = { budgetMs, maxIterations: 25 }
const twoStageRows = setting('two-stage-rows', 'PALMVEIN_BENCH_TWO_STAGE_ROWS', '1000000')
  .split(',')
  .map(Number)
  .filter((rows) => rows > 0)
const agreementProbes = Number(setting('agreement-probes', 'PALMVEIN_BENCH_AGREEMENT_PROBES', '100000'))
const populationKind = setting('population', 'PALMVEIN_BENCH_POPULATION', 'default') as 'default' | 'hard'
const candidateList = setting('candidates', 'PALMVEIN_BENCH_CANDIDATES', '1,2,4,8,16,32,64,128,256,512,1024').split(',').map(Number)

const addonLoad = loadNativeAddon()
const addon: NativeAddon | undefined = addonLoad.ok ? addonLoad.value : undefined
const wasmLoad = loadWasmModule()
if (!addon) console.log(`native addon not available (${addonLoad.ok ? '' : addonLoad.reason}); floor from WASM`)
const isas = addon ? addon.availableIsas() : []
const bestIsa = addon?.activeIsa()

/** Uniform int8 rows in [-127, 127]: scan time does not depend on the values. */
function randomRows(random: ReturnType<typeof createRandom>, count: number, dimension: number): Int8Array {
  const rows = new Int8Array(count * dimension)
  const words = new Uint32Array(rows.buffer)
  for (let index = 0; index < words.length; index++) words[index] = (random.next() * 0x100000000) >>> 0
  for (let index = 0; index < rows.length; index++) if (rows[index] === -128) rows[index] = -127
  return rows
}

function probesFrom(gallery: Int8Array, count: number, dimension: number, random: ReturnType<typeof createRandom>): Int8Array[] {
  // Mated-looking probes: gallery rows with a little noise, so top-k lists fill with real work.
  return Array.from({ length: count }, () => {
    const row = Math.floor(random.next() * (gallery.length / dimension))
    const probe = gallery.slice(row * dimension, (row + 1) * dimension)
    for (let index = 0; index < dimension; index++) {
      probe[index] = Math.max(-127, Math.min(127, probe[index] + Math.round((random.next() - 0.5) * 40)))
    }
    return probe
  })
}

const results: ResultRow[] = []
const faissCases: ({ rows: number; dimension: number } & (
  | { available: true; version: string; buildSeconds: number; top1Agreement: { sq8: number; binary: number } }
  | { available: false; reason: string }
))[] = []
/** Candidates of the per-case two-stage rows: an environment's default (migration 0007). */
const TWO_STAGE_CANDIDATES = 256
const log = (line: string) => console.log(`[bench] ${line}`)
const started = performance.now()

for (const [rowCount, dimension] of cases) {
  const random = createRandom(seed ^ rowCount ^ (dimension << 20))
  const rows = randomRows(random, rowCount, dimension)
  // A 4 GiB budget keeps the rows in a wasm memory, which every kernel compared below can scan.
  const matcher = await createMatcher({ dimension, threads, logger: log, maxMemoryBytes: 2 ** 32 })
  const gallery = matcher.createGallery()
  const loadStarted = performance.now()
  for (let row = 0; row < rowCount; row++) gallery.upsert(`m${row}`, rows.subarray(row * dimension, (row + 1) * dimension))
  log(`${rowCount} x ${dimension}: loaded in ${(performance.now() - loadStarted).toFixed(0)} ms (${matcher.backend.name}/${matcher.backend.isa})`)
  const store = galleryStoreOf(gallery)!
  const segments = store.segments()
  const probes = probesFrom(rows, 16, dimension, random)
  const packed = (count: number) => {
    const out = new Int8Array(count * dimension)
    for (let index = 0; index < count; index++) out.set(probes[index], index * dimension)
    return out
  }
  const norms = (count: number) => Uint32Array.from(probes.slice(0, count), (probe) => probe.reduce((sum, value) => sum + value * value, 0))
  const record = (engine: string, batch: number, threadCount: number, measured: Timing) => {
    const row: ResultRow = { rows: rowCount, dimension, engine, batch, threads: threadCount, ...measured, perProbeMs: measured.medianMs / batch }
    results.push(row)
    log(
      `${engine.padEnd(18)} batch ${String(batch).padStart(2)}: median ${measured.medianMs.toFixed(3)} ms, p95 ${measured.p95Ms.toFixed(3)} ms (${measured.samples} runs)`,
    )
    return row
  }

  // The best kernel this machine has (native, else WASM): the floor, the two-stage rows and the
  // top-1 check against FAISS all use it.
  const bestKernel = createKernel(addon ? 'native' : 'wasm', store.memory, { addon, wasmModule: wasmLoad.ok ? wasmLoad.value : undefined })
  // Bandwidth floor: read every gallery byte once (the addon's streamRead, else WASM's).
  const floor = record(
    `floor:${addon ? 'native' : 'wasm'}`,
    1,
    1,
    await time(
      'floor',
      () => {
        for (const segment of segments) bestKernel.streamRead(segment.rowsOffset, segment.rowEnd * store.shape.strideInBytes)
      },
      rowCount,
      timing,
    ),
  )
  // The same on `threads` workers at once: the floor of the API's searches on that many threads.
  const floors = new Map([[1, floor]])
  if (threads > 1) {
    const parallel = await createParallelFloor({
      memory: store.memory,
      segments,
      strideInBytes: store.shape.strideInBytes,
      threads,
      backend: addon ? 'native' : 'wasm',
      wasmModule: wasmLoad.ok ? wasmLoad.value : undefined,
    })
    floors.set(threads, record(`floor:${addon ? 'native' : 'wasm'}`, 1, threads, await time('floor', parallel.run, rowCount, timing)))
    await parallel.close()
  }

  // Kernels on this thread over the same shared memory: each native ISA, wasm, js (small only).
  const kernels: { engine: string; kernel: ScanKernel; isa?: string }[] = []
  for (const isa of isas) kernels.push({ engine: `native:${isa}`, kernel: createKernel('native', store.memory, { addon }), isa })
  if (wasmLoad.ok) kernels.push({ engine: 'wasm', kernel: createKernel('wasm', store.memory, { wasmModule: wasmLoad.value }) })
  if (rowCount <= jsMaxRows) kernels.push({ engine: 'js', kernel: createKernel('js', store.memory, {}) })
  const singles = new Map<string, ResultRow>()
  for (const { engine, kernel, isa } of kernels) {
    if (isa) addon!.setIsa(isa)
    for (const batch of [1, 4, 16]) {
      const task = { segments, shape: store.shape, probes: packed(batch), probeNorms: norms(batch), k }
      const row = record(engine, batch, 1, await time(engine, () => runScanTask(kernel, task), rowCount, timing))
      if (batch === 1) singles.set(engine, row)
      else row.vsSingle = row.medianMs / singles.get(engine)!.medianMs
    }
  }
  if (bestIsa) addon!.setIsa(bestIsa)

  // Two-stage on this thread with the best kernel: the peer of FAISS's binary scan.
  if (addon) {
    for (const batch of [1, 16]) {
      const task = {
        segments,
        shape: store.shape,
        probes: packed(batch),
        probeNorms: norms(batch),
        k,
        twoStage: { probeBits: packSignBits(packed(batch), dimension, batch), candidates: TWO_STAGE_CANDIDATES },
      }
      record('native:two_stage', batch, 1, await time('two_stage', () => runScanTask(bestKernel, task), rowCount, timing))
    }
  }

  // usearch exact search over a standalone copy (it ignores typed-array byte offsets).
  const standalone = new Int8Array(rows)
  const usearchRows: ResultRow[] = []
  for (const threadCount of [1, threads]) {
    for (const batch of [1, 16]) {
      const queries = packed(batch)
      usearchRows.push(
        record(
          'usearch',
          batch,
          threadCount,
          await time('usearch', () => usearch.exactSearch(standalone, queries, dimension, k, usearch.MetricKind.IP, threadCount), rowCount, timing),
        ),
      )
    }
  }

  // FAISS over the same rows and probes, in its own process.
  const faiss: FaissMeasurement = measureFaiss({ rows, probes: packed(16), dimension, k, threads: [1, threads], budgetMs, maxIterations: timing.maxIterations })
  const faissRows: ResultRow[] = []
  if (faiss.available) {
    for (const { index, batch, threads: threadCount, medianMs, p95Ms, samples } of faiss.timings)
      faissRows.push(record(`faiss:${index}`, batch, threadCount, { medianMs, p95Ms, samples }))
    // Top-1 agreement with our exact scan: FAISS ranks by inner product, we by cosine, so on
    // random rows of unequal norms they may differ; the binary index's top-1 is a stage-1 guess.
    const ours = runScanTask(bestKernel, { segments, shape: store.shape, probes: packed(16), probeNorms: norms(16), k: 1 })
    const agreement = (top1: number[]) => top1.filter((row, probe) => row === ours.rows[probe]).length / top1.length
    const top1Agreement = { sq8: agreement(faiss.top1.sq8), binary: agreement(faiss.top1.binary) }
    log(
      `FAISS ${faiss.version}: index build ${faiss.buildSeconds.toFixed(1)} s; top-1 equal to our exact scan's: sq8 ${(100 * top1Agreement.sq8).toFixed(0)} %, binary ${(100 * top1Agreement.binary).toFixed(0)} % of 16 probes`,
    )
    faissCases.push({ rows: rowCount, dimension, available: true, version: faiss.version, buildSeconds: faiss.buildSeconds, top1Agreement })
  } else {
    log(`FAISS not measured: ${faiss.reason}`)
    faissCases.push({ rows: rowCount, dimension, available: false, reason: faiss.reason })
  }

  // The public API: pool of `threads` workers, micro-batching, id mapping.
  const api1 = record(`api:${matcher.backend.name}`, 1, threads, await time('api', () => gallery.search(probes[0], { k }), rowCount, timing))
  const api16 = record(`api:${matcher.backend.name}`, 16, threads, await time('api16', () => gallery.searchBatch(probes, { k }), rowCount, timing))
  api16.vsSingle = api16.medianMs / api1.medianMs

  // Ratios within this case.
  const caseRows = results.filter((row) => row.rows === rowCount && row.dimension === dimension)
  const bestNative = (batch: number) => caseRows.find((row) => row.engine === `native:${bestIsa}` && row.batch === batch)
  const js = (batch: number) => caseRows.find((row) => row.engine === 'js' && row.batch === batch)
  for (const row of caseRows) {
    if (row.engine.startsWith('floor')) continue
    const threadFloor = floors.get(row.threads)
    if (row.batch === 1 && threadFloor) row.vsFloor = row.medianMs / threadFloor.medianMs
    const peer = usearchRows.find((entry) => entry.threads === row.threads && entry.batch === row.batch)
    if (peer && row.engine !== 'usearch') row.vsUsearch = peer.medianMs / row.medianMs
    // Exact engines against FAISS's exact int8 scan, two-stage against its binary scan.
    const faissIndex = row.engine.includes('two_stage') ? 'faiss:binary' : 'faiss:sq8'
    const faissPeer = faissRows.find((entry) => entry.engine === faissIndex && entry.threads === row.threads && entry.batch === row.batch)
    if (faissPeer && !row.engine.startsWith('faiss') && row.engine !== 'usearch') row.vsFaiss = faissPeer.medianMs / row.medianMs
    const reference = js(row.batch)
    if (reference && row.engine !== 'js') row.vsJs = reference.medianMs / row.medianMs
    const native = bestNative(row.batch)
    if (native && row.threads === 1 && row !== native) row.vsNative = row.medianMs / native.medianMs
  }
  await matcher.close()
  log(`case done at ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

// The fixed cost of one search through the public API and the pool: a gallery too small for the
// scan to matter (1000 rows), forced onto the workers.
{
  const matcher = await createMatcher({ dimension: 256, threads, inlineBelowRows: 0 })
  const gallery = matcher.createGallery()
  const random = createRandom(seed)
  const rows = randomRows(random, 1000, 256)
  for (let row = 0; row < 1000; row++) gallery.upsert(`f${row}`, rows.subarray(row * 256, (row + 1) * 256))
  const probe = rows.slice(0, 256)
  const measured = await time('fixed', () => gallery.search(probe, { k }), 1000, timing)
  results.push({
    rows: 1000,
    dimension: 256,
    engine: `api:${matcher.backend.name}:pool-fixed-cost`,
    batch: 1,
    threads,
    ...measured,
    perProbeMs: measured.medianMs,
  })
  log(`fixed cost of a pooled search: median ${measured.medianMs.toFixed(3)} ms, p95 ${measured.p95Ms.toFixed(3)} ms`)
  await matcher.close()
}

const twoStage: TwoStageReport[] = []
for (const rows of twoStageRows) {
  const report = await benchTwoStage({
    rows,
    dimension: 256,
    threads,
    probes: agreementProbes,
    candidates: candidateList,
    timing,
    seed,
    log,
    population: populationKind,
  })
  results.push(...report.timings)
  twoStage.push(report)
}

printTable(results)
for (const report of twoStage) {
  for (const row of report.agreement) {
    console.log(
      `two-stage ${row.rows} rows, c ${row.candidates}: best member ${(100 * row.bestAgreement).toFixed(3)} %, decision ${(100 * row.decisionAgreement).toFixed(3)} % of ${row.probes} probes`,
    )
  }
  for (const { rows, candidates } of report.smallestFullAgreement)
    console.log(`two-stage ${rows} rows: smallest c with 100 % decision agreement: ${candidates ?? 'none measured'}`)
}
const file = writeResults(path.join(path.dirname(fileURLToPath(import.meta.url)), 'results'), {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, platform: `${process.platform}/${process.arch}` },
  settings: { cases, seed, k, threads, jsMaxRows, budgetMs, twoStageRows, agreementProbes, candidates: candidateList, population: populationKind },
  native: addon ? { isas, bestIsa } : null,
  faiss: faissCases,
  results,
  twoStage: twoStage.map(({ agreement, smallestFullAgreement }) => ({ agreement, smallestFullAgreement })),
})
console.log(`wrote ${file} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
