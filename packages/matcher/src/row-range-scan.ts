// Row-level access to a gallery for a self-join (the deduplication of a whole register,
// src/domain/dedup/dedup-cells.ts): many probes scanned against one run of rows, results as rows and
// scores rather than ids. Hits as id strings cost more than the scan itself when two million
// probes each read a few thousand rows. Unpartitioned rows only; not exported from index.ts.
import { type CellScan, type CellsGate, runCellsTask } from './cells-task.js'
import { type GatedPairs, runGatedJoinTask, type SharedRegister } from './gated-join-task.js'
import { galleryEngineOf, galleryStoreOf, type Gallery } from './gallery.js'
import type { GalleryStore } from './gallery-store.js'
import type { Segment } from './kernel.js'
import type { ScanEngine } from './scanner.js'
import { runScanTask, type ScanTask } from './scan-task.js'
import { writeRotatedCodes } from './rotated-codes.js'
import { signBytesFor } from './sign-bits.js'
import { concatTopK, emptyTopK, type TopK } from './top-k.js'

function storeOf(gallery: Gallery): GalleryStore {
  const store = galleryStoreOf(gallery)
  if (!store) throw new RangeError('the gallery has no unpartitioned rows')
  return store
}

/** Copies row `row` (numbered from 0 in upsert order) into `out` at `offset`; returns its squared norm. */
export function copyGalleryRow(gallery: Gallery, row: number, out: Int8Array, offset: number): number {
  return storeOf(gallery).copyRow(row, out, offset)
}

/** Copies rows `rows` (numbered as copyGalleryRow's) into `out`, packed, and their squared norms into `norms`. */
export function copyGalleryRows(gallery: Gallery, rows: ArrayLike<number>, out: Int8Array, norms: Uint32Array): void {
  storeOf(gallery).copyRows(rows, out, norms)
}

/**
 * Writes rows in place from `firstRow` (numbered as copyGalleryRow's, all already stored), keeping
 * their ids: `vectors` packed, with their squared norms and sign bits (or codes, as upsertRows
 * takes them; not checked). A self-join's caller lays rows out ahead and fills them later (the
 * import's cell index keeps each cell one run of rows). Throws while a scan is in flight.
 */
export function overwriteGalleryRows(gallery: Gallery, firstRow: number, rows: { vectors: Int8Array; norms: Uint32Array; signBits: Uint8Array }): void {
  storeOf(gallery).overwriteRows(firstRow, rows.vectors, rows.norms, rows.signBits, rows.norms.length)
}

/** The parts of `segments` inside the absolute rows [from, to). */
function clip(segments: readonly Segment[], from: number, to: number): Segment[] {
  return segments.flatMap((segment) => {
    const rowStart = Math.max(segment.rowStart, from - segment.baseRow)
    const rowEnd = Math.min(segment.rowEnd, to - segment.baseRow)
    return rowStart < rowEnd ? [{ ...segment, rowStart, rowEnd }] : []
  })
}

/**
 * Per probe (packed, `probeNorms.length` of them), the best `k` of the rows [from, to): absolute
 * rows, exact int8 scores, best first (ties by lower row); rows scoring below `scoreFloor` may be
 * left out. With a pool the probes, not the rows, are split between the workers: the rows are a
 * few thousand that stay in cache while many probes read them.
 */
export function scanRowRangeTopK(
  gallery: Gallery,
  from: number,
  to: number,
  probes: Int8Array,
  probeNorms: Uint32Array,
  k: number,
  scoreFloor: number,
): Promise<TopK> {
  return scanRowRangesTopK(gallery, [from, to], probes, probeNorms, k, scoreFloor)
}

/** Probes a pool worker takes at least: below that a round trip to the worker costs more than the scan. */
const MIN_PROBES_PER_WORKER = 8

/** Runs `scan` over the gallery's rows as they are now (rows upserted meanwhile wait for the next scan). */
async function whileScanning<T>(gallery: Gallery, scan: (engine: ScanEngine, store: GalleryStore, segments: Segment[]) => Promise<T> | T): Promise<T> {
  const engine = galleryEngineOf(gallery)
  if (!engine) throw new RangeError('not a gallery of this matcher')
  const store = storeOf(gallery)
  const rowEnd = await store.beginScan()
  try {
    return await scan(engine, store, store.segments(rowEnd))
  } finally {
    store.endScan()
  }
}

