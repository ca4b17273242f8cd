// Searching one cell of the inverted file (dedup-cells.ts): every palm that probes it against the
// cell's rows, keeping the rows at or above the threshold. Gated (the default), one matcher task
// compares every pair by code and scores the few within the radius (the matcher's rotated-codes.ts); without
// the gate every pair is scored, a block of probes at a time, and a probe with more than HITS rows
// at or above the threshold is searched again wider.
import type { Gallery } from '@palmvein/matcher'
import { joinRowRangeGated, scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import type { CellChunk } from './dedup-cell-chunk.js'
import { BLOCK } from './dedup-cell-layout.js'
import type { PackedPalms } from './dedup-packed-palms.js'
import type { PairBook } from './dedup-pair-book.js'

type TopK = Awaited<ReturnType<typeof scanRowRangeTopK>>

/** Rows kept per probe and cell; a probe with more above the threshold is rescanned wider. */
const HITS = 4
const WIDEST = 1023
/** A probe's list room for rows within the Hamming radius; probes that fill it read the cell again with more (gated-join-task.ts). */
const CANDIDATES = 32

/** Searches a cell of the chunk in `cellGallery`; `scored` is told each block's palm x palm pairs compared and how many were scored exactly. */
export function createCellSearch(search: {
  cellGallery: Gallery
  chunk: CellChunk
  palms: PackedPalms
  /** Each palm's code (the matcher's rotated-codes.ts, the rows' sign bits in `cellGallery`) and the Hamming radius within which pairs are scored; null: every pair is. */
  gate: { codes: Uint8Array; radius: number } | null
  book: PairBook
  threshold: number
  scored: (compared: number, exactly: number) => void
}): (cell: number) => Promise<void> {
  const { cellGallery, palms, gate, book, threshold } = search
  const { dimension } = palms
  const { firstCell, cellStart, order, proberStart, probers } = search.chunk

  /** Records the rows of `top` from `slot` to `lastSlot` at or above the threshold. */
  const keep = (probe: number, cell: number, top: TopK, slot: number, lastSlot: number) => {
    for (; slot <= lastSlot && top.rows[slot] >= 0 && top.scores[slot] >= threshold; slot++) {
      if (order[top.rows[slot]] !== probe) book.record(probe, order[top.rows[slot]], top.scores[slot], cell)
    }
  }

  // More than HITS rows of one cell above the threshold for one probe (a large family of look-alikes).
  const searchWide = async (probe: number, cell: number, rowsFrom: number, rowsTo: number) => {
    const vector = new Int8Array(dimension)
    const norms = new Uint32Array(1)
    palms.gather([probe], vector, norms)
    const k = Math.min(WIDEST, rowsTo - rowsFrom)
    const top = await scanRowRangeTopK(cellGallery, rowsFrom, rowsTo, vector, norms, k, threshold)
    if (k < rowsTo - rowsFrom && top.scores[k - 1] >= threshold)
      throw new RangeError(`more than ${WIDEST} palms of one cell match one palm above the threshold`)
    keep(probe, cell, top, 0, k - 1)
  }

  // Every probe against every row of the cell, only the pairs within the radius scored.
  const searchGated = async ({ codes, radius }: { codes: Uint8Array; radius: number }, cell: number, rowsFrom: number, rowsTo: number) => {
    const local = cell - firstCell
    const probes = probers.slice(proberStart[local], proberStart[local + 1])
    const register = { vectors: palms.vectors, norms: palms.norms, codes }
    const pairs = await joinRowRangeGated(cellGallery, rowsFrom, rowsTo, probes, register, { radius, threshold, candidates: CANDIDATES })
    for (let pair = 0; pair < pairs.rows.length; pair++) {
      const other = order[pairs.rows[pair]]
      if (other !== pairs.probes[pair]) book.record(pairs.probes[pair], other, pairs.scores[pair], cell)
    }
    search.scored(probes.length * (rowsTo - rowsFrom), pairs.scored)
  }

  return async (cell) => {
    const local = cell - firstCell
    const rowsFrom = cellStart[local]
    const rowsTo = cellStart[local + 1]
    const k = Math.min(HITS, rowsTo - rowsFrom)
    if (k === 0) return
    if (gate) return searchGated(gate, cell, rowsFrom, rowsTo)
    for (let first = proberStart[local]; first < proberStart[local + 1]; first += BLOCK) {
      const last = Math.min(proberStart[local + 1], first + BLOCK)
      // A buffer a call: several cells are searched at once (dedup-cells.ts).
      const probeBuffer = new Int8Array((last - first) * dimension)
      const probeNorms = new Uint32Array(last - first)
      palms.gather(probers.subarray(first, last), probeBuffer, probeNorms)
      const count = last - first
      const top = await scanRowRangeTopK(cellGallery, rowsFrom, rowsTo, probeBuffer, probeNorms, k, threshold)
      for (let index = 0; index < count; index++) {
        const probe = probers[first + index]
        const lastSlot = (index + 1) * k - 1
        if (k < rowsTo - rowsFrom && top.rows[lastSlot] >= 0 && top.scores[lastSlot] >= threshold) await searchWide(probe, cell, rowsFrom, rowsTo)
        else keep(probe, cell, top, index * k, lastSlot)
      }
      search.scored(count * (rowsTo - rowsFrom), count * (rowsTo - rowsFrom))
    }
  }
}
