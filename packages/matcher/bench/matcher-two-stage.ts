// The two-stage and partition part of `npm run bench:matcher`: on a synthetic population
// (mated and non-mated probes, hard and look-alike identities included; both hands enrolled,
// one partition per hand):
//   - API time per probe (pool, micro-batching): exact vs two-stage, batch 1 and 16, one hand's
//     partition vs the whole gallery;
//   - agreement with the exact scan on `probes` probes at several c: same best member, and the
//     same identify decision (threshold 0.80, margin 0.03 as the service's defaults);
//   - the smallest c with 100 % agreement.
// Agreement uses one global candidate list per probe over its hand's partition (stage 1 with the
// largest c, whose prefixes are the lists of every smaller c); the API keeps c per worker, so its
// agreement at the same c is at least this.
import { createMatcher } from '../src/index.js'
import { galleryStoreOf } from '../src/gallery.js'
import { loadNativeAddon, loadWasmModule } from '../src/backend.js'
import { createKernel } from '../src/kernel.js'
import { createRandom } from '../src/random.js'
import { runScanTask } from '../src/scan-task.js'
import { packSignBits } from '../src/sign-bits.js'
import { createSyntheticPopulation } from '../src/synthetic.js'
import { nearestRows } from '../src/two-stage-task.js'
import type { ResultRow } from './matcher-report.js'
import { time } from './matcher-timing.js'

export interface AgreementRow {
  rows: number
  candidates: number
  probes: number
  /** Of the probes the exact scan finds a member for (best >= threshold), the share whose best member two-stage finds too. */
  bestAgreement: number
  /** Share of probes whose decision (Found member / Ambiguous / NotFound) equals the exact scan's. */
  decisionAgreement: number
}

export interface TwoStageReport {
  timings: ResultRow[]
  agreement: AgreementRow[]
  /** Per gallery size: the smallest c with 100 % decision agreement (null: none measured). */
  smallestFullAgreement: { rows: number; candidates: number | null }[]
}

const THRESHOLD = 0.8
const MARGIN = 0.03
const HANDS = ['left', 'right'] as const

function decision(scores: readonly { row: number; score: number }[]): string {
  const [best, runnerUp] = scores
  if (!best || best.score < THRESHOLD) return 'NotFound'
  if (runnerUp && runnerUp.score >= THRESHOLD && best.score - runnerUp.score < MARGIN - 1e-12) return 'Ambiguous'
  return `Found:${best.row}`
}

