// Deduplication of a whole register without scanning every palm against every palm: an inverted
// file over cells. A few rounds of spherical k-means on a sample give about sqrt(N) centroids;
// every palm is stored once, in the cell of its nearest centroid (rows laid out cell after cell
// in a gallery of their own), and searched in the cells of its `probes` nearest centroids. A pair
// is a candidate when either palm's cell is among the other's probed cells, and every candidate
// is scored exactly (int8 cosine, the matcher's kernels): no pair below the threshold is ever
// reported. Cost: N x M x d to place the palms plus N x probes x N/M x d to search them, so
// about N^1.5 with M = sqrt(N), instead of N^2 / 2.
//
// Recall is measured, not guaranteed: a pair whose palms' cells are each outside the other's
// probed cells is missed. At 256 dimensions no cheap bound on the cosine prunes cells (a pair at
// 0.8 is 37 degrees apart; a palm is some 75 degrees from its own centroid), so the bench
// (bench/dedup.ts) compares against the exact all-pairs search on planted registers instead.
import { quantizeFloat, type Matcher } from '@palmvein/matcher'
import { createRandom } from '@palmvein/matcher/random'
import { copyGalleryRow, scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'

/** The palms of a register, numbered 0..count-1. */
export interface PalmRegister {
  readonly count: number
  readonly dimension: number
  /** The palm's int8 vector; undefined if it has gone (it is then left out). */
  vector(palm: number): Int8Array | undefined
  /** Palms of the same owner (one member's two hands) are never a pair. */
  owner(palm: number): number
}

/** The best-scoring palms of one pair of owners; `a` has the lower owner number. */
export interface PalmPair {
  a: number
  b: number
  score: number
  /**
   * The nearest of the pair's two searches that found it: 0 when one palm is stored in the cell
   * the other is nearest to, probes - 1 when it was found only in the last cell searched (the
   * margin by which it was not missed; the bench reports the largest).
   */
  rank: number
}

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
  /** Checked between blocks: true stops the run after a checkpoint (resumable). */
  shouldPause?: () => boolean
}

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
const KMEANS_ROUNDS = 5
const SAMPLE_PER_CELL = 32
/** Probes per scan task: enough that a task's work dwarfs a pool round trip. */
const BLOCK = 2048
/** Rows kept per probe and cell; a probe with more above the threshold is rescanned wider. */
const HITS = 16
const WIDEST = 1023

export function defaultCells(palms: number): number {
  return Math.max(1, Math.min(65535, Math.round(Math.sqrt(palms))))
}

