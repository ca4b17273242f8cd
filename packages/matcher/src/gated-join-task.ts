// A self-join's unit of work (the deduplication of a whole register): a cell of an inverted file
// read by the palms that probe it, and every (probe, row) pair whose codes lie within a
// Hamming radius scored exactly, the pairs at or above a threshold returned. The rows' sign bits
// are the codes (the caller stored them so); the probes are read by number from the register,
// shared with the workers, so a task carries numbers, not vectors. Stage 1 is the two-stage
// search's (its lists start full of placeholders at the radius, so only rows within it enter),
// stage 2 its exact scores of the few pairs left.
import type { ScanKernel, ScanShape, Segment } from './kernel.js'
import { scoreRowPairs } from './two-stage-task.js'

/** A register shared with the workers (SharedArrayBuffer-backed arrays read, never copied). */
export interface SharedRegister {
  /** count x dimension, int8. */
  vectors: Int8Array
  norms: Uint32Array
  /** shape.signBytes a palm: its code, compared with the rows' sign bits. */
  codes: Uint8Array
}

export interface GatedJoinTask {
  /** The cell's rows. */
  segments: Segment[]
  /** Numbers (in the register) of the palms that probe the cell. */
  probes: Uint32Array
  shape: ScanShape
  register: SharedRegister
  radius: number
  threshold: number
  /** List room per probe in stage 1; probes that fill it read the cell again with four times the room. */
  candidates: number
  /** A slab memory's slabs, for pool workers (see shared-memory.ts). */
  slabs?: SharedArrayBuffer[]
}

/** The pairs at or above the threshold: absolute row, probe palm, exact score. */
export interface GatedPairs {
  rows: Int32Array
  probes: Uint32Array
  scores: Float64Array
  /** Pairs within the radius, scored exactly (the gate's pass rate is this over rows x probes). */
  scored: number
}

/** The kernels' longest list (two_stage.rs MAX_CANDIDATES). */
const MAX_CANDIDATES = 65536

/** A row number no gallery reaches (rows are below 2^31 - 1): the radius' placeholders. */
const PLACEHOLDER = 0x7fffffff

export function runGatedJoinTask(kernel: ScanKernel, task: GatedJoinTask): GatedPairs {
  const { register, shape } = task
  const { signBytes, dimension } = shape
  const bits = scratch.bits(task.probes.length * signBytes)
  // Byte by byte: a view a probe cost more than the copy (thousands of probes a cell).
  for (let slot = 0; slot < task.probes.length; slot++) {
    const from = task.probes[slot] * signBytes
    for (let byte = 0; byte < signBytes; byte++) bits[slot * signBytes + byte] = register.codes[from + byte]
  }
  const probeVector = (slot: number, out: Int8Array, offset: number) => {
    const palm = task.probes[slot]
    out.set(register.vectors.subarray(palm * dimension, (palm + 1) * dimension), offset)
    return register.norms[palm]
  }
  const out = { rows: [] as number[], probes: [] as number[], scores: [] as number[] }
  const scored = joinGatedCell(kernel, { ...task, bits, probeVector }, (row, slot, score) => {
    out.rows.push(row)
    out.probes.push(task.probes[slot])
    out.scores.push(score)
  })
  return { rows: Int32Array.from(out.rows), probes: Uint32Array.from(out.probes), scores: Float64Array.from(out.scores), scored }
}

/** A cell and the codes of the probes that read it, for joinGatedCell. */
export interface GatedCell {
  segments: Segment[]
  shape: ScanShape
  /** The probes' codes, shape.signBytes each, compared with the rows' sign bits. */
  bits: Uint8Array
  /** Copies probe `slot`'s vector into `out` at `offset`; returns its squared norm. */
  probeVector(slot: number, out: Int8Array, offset: number): number
  radius: number
  threshold: number
  /** List room per probe in stage 1; probes that fill it read the cell again with four times the room. */
  candidates: number
}

/**
 * Buffers kept from cell to cell (per thread: a worker runs one task at a time). New ones a cell
 * were garbage the workers' collector let pile up: 0.8 GB more peak memory at 1M members.
 */
