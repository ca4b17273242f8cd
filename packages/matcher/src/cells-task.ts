// Many small scans as one unit of work: the cells of an inverted file, each read by the few
// probes whose nearest cells it is. Sent to a worker as one task (one round trip for thousands of
// cells instead of one each: at 2M palms an import batch reads ~7 800 cells of ~512 rows, ~12
// probes each, and the round trips, not the scans, were the time).
import { joinGatedCell } from './gated-join-task.js'
import type { ScanKernel, ScanShape, Segment } from './kernel.js'
import { gatherCodes } from './rotated-codes.js'
import { runScanTask } from './scan-task.js'
import { emptyTopK, type TopK } from './top-k.js'

export interface CellScan {
  segments: Segment[]
  /** Numbers of the task's probes that read this cell. */
  probes: Int32Array
}

export interface CellsTask {
  cells: CellScan[]
  shape: ScanShape
  /** Every probe of the task, packed; each cell names the ones it takes. */
  probes: Int8Array
  probeNorms: Uint32Array
  k: number
  scoreFloor: number
  /**
   * Score only the (probe, row) pairs whose codes (`codes`, shape.signBytes a probe; the rows' sign
   * bits) lie within Hamming `radius`, the gated join's two stages (gated-join-task.ts): lists then
   * hold rows at or above `scoreFloor` only. The radius must keep every pair at the floor.
   */
  gate?: CellsGate
  /** A slab memory's slabs, for pool workers (see shared-memory.ts). */
  slabs?: SharedArrayBuffer[]
}

export interface CellsGate {
  codes: Uint8Array
  radius: number
  /** List room per probe in stage 1 (see GatedCell). */
  candidates: number
}

/** The top-k lists of every (cell, probe) pair, cell after cell, each cell's probes in its order. */
export function runCellsTask(kernel: ScanKernel, task: CellsTask): TopK {
  const { dimension } = task.shape
  const lists = task.cells.reduce((sum, cell) => sum + cell.probes.length, 0)
  const result = emptyTopK(lists, task.k)
  const most = task.cells.reduce((largest, cell) => Math.max(largest, cell.probes.length), 0)
  const gathered = new Int8Array(most * dimension)
  const gatheredNorms = new Uint32Array(most)
  let list = 0
  for (const cell of task.cells) {
    const count = cell.probes.length
    const found = task.gate
      ? gatedCellTopK(kernel, task, task.gate, cell)
      : runScanTask(kernel, {
          segments: cell.segments,
          shape: task.shape,
          probes: gathered.subarray(0, gatherProbes(task, cell, gathered, gatheredNorms) * dimension),
          probeNorms: gatheredNorms.subarray(0, count),
          k: task.k,
          scoreFloor: task.scoreFloor,
        })
    result.rows.set(found.rows, list * task.k)
    result.scores.set(found.scores, list * task.k)
    list += count
  }
  return result
}

/** Copies the cell's probes into `out` packed (and their norms); returns how many. */
function gatherProbes(task: CellsTask, cell: CellScan, out: Int8Array, norms: Uint32Array): number {
  const { dimension } = task.shape
  cell.probes.forEach((probe, slot) => {
    out.set(task.probes.subarray(probe * dimension, (probe + 1) * dimension), slot * dimension)
    norms[slot] = task.probeNorms[probe]
  })
  return cell.probes.length
}

/** A cell's top-k lists through the gate: its pairs at or above the floor, each probe's best k (ties by lower row). */
function gatedCellTopK(kernel: ScanKernel, task: CellsTask, gate: CellsGate, cell: CellScan): TopK {
  const { signBytes, dimension } = task.shape
  const { k } = task
  const bits = new Uint8Array(cell.probes.length * signBytes)
  gatherCodes(gate.codes, signBytes, cell.probes, bits)
  const pairs: Array<{ row: number; score: number }>[] = Array.from({ length: cell.probes.length }, () => [])
  joinGatedCell(
    kernel,
    {
      segments: cell.segments,
      shape: task.shape,
      bits,
      probeVector: (slot, out, offset) => {
        const probe = cell.probes[slot]
        out.set(task.probes.subarray(probe * dimension, (probe + 1) * dimension), offset)
        return task.probeNorms[probe]
      },
      radius: gate.radius,
      threshold: task.scoreFloor,
      candidates: gate.candidates,
    },
    (row, slot, score) => pairs[slot].push({ row, score }),
  )
  const lists = emptyTopK(cell.probes.length, k)
  pairs.forEach((found, slot) => {
    found.sort((a, b) => b.score - a.score || a.row - b.row)
    found.slice(0, k).forEach(({ row, score }, rank) => {
      lists.rows[slot * k + rank] = row
      lists.scores[slot * k + rank] = score
    })
  })
  return lists
}
