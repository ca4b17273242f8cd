// The self-join scans of the deduplication (row-range-scan.ts) on every backend, native once per
// ISA the addon offers: a scan of a run of rows with a score floor equals the brute force over
// those rows (rows at or above the floor, by score then row), and a join gated by Hamming distance
// the brute force within the radius. The service's cell search over these
// scans is tested in test/domain/dedup-cells-backends.test.ts.
import { describe, expect, it } from 'vitest'
import {
  copyGalleryRow,
  copyGalleryRows,
  joinRowRangeGated,
  overwriteGalleryRows,
  scanCellsTopK,
  scanRowRangesTopK,
  scanRowRangeTopK,
} from '../src/row-range-scan.js'
import { packSignBits, signBytesFor } from '../src/sign-bits.js'
import { cosine, lookAlikes, normSquared, rankRows } from './brute-force.js'
import { SELF_JOIN_DIMENSION as DIMENSION, selfJoinVariants, useSelfJoinMatcher } from './self-join-matcher.js'

const uuidOf = (row: number) => `${row.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`

/**
 * Cells of 30 probes over 300 rows: of one run, of several runs across the 64-row chunks, an empty
 * one, and one no probe reads; a probe named by several cells, probes out of order.
 */
const CELLS = [
  { ranges: [0, 60], probes: [0, 1, 2, 29] },
  { ranges: [60, 70, 130, 200], probes: [5, 3, 4, 0] },
  { ranges: [200, 200], probes: [7] },
  { ranges: [200, 300], probes: Array.from({ length: 30 }, (_, index) => 29 - index) },
  { ranges: [10, 20], probes: [] },
]

/** The Hamming distance of code `a` of `codesA` and code `b` of `codesB` (`codesB` defaults to `codesA`). */
function hamming(codesA: Uint8Array, a: number, b: number, codesB = codesA): number {
  const bytes = signBytesFor(DIMENSION)
  let distance = 0
  for (let byte = 0; byte < bytes; byte++) for (let bits = codesA[a * bytes + byte] ^ codesB[b * bytes + byte]; bits; bits &= bits - 1) distance++
  return distance
}

