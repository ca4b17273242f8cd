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
  /** Each palm's probed cells, nearest first (the first is where it is stored): palm * probes + slot. */
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
export async function layOutCells(register: PalmRegister, centroidsGallery: Gallery, cellGallery: Gallery, cells: number, probes: number): Promise<CellLayout> {
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
  const stored = Math.min(probes, STORED_CELLS)
  const { start: cellStart, items: order } = invert(cells, palms, (palm, add) => {
    if (present[palm]) for (let slot = 0; slot < stored; slot++) add(nearest[palm * probes + slot])
  })
  const rowOf = new Uint32Array(palms).fill(0xffffffff)
  for (let row = 0; row < order.length; row++) {
    const palm = order[row]
    if (rowOf[palm] === 0xffffffff) rowOf[palm] = row
    const vector = register.vector(palm)
    // A palm gone since it was placed keeps its row (the layout is fixed) but pairs with nothing.
    if (!vector) present[palm] = 0
    cellGallery.upsert(rowId(row), vector ?? new Int8Array(dimension).fill(1))
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
  const view = new DataView(bytes.buffer)
  for (let index = 0; index < count; index++) {
    view.setUint32(index * 16, first + index)
    bytes[index * 16 + 6] = 0x40
    bytes[index * 16 + 8] = 0x80
  }
  return bytes
}

/** Calls `use` for blocks of present palms in [from, to), packed with their squared norms. */
async function forEachBlock(
  register: PalmRegister,
  from: number,
  to: number,
  use: (first: number, vectors: Int8Array, norms: Uint32Array, valid: Uint8Array) => Promise<void>,
): Promise<void> {
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
