// A run of consecutive cells of the inverted file (dedup-cells.ts) stored in the cell gallery at
// once: their rows cell after cell, and for each cell the palms that probe it. The gallery is
// emptied and refilled run after run (its compaction keeps its memory for the next run), so the
// cells' rows, each palm twice, never sit in memory all at once: at 1M members (2M palms) all of
// them were 1.2 GB of a 2.5 GB run, beside the register they were copied from.
import type { Gallery } from '@palmvein/matcher'
import { BLOCK, type CellLayout, rowId, rowIdBytes } from './dedup-cell-layout.js'
import type { PackedPalms } from './dedup-packed-palms.js'
import { gatherCodes, signBytesFor } from '@palmvein/matcher/row-range-scan'

export interface CellChunk {
  firstCell: number
  endCell: number
  /** Cell firstCell + i is rows [cellStart[i], cellStart[i + 1]) of the gallery, and row r holds palm order[r]. */
  cellStart: Uint32Array
  order: Uint32Array
  /** The palms probing cell firstCell + i are probers[proberStart[i] .. proberStart[i + 1]). */
  proberStart: Uint32Array
  probers: Uint32Array
}

/** The end of the run of cells from `firstCell` whose rows add up to at most `maxRows` (one cell at least). */
export function chunkEnd(layout: CellLayout, firstCell: number, maxRows: number): number {
  const { rowsOf } = layout
  let end = firstCell + 1
  for (let rows = rowsOf[firstCell]; end < rowsOf.length && rows + rowsOf[end] <= maxRows; end++) rows += rowsOf[end]
  return end
}

/** Empties `gallery` and stores cells [firstCell, endCell) in it, palms in palm order within a cell, each row's sign bits its code (the matcher's rotated-codes.ts) when there are codes. */
export async function loadChunk(
  gallery: Gallery,
  layout: CellLayout,
  palms: PackedPalms,
  codes: Uint8Array | null,
  firstCell: number,
  endCell: number,
): Promise<CellChunk> {
  // Row i holds id rowId(i). Highest first: the rows left are always a prefix, so a compaction the
  // removals start on their own moves none of them.
  for (let row = gallery.size - 1; row >= 0; row--) gallery.remove(rowId(row))
  await gallery.compact()
  const { nearest, present, probes, stored } = layout
  const cells = endCell - firstCell
  const cellStart = new Uint32Array(cells + 1)
  const proberStart = new Uint32Array(cells + 1)
  for (let cell = 0; cell < cells; cell++) {
    cellStart[cell + 1] = cellStart[cell] + layout.rowsOf[firstCell + cell]
    proberStart[cell + 1] = proberStart[cell] + layout.probersOf[firstCell + cell]
  }
  const order = new Uint32Array(cellStart[cells])
  const probers = new Uint32Array(proberStart[cells])
  const rowFill = cellStart.slice(0, cells)
  const proberFill = proberStart.slice(0, cells)
  for (let palm = 0; palm < present.length; palm++) {
    if (!present[palm]) continue
    const base = palm * probes
    for (let slot = 0; slot < probes; slot++) {
      const cell = nearest[base + slot] - firstCell
      if (cell < 0 || cell >= cells) continue
      if (slot < stored) order[rowFill[cell]++] = palm
      probers[proberFill[cell]++] = palm
    }
  }
  const { dimension } = palms
  const bytes = signBytesFor(dimension)
  const vectors = new Int8Array(BLOCK * dimension)
  const norms = new Uint32Array(BLOCK)
  const bits = new Uint8Array(BLOCK * bytes)
  gallery.reserve(order.length)
  for (let first = 0; first < order.length; first += BLOCK) {
    const count = Math.min(BLOCK, order.length - first)
    const rows = order.subarray(first, first + count)
    palms.gather(rows, vectors, norms)
    const page = { ids: rowIdBytes(first, count), vectors: vectors.subarray(0, count * dimension) }
    if (codes) {
      gatherCodes(codes, bytes, rows, bits)
      gallery.upsertRows({ ...page, norms: norms.subarray(0, count), signBits: bits.subarray(0, count * bytes) })
    } else gallery.upsertRows(page)
  }
  return { firstCell, endCell, cellStart, order, proberStart, probers }
}
