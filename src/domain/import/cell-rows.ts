// The rows of the import's cell index (duplicate-cells.ts): palms laid out cell after cell in a
// gallery of the index's own, a page of rows per upsertRows, and for each row the palm it holds. A
// cell filled at the index's build is one run of rows; palms added later append further runs.
// Each row's sign bits are its palm's code (the matcher's rotated-codes.ts), which the gated scan compares.
import type { Gallery, Matcher } from '@palmvein/matcher'
import { signBytesFor } from '@palmvein/matcher/row-range-scan'
import { rowIdBytes } from '../dedup/dedup-cell-layout.js'

/** Rows stored per upsertRows. */
const PAGE_ROWS = 65536

export interface CellRows {
  readonly gallery: Gallery
  /** Cell c is the runs of rows ranges[c] ([from, to) pairs end to end). */
  readonly ranges: readonly (readonly number[])[]
  /** The palm row `row` holds. */
  palmAt(row: number): number
  /**
   * Stores the palms numbered `first`.. (their vectors packed, their squared norms and codes) in
   * their cells: palm i in nearest[i * cellsEach ..] (-1: none).
   */
  append(first: number, palms: { vectors: Int8Array; norms: Uint32Array; codes: Uint8Array }, nearest: Int32Array, cellsEach: number): void
}

export function createCellRows(matcher: Matcher, cells: number): CellRows {
  const { dimension } = matcher
  const bytes = signBytesFor(dimension)
  const gallery = matcher.createGallery({ ids: 'uuid' })
  const ranges: number[][] = Array.from({ length: cells }, () => [])
  let rowPalm = new Uint32Array(1024)
  let rows = 0
  return {
    gallery,
    ranges,
    palmAt: (row) => rowPalm[row],
    append(first, { vectors, norms, codes }, nearest, cellsEach) {
      const byCell: number[][] = Array.from({ length: cells }, () => [])
      for (let index = 0; index < nearest.length / cellsEach; index++) {
        for (let slot = 0; slot < cellsEach; slot++) {
          const cell = nearest[index * cellsEach + slot]
          if (cell >= 0) byCell[cell].push(index)
        }
      }
      const added = byCell.reduce((sum, indices) => sum + indices.length, 0)
      if (rows + added > rowPalm.length) {
        const grown = new Uint32Array(Math.max(rows + added, rowPalm.length * 2))
        grown.set(rowPalm.subarray(0, rows))
        rowPalm = grown
      }
      const pageRows = Math.min(added, PAGE_ROWS)
      const page = { vectors: new Int8Array(pageRows * dimension), norms: new Uint32Array(pageRows), signBits: new Uint8Array(pageRows * bytes) }
      let pageFirst = rows
      const flush = () => {
        const count = rows - pageFirst
        if (count)
          gallery.upsertRows({
            ids: rowIdBytes(pageFirst, count),
            vectors: page.vectors.subarray(0, count * dimension),
            norms: page.norms.subarray(0, count),
            signBits: page.signBits.subarray(0, count * bytes),
          })
        pageFirst = rows
      }
      byCell.forEach((indices, cell) => {
        if (!indices.length) return
        ranges[cell].push(rows, rows + indices.length)
        for (const index of indices) {
          const slot = rows - pageFirst
          const vector = vectors.subarray(index * dimension, (index + 1) * dimension)
          page.vectors.set(vector, slot * dimension)
          page.norms[slot] = norms[index]
          page.signBits.set(codes.subarray(index * bytes, (index + 1) * bytes), slot * bytes)
          rowPalm[rows++] = first + index
          if (rows - pageFirst === PAGE_ROWS) flush()
        }
      })
      flush()
    },
  }
}