const scratch = (() => {
  let bits = new Uint8Array(0)
  let rows = new Int32Array(0)
  let distances = new Uint32Array(0)
  return {
    bits(length: number): Uint8Array {
      if (bits.length < length) bits = new Uint8Array(Math.max(length, 2 * bits.length))
      return bits.subarray(0, length)
    },
    lists(slots: number): { rows: Int32Array; distances: Uint32Array } {
      if (rows.length < slots) {
        rows = new Int32Array(Math.max(slots, 2 * rows.length))
        distances = new Uint32Array(rows.length)
      }
      return { rows: rows.subarray(0, slots), distances: distances.subarray(0, slots) }
    },
  }
})()

/** Reports the cell's (row, probe slot, exact score) pairs at or above the threshold; returns how many pairs were scored. */
export function joinGatedCell(kernel: ScanKernel, cell: GatedCell, report: (row: number, slot: number, score: number) => void): number {
  const { shape, radius, bits } = cell
  const { signBytes, dimension } = shape
  const count = bits.length / signBytes
  const rows = cell.segments.reduce((sum, segment) => sum + segment.rowEnd - segment.rowStart, 0)
  if (count === 0 || rows === 0) return 0
  /** Stage 1 for the probes whose codes are `probeBits`: lists of `room` rows, placeholders where fewer lie within the radius. */
  const within = (probeBits: Uint8Array, room: number) => {
    const slots = (probeBits.length / signBytes) * room
    const lists = scratch.lists(slots)
    lists.rows.fill(PLACEHOLDER)
    lists.distances.fill(radius)
    for (const segment of cell.segments) kernel.nearest(segment, shape, probeBits, room, lists.rows, lists.distances)
    return lists.rows
  }
  // The probes with a pair, packed for stage 2 (a few in a thousand pairs pass the gate).
  const pairRows: number[] = []
  const pairProbes: number[] = []
  const probeSlots = new Map<number, number>()
  const take = (probe: number, row: number) => {
    if (!probeSlots.has(probe)) probeSlots.set(probe, probeSlots.size)
    pairRows.push(row)
    pairProbes.push(probeSlots.get(probe)!)
  }
  // Probes whose lists filled may have more rows within the radius: they read the cell again with
  // four times the room, until none fills (room for every row at most). Room for every row at once
  // cost the native selection that much memory per probe: 0.4 GB more peak at 1M members.
  let reading = Array.from({ length: count }, (_, probe) => probe)
  let readingBits = bits
  for (let room = Math.min(cell.candidates, rows, MAX_CANDIDATES); reading.length; room = Math.min(rows, 4 * room, MAX_CANDIDATES)) {
    const found = within(readingBits, room)
    const full: number[] = []
    reading.forEach((probe, index) => {
      const last = (index + 1) * room - 1
      if (room < rows && found[last] !== PLACEHOLDER && found[last] >= 0) full.push(probe)
      else for (let slot = index * room; slot <= last && found[slot] !== PLACEHOLDER && found[slot] >= 0; slot++) take(probe, found[slot])
    })
    if (full.length && room === MAX_CANDIDATES) throw new RangeError(`more than ${MAX_CANDIDATES} rows of a cell lie within the radius of one probe`)
    readingBits = new Uint8Array(full.length * signBytes)
    full.forEach((probe, index) => readingBits.set(bits.subarray(probe * signBytes, (probe + 1) * signBytes), index * signBytes))
    reading = full
  }
  if (pairRows.length === 0) return 0
  const vectors = new Int8Array(probeSlots.size * dimension)
  const norms = new Uint32Array(probeSlots.size)
  const slotOf = new Uint32Array(probeSlots.size)
  for (const [probe, packed] of probeSlots) {
    slotOf[packed] = probe
    norms[packed] = cell.probeVector(probe, vectors, packed * dimension)
  }
  const scores = scoreRowPairs(kernel, cell.segments, shape, pairRows, (pair) => pairProbes[pair], vectors, norms)
  pairRows.forEach((row, pair) => {
    if (scores[pair] >= cell.threshold) report(row, slotOf[pairProbes[pair]], scores[pair])
  })
  return pairRows.length
}
