// The import cell index's rows (cell-rows.ts): every cell stays one run holding exactly the palms
// stored in it, in order, with their vectors, norms and codes, whether the palms an import adds
// fit the room after the cell (written in place) or the cell moves to the gallery's end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMatcher, normSquaredInt8, type Matcher } from '@palmvein/matcher'
import { copyGalleryRows, signBytesFor } from '@palmvein/matcher/row-range-scan'
import { createCellRows, type PackedCodedPalms } from '../../src/domain/import/cell-rows.js'

const DIMENSION = 64
const BYTES = signBytesFor(DIMENSION)
const CELLS = 5

/** `count` palms numbered from `first`: each vector and code derived from its number. */
function palmsFrom(first: number, count: number): PackedCodedPalms {
  const vectors = new Int8Array(count * DIMENSION)
  const norms = new Uint32Array(count)
  const codes = new Uint8Array(count * BYTES)
  for (let index = 0; index < count; index++) {
    const palm = first + index
    for (let component = 0; component < DIMENSION; component++) vectors[index * DIMENSION + component] = ((palm * 31 + component * 7) % 255) - 127
    norms[index] = normSquaredInt8(vectors.subarray(index * DIMENSION, (index + 1) * DIMENSION))
    codes.fill(palm % 251, index * BYTES, (index + 1) * BYTES)
  }
  return { vectors, norms, codes }
}

describe('the import cell index rows', () => {
  let matcher: Matcher
  beforeAll(async () => {
    matcher = await createMatcher({ dimension: DIMENSION, threads: 0 })
  })
  afterAll(async () => {
    await matcher?.close()
  })

  it('keeps each cell one run of its palms, in place while its room lasts, moved when it runs out', () => {
    const rows = createCellRows(matcher, CELLS)
    const expected: number[][] = Array.from({ length: CELLS }, () => [])
    let palms = 0
    /** Stores `count` palms, palm i in cells `cellsOf(i)` (two each, -1 for none). */
    const store = (count: number, cellsOf: (palm: number) => [number, number]) => {
      const nearest = new Int32Array(count * 2)
      for (let index = 0; index < count; index++) {
        nearest.set(cellsOf(palms + index), index * 2)
        for (const cell of cellsOf(palms + index)) if (cell >= 0) expected[cell].push(palms + index)
      }
      rows.append(palms, palmsFrom(palms, count), nearest, 2)
      palms += count
    }
    const check = () => {
      const ends = rows.ranges.map(([from, to]) => [from, to])
      for (let cell = 0; cell < CELLS; cell++) {
        const [from, to] = rows.ranges[cell]
        const held = Array.from({ length: to - from }, (_, offset) => rows.palmAt(from + offset))
        expect(held, `cell ${cell}`).toEqual(expected[cell])
        // The rows hold the palms' vectors, norms and codes.
        const vectors = new Int8Array(held.length * DIMENSION)
        const norms = new Uint32Array(held.length)
        copyGalleryRows(
          rows.gallery,
          Array.from({ length: held.length }, (_, offset) => from + offset),
          vectors,
          norms,
        )
        const stored = palmsFrom(0, palms)
        held.forEach((palm, offset) => {
          expect(vectors.subarray(offset * DIMENSION, (offset + 1) * DIMENSION)).toEqual(stored.vectors.subarray(palm * DIMENSION, (palm + 1) * DIMENSION))
          expect(norms[offset]).toBe(stored.norms[palm])
        })
        const page = rows.gallery.readRows('', from, to - from)
        expect(page.signBits).toEqual(Uint8Array.from(held.flatMap((palm) => Array.from(stored.codes.subarray(palm * BYTES, (palm + 1) * BYTES)))))
      }
      // No two cells' runs overlap.
      const sorted = ends.filter(([from, to]) => to > from).sort((a, b) => a[0] - b[0])
      sorted.slice(1).forEach(([from], index) => expect(from).toBeGreaterThanOrEqual(sorted[index][1]))
    }

    // The build: 40 palms over the cells (cell 4 empty, laid out with room anyway).
    store(40, (palm) => [palm % 4, (palm + 1) % 4])
    check()
    const before = rows.ranges.map(([from]) => from)
    // A few palms: they fit the room, written in place (the cells do not move).
    store(2, () => [0, 4])
    check()
    expect(rows.ranges[0][0]).toBe(before[0])
    expect(rows.ranges[4][0]).toBe(before[4])
    // Many palms into cells 1 and 4: past their room, both move; cell 3 receives none and stays.
    for (let batch = 0; batch < 6; batch++) {
      store(7, (palm) => [1, palm % 2 === 0 ? 4 : -1])
      check()
    }
    expect(rows.ranges[1][0]).not.toBe(before[1])
    expect(rows.ranges[4][0]).not.toBe(before[4])
    expect(rows.ranges[3][0]).toBe(before[3])
  })
})
