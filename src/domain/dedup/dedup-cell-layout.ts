// The inverted file's layout (dedup-cells.ts): each palm's probed cells, nearest centroid first;
// the palms stored cell after cell in a gallery of their own (each in its STORED_CELLS nearest);
// and for each cell the palms that probe it.
import type { Gallery } from '@palmvein/matcher'
import { scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import type { PalmRegister } from './dedup-palms.js'

/**
 * Each palm is stored in its 2 nearest cells: at 100 000 members, stored in one, the cell search
 * missed 1-2 of the exact search's 1 181 pairs at every probe count tried (32-64); in two it found
 * all (bench/results/2026-11-28T13-00Z-dedup), for 1.4 times the work.
 */
const STORED_CELLS = 2

/** Probes per scan task: enough that a task's work dwarfs a pool round trip. */
export const BLOCK = 2048

export interface CellLayout {
  /** Each palm's probed cells, nearest first (it is stored in the first STORED_CELLS): palm * probes + slot. */
  nearest: Uint16Array
  /** 1 for a palm that pairs (present when placed, and still when stored). */
  present: Uint8Array
  /** Cell c is rows [cellStart[c], cellStart[c + 1]) of the cell gallery, and row r holds palm order[r]. */
  cellStart: Uint32Array
  order: Uint32Array
  /** A row holding the palm (its first). */
  rowOf: Uint32Array
  /** The palms probing cell c are probers[proberStart[c] .. proberStart[c + 1]). */
  proberStart: Uint32Array
  probers: Uint32Array
}

/** Places every palm (its `probes` nearest centroids) and stores it in `cellGallery` in its cell's rows. */
export async function layOutCells(
  register: PalmRegister,
  centroidsGallery: Gallery,
  cellGallery: Gallery,
  cells: number,
  probes: number,
  placed: () => void = () => {},
): Promise<CellLayout> {
  const { count: palms, dimension } = register
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
  placed()
  const stored = Math.min(probes, STORED_CELLS)
  const { start: cellStart, items: order } = invert(cells, palms, (palm, add) => {
    if (present[palm]) for (let slot = 0; slot < stored; slot++) add(nearest[palm * probes + slot])
  })
  const rowOf = new Uint32Array(palms).fill(0xffffffff)
  // Pages of rows with their ids as UUID bytes: a row at a time (an id string each), storing took a
  // tenth of a 400 000-palm run, on the main thread alone.
  cellGallery.reserve(order.length)
  for (let first = 0; first < order.length; first += BLOCK) {
    const count = Math.min(BLOCK, order.length - first)
    const vectors = new Int8Array(count * dimension)
    const ids = new Uint8Array(count * 16)
    for (let index = 0; index < count; index++) {
      const row = first + index
      const palm = order[row]
      if (rowOf[palm] === 0xffffffff) rowOf[palm] = row
      const vector = register.vector(palm)
      // A palm gone since it was placed keeps its row (the layout is fixed) but pairs with nothing.
      if (!vector) present[palm] = 0
      if (vector) vectors.set(vector, index * dimension)
      else vectors.fill(1, index * dimension, (index + 1) * dimension)
      writeRowId(row, ids, index * 16)
    }
    cellGallery.upsertRows({ ids, vectors })
  }
  const { start: proberStart, items: probers } = invert(cells, palms, (palm, add) => {
    if (present[palm]) for (let slot = 0; slot < probes; slot++) add(nearest[palm * probes + slot])
  })
  return { nearest, present, cellStart, order, rowOf, proberStart, probers }
}

/** A UUID-form id for row `row` (the cell gallery keeps 16 bytes an id that way). */
export function rowId(row: number): string {
  return `${row.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`
}

/** The 16 bytes of rowId(first), rowId(first + 1)... `count` of them end to end (upsertRows' ids). */
export function rowIdBytes(first: number, count: number): Uint8Array {
  const bytes = new Uint8Array(count * 16)
  for (let index = 0; index < count; index++) writeRowId(first + index, bytes, index * 16)
  return bytes
}

/** rowId(row) as its 16 bytes, at `offset` of `into`. */
function writeRowId(row: number, into: Uint8Array, offset: number): void {
  // Byte by byte: a DataView a row was 2M allocations at 1M members.
  into.fill(0, offset, offset + 16)
  into[offset] = row >>> 24
  into[offset + 1] = (row >>> 16) & 0xff
  into[offset + 2] = (row >>> 8) & 0xff
  into[offset + 3] = row & 0xff
  into[offset + 6] = 0x40
  into[offset + 8] = 0x80
}

/**
 * Blocks placed at once: the pool's threads score one while this thread packs the next and files
 * the last one's cells (one at a time, they waited on it: 1M members' placing used 0.55 of the two
 * cores under load, bench/results/2026-11-28T19-00Z-dedup-1m).
 */
const BLOCKS_IN_FLIGHT = 3

/** Calls `use` for blocks of present palms in [from, to), packed with their squared norms, BLOCKS_IN_FLIGHT at once. */
async function forEachBlock(
  register: PalmRegister,
  from: number,
  to: number,
  use: (first: number, vectors: Int8Array, norms: Uint32Array, valid: Uint8Array) => Promise<void>,
): Promise<void> {
  const { dimension } = register
  const running = new Set<Promise<void>>()
  let failure: { error: unknown } | null = null
  for (let first = from; first < to && !failure; first += BLOCK) {
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
    const task: Promise<void> = use(first, vectors, norms, valid)
      .catch((error: unknown) => {
        failure ??= { error }
      })
      .finally(() => running.delete(task))
    running.add(task)
    if (running.size >= BLOCKS_IN_FLIGHT) await Promise.race(running)
  }
  await Promise.all(running)
  if (failure) throw (failure as { error: unknown }).error
}

/** Items grouped by key, as a CSR: the items of key c are items[start[c] .. start[c + 1]). */
function invert(keys: number, items: number, each: (item: number, add: (key: number) => void) => void): { start: Uint32Array; items: Uint32Array } {
  const counts = new Uint32Array(keys + 1)
  for (let item = 0; item < items; item++)
    each(item, (key) => {
      counts[key + 1]++
    })
  for (let key = 0; key < keys; key++) counts[key + 1] += counts[key]
  const out = new Uint32Array(counts[keys])
  const fill = counts.slice(0, keys)
  for (let item = 0; item < items; item++)
    each(item, (key) => {
      out[fill[key]++] = item
    })
  return { start: counts, items: out }
}
