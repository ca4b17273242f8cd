// The two-stage form of a scan task: stage 1 keeps, per probe, the `c` rows of the task's
// segments whose sign bits are nearest the probe's (Hamming distance); stage 2 scores those
// rows with the exact int8 cosine, so every score returned is the exact one. A task covers a
// worker's share of the gallery, so each worker keeps its own c: at least the c best overall
// reach stage 2.
import type { ScanKernel, ScanShape, Segment } from './kernel.js'
import { emptyTopK, type TopK } from './top-k.js'

export interface TwoStageTask {
  segments: Segment[]
  shape: ScanShape
  probes: Int8Array
  probeNorms: Uint32Array
  /** signBytes per probe. */
  probeBits: Uint8Array
  k: number
  candidates: number
}

/** Per probe, slots [p * c, (p + 1) * c): absolute rows nearest first, -1 / 0xFFFFFFFF unused. */
export interface NearestRows {
  rows: Int32Array
  distances: Uint32Array
}

/**
 * Stage 1 over every segment: per probe the c nearest rows. Each segment merges into the same
 * lists, so a later segment only visits rows nearer than the worst kept so far.
 */
export function nearestRows(kernel: ScanKernel, task: TwoStageTask, c: number): NearestRows {
  const slots = task.probeNorms.length * c
  const nearest = { rows: new Int32Array(slots).fill(-1), distances: new Uint32Array(slots).fill(0xffffffff) }
  for (const segment of task.segments) kernel.nearest(segment, task.shape, task.probeBits, c, nearest.rows, nearest.distances)
  return nearest
}

/**
 * Finds the segment holding an absolute row by binary search over the segments ordered by first
 * row (a task's segments are disjoint): a linear search per candidate cost c x segments, ~650 000
 * steps for 16 probes at 10M rows.
 */
function segmentFinder(segments: readonly Segment[]): (row: number) => number {
  const order = segments.map((_, index) => index).sort((a, b) => firstRow(segments[a]) - firstRow(segments[b]))
  const firsts = order.map((index) => firstRow(segments[index]))
  return (row) => {
    let low = 0
    let high = order.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (firsts[middle] <= row) low = middle
      else high = middle - 1
    }
    const index = order[low]
    const segment = segments[index]
    if (index === undefined || row < firstRow(segment) || row >= segment.baseRow + segment.rowEnd) {
      throw new Error(`row ${row} lies in none of the task's segments`)
    }
    return index
  }
}

function firstRow(segment: Segment): number {
  return segment.baseRow + segment.rowStart
}

export function runTwoStageTask(kernel: ScanKernel, task: TwoStageTask): TopK {
  const c = Math.max(task.candidates, task.k)
  return rankCandidates(kernel, task, nearestRows(kernel, task, c), c)
}

/** Stage 2: the exact scores of the candidates, and per probe the k best of them. */
export function rankCandidates(kernel: ScanKernel, task: TwoStageTask, nearest: NearestRows, c: number): TopK {
  const scores = exactScores(kernel, task, nearest.rows, c)
  const { k } = task
  const result = emptyTopK(task.probeNorms.length, k)
  for (let probe = 0; probe < result.probeCount; probe++) {
    // Insertion into the probe's k slots in the scan's own order: higher score first, equal
    // score -> lower row first. k is small and most candidates fall below the k-th at once.
    const first = probe * k
    let count = 0
    for (let slot = probe * c; slot < (probe + 1) * c && nearest.rows[slot] >= 0; slot++) {
      const row = nearest.rows[slot]
      const score = scores[slot]
      if (count === k && !ranksBefore(score, row, result.scores[first + k - 1], result.rows[first + k - 1])) continue
      let position = first + Math.min(count, k - 1)
      while (position > first && ranksBefore(score, row, result.scores[position - 1], result.rows[position - 1])) {
        result.scores[position] = result.scores[position - 1]
        result.rows[position] = result.rows[position - 1]
        position--
      }
      result.scores[position] = score
      result.rows[position] = row
      if (count < k) count++
    }
  }
  return result
}

function ranksBefore(score: number, row: number, otherScore: number, otherRow: number): boolean {
  return score > otherScore || (score === otherScore && row < otherRow)
}

/** The exact score of every candidate slot (0 where unused): one kernel call per segment. */
function exactScores(kernel: ScanKernel, task: TwoStageTask, rows: Int32Array, c: number): Float64Array {
  return scoreRowPairs(kernel, task.segments, task.shape, rows, (slot) => Math.floor(slot / c), task.probes, task.probeNorms)
}

/**
 * The exact score of row `rows[i]` (absolute; -1: none, scored 0) for probe `probeOf(i)` of the
 * packed `probes`, one kernel call per segment (also the gated join's stage 2, gated-join-task.ts).
 */
export function scoreRowPairs(
  kernel: ScanKernel,
  segments: readonly Segment[],
  shape: ScanShape,
  rows: ArrayLike<number>,
  probeOf: (slot: number) => number,
  probes: Int8Array,
  probeNorms: Uint32Array,
): Float64Array {
  // A counting sort of the used slots by segment: the pairs of segment i lie in [starts[i], starts[i + 1]).
  const segmentIndexOf = segmentFinder(segments)
  const segmentOf = new Int32Array(rows.length)
  const starts = new Int32Array(segments.length + 1)
  for (let slot = 0; slot < rows.length; slot++) {
    segmentOf[slot] = rows[slot] < 0 ? -1 : segmentIndexOf(rows[slot])
    if (segmentOf[slot] >= 0) starts[segmentOf[slot] + 1]++
  }
  for (let index = 0; index < segments.length; index++) starts[index + 1] += starts[index]
  const pairs = starts[segments.length]
  const pairSlots = new Int32Array(pairs)
  const pairRows = new Int32Array(pairs)
  const pairProbes = new Uint32Array(pairs)
  const next = starts.slice(0, segments.length)
  for (let slot = 0; slot < rows.length; slot++) {
    const index = segmentOf[slot]
    if (index < 0) continue
    const pair = next[index]++
    pairSlots[pair] = slot
    pairRows[pair] = rows[slot] - segments[index].baseRow
    pairProbes[pair] = probeOf(slot)
  }
  const pairScores = new Float64Array(pairs)
  for (let index = 0; index < segments.length; index++) {
    const [start, end] = [starts[index], starts[index + 1]]
    if (start === end) continue
    kernel.scorePairs(
      segments[index],
      shape,
      pairRows.subarray(start, end),
      pairProbes.subarray(start, end),
      probes,
      probeNorms,
      pairScores.subarray(start, end),
    )
  }
  const scores = new Float64Array(rows.length)
  for (let pair = 0; pair < pairs; pair++) scores[pairSlots[pair]] = pairScores[pair]
  return scores
}
