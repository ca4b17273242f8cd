// The rows of the import's cell index (duplicate-cells.ts): palms laid out cell after cell in a
// gallery of the index's own, a page of rows per upsertRows, and for each row the palm it holds. A
// cell filled at the index's build is one run of rows; palms added later append further runs.
import type { Gallery, Matcher } from '@palmvein/matcher'
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
   * Stores the palms numbered `first`.. (their vectors packed) in their cells: palm i in
   * nearest[i * cellsEach ..] (-1: none).
   */
  append(first: number, vectors: Int8Array, nearest: Int32Array, cellsEach: number): void
}

export function createCellRows(matcher: Matcher, cells: number): CellRows {
  const { dimension } = matcher
  const gallery = matcher.createGallery({ ids: 'uuid' })
  const ranges: number[][] = Array.from({ length: cells }, () => [])
  let rowPalm = new Uint32Array(1024)
  let rows = 0
  return {
    gallery,
    ranges,
    palmAt: (row) => rowPalm[row],
    append(first, vectors, nearest, cellsEach) {
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
      const page = new Int8Array(Math.min(added, PAGE_ROWS) * dimension)
      let pageFirst = rows
      const flush = () => {
        if (rows > pageFirst) gallery.upsertRows({ ids: rowIdBytes(pageFirst, rows - pageFirst), vectors: page.subarray(0, (rows - pageFirst) * dimension) })
        pageFirst = rows
      }
      byCell.forEach((indices, cell) => {
        if (!indices.length) return
        ranges[cell].push(rows, rows + indices.length)
        for (const index of indices) {
          page.set(vectors.subarray(index * dimension, (index + 1) * dimension), (rows - pageFirst) * dimension)
          rowPalm[rows++] = first + index
          if (rows - pageFirst === PAGE_ROWS) flush()
        }
      })
      flush()
    },
  }
}
