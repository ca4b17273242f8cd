// The two-stage form of a scan task: stage 1 keeps, per probe, the `c` rows of the task's
// segments whose sign bits are nearest the probe's (Hamming distance); stage 2 scores those
// rows with the exact int8 cosine, so every score returned is the exact one. A task covers a
// worker's share of the gallery, so each worker keeps its own c: at least the c best overall
// reach stage 2.
import type { ScanKernel, ScanShape, Segment } from './kernel.js'
import { emptyTopK, mergeTopKInto, type TopK } from './top-k.js'

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

/** Stage 1 over every segment: per probe the c nearest rows (absolute), as a top-k list of -distance. */
export function nearestRows(kernel: ScanKernel, task: TwoStageTask, c: number): TopK {
  const probeCount = task.probeNorms.length
  const nearest = emptyTopK(probeCount, c)
  const part = emptyTopK(probeCount, c)
  const distances = new Uint32Array(probeCount * c)
  for (const segment of task.segments) {
    // Only rows nearer than the merged list's worst can enter it: the kernel skips the rest.
    for (let probe = 0; probe < probeCount; probe++) {
      const last = probe * c + c - 1
      distances[last] = nearest.rows[last] >= 0 ? -nearest.scores[last] : 0xFFFFFFFF
    }
    kernel.nearest(segment, task.shape, task.probeBits, c, part.rows, distances)
    for (let slot = 0; slot < distances.length; slot++) part.scores[slot] = -distances[slot]
    mergeTopKInto(nearest, part, segment.baseRow)
  }
  return nearest
}

/** The segment holding absolute row `row` (the task's segments are disjoint). */
function segmentIndexOf(segments: readonly Segment[], row: number): number {
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]
    if (row >= segment.baseRow + segment.rowStart && row < segment.baseRow + segment.rowEnd) return index
  }
  throw new Error(`row ${row} lies in none of the task's segments`)
}

export function runTwoStageTask(kernel: ScanKernel, task: TwoStageTask): TopK {
  const probeCount = task.probeNorms.length
  const c = Math.max(task.candidates, task.k)
  const nearest = nearestRows(kernel, task, c)
  // Stage 2, one kernel call per segment over all of its (row, probe) pairs.
  const pairsBySegment = new Map<number, number[]>()
  for (let slot = 0; slot < nearest.rows.length; slot++) {
    const row = nearest.rows[slot]
    if (row < 0) continue
    const index = segmentIndexOf(task.segments, row)
    let slots = pairsBySegment.get(index)
    if (!slots) pairsBySegment.set(index, slots = [])
    slots.push(slot)
  }
  const exactScores = new Float64Array(nearest.rows.length)
  for (const [index, slots] of pairsBySegment) {
    const segment = task.segments[index]
    const pairRows = Int32Array.from(slots, (slot) => nearest.rows[slot] - segment.baseRow)
    const pairProbes = Uint32Array.from(slots, (slot) => Math.floor(slot / c))
    const scores = new Float64Array(slots.length)
    kernel.scorePairs(segment, task.shape, pairRows, pairProbes, task.probes, task.probeNorms, scores)
    slots.forEach((slot, pair) => { exactScores[slot] = scores[pair] })
  }
  const result = emptyTopK(probeCount, task.k)
  for (let probe = 0; probe < probeCount; probe++) {
    const ranked: number[] = []
    for (let slot = probe * c; slot < (probe + 1) * c && nearest.rows[slot] >= 0; slot++) ranked.push(slot)
    // The scan's own order: higher score first, equal score -> lower row first.
    ranked.sort((a, b) => exactScores[b] - exactScores[a] || nearest.rows[a] - nearest.rows[b])
    ranked.slice(0, task.k).forEach((slot, position) => {
      result.rows[probe * task.k + position] = nearest.rows[slot]
      result.scores[probe * task.k + position] = exactScores[slot]
    })
  }
  return result
}