/** The pairs at or above the threshold. `matcher` should be the caller's own: its galleries' memory goes back only when it closes. */
export async function findPairsByCells(matcher: Matcher, register: PalmRegister, options: CellDedupOptions): Promise<CellDedupResult> {
  const { count: palms, dimension } = register
  const resume = options.resume ?? null
  const cells = Math.min(palms || 1, 65535, resume?.cells ?? options.cells ?? defaultCells(palms))
  const probes = Math.min(cells, resume?.probes ?? options.probes ?? DEFAULT_PROBES)
  const threshold = options.threshold
  if (resume && (resume.palms !== palms || resume.threshold !== threshold || resume.centroids.length !== cells * dimension)) {
    throw new RangeError('the checkpoint is for another register, threshold or cell count')
  }
  const centroidsGallery = matcher.createGallery()
  const cellGallery = matcher.createGallery({ ids: 'uuid' })
  const onProgress = options.onProgress ?? (() => {})
  let done = 0
  // Until the palms are placed, the expectation: each palm reads `probes` cells of palms / cells rows.
  let total = palms * probes * Math.ceil(palms / cells)
  {
    const centroids = resume?.centroids ?? await trainCentroids(matcher, register, cells, options.seed ?? 1)
    for (let cell = 0; cell < cells; cell++) centroidsGallery.upsert(`c${cell}`, centroids.subarray(cell * dimension, (cell + 1) * dimension))
    // Each palm's probed cells, nearest first (the first is where it is stored).
    // Cells are at most 65 535: two bytes a probed cell.
    const nearest = new Uint16Array(palms * probes)
    const present = new Uint8Array(palms)
    await forEachBlock(register, 0, palms, async (first, vectors, norms, valid) => {
      const top = await scanRowRangeTopK(centroidsGallery, 0, cells, vectors, norms, probes, 0)
      for (let index = 0; index < valid.length; index++) {
        if (!valid[index]) continue
        present[first + index] = 1
        for (let slot = 0; slot < probes; slot++) nearest[(first + index) * probes + slot] = top.rows[index * probes + slot]
      }
    })
    // Rows cell after cell: cell c is rows [cellStart[c], cellStart[c + 1]) and row r holds palm order[r].
    const { start: cellStart, items: order } = invert(cells, palms, (palm, add) => { if (present[palm]) add(nearest[palm * probes]) })
    const rowOf = new Uint32Array(palms)
    for (let row = 0; row < order.length; row++) {
      const palm = order[row]
      rowOf[palm] = row
      const vector = register.vector(palm)
      // A palm gone since it was placed keeps its row (the layout is fixed) but pairs with nothing.
      if (!vector) present[palm] = 0
      cellGallery.upsert(rowId(row), vector ?? new Int8Array(dimension).fill(1))
    }
    const { start: proberStart, items: probers } = invert(cells, palms, (palm, add) => {
      if (present[palm]) for (let slot = 0; slot < probes; slot++) add(nearest[palm * probes + slot])
    })
    const from = resume?.cellsDone ?? 0
    const searching = (cell: number) => (proberStart[cell + 1] - proberStart[cell]) * (cellStart[cell + 1] - cellStart[cell])
    let candidateScores = 0
    total = 0
    for (let cell = 0; cell < cells; cell++) total += searching(cell)
    for (let cell = 0; cell < from; cell++) done += searching(cell)
    onProgress(done, total)

    const best = new Map<number, PalmPair>()
    const ownersKey = (x: number, y: number) => Math.min(x, y) * 2 ** 26 + Math.max(x, y)
    for (const pair of resume?.pairs ?? []) best.set(ownersKey(register.owner(pair.a), register.owner(pair.b)), pair)
    const record = (x: number, y: number, score: number, cell: number) => {
      if (!present[x] || !present[y]) return
      const rank = nearest.subarray(x * probes, (x + 1) * probes).indexOf(cell)
      const ox = register.owner(x)
      const oy = register.owner(y)
      if (ox === oy) return
      const [a, b] = ox < oy ? [x, y] : [y, x]
      const key = ownersKey(ox, oy)
      const seen = best.get(key)
      if (!seen || seen.score < score || (seen.score === score && (a < seen.a || (a === seen.a && b < seen.b)))) best.set(key, { a, b, score, rank: Math.min(rank, seen?.rank ?? rank) })
      else if (rank < seen.rank) seen.rank = rank
    }
    const probeBuffer = new Int8Array(BLOCK * dimension)
    const probeNorms = new Uint32Array(BLOCK)
    const searchCell = async (cell: number) => {
      const rowsFrom = cellStart[cell]
      const rowsTo = cellStart[cell + 1]
      const k = Math.min(HITS, rowsTo - rowsFrom)
      if (k === 0) return
      for (let first = proberStart[cell]; first < proberStart[cell + 1]; first += BLOCK) {
        const last = Math.min(proberStart[cell + 1], first + BLOCK)
        for (let index = first; index < last; index++) probeNorms[index - first] = copyGalleryRow(cellGallery, rowOf[probers[index]], probeBuffer, (index - first) * dimension)
        const count = last - first
        const top = await scanRowRangeTopK(cellGallery, rowsFrom, rowsTo, probeBuffer.subarray(0, count * dimension), probeNorms.subarray(0, count), k, threshold)
        for (let index = 0; index < count; index++) {
          const probe = probers[first + index]
          const lastSlot = (index + 1) * k - 1
          if (k < rowsTo - rowsFrom && top.rows[lastSlot] >= 0 && top.scores[lastSlot] >= threshold) {
            await searchWide(probe, cell, rowsFrom, rowsTo)
            continue
          }
          for (let slot = index * k; slot <= lastSlot && top.rows[slot] >= 0 && top.scores[slot] >= threshold; slot++) {
            if (order[top.rows[slot]] !== probe) record(probe, order[top.rows[slot]], top.scores[slot], cell)
          }
        }
        candidateScores += count * (rowsTo - rowsFrom)
        done += count * (rowsTo - rowsFrom)
        onProgress(done, total)
      }
    }
    // More than HITS rows of one cell above the threshold for one probe (a large family of look-alikes).
    const searchWide = async (probe: number, cell: number, rowsFrom: number, rowsTo: number) => {
      const vector = new Int8Array(dimension)
      const norms = Uint32Array.of(copyGalleryRow(cellGallery, rowOf[probe], vector, 0))
      const k = Math.min(WIDEST, rowsTo - rowsFrom)
      const top = await scanRowRangeTopK(cellGallery, rowsFrom, rowsTo, vector, norms, k, threshold)
      if (k < rowsTo - rowsFrom && top.scores[k - 1] >= threshold) throw new RangeError(`more than ${WIDEST} palms of one cell match one palm above the threshold`)
      for (let slot = 0; slot < k && top.rows[slot] >= 0 && top.scores[slot] >= threshold; slot++) {
        if (order[top.rows[slot]] !== probe) record(probe, order[top.rows[slot]], top.scores[slot], cell)
      }
    }
    const checkpoint = (cellsDone: number): CellCheckpoint => ({ threshold, cells, probes, palms, centroids, cellsDone, pairs: [...best.values()] })
    const every = (options.checkpointSeconds ?? 30) * 1000
    let saved = performance.now()
    for (let cell = from; cell < cells; cell++) {
      if (options.shouldPause?.()) {
        await options.onCheckpoint?.(checkpoint(cell))
        return { pairs: sortPairs(best), complete: false, cells, probes, candidateScores }
      }
      await searchCell(cell)
      if (options.onCheckpoint && performance.now() - saved >= every && cell + 1 < cells) {
        await options.onCheckpoint(checkpoint(cell + 1))
        saved = performance.now()
      }
    }
    return { pairs: sortPairs(best), complete: true, cells, probes, candidateScores }
  }
}

