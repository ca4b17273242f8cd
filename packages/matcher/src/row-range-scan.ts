// Row-level access to a gallery for a self-join (the deduplication of a whole register,
// src/domain/dedup/dedup-cells.ts): many probes scanned against one run of rows, results as rows and
// scores rather than ids. Hits as id strings cost more than the scan itself when two million
// probes each read a few thousand rows. Unpartitioned rows only; not exported from index.ts.
import { galleryEngineOf, galleryStoreOf, type Gallery } from './gallery.js'
import type { GalleryStore } from './gallery-store.js'
import type { Segment } from './kernel.js'
import { runScanTask, type ScanTask } from './scan-task.js'
import type { TopK } from './top-k.js'

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

/**
 * scanRowRangeTopK over several runs of rows at once: `ranges` holds [from, to) pairs end to end
 * (a cell of an inverted file whose rows were appended in several runs).
 */
export async function scanRowRangesTopK(
  gallery: Gallery,
  ranges: ArrayLike<number>,
  probes: Int8Array,
  probeNorms: Uint32Array,
  k: number,
  scoreFloor: number,
): Promise<TopK> {
  const engine = galleryEngineOf(gallery)
  if (!engine) throw new RangeError('not a gallery of this matcher')
  const store = storeOf(gallery)
  const { dimension } = store.shape
  const rowEnd = await store.beginScan()
  try {
    const all = store.segments(rowEnd)
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
    const rows = new Int32Array(count * k)
    const scores = new Float64Array(count * k)
    results.forEach((result, part) => {
      rows.set(result.rows, part * per * k)
      scores.set(result.scores, part * per * k)
    })
    return { probeCount: count, k, rows, scores }
  } finally {
    store.endScan()
  }
}
