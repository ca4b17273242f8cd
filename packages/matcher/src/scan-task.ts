// One unit of scanning work, the same whether it runs inline on the calling thread or in a pool
// worker: scan each segment with the kernel, merge into one top-k list with absolute rows.
import type { ScanKernel, ScanShape, Segment } from './kernel.js'
import { emptyTopK, mergeTopKInto, type TopK } from './top-k.js'
import { runTwoStageTask } from './two-stage-task.js'

export interface ScanTask {
  segments: Segment[]
  shape: ScanShape
  /** probeCount * dimension, packed. */
  probes: Int8Array
  probeNorms: Uint32Array
  k: number
  /** A two-stage scan: the probes' sign bits and the candidates stage 1 keeps. Absent: exact. */
  twoStage?: { probeBits: Uint8Array; candidates: number }
  /** Exact scans: rows scoring below this may be left out (a self-join keeps only pairs above a threshold). */
  scoreFloor?: number
  /** A slab memory's slabs, for pool workers (see shared-memory.ts). */
  slabs?: SharedArrayBuffer[]
}

export function runScanTask(kernel: ScanKernel, task: ScanTask): TopK {
  if (task.twoStage) return runTwoStageTask(kernel, { ...task, ...task.twoStage })
  const probeCount = task.probeNorms.length
  const result = emptyTopK(probeCount, task.k)
  const floor = task.scoreFloor ?? 0
  if (task.segments.length === 1) {
    const [segment] = task.segments
    kernel.scan(
      segment,
      task.shape,
      task.probes,
      task.probeNorms,
      task.k,
      result.rows,
      result.scores,
      floor > 0 ? new Float64Array(probeCount).fill(floor) : undefined,
    )
    for (let index = 0; index < result.rows.length; index++) if (result.rows[index] >= 0) result.rows[index] += segment.baseRow
    return result
  }
  const part = emptyTopK(probeCount, task.k)
  // Each segment after the first starts from the k-th best score found so far: its lists then
  // filter like one scan's instead of refilling from nothing (about k * ln(rows / k) insertions
  // per probe and segment; a gallery of 1M rows has 16 segments).
  const floors = new Float64Array(probeCount).fill(floor)
  for (const segment of task.segments) {
    kernel.scan(segment, task.shape, task.probes, task.probeNorms, task.k, part.rows, part.scores, floors)
    mergeTopKInto(result, part, segment.baseRow)
    kthBestScores(result, floors, floor)
  }
  return result
}

/** Each probe's k-th best score, or `floor` while its list is not full (0: no floor). */
function kthBestScores(lists: TopK, into: Float64Array, floor: number): void {
  for (let probe = 0; probe < lists.probeCount; probe++) {
    const last = (probe + 1) * lists.k - 1
    into[probe] = lists.rows[last] >= 0 ? Math.max(floor, lists.scores[last]) : floor
  }
}
