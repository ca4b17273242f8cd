// Deduplication of a whole register without scanning every palm against every palm: an inverted
// file over cells. A few rounds of spherical k-means on a sample give about sqrt(probes x N) centroids;
// every palm is stored in the cells of its two nearest centroids (rows laid out cell after cell in
// a gallery of their own), and searched in the cells of its `probes` nearest centroids. A pair is
// a candidate when either palm's two cells meet the other's probed cells, and every candidate is
// scored exactly (int8 cosine, the matcher's kernels): no pair below the threshold is ever
// reported. Cost: N x M x d to place the palms plus N x probes x 2N/M x d to search them (each palm
// stored twice; more where k-means' cells are uneven, 3 times at 1M planted members), 3 x
// sqrt(probes) x N^1.5 x d in all at M = sqrt(probes x N), instead of N^2 / 2 x d.
//
// Recall is measured, not guaranteed: a pair whose palms' cells are each outside the other's
// probed cells is missed. At 256 dimensions no cheap bound on the cosine prunes cells (a pair at
// 0.8 is 37 degrees apart; a palm is some 75 degrees from its own centroid), so the bench
// (bench/dedup.ts) compares against the exact all-pairs search on planted registers instead.
import { quantizeFloat, type Matcher } from '@palmvein/matcher'
import { createRandom } from '@palmvein/matcher/random'
import { scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import { BLOCK, layOutCells, rowId } from './dedup-cell-layout.js'
import { createCellSearch } from './dedup-cell-search.js'
import { createPairBook } from './dedup-pair-book.js'
import type { PalmPair, PalmRegister } from './dedup-palms.js'

export type { PalmPair, PalmRegister } from './dedup-palms.js'

/** Where an interrupted run stands: enough to resume it to the same pairs. */
export interface CellCheckpoint {
  threshold: number
  cells: number
  probes: number
  palms: number
  /** cells x dimension, int8. */
  centroids: Int8Array
  /** Cells 0..cellsDone-1 have been searched. */
  cellsDone: number
  pairs: PalmPair[]
}

export interface CellDedupOptions {
  threshold: number
  /** Cells searched per palm (default DEFAULT_PROBES). */
  probes?: number
  /** Number of cells (default: about the square root of the palms). */
  cells?: number
  seed?: number
  /** Resume from this checkpoint (same register, threshold, cells and probes). */
  resume?: CellCheckpoint | null
  /** Called with the state every `checkpointSeconds` (default 30) and when a run pauses. */
  onCheckpoint?: (checkpoint: CellCheckpoint) => Promise<void> | void
  checkpointSeconds?: number
  /**
   * The search's work done and total, in palm x palm scores (the total is an expectation until the
   * palms are placed, then exact). Placing the palms comes first and is not counted: it costs per
   * palm in bookkeeping what no count of scores describes, and it is a small share of a large run.
   */
  onProgress?: (done: number, total: number) => void
  /** Told when each phase starts (training, placing, storing, searching): where a large run's time goes. */
  onPhase?: (phase: DedupPhase) => void
  /** Checked between blocks: true stops the run after a checkpoint (resumable). */
  shouldPause?: () => boolean
}

export type DedupPhase = 'training' | 'placing' | 'storing' | 'searching'

export interface CellDedupResult {
  pairs: PalmPair[]
  /** False when the run paused before the last cell. */
  complete: boolean
  cells: number
  probes: number
  /** Palm x palm scores computed (the candidates), against N(N-1)/2 for the exact search. */
  candidateScores: number
}

/** Measured on planted registers (bench/dedup.ts, docs/dedup.md): every pair of the exact search at 0.5 and above with margin. */
export const DEFAULT_PROBES = 32
const KMEANS_ROUNDS = 3
const SAMPLE_PER_CELL = 8
/** Cells searched at once (see the search loop). */
const CELLS_IN_FLIGHT = 4

/**
 * About sqrt(probes x palms) cells: placing the palms costs N x M scores and searching them
 * N x probes x N / M, equal there (N^1.5 x 2 sqrt(probes) in all). Fewer, larger cells (M = sqrt(N))
 * made the search 10 times the placing at 80 000 palms.
 */
export function defaultCells(palms: number, probes: number): number {
  return Math.max(1, Math.min(65535, Math.round(Math.sqrt(palms * probes))))
}

/** The pairs at or above the threshold. `matcher` should be the caller's own: its galleries' memory goes back only when it closes. */
export async function findPairsByCells(matcher: Matcher, register: PalmRegister, options: CellDedupOptions): Promise<CellDedupResult> {
  const { count: palms, dimension } = register
  const resume = options.resume ?? null
  const wantedProbes = resume?.probes ?? options.probes ?? DEFAULT_PROBES
  const cells = Math.min(palms || 1, 65535, resume?.cells ?? options.cells ?? defaultCells(palms, wantedProbes))
  const probes = Math.min(cells, wantedProbes)
  const threshold = options.threshold
  if (resume && (resume.palms !== palms || resume.threshold !== threshold || resume.centroids.length !== cells * dimension)) {
    throw new RangeError('the checkpoint is for another register, threshold or cell count')
  }
  const centroidsGallery = matcher.createGallery()
  const cellGallery = matcher.createGallery({ ids: 'uuid' })
  const onProgress = options.onProgress ?? (() => {})
  const onPhase = options.onPhase ?? (() => {})
  if (!resume) onPhase('training')
  const centroids = resume?.centroids ?? (await trainCentroids(matcher, register, cells, options.seed ?? 1))
  for (let cell = 0; cell < cells; cell++) centroidsGallery.upsert(`c${cell}`, centroids.subarray(cell * dimension, (cell + 1) * dimension))
  onPhase('placing')
  const layout = await layOutCells(register, centroidsGallery, cellGallery, cells, probes, () => onPhase('storing'))
  onPhase('searching')
  const { cellStart, proberStart } = layout
  const from = resume?.cellsDone ?? 0
  const searching = (cell: number) => (proberStart[cell + 1] - proberStart[cell]) * (cellStart[cell + 1] - cellStart[cell])
  let candidateScores = 0
  let done = 0
  let total = 0
  for (let cell = 0; cell < cells; cell++) total += searching(cell)
  for (let cell = 0; cell < from; cell++) done += searching(cell)
  onProgress(done, total)

  const book = createPairBook(register, layout.nearest, layout.present, probes, resume?.pairs ?? [])
  const searchCell = createCellSearch({
    cellGallery,
    layout,
    book,
    dimension,
    threshold,
    scored: (scores) => {
      candidateScores += scores
      done += scores
      onProgress(done, total)
    },
  })
  const checkpoint = (cellsDone: number): CellCheckpoint => ({ threshold, cells, probes, palms, centroids, cellsDone, pairs: book.all() })
  const every = (options.checkpointSeconds ?? 30) * 1000
  let saved = performance.now()
  // Several cells in flight: the pool's threads search one while this thread gathers the next's
  // probes and books the last's pairs (one at a time, the threads sat idle two thirds of the run).
  // A checkpoint counts the cells searched without a gap; pairs booked from cells beyond that are
  // found again on resuming, and booking a pair twice changes nothing.
  const finished = new Uint8Array(cells)
  const running = new Set<Promise<void>>()
  let next = from
  let doneUpTo = from
  let failure: { error: unknown } | null = null
  let paused = false
  while (true) {
    while (!paused && !failure && next < cells && running.size < CELLS_IN_FLIGHT) {
      if (options.shouldPause?.()) {
        paused = true
        break
      }
      const cell = next++
      const task: Promise<void> = searchCell(cell)
        .then(
          () => {
            finished[cell] = 1
            while (doneUpTo < cells && finished[doneUpTo]) doneUpTo++
          },
          (error: unknown) => {
            failure ??= { error }
          },
        )
        .finally(() => running.delete(task))
      running.add(task)
    }
    if (running.size === 0) break
    await Promise.race(running)
    if (!failure && options.onCheckpoint && performance.now() - saved >= every && doneUpTo < cells) {
      await options.onCheckpoint(checkpoint(doneUpTo))
      saved = performance.now()
    }
  }
  if (failure) throw (failure as { error: unknown }).error
  if (paused) {
    await options.onCheckpoint?.(checkpoint(doneUpTo))
    return { pairs: book.sorted(), complete: false, cells, probes, candidateScores }
  }
  return { pairs: book.sorted(), complete: true, cells, probes, candidateScores }
}

/** Spherical k-means on a seeded sample: a few rounds of assign (the matcher's exact scan) and average (also the import's duplicate cells). */
export async function trainCentroids(matcher: Matcher, register: PalmRegister, cells: number, seed: number): Promise<Int8Array> {
  const { count: palms, dimension } = register
  const gallery = matcher.createGallery({ ids: 'uuid' })
  const random = createRandom(seed)
  const sampleSize = Math.min(palms, cells * SAMPLE_PER_CELL)
  const chosen = new Set<number>()
  if (sampleSize === palms) for (let palm = 0; palm < palms; palm++) chosen.add(palm)
  while (chosen.size < sampleSize) chosen.add(Math.floor(random.next() * palms))
  const sample: Int8Array[] = []
  for (const palm of [...chosen].sort((x, y) => x - y)) {
    const vector = register.vector(palm)
    if (vector) sample.push(vector)
  }
  // The first centroids are sample palms in a seeded order.
  for (let index = sample.length - 1; index > 0; index--) {
    const other = Math.floor(random.next() * (index + 1))
    ;[sample[index], sample[other]] = [sample[other], sample[index]]
  }
  const centroids = new Int8Array(cells * dimension)
  for (let cell = 0; cell < cells; cell++) centroids.set(sample[cell % Math.max(1, sample.length)] ?? new Int8Array(dimension).fill(1), cell * dimension)
  if (sample.length === 0) return centroids
  const packed = new Int8Array(sample.length * dimension)
  const norms = new Uint32Array(sample.length)
  sample.forEach((vector, index) => {
    packed.set(vector, index * dimension)
    for (const value of vector) norms[index] += value * value
  })
  for (let round = 0; round < KMEANS_ROUNDS; round++) {
    const rows = new Int32Array(sample.length)
    // Each round's centroids are appended after the last round's: rows [base, base + cells).
    const base = round * cells
    for (let cell = 0; cell < cells; cell++) gallery.upsert(rowId(base + cell), centroids.subarray(cell * dimension, (cell + 1) * dimension))
    for (let first = 0; first < sample.length; first += BLOCK) {
      const last = Math.min(sample.length, first + BLOCK)
      const top = await scanRowRangeTopK(gallery, base, base + cells, packed.subarray(first * dimension, last * dimension), norms.subarray(first, last), 1, 0)
      for (let index = first; index < last; index++) rows[index] = top.rows[index - first] - base
    }
    const sums = new Float64Array(cells * dimension)
    const sizes = new Uint32Array(cells)
    sample.forEach((vector, index) => {
      const cell = rows[index]
      sizes[cell]++
      const scale = 1 / Math.sqrt(norms[index])
      for (let component = 0; component < dimension; component++) sums[cell * dimension + component] += vector[component] * scale
    })
    for (let cell = 0; cell < cells; cell++) {
      // An empty cell restarts from a sample palm of this round's seeded choice.
      const source =
        sizes[cell] > 0 ? sums.subarray(cell * dimension, (cell + 1) * dimension) : Float64Array.from(sample[Math.floor(random.next() * sample.length)])
      quantizeFloat(source, centroids.subarray(cell * dimension, (cell + 1) * dimension))
    }
  }
  return centroids
}