export async function benchTwoStage(options: {
  rows: number
  dimension: number
  threads: number
  probes: number
  candidates: readonly number[]
  timing: { budgetMs: number; maxIterations: number }
  seed: number
  log: (line: string) => void
  /** 'hard': noisier captures, 20 % hard identities, 10 % look-alikes at cosine 0.85. */
  population?: 'default' | 'hard'
}): Promise<TwoStageReport> {
  const { rows, dimension, log } = options
  const members = Math.floor(rows / 2)
  const hard = options.population === 'hard' ? { noise: 0.5, hardFraction: 0.2, hardNoiseFactor: 2.5, relatedFraction: 0.1, relatedSimilarity: 0.85 } : {}
  const population = createSyntheticPopulation({ seed: options.seed, dimension, identities: members + 100_000, ...hard })
  const matcher = await createMatcher({ dimension, threads: options.threads })
  const gallery = matcher.createGallery()
  let started = performance.now()
  for (let member = 0; member < members; member++) {
    for (const hand of HANDS) gallery.upsert(`${member}:${hand}`, population.captureInt8(member, hand, 0, 0), { partition: hand })
  }
  log(`two-stage: ${members} members x 2 hands enrolled in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const random = createRandom(options.seed ^ 0x2057)
  // Half mated (a later session of an enrolled palm), half non-mated (palms never enrolled).
  const probeOf = (index: number) => {
    const hand = HANDS[index % 2]
    const mated = index % 4 < 2
    const identity = mated ? Math.floor(random.next() * members) : members + Math.floor(random.next() * 100_000)
    return { hand, vector: population.captureInt8(identity, hand, 1 + (index % 3), index) }
  }

  // API timings.
  const timings: ResultRow[] = []
  const sample = Array.from({ length: 16 }, (_, index) => probeOf(index * 2).vector)
  const defaultC = 256
  const record = (engine: string, batch: number, measured: Awaited<ReturnType<typeof time>>) => {
    const row: ResultRow = { rows, dimension, engine, batch, threads: options.threads, ...measured, perProbeMs: measured.medianMs / batch }
    timings.push(row)
    log(`${engine.padEnd(28)} batch ${String(batch).padStart(2)}: median ${measured.medianMs.toFixed(3)} ms, p95 ${measured.p95Ms.toFixed(3)} ms`)
    return row
  }
  for (const partition of ['left', undefined]) {
    const where = partition ? 'partition' : 'whole'
    for (const mode of ['exact', 'two_stage'] as const) {
      const searchOptions = { k: 10, partition, mode, candidates: defaultC }
      const one = record(`api:${mode}:${where}`, 1, await time(mode, () => gallery.search(sample[0], searchOptions), rows, options.timing))
      const batch = record(`api:${mode}:${where}`, 16, await time(mode, () => gallery.searchBatch(sample, searchOptions), rows, options.timing))
      batch.vsSingle = batch.medianMs / one.medianMs
    }
  }
  const find = (engine: string, batch: number) => timings.find((row) => row.engine === engine && row.batch === batch)!
  for (const batch of [1, 16]) {
    for (const where of ['partition', 'whole'])
      find(`api:two_stage:${where}`, batch).vsNative = find(`api:two_stage:${where}`, batch).medianMs / find(`api:exact:${where}`, batch).medianMs
    find('api:exact:partition', batch).vsNative = find('api:exact:partition', batch).medianMs / find('api:exact:whole', batch).medianMs
  }

  // Agreement, on this thread with the best kernel.
  const addon = loadNativeAddon()
  const wasm = loadWasmModule()
  const maxC = Math.max(...options.candidates)
  const agreeBest = new Map(options.candidates.map((c) => [c, 0]))
  const agreeDecision = new Map(options.candidates.map((c) => [c, 0]))
  let found = 0
  started = performance.now()
  for (let first = 0; first < options.probes; first += 16) {
    const count = Math.min(16, options.probes - first)
    const batch = Array.from({ length: count }, (_, index) => probeOf(first + index))
    for (const hand of HANDS) {
      const ofHand = batch.filter((probe) => probe.hand === hand)
      if (ofHand.length === 0) continue
      const store = galleryStoreOf(gallery, hand)!
      const kernel = createKernel(matcher.backend.name, store.memory, {
        addon: addon.ok ? addon.value : undefined,
        wasmModule: wasm.ok ? wasm.value : undefined,
      })
      const probes = new Int8Array(ofHand.length * dimension)
      ofHand.forEach((probe, index) => probes.set(probe.vector, index * dimension))
      const probeNorms = Uint32Array.from(ofHand, (probe) => probe.vector.reduce((sum, value) => sum + value * value, 0))
      const segments = store.segments()
      const exact = runScanTask(kernel, { segments, shape: store.shape, probes, probeNorms, k: 2 })
      const two = runScanTask(kernel, {
        segments,
        shape: store.shape,
        probes,
        probeNorms,
        k: maxC,
        twoStage: { probeBits: packSignBits(probes, dimension, ofHand.length), candidates: maxC },
      })
      const nearest = nearestRows(
        kernel,
        { segments, shape: store.shape, probes, probeNorms, probeBits: packSignBits(probes, dimension, ofHand.length), k: maxC, candidates: maxC },
        maxC,
      )
      for (let probe = 0; probe < ofHand.length; probe++) {
        const exactTop = [0, 1].map((slot) => ({ row: exact.rows[probe * 2 + slot], score: exact.scores[probe * 2 + slot] })).filter((hit) => hit.row >= 0)
        // Exact scores of the candidates, by row (stage 2 of the largest c scored them all).
        const exactFound = (exactTop[0]?.score ?? 0) >= THRESHOLD
        if (exactFound) found++
        const scoreOf = new Map<number, number>()
        for (let slot = probe * maxC; slot < (probe + 1) * maxC && two.rows[slot] >= 0; slot++) scoreOf.set(two.rows[slot], two.scores[slot])
        for (const c of options.candidates) {
          const kept: { row: number; score: number }[] = []
          for (let slot = probe * maxC; slot < probe * maxC + c && nearest.rows[slot] >= 0; slot++)
            kept.push({ row: nearest.rows[slot], score: scoreOf.get(nearest.rows[slot])! })
          kept.sort((a, b) => b.score - a.score || a.row - b.row)
          if (exactFound && kept[0]?.row === exactTop[0]?.row) agreeBest.set(c, agreeBest.get(c)! + 1)
          if (decision(kept) === decision(exactTop)) agreeDecision.set(c, agreeDecision.get(c)! + 1)
        }
      }
    }
  }
  log(`two-stage: agreement over ${options.probes} probes in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const agreement = options.candidates.map((c) => ({
    rows,
    candidates: c,
    probes: options.probes,
    bestAgreement: agreeBest.get(c)! / Math.max(1, found),
    decisionAgreement: agreeDecision.get(c)! / options.probes,
  }))
  for (const row of agreement)
    log(
      `c ${String(row.candidates).padStart(5)}: best member ${(100 * row.bestAgreement).toFixed(3)} %, decision ${(100 * row.decisionAgreement).toFixed(3)} %`,
    )
  await matcher.close()
  const full = agreement.find((row) => row.decisionAgreement === 1)
  return { timings, agreement, smallestFullAgreement: [{ rows, candidates: full?.candidates ?? null }] }
}
