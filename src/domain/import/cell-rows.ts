// The rows of the import's cell index (duplicate-cells.ts): palms laid out cell after cell in a
// gallery of the index's own, and for each row the palm it holds. Each row's sign bits are its
// palm's code (the matcher's rotated-codes.ts), which the gated scan compares.
//
// A cell is always one run of rows, with room after it: the palms an import adds are written in
// place into that room (overwriteGalleryRows). Appended as runs of their own, a cell grew a run
// per batch that touched it, and a scan pays per run: at 1M members a batch took 0.6 s at the
// import's start and 1.4 s after 40 batches. A cell whose room runs out moves to the gallery's
// end with room to double; the rows it leaves are never read again (the matcher does not give
// memory back), at most about the rows the import added.
import type { Gallery, Matcher } from '@palmvein/matcher'
import { overwriteGalleryRows, signBytesFor } from '@palmvein/matcher/row-range-scan'
import { rowIdBytes } from '../dedup/dedup-cell-layout.js'

/** Rows stored per upsertRows. */
const PAGE_ROWS = 65536
/** Room a cell is laid out with: this share of its rows, and at least MIN_ROOM rows. */
const ROOM_SHARE = 1 / 8
const MIN_ROOM = 4

export interface CellRows {
  readonly gallery: Gallery
  /** Cell c is the rows [ranges[c][0], ranges[c][1]): one run. */
  readonly ranges: readonly (readonly number[])[]
  /** The palm row `row` holds. */
  palmAt(row: number): number
  /**
   * Stores the palms numbered `first`.. (their vectors packed, their squared norms and codes) in
   * their cells: palm i in nearest[i * cellsEach ..] (-1: none).
   */
  append(first: number, palms: PackedCodedPalms, nearest: Int32Array, cellsEach: number): void
}

export interface PackedCodedPalms {
  vectors: Int8Array
  norms: Uint32Array
  codes: Uint8Array
}

/** Rows packed for the gallery: vectors, squared norms, codes as sign bits. */
function rowBuffer(rows: number, dimension: number) {
  return { vectors: new Int8Array(rows * dimension), norms: new Uint32Array(rows), signBits: new Uint8Array(rows * signBytesFor(dimension)) }
}

export function createCellRows(matcher: Matcher, cells: number): CellRows {
  const { dimension } = matcher
  const bytes = signBytesFor(dimension)
  const gallery = matcher.createGallery({ ids: 'uuid' })
  const ranges: number[][] = Array.from({ length: cells }, () => [0, 0])
  /** Rows cell c may fill from ranges[c][0]. */
  const capacity = new Uint32Array(cells)
  let rowPalm = new Uint32Array(1024)
  let rows = 0

  const growRowPalm = (needed: number) => {
    if (needed <= rowPalm.length) return
    const grown = new Uint32Array(Math.max(needed, rowPalm.length * 2))
    grown.set(rowPalm.subarray(0, rows))
    rowPalm = grown
  }

  /**
   * Lays out `moving` at the gallery's end: each cell's rows so far, then its new palms `added[c]`
   * (numbered from `first`, in `palms`), then room (`roomShare` of its rows, at least MIN_ROOM).
   */
  function relocate(moving: readonly number[], added: readonly (readonly number[])[], first: number, palms: PackedCodedPalms, roomShare: number) {
    const held = (cell: number) => ranges[cell][1] - ranges[cell][0]
    const extentOf = (cell: number) => {
      const used = held(cell) + added[cell].length
      return used + Math.max(MIN_ROOM, Math.ceil(used * roomShare))
    }
    const total = moving.reduce((sum, cell) => sum + extentOf(cell), 0)
    growRowPalm(rows + total)
    let page = rowBuffer(Math.min(total, PAGE_ROWS), dimension)
    let pageFirst = rows
    let pageRows = 0
    const flush = () => {
      if (pageRows === 0) return
      gallery.upsertRows({
        ids: rowIdBytes(pageFirst, pageRows),
        vectors: page.vectors.subarray(0, pageRows * dimension),
        norms: page.norms.subarray(0, pageRows),
        signBits: page.signBits.subarray(0, pageRows * bytes),
      })
      pageFirst += pageRows
      pageRows = 0
    }
    for (const cell of moving) {
      const [start, end] = ranges[cell]
      const extent = extentOf(cell)
      // A cell's rows and room in one page; a cell larger than a page gets one of its own.
      if (pageRows + extent > page.norms.length) {
        flush()
        if (extent > page.norms.length) page = rowBuffer(extent, dimension)
      }
      const row = pageFirst + pageRows
      if (end > start) {
        const old = gallery.readRows('', start, end - start)
        page.vectors.set(old.vectors, pageRows * dimension)
        page.norms.set(old.norms, pageRows)
        page.signBits.set(old.signBits, pageRows * bytes)
        rowPalm.copyWithin(row, start, end)
      }
      added[cell].forEach((index, offset) => {
        copyPalm(palms, index, page, pageRows + end - start + offset)
        rowPalm[row + end - start + offset] = first + index
      })
      const used = end - start + added[cell].length
      // The room: zero vectors never read (outside the cell's run), codes all ones.
      page.vectors.fill(0, (pageRows + used) * dimension, (pageRows + extent) * dimension)
      page.norms.fill(0, pageRows + used, pageRows + extent)
      page.signBits.fill(0xff, (pageRows + used) * bytes, (pageRows + extent) * bytes)
      ranges[cell] = [row, row + used]
      capacity[cell] = extent
      pageRows += extent
      rows += extent
    }
    flush()
  }

  /** Copies palm `index` of `palms` into `page` at slot `at`. */
  function copyPalm(palms: PackedCodedPalms, index: number, page: ReturnType<typeof rowBuffer>, at: number) {
    page.vectors.set(palms.vectors.subarray(index * dimension, (index + 1) * dimension), at * dimension)
    page.norms[at] = palms.norms[index]
    page.signBits.set(palms.codes.subarray(index * bytes, (index + 1) * bytes), at * bytes)
  }

  return {
    gallery,
    ranges,
    palmAt: (row) => rowPalm[row],
    append(first, palms, nearest, cellsEach) {
      const byCell: number[][] = Array.from({ length: cells }, () => [])
      for (let index = 0; index < nearest.length / cellsEach; index++) {
        for (let slot = 0; slot < cellsEach; slot++) {
          const cell = nearest[index * cellsEach + slot]
          if (cell >= 0) byCell[cell].push(index)
        }
      }
      // The first layout: every cell, with a share of room; later, cells whose room ran out, with room to double.
      if (rows === 0)
        return relocate(
          Array.from({ length: cells }, (_, cell) => cell),
          byCell,
          first,
          palms,
          ROOM_SHARE,
        )
      const moving: number[] = []
      byCell.forEach((indices, cell) => {
        if (!indices.length) return
        const [start, end] = ranges[cell]
        if (end - start + indices.length > capacity[cell]) {
          moving.push(cell)
          return
        }
        // In place, after the cell's rows.
        const page = rowBuffer(indices.length, dimension)
        indices.forEach((index, at) => {
          copyPalm(palms, index, page, at)
          rowPalm[end + at] = first + index
        })
        overwriteGalleryRows(gallery, end, page)
        ranges[cell] = [start, end + indices.length]
      })
      if (moving.length) relocate(moving, byCell, first, palms, 1)
    },
  }
}
