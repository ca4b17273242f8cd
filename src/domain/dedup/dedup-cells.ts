// Deduplication of a whole register without scanning every palm against every palm: an inverted
// file over cells. A few rounds of spherical k-means on a sample give about sqrt(probes x N) centroids,
// the cells they leave oversized split into sub-cells (dedup-cell-split.ts);
// every palm is stored in the cells of its two nearest centroids (rows laid out cell after cell in
// a gallery of their own, a run of cells at a time: dedup-cell-chunk.ts), and searched in the cells
// of its `probes` nearest centroids (the probes read from one packed copy of the register). A pair is
// a candidate when either palm's two cells meet the other's probed cells; candidates are compared
// by rotated sign codes and those within a Hamming radius of the threshold scored exactly (int8
// cosine, the matcher's kernels; the matcher's rotated-codes.ts): no pair below the threshold is ever
// reported. Cost: N x M x d to place the palms plus N x probes x 2N/M x d to search them (each palm
// stored twice; more where the cells are uneven: 3 times at 1M planted members on k-means' cells,
// 1.7 with the oversized ones split, dedup-cell-split.ts), 3 x
// sqrt(probes) x N^1.5 x d in all at M = sqrt(probes x N), instead of N^2 / 2 x d.
//
// Recall is measured, not guaranteed: a pair whose palms' cells are each outside the other's
// probed cells is missed. At 256 dimensions no cheap bound on the cosine prunes cells (a pair at
// 0.8 is 37 degrees apart; a palm is some 75 degrees from its own centroid), so the bench
// (bench/dedup.ts) compares against the exact all-pairs search on planted registers instead.
import { quantizeFloat, type Matcher } from '@palmvein/matcher'
import { createRandom } from '@palmvein/matcher/random'
import { hammingRadius, rotatedSignCodes, scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import { loadChunk, chunkEnd } from './dedup-cell-chunk.js'
import { BLOCK, placePalms, rowId } from './dedup-cell-layout.js'
import { createCellSearch } from './dedup-cell-search.js'
import { packPalms } from './dedup-packed-palms.js'
import { seededShuffle, splitOversizedCells } from './dedup-cell-split.js'
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
  /** Cells k-means trains (default: about sqrt(probes x palms)); splitting oversized ones adds some. */
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
  /** Told when each phase starts (packing, training, placing, searching): where a large run's time goes. */
  onPhase?: (phase: DedupPhase) => void
  /** Checked between blocks: true stops the run after a checkpoint (resumable). */
  shouldPause?: () => boolean
  /** Split k-means' oversized cells (dedup-cell-split.ts; default true): false measures the search without. */
  split?: boolean
  /** Rows of cells stored at once (default CHUNK_ROWS; dedup-cell-chunk.ts). */
  chunkRows?: number
  /** Score only the pairs within the Hamming radius of the threshold (the matcher's rotated-codes.ts; default true): false scores every candidate. */
  gate?: boolean
}

export type DedupPhase = 'packing' | 'training' | 'placing' | 'searching'

export interface CellDedupResult {
  pairs: PalmPair[]
  /** False when the run paused before the last cell. */
  complete: boolean
  cells: number
  probes: number
  /** Candidate pairs compared (by code first when gated, the matcher's rotated-codes.ts), against N(N-1)/2 for the exact search. */
  candidateScores: number
  /** Of them, the pairs scored exactly: within the gate's radius (all of them without the gate). */
  exactScores: number
  /** Rows of the largest cell (each palm is stored in two), against a mean of 2N / cells: how uneven the cells are. */
  largestCell: number
}

/** Measured on planted registers (bench/dedup.ts, docs/dedup.md): every pair of the exact search at 0.5 and above with margin. */
export const DEFAULT_PROBES = 32
const KMEANS_ROUNDS = 3
const SAMPLE_PER_CELL = 8
/** When splitting: k-means trains on 16 sample palms a cell and the split judges sizes on 32 (measured at 100 000 members, docs/dedup.md). */
const SPLIT_TRAINING_PER_CELL = 16
const SPLIT_SAMPLE_PER_CELL = 32
/** Split, assign the wide sample to the refined cells, split again: sub-cells take palms from their neighbours. */
const SPLIT_PASSES = 2
/** The codes' rotation: fixed, so a resumed run gates as the first did. */
const CODE_SEED = 0x5eed
/** Cells searched at once (see the search loop). */
const CELLS_IN_FLIGHT = 4
/**
 * Rows of cells stored at once (dedup-cell-chunk.ts): 76 MB at 256 dimensions, a sixteenth of the
 * 4M rows of 1M members, beside the register's one packed copy (512 MB there).
 */