/**
 * scanRowRangeTopK over several runs of rows at once: `ranges` holds [from, to) pairs end to end
 * (a cell of an inverted file whose rows were appended in several runs).
 */
export function scanRowRangesTopK(
  gallery: Gallery,
  ranges: ArrayLike<number>,
  probes: Int8Array,
  probeNorms: Uint32Array,
  k: number,
  scoreFloor: number,
): Promise<TopK> {
  return whileScanning(gallery, async (engine, store, all) => {
    const { dimension } = store.shape
    const segments: Segment[] = []
    for (let index = 0; index + 1 < ranges.length; index += 2) segments.push(...clip(all, ranges[index], ranges[index + 1]))
    const base: ScanTask = { segments, shape: store.shape, probes, probeNorms, k, scoreFloor }
    const count = probeNorms.length
    const threads = Math.min(engine.pool?.threads ?? 1, Math.ceil(count / MIN_PROBES_PER_WORKER))
    const per = Math.ceil(count / Math.max(1, threads))
    const parts = Math.ceil(count / Math.max(1, per))
    if (!engine.pool || parts <= 1) return runScanTask(engine.kernel, base)
    const slabs = store.memory.slabs && [...store.memory.slabs]
    const results = await Promise.all(
      Array.from({ length: parts }, (_, part) => {
        const first = part * per
        const last = Math.min(count, first + per)
        // Copies: a view would carry its whole buffer to the worker.
        return engine.pool!.run({ ...base, slabs, probes: probes.slice(first * dimension, last * dimension), probeNorms: probeNorms.slice(first, last) })
      }),
    )
    return concatTopK(results, k)
  })
}

/** One cell of scanCellsTopK: its runs of rows ([from, to) pairs end to end) and the probes that read it. */
export interface CellRead {
  ranges: readonly number[]
  probes: readonly number[]
}

/**
 * Many scanRowRangesTopK at once: per cell, the best `k` of its rows for each probe it names (the
 * probes packed once in `probes`). The lists come cell after cell, each cell's probes in the order
 * it names them. With a pool the cells are cut into one contiguous part per worker, of about equal
 * work (rows × probes), and each part is one task. With `gate` (the probes' codes, the rows' sign
 * bits being codes alike) only the pairs within its Hamming radius are scored (cells-task.ts), and
 * the lists hold rows at or above `scoreFloor` only.
 */
export async function scanCellsTopK(
  gallery: Gallery,
  cells: readonly CellRead[],
  probes: Int8Array,
  probeNorms: Uint32Array,
  k: number,
  scoreFloor: number,
  gate?: CellsGate,
): Promise<TopK> {
  // No cell to read (the gallery may not have rows yet).
  if (!cells.length) return emptyTopK(0, k)
  return whileScanning(gallery, async (engine, store, all) => {
    const scans: CellScan[] = []
    const work: number[] = []
    for (const cell of cells) {
      const segments: Segment[] = []
      let rows = 0
      for (let index = 0; index + 1 < cell.ranges.length; index += 2) {
        for (const segment of clip(all, cell.ranges[index], cell.ranges[index + 1])) {
          segments.push(segment)
          rows += segment.rowEnd - segment.rowStart
        }
      }
      scans.push({ segments, probes: Int32Array.from(cell.probes) })
      work.push(rows * cell.probes.length)
    }
    const base = { shape: store.shape, probes, probeNorms, k, scoreFloor, gate }
    const parts = engine.pool ? splitByWork(work, engine.pool.threads) : [scans.length]
    if (!engine.pool || parts.length <= 1) return runCellsTask(engine.kernel, { ...base, cells: scans })
    // A view would carry its whole buffer to every worker.
    const shared = {
      ...base,
      probes: ownBuffer(probes),
      probeNorms: ownBuffer(probeNorms),
      gate: gate && { ...gate, codes: ownBuffer(gate.codes) },
      slabs: store.memory.slabs && [...store.memory.slabs],
    }
    let first = 0
    const results = await Promise.all(
      parts.map((end) => {
        const task = { ...shared, cells: scans.slice(first, end) }
        first = end
        return engine.pool!.runCells(task)
      }),
    )
    return concatTopK(results, k)
  })
}

