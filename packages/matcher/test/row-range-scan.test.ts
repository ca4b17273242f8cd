// The self-join scans of the deduplication (row-range-scan.ts) on every backend, native once per
// ISA the addon offers: a scan of a run of rows with a score floor equals the brute force over
// those rows (rows at or above the floor, by score then row). The service's cell search over these
// scans is tested in test/domain/dedup-cells-backends.test.ts.
import { describe, expect, it } from 'vitest'
import { copyGalleryRow, copyGalleryRows, scanRowRangesTopK, scanRowRangeTopK } from '../src/row-range-scan.js'
import { lookAlikes, normSquared, rankRows } from './brute-force.js'
import { SELF_JOIN_DIMENSION as DIMENSION, selfJoinVariants, useSelfJoinMatcher } from './self-join-matcher.js'

const uuidOf = (row: number) => `${row.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`

describe.each(selfJoinVariants)('$name self-join scans', (variant) => {
  const matcherOf = useSelfJoinMatcher(variant)

  it('scans a run of rows for many probes: the brute force above the floor, by score then row', async () => {
    const rows = lookAlikes(300, 5, DIMENSION)
    const gallery = matcherOf().createGallery({ ids: 'uuid' })
    rows.forEach((row, index) => gallery.upsert(uuidOf(index), row))
    const probeRows = Array.from({ length: 40 }, (_, index) => index * 7 + 3)
    const probes = new Int8Array(probeRows.length * DIMENSION)
    const norms = new Uint32Array(probeRows.length)
    probeRows.forEach((row, index) => {
      norms[index] = copyGalleryRow(gallery, row, probes, index * DIMENSION)
    })
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
    const rows = lookAlikes(300, 5, DIMENSION)
    const gallery = matcherOf().createGallery({ ids: 'uuid' })
    rows.forEach((row, index) => gallery.upsert(uuidOf(index), row))
    const probeRows = Array.from({ length: probeCount }, (_, index) => index * 7 + 3)
    const probes = new Int8Array(probeRows.length * DIMENSION)
    const norms = new Uint32Array(probeRows.length)
    probeRows.forEach((row, index) => {
      norms[index] = copyGalleryRow(gallery, row, probes, index * DIMENSION)
    })
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
