// The inverted file's layout (dedup-cells.ts): each palm's probed cells, nearest centroid first
// (it is stored in the first STORED_CELLS), and how many rows each cell stores and how many palms
// probe it. The rows themselves are stored a run of cells at a time (dedup-cell-chunk.ts).
import type { Gallery } from '@palmvein/matcher'
import { scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import type { PackedPalms } from './dedup-packed-palms.js'

/**
 * Each palm is stored in its 2 nearest cells: at 100 000 members, stored in one, the cell search
 * missed 1-2 of the exact search's 1 181 pairs at every probe count tried (32-64); in two it found
 * all (bench/results/2026-11-28T13-00Z-dedup), for 1.4 times the work.
 */
export const STORED_CELLS = 2

/** Probes per scan task: enough that a task's work dwarfs a pool round trip. */
export const BLOCK = 2048

export interface CellLayout {
  /** Each palm's probed cells, nearest first (it is stored in the first `stored`): palm * probes + slot. */
  nearest: Uint16Array
  /** 1 for a palm that pairs (present when the register was packed). */
  present: Uint8Array
  probes: number
  /** Cells a palm is stored in: min(probes, STORED_CELLS). */
  stored: number
  /** Rows cell c stores. */
  rowsOf: Uint32Array
  /** Palms that probe cell c. */
  probersOf: Uint32Array
}

/** Places every packed palm (its `probes` nearest centroids) and counts each cell's rows and probers. */
export async function placePalms(palms: PackedPalms, centroidsGallery: Gallery, cells: number, probes: number): Promise<CellLayout> {
  const { count, present, dimension } = palms
  // Cells are at most 65 535: two bytes a probed cell.
  const nearest = new Uint16Array(count * probes)
  // Blocks in flight: the pool's threads score one while this thread files the last one's cells
  // (one at a time, they waited on it: 1M members' placing used 0.55 of the two cores under load,
  // bench/results/2026-11-28T19-00Z-dedup-1m).
  const running = new Set<Promise<void>>()
  let failure: { error: unknown } | null = null
  for (let first = 0; first < count && !failure; first += BLOCK) {
    const last = Math.min(count, first + BLOCK)
    const vectors = palms.vectors.subarray(first * dimension, last * dimension)
    const task: Promise<void> = scanRowRangeTopK(centroidsGallery, 0, cells, vectors, palms.norms.subarray(first, last), probes, 0)
      .then((top) => {
        for (let palm = first; palm < last; palm++) {
          if (present[palm]) nearest.set(top.rows.subarray((palm - first) * probes, (palm - first + 1) * probes), palm * probes)
        }
      })
      .catch((error: unknown) => {
        failure ??= { error }
      })
      .finally(() => running.delete(task))
    running.add(task)
    if (running.size >= BLOCKS_IN_FLIGHT) await Promise.race(running)
  }
  await Promise.all(running)
  if (failure) throw (failure as { error: unknown }).error
  const layout = { nearest, present, probes, stored: Math.min(probes, STORED_CELLS), rowsOf: new Uint32Array(cells), probersOf: new Uint32Array(cells) }
  countCells(layout)
  return layout
}

/** Counts each cell's rows and probers. */
function countCells(layout: CellLayout): void {
  const { nearest, present, probes, stored, rowsOf, probersOf } = layout
  for (let palm = 0; palm < present.length; palm++) {
    if (!present[palm]) continue
    const base = palm * probes
    for (let slot = 0; slot < stored; slot++) rowsOf[nearest[base + slot]]++
    for (let slot = 0; slot < probes; slot++) probersOf[nearest[base + slot]]++
  }
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

/** Blocks placed at once. */
const BLOCKS_IN_FLIGHT = 3