/** A UUID-form id for row `row` (the cell gallery keeps 16 bytes an id that way). */
function rowId(row: number): string {
  return `${row.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`
}

function sortPairs(best: Map<number, PalmPair>): PalmPair[] {
  return [...best.values()].sort((x, y) => y.score - x.score || x.a - y.a || x.b - y.b)
}

/** Calls `use` for blocks of present palms in [from, to), packed with their squared norms. */
async function forEachBlock(register: PalmRegister, from: number, to: number,
  use: (first: number, vectors: Int8Array, norms: Uint32Array, valid: Uint8Array) => Promise<void>): Promise<void> {
  const { dimension } = register
  for (let first = from; first < to; first += BLOCK) {
    const count = Math.min(BLOCK, to - first)
    const vectors = new Int8Array(count * dimension)
    const norms = new Uint32Array(count)
    const valid = new Uint8Array(count)
    for (let index = 0; index < count; index++) {
      const vector = register.vector(first + index)
      if (!vector) {
        // A zero probe would score 0 everywhere: keep the slot, ignore its result.
        vectors.fill(1, index * dimension, (index + 1) * dimension)
        norms[index] = dimension
        continue
      }
      vectors.set(vector, index * dimension)
      let norm = 0
      for (const value of vector) norm += value * value
      norms[index] = norm
      valid[index] = 1
    }
    await use(first, vectors, norms, valid)
  }
}

/** Spherical k-means on a seeded sample: a few rounds of assign (the matcher's exact scan) and average. */
async function trainCentroids(matcher: Matcher, register: PalmRegister, cells: number, seed: number): Promise<Int8Array> {
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
      const source = sizes[cell] > 0 ? sums.subarray(cell * dimension, (cell + 1) * dimension) : Float64Array.from(sample[Math.floor(random.next() * sample.length)])
      quantizeFloat(source, centroids.subarray(cell * dimension, (cell + 1) * dimension))
    }
  }
  return centroids
}

/** Items grouped by key, as a CSR: the items of key c are items[start[c] .. start[c + 1]). */
function invert(keys: number, items: number, each: (item: number, add: (key: number) => void) => void): { start: Uint32Array, items: Uint32Array } {
  const counts = new Uint32Array(keys + 1)
  for (let item = 0; item < items; item++) each(item, (key) => { counts[key + 1]++ })
  for (let key = 0; key < keys; key++) counts[key + 1] += counts[key]
  const out = new Uint32Array(counts[keys])
  const fill = counts.slice(0, keys)
  for (let item = 0; item < items; item++) each(item, (key) => { out[fill[key]++] = item })
  return { start: counts, items: out }
}