describe.each(selfJoinVariants)('$name self-join scans', (variant) => {
  const matcherOf = useSelfJoinMatcher(variant)

  /** 300 look-alike rows in a gallery, and the rows `probeRows` copied out of it as probes. */
  function galleryWithProbes(probeRows: number[]) {
    const rows = lookAlikes(300, 5, DIMENSION)
    const gallery = matcherOf().createGallery({ ids: 'uuid' })
    rows.forEach((row, index) => gallery.upsert(uuidOf(index), row))
    const probes = new Int8Array(probeRows.length * DIMENSION)
    const norms = new Uint32Array(probeRows.length)
    probeRows.forEach((row, index) => {
      norms[index] = copyGalleryRow(gallery, row, probes, index * DIMENSION)
    })
    return { rows, gallery, probes, norms }
  }

  it('scans a run of rows for many probes: the brute force above the floor, by score then row', async () => {
    const probeRows = Array.from({ length: 40 }, (_, index) => index * 7 + 3)
    const { rows, gallery, probes, norms } = galleryWithProbes(probeRows)
    expect(Array.from(norms)).toEqual(probeRows.map((row) => normSquared(rows[row])))
    const [from, to, k, floor] = [50, 250, 8, 0.3]
    const top = await scanRowRangeTopK(gallery, from, to, probes, norms, k, floor)
    probeRows.forEach((row, index) => {
      const inRange = rows.map((vector, at) => (at >= from && at < to ? vector : null))
      const expected = rankRows(rows[row], inRange, k).filter((hit) => hit.score >= floor)
      const got = Array.from({ length: k }, (_, slot) => ({ row: top.rows[index * k + slot], score: top.scores[index * k + slot] })).filter(
        (hit) => hit.row >= 0 && hit.score >= floor,
      )
      expect(got).toEqual(expected)
    })
  })

  it.each([3, 40])('scans several runs of rows at once (%i probes): the brute force over their union', async (probeCount) => {
    const probeRows = Array.from({ length: probeCount }, (_, index) => index * 7 + 3)
    const { rows, gallery, probes, norms } = galleryWithProbes(probeRows)
    // Runs inside one 64-row chunk, across chunks, and an empty one.
    const ranges = [10, 40, 100, 180, 250, 250, 260, 300]
    const inRanges = (at: number) => ranges.some((from, slot) => slot % 2 === 0 && at >= from && at < ranges[slot + 1])
    const [k, floor] = [8, 0.3]
    const top = await scanRowRangesTopK(gallery, ranges, probes, norms, k, floor)
    probeRows.forEach((row, index) => {
      const expected = rankRows(
        rows[row],
        rows.map((vector, at) => (inRanges(at) ? vector : null)),
        k,
      ).filter((hit) => hit.score >= floor)
      const got = Array.from({ length: k }, (_, slot) => ({ row: top.rows[index * k + slot], score: top.scores[index * k + slot] })).filter(
        (hit) => hit.row >= 0 && hit.score >= floor,
      )
      expect(got).toEqual(expected)
    })
  })

  it('scans many cells at once, each for the probes it names: every list the brute force over its cell', async () => {
    const probeRows = Array.from({ length: 30 }, (_, index) => index * 9 + 1)
    const { rows, gallery, probes, norms } = galleryWithProbes(probeRows)
    const cells = CELLS
    const [k, floor] = [6, 0.3]
    // From a view, as a block of a larger packing is passed.
    const padded = new Int8Array(probes.length + DIMENSION)
    padded.set(probes, DIMENSION)
    const top = await scanCellsTopK(gallery, cells, padded.subarray(DIMENSION), norms, k, floor)
    expect(top.probeCount).toBe(cells.reduce((sum, cell) => sum + cell.probes.length, 0))
    let list = 0
    for (const cell of cells) {
      const inCell = (at: number) => cell.ranges.some((from, slot) => slot % 2 === 0 && at >= from && at < cell.ranges[slot + 1])
      for (const probe of cell.probes) {
        const expected = rankRows(
          rows[probeRows[probe]],
          rows.map((vector, at) => (inCell(at) ? vector : null)),
          k,
        ).filter((hit) => hit.score >= floor)
        const got = Array.from({ length: k }, (_, slot) => ({ row: top.rows[list * k + slot], score: top.scores[list * k + slot] })).filter(
          (hit) => hit.row >= 0 && hit.score >= floor,
        )
        expect(got).toEqual(expected)
        list++
      }
    }
  })

  /** The rows as a register shared with the workers, their codes their sign bits (as the gallery stores them). */
  function sharedRegister(rows: Int8Array[]) {
    const vectors = new Int8Array(new SharedArrayBuffer(rows.length * DIMENSION))
    rows.forEach((row, index) => vectors.set(row, index * DIMENSION))
    const norms = new Uint32Array(new SharedArrayBuffer(rows.length * 4))
    rows.forEach((row, index) => {
      norms[index] = normSquared(row)
    })
    const codes = new Uint8Array(new SharedArrayBuffer(rows.length * signBytesFor(DIMENSION)))
    codes.set(packSignBits(vectors, DIMENSION, rows.length))
    return { vectors, norms, codes }
  }

  it.each([
    ['a radius that keeps every pair, lists of 2 (cells read again with room for all)', 128, 2],
    ['a radius that keeps few pairs', 40, 16],
    ['a radius that keeps some, lists of 1', 52, 1],
  ])('joins a run of rows gated by Hamming distance, %s: the brute force within the radius at the threshold', async (_, radius, candidates) => {
    const rows = lookAlikes(300, 5, DIMENSION)
    const gallery = matcherOf().createGallery({ ids: 'uuid' })
    rows.forEach((row, index) => gallery.upsert(uuidOf(index), row))
    const register = sharedRegister(rows)
    const [from, to, threshold] = [30, 270, 0.5]
    const probes = Uint32Array.from({ length: 60 }, (_, index) => (index * 13 + 7) % 300)
    const pairs = await joinRowRangeGated(gallery, from, to, probes, register, { radius, threshold, candidates })
    const got = Array.from(pairs.rows, (row, index) => `${pairs.probes[index]} ${row} ${pairs.scores[index]}`).sort()
    const expected: string[] = []
    for (const probe of probes) {
      for (let row = from; row < to; row++) {
        const score = cosine(rows[probe], rows[row])
        if (score >= threshold && hamming(register.codes, probe, row) <= radius) expected.push(`${probe} ${row} ${score}`)
      }
    }
    expect(expected.length).toBeGreaterThan(probes.length)
    expect(got).toEqual(expected.sort())
  })

  it.each([
    ['a radius that keeps every pair, lists of 2 (cells read again)', 128, 2],
    ['a radius that keeps few pairs', 40, 16],
  ])('scans many cells at once gated by Hamming distance, %s: each list the brute force within the radius at the floor', async (_, radius, candidates) => {
    const probeRows = Array.from({ length: 30 }, (_, index) => index * 9 + 1)
    const { rows, gallery, probes, norms } = galleryWithProbes(probeRows)
    // The probes' codes are their sign bits, as the rows' are.
    const codes = packSignBits(probes, DIMENSION, probeRows.length)
    const rowCodes = packSignBits(Int8Array.from(rows.flatMap((row) => Array.from(row))), DIMENSION, rows.length)
    const cells = CELLS
    const [k, floor] = [6, 0.3]
    const top = await scanCellsTopK(gallery, cells, probes, norms, k, floor, { codes, radius, candidates })
    let list = 0
    let kept = 0
    for (const cell of cells) {
      const inCell = (at: number) => cell.ranges.some((from, slot) => slot % 2 === 0 && at >= from && at < cell.ranges[slot + 1])
      for (const probe of cell.probes) {
        const expected = rankRows(
          rows[probeRows[probe]],
          rows.map((vector, at) => (inCell(at) && hamming(codes, probe, at, rowCodes) <= radius ? vector : null)),
          k,
        ).filter((hit) => hit.score >= floor)
        const got = Array.from({ length: k }, (_, slot) => ({ row: top.rows[list * k + slot], score: top.scores[list * k + slot] })).filter(
          (hit) => hit.row >= 0,
        )
        expect(got).toEqual(expected)
        kept += expected.length
        list++
      }
    }
    expect(kept).toBeGreaterThan(cells.length)
  })

  it('writes rows in place across chunks: scans then score the new vectors; rows past the count or removed are refused', async () => {
    const probeRows = [3, 150]
    const { rows, gallery, probes, norms } = galleryWithProbes(probeRows)
    // Rows 60..70 (across the first 64-row chunk's end) become copies of the two probes, alternately.
    const written = { vectors: new Int8Array(10 * DIMENSION), norms: new Uint32Array(10), signBits: new Uint8Array(10 * signBytesFor(DIMENSION)) }
    for (let index = 0; index < 10; index++) {
      const source = rows[probeRows[index % 2]]
      written.vectors.set(source, index * DIMENSION)
      written.norms[index] = normSquared(source)
    }
    written.signBits.set(packSignBits(written.vectors, DIMENSION, 10))
    overwriteGalleryRows(gallery, 60, written)
    const top = await scanRowRangeTopK(gallery, 60, 70, probes, norms, 5, 0.99)
    expect(Array.from(top.rows.subarray(0, 5))).toEqual([60, 62, 64, 66, 68])
    expect(Array.from(top.rows.subarray(5, 10))).toEqual([61, 63, 65, 67, 69])
    expect(() => overwriteGalleryRows(gallery, 295, written)).toThrow(RangeError)
    gallery.remove(uuidOf(120))
    expect(() => overwriteGalleryRows(gallery, 115, written)).toThrow(/row 120 was removed/)
  })

  it('gathers rows across chunks in one call as copyGalleryRow does row by row', () => {
    const rows = lookAlikes(200, 5, DIMENSION)
    const gallery = matcherOf().createGallery({ ids: 'uuid' })
    rows.forEach((row, index) => gallery.upsert(uuidOf(index), row))
    // Out of order and across the 64-row chunks, one row twice.
    const wanted = Uint32Array.of(199, 0, 63, 64, 130, 5, 64)
    const gathered = new Int8Array(wanted.length * DIMENSION)
    const norms = new Uint32Array(wanted.length)
    copyGalleryRows(gallery, wanted, gathered, norms)
    wanted.forEach((row, index) => {
      expect(Array.from(gathered.subarray(index * DIMENSION, (index + 1) * DIMENSION))).toEqual(Array.from(rows[row]))
      expect(norms[index]).toBe(normSquared(rows[row]))
    })
  })
})