export const CHUNK_ROWS = 262_144

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
  const trained = Math.min(palms || 1, 65535, resume?.cells ?? options.cells ?? defaultCells(palms, wantedProbes))
  const threshold = options.threshold
  if (resume && (resume.palms !== palms || resume.threshold !== threshold || resume.centroids.length !== trained * dimension)) {
    throw new RangeError('the checkpoint is for another register, threshold or cell count')
  }
  const centroidsGallery = matcher.createGallery()
  const cellGallery = matcher.createGallery({ ids: 'uuid' })
  const onProgress = options.onProgress ?? (() => {})
  const onPhase = options.onPhase ?? (() => {})
  onPhase('packing')
  const palmsPacked = packPalms(register)
  // Codes only for a gated search (2M palms' cost 23 CPU-s, on the matcher's threads): without the gate the gallery keeps raw sign bits.
  const radius = (options.gate ?? true) ? hammingRadius(threshold, dimension) : null
  const gate = radius === null ? null : { radius, codes: await rotatedSignCodes(cellGallery, palmsPacked.vectors, dimension, palmsPacked.count, CODE_SEED) }
  if (!resume) onPhase('training')
  // Oversized cells are split (dedup-cell-split.ts) unless every cell is probed anyway.
  const split = (options.split ?? true) && wantedProbes < trained
  const centroids = resume?.centroids ?? (await trainCentroids(matcher, palmsPacked, trained, options.seed ?? 1, split))
  const cells = centroids.length / dimension
  const probes = Math.min(cells, wantedProbes)
  for (let cell = 0; cell < cells; cell++) centroidsGallery.upsert(`c${cell}`, centroids.subarray(cell * dimension, (cell + 1) * dimension))
  onPhase('placing')
  const layout = await placePalms(palmsPacked, centroidsGallery, cells, probes)
  onPhase('searching')
  const { rowsOf, probersOf } = layout
  const from = resume?.cellsDone ?? 0
  const searching = (cell: number) => probersOf[cell] * rowsOf[cell]
  let largestCell = 0
  for (let cell = 0; cell < cells; cell++) largestCell = Math.max(largestCell, rowsOf[cell])
  let candidateScores = 0
  let exactScores = 0
  let done = 0
  let total = 0
  for (let cell = 0; cell < cells; cell++) total += searching(cell)
  for (let cell = 0; cell < from; cell++) done += searching(cell)
  // First told once the first run of cells is stored: an ETA from the first report on then counts
  // the later runs' storing in proportion to the work (told before it, it overestimated by a third
  // at a tenth of 100 000 members' search).
  let told = false
  const tellStart = () => {
    if (!told) onProgress(done, total)
    told = true
  }

  const book = createPairBook(register, layout.nearest, layout.present, probes, resume?.pairs ?? [])
  const scored = (scores: number, exactly: number) => {
    candidateScores += scores
    exactScores += exactly
    done += scores
    onProgress(done, total)
  }
  const checkpoint = (cellsDone: number): CellCheckpoint => ({ threshold, cells, probes, palms, centroids, cellsDone, pairs: book.all() })
  const every = (options.checkpointSeconds ?? 30) * 1000
  const chunkRows = options.chunkRows ?? CHUNK_ROWS
  let saved = performance.now()
  // Several cells in flight: the pool's threads search one while this thread gathers the next's
  // probes and books the last's pairs (one at a time, the threads sat idle two thirds of the run).
  // A checkpoint counts the cells searched without a gap; pairs booked from cells beyond that are
  // found again on resuming, and booking a pair twice changes nothing. The cells are stored a run
  // at a time (dedup-cell-chunk.ts): a run's cells are all searched before the next is stored.
  const finished = new Uint8Array(cells)
  const running = new Set<Promise<void>>()
  let doneUpTo = from
  let failure: { error: unknown } | null = null
  let paused = false
  for (let firstCell = from; firstCell < cells && !paused && !failure; ) {
    const chunk = await loadChunk(cellGallery, layout, palmsPacked, gate?.codes ?? null, firstCell, chunkEnd(layout, firstCell, chunkRows))
    tellStart()
    const searchCell = createCellSearch({ cellGallery, chunk, palms: palmsPacked, gate, book, threshold, scored })
    let next = chunk.firstCell
    while (true) {
      while (!paused && !failure && next < chunk.endCell && running.size < CELLS_IN_FLIGHT) {
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
    firstCell = chunk.endCell
  }
  if (failure) throw (failure as { error: unknown }).error
  tellStart()
  if (paused) {
    await options.onCheckpoint?.(checkpoint(doneUpTo))
    return { pairs: book.sorted(), complete: false, cells, probes, candidateScores, exactScores, largestCell }
  }
  return { pairs: book.sorted(), complete: true, cells, probes, candidateScores, exactScores, largestCell }
}

/** Spherical k-means on a seeded sample: a few rounds of assign (the matcher's exact scan) and average (also the import's duplicate cells). */
export async function trainCentroids(matcher: Matcher, register: PalmRegister, cells: number, seed: number, split = false): Promise<Int8Array> {
  const { count: palms, dimension } = register
  const gallery = matcher.createGallery({ ids: 'uuid' })
  const random = createRandom(seed)
  // Splitting judges the cells' sizes on a wider sample than k-means trains on (dedup-cell-split.ts).
  const sampleSize = Math.min(palms, cells * (split ? SPLIT_SAMPLE_PER_CELL : SAMPLE_PER_CELL))
  const chosen = new Set<number>()
  if (sampleSize === palms) for (let palm = 0; palm < palms; palm++) chosen.add(palm)
  while (chosen.size < sampleSize) chosen.add(Math.floor(random.next() * palms))
  const wide: Int8Array[] = []
  for (const palm of [...chosen].sort((x, y) => x - y)) {
    const vector = register.vector(palm)
    if (vector) wide.push(vector)
  }
  // The first centroids are sample palms in a seeded order.
  seededShuffle(wide, random)
  const sample = wide.slice(0, cells * (split ? SPLIT_TRAINING_PER_CELL : SAMPLE_PER_CELL))
  const centroids = new Int8Array(cells * dimension)
  for (let cell = 0; cell < cells; cell++) centroids.set(sample[cell % Math.max(1, sample.length)] ?? new Int8Array(dimension).fill(1), cell * dimension)
  if (sample.length === 0) return centroids
  const packed = new Int8Array(wide.length * dimension)
  const norms = new Uint32Array(wide.length)
  wide.forEach((vector, index) => {
    packed.set(vector, index * dimension)
    for (const value of vector) norms[index] += value * value
  })
  // Each assignment's centroids are appended after the last one's: rows [base, base + count). The
  // first `palmsCount` sample palms are assigned (the training sample, or the wider one).
  let nextRow = 0
  const assign = async (vectors: Int8Array, palmsCount: number) => {
    const rows = new Int32Array(palmsCount)
    const count = vectors.length / dimension
    const base = nextRow
    nextRow += count
    for (let cell = 0; cell < count; cell++) gallery.upsert(rowId(base + cell), vectors.subarray(cell * dimension, (cell + 1) * dimension))
    for (let first = 0; first < palmsCount; first += BLOCK) {
      const last = Math.min(palmsCount, first + BLOCK)
      const top = await scanRowRangeTopK(gallery, base, base + count, packed.subarray(first * dimension, last * dimension), norms.subarray(first, last), 1, 0)
      for (let index = first; index < last; index++) rows[index] = top.rows[index - first] - base
    }
    return rows
  }
  for (let round = 0; round < KMEANS_ROUNDS; round++) {
    const rows = await assign(centroids, sample.length)
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
  if (!split) return centroids
  let refined: Int8Array = centroids
  for (let pass = 0; pass < SPLIT_PASSES; pass++)
    refined = splitOversizedCells(refined, dimension, { packed, norms, cellOf: await assign(refined, wide.length) }, wide.length / cells, random)
  return refined
}