export type { CellsGate } from './cells-task.js'
export type { GatedPairs, SharedRegister } from './gated-join-task.js'
/** Bytes of a row's sign bits, and so of a gated join's codes, at a dimension. */
export { signBytesFor }
export { gatherCodes, hammingRadius, rotatedCodes } from './rotated-codes.js'

/** Vectors coded on the calling thread: below this a round trip to the workers (and a copy into shared memory) costs more. */
const MIN_POOL_CODES = 8192

/**
 * The rotated sign codes (rotated-codes.ts) of the first `count` vectors of `vectors` (`dimension`
 * components each), `signBytesFor(dimension)` bytes a vector, in a SharedArrayBuffer;
 * computed by the threads of the gallery's matcher, an equal share each (about 8 us a vector at 256).
 * `vectors` in a SharedArrayBuffer is read in place; otherwise it is copied there first.
 */
export async function rotatedSignCodes(gallery: Gallery, vectors: Int8Array, dimension: number, count: number, seed: number): Promise<Uint8Array> {
  const engine = galleryEngineOf(gallery)
  if (!engine) throw new RangeError('not a gallery of this matcher')
  const out = new Uint8Array(new SharedArrayBuffer(Math.max(1, count * signBytesFor(dimension))), 0, count * signBytesFor(dimension))
  const pool = engine.pool
  if (!pool || count < MIN_POOL_CODES) {
    writeRotatedCodes({ vectors, dimension, first: 0, end: count, seed, out })
    return out
  }
  let shared = vectors
  if (!(vectors.buffer instanceof SharedArrayBuffer)) {
    shared = new Int8Array(new SharedArrayBuffer(count * dimension))
    shared.set(vectors.subarray(0, count * dimension))
  }
  const per = Math.ceil(count / pool.threads)
  await Promise.all(
    Array.from({ length: pool.threads }, (_, part) =>
      pool.runCodes({ vectors: shared, dimension, first: part * per, end: Math.min(count, (part + 1) * per), seed, out }),
    ),
  )
  return out
}

/**
 * The self-join of one cell of an inverted file (dedup): every palm of `probes` (numbers in
 * `register`) against the rows [from, to), and the pairs whose codes (the rows' sign bits, the
 * register's `codes`) lie within Hamming `radius` scored exactly; those at or above `threshold`
 * come back (gated-join-task.ts). The register's arrays should be SharedArrayBuffer-backed: a
 * pool worker then reads them in place.
 */
export function joinRowRangeGated(
  gallery: Gallery,
  from: number,
  to: number,
  probes: Uint32Array,
  register: SharedRegister,
  gate: { radius: number; threshold: number; candidates: number },
): Promise<GatedPairs> {
  return whileScanning(gallery, async (engine, store, all) => {
    const task = { segments: clip(all, from, to), probes, shape: store.shape, register, ...gate }
    if (!engine.pool) return runGatedJoinTask(engine.kernel, task)
    return engine.pool.runGatedJoin({ ...task, slabs: store.memory.slabs && [...store.memory.slabs] })
  })
}

/** Ends of up to `parts` contiguous runs of `work` with about equal sums (no run empty). */
function splitByWork(work: readonly number[], parts: number): number[] {
  const total = work.reduce((sum, amount) => sum + amount, 0)
  const ends: number[] = []
  let done = 0
  for (let index = 0; index < work.length; index++) {
    done += work[index]
    if (done >= (total * (ends.length + 1)) / parts && ends.length < parts - 1) ends.push(index + 1)
  }
  if (ends.at(-1) !== work.length) ends.push(work.length)
  return ends
}

function ownBuffer<T extends Int8Array | Uint8Array | Uint32Array>(array: T): T {
  return array.byteOffset === 0 && array.byteLength === array.buffer.byteLength ? array : (array.slice() as T)
}
