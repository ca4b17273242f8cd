// Many small scans as one unit of work: the cells of an inverted file, each read by the few
// probes whose nearest cells it is. Sent to a worker as one task (one round trip for thousands of
// cells instead of one each: at 2M palms an import batch reads ~7 800 cells of ~512 rows, ~12
// probes each, and the round trips, not the scans, were the time).
import type { ScanKernel, ScanShape, Segment } from './kernel.js'
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
  /** A slab memory's slabs, for pool workers (see shared-memory.ts). */
  slabs?: SharedArrayBuffer[]
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
    cell.probes.forEach((probe, slot) => {
      gathered.set(task.probes.subarray(probe * dimension, (probe + 1) * dimension), slot * dimension)
      gatheredNorms[slot] = task.probeNorms[probe]
    })
    const found = runScanTask(kernel, {
      segments: cell.segments,
      shape: task.shape,
      probes: gathered.subarray(0, count * dimension),
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
