// Searching one cell of the inverted file (dedup-cells.ts): every palm that probes it, a block at
// a time, against the cell's rows, keeping the rows at or above the threshold; a probe with more
// than HITS of them is searched again wider.
import type { Gallery } from '@palmvein/matcher'
import { copyGalleryRow, copyGalleryRows, scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import { BLOCK, type CellLayout } from './dedup-cell-layout.js'
import type { PairBook } from './dedup-pair-book.js'

type TopK = Awaited<ReturnType<typeof scanRowRangeTopK>>

/** Rows kept per probe and cell; a probe with more above the threshold is rescanned wider. */
const HITS = 4
const WIDEST = 1023

/** Searches a cell; `scored` is told each block's palm x palm scores. */
export function createCellSearch(search: {
  cellGallery: Gallery
  layout: CellLayout
  book: PairBook
  dimension: number
  threshold: number
  scored: (scores: number) => void
}): (cell: number) => Promise<void> {
  const { cellGallery, book, dimension, threshold } = search
  const { cellStart, order, rowOf, proberStart, probers } = search.layout

  /** Records the rows of `top` from `slot` to `lastSlot` at or above the threshold. */
  const keep = (probe: number, cell: number, top: TopK, slot: number, lastSlot: number) => {
    for (; slot <= lastSlot && top.rows[slot] >= 0 && top.scores[slot] >= threshold; slot++) {
      if (order[top.rows[slot]] !== probe) book.record(probe, order[top.rows[slot]], top.scores[slot], cell)
    }
  }

  // More than HITS rows of one cell above the threshold for one probe (a large family of look-alikes).
  const searchWide = async (probe: number, cell: number, rowsFrom: number, rowsTo: number) => {
    const vector = new Int8Array(dimension)
    const norms = Uint32Array.of(copyGalleryRow(cellGallery, rowOf[probe], vector, 0))
    const k = Math.min(WIDEST, rowsTo - rowsFrom)
    const top = await scanRowRangeTopK(cellGallery, rowsFrom, rowsTo, vector, norms, k, threshold)
    if (k < rowsTo - rowsFrom && top.scores[k - 1] >= threshold)
      throw new RangeError(`more than ${WIDEST} palms of one cell match one palm above the threshold`)
    keep(probe, cell, top, 0, k - 1)
  }

  return async (cell) => {
    const rowsFrom = cellStart[cell]
    const rowsTo = cellStart[cell + 1]
    const k = Math.min(HITS, rowsTo - rowsFrom)
    if (k === 0) return
    for (let first = proberStart[cell]; first < proberStart[cell + 1]; first += BLOCK) {
      const last = Math.min(proberStart[cell + 1], first + BLOCK)
      // A buffer a call: several cells are searched at once (dedup-cells.ts).
      const probeBuffer = new Int8Array((last - first) * dimension)
      const probeNorms = new Uint32Array(last - first)
      const rows = new Uint32Array(last - first)
      for (let index = first; index < last; index++) rows[index - first] = rowOf[probers[index]]
      copyGalleryRows(cellGallery, rows, probeBuffer, probeNorms)
      const count = last - first
      const top = await scanRowRangeTopK(cellGallery, rowsFrom, rowsTo, probeBuffer, probeNorms, k, threshold)
      for (let index = 0; index < count; index++) {
        const probe = probers[first + index]
        const lastSlot = (index + 1) * k - 1
        if (k < rowsTo - rowsFrom && top.rows[lastSlot] >= 0 && top.scores[lastSlot] >= threshold) await searchWide(probe, cell, rowsFrom, rowsTo)
        else keep(probe, cell, top, index * k, lastSlot)
      }
      search.scored(count * (rowsTo - rowsFrom))
    }
  }
}
