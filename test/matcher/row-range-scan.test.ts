// The self-join scans of the deduplication (row-range-scan.ts, dedup-cells.ts) on every backend,
// native once per ISA the addon offers: a scan of a run of rows with a score floor equals the
// brute force over those rows (rows at or above the floor, by score then row), and the cell search
// on a small register with planted look-alikes reports exactly the brute-force pairs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findPairsByCells } from '../../src/domain/dedup/dedup-cells.js'
import { availableBackends, loadNativeAddon, type BackendName } from '../../src/matcher/backend.js'
import { createMatcher, type Matcher } from '../../src/matcher/index.js'
import { createRandom } from '../../src/matcher/random.js'
import { copyGalleryRow, scanRowRangeTopK } from '../../src/matcher/row-range-scan.js'
import { cosine, normSquared, randomInt8, rankRows } from './brute-force.js'

const nativeAddon = loadNativeAddon()
const variants = availableBackends().flatMap((backend): { name: string, backend: BackendName, isa?: string }[] => backend === 'native' && nativeAddon.ok
  ? nativeAddon.value.availableIsas().map((isa) => ({ name: `native:${isa}`, backend, isa }))
  : [{ name: backend, backend }])
const DIMENSION = 128
const uuidOf = (row: number) => `${row.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`

/** Rows of which every fifth is a look-alike (cosine about 0.9) of the row before it. */
function lookAlikes(count: number, seed: number): Int8Array[] {
  const random = createRandom(seed)
  const rows: Int8Array[] = []
  for (let index = 0; index < count; index++) {
    if (index % 5 !== 4) {
      rows.push(randomInt8(seed * 1000 + index, DIMENSION))
      continue
    }
    const base = rows[index - 1]
    rows.push(Int8Array.from(base, (value) => Math.max(-127, Math.min(127, Math.round(value * 0.9 + random.gaussian() * 20)))))
  }
  return rows
}

describe.each(variants)('$name self-join scans', ({ backend, isa }) => {
  let matcher: Matcher
  let previousIsa: string | undefined
  beforeAll(async () => {
    if (isa && nativeAddon.ok) {
      previousIsa = nativeAddon.value.activeIsa()
      nativeAddon.value.setIsa(isa)
    }
    // chunkRows 64: row ranges cross chunks; two workers split the probes.
    matcher = await createMatcher({ dimension: DIMENSION, threads: 2, backend, chunkRows: 64, maxMemoryBytes: 256 << 20 })
  })
  afterAll(async () => {
    await matcher?.close()
    if (previousIsa && nativeAddon.ok) nativeAddon.value.setIsa(previousIsa)
  })

  it('scans a run of rows for many probes: the brute force above the floor, by score then row', async () => {
    const rows = lookAlikes(300, 5)
    const gallery = matcher.createGallery({ ids: 'uuid' })
    rows.forEach((row, index) => gallery.upsert(uuidOf(index), row))
    const probeRows = Array.from({ length: 40 }, (_, index) => index * 7 + 3)
    const probes = new Int8Array(probeRows.length * DIMENSION)
    const norms = new Uint32Array(probeRows.length)
    probeRows.forEach((row, index) => { norms[index] = copyGalleryRow(gallery, row, probes, index * DIMENSION) })
    expect(Array.from(norms)).toEqual(probeRows.map((row) => normSquared(rows[row])))
    const [from, to, k, floor] = [50, 250, 8, 0.3]
    const top = await scanRowRangeTopK(gallery, from, to, probes, norms, k, floor)
    probeRows.forEach((row, index) => {
      const inRange = rows.map((vector, at) => (at >= from && at < to ? vector : null))
      const expected = rankRows(rows[row], inRange, k).filter((hit) => hit.score >= floor)
      const got = Array.from({ length: k }, (_, slot) => ({ row: top.rows[index * k + slot], score: top.scores[index * k + slot] }))
        .filter((hit) => hit.row >= 0 && hit.score >= floor)
      expect(got).toEqual(expected)
    })
  })

  it('finds by cells exactly the brute-force pairs of a register, owners never paired with themselves', async () => {
    const rows = lookAlikes(400, 9)
    const threshold = 0.7
    const register = { count: rows.length, dimension: DIMENSION, vector: (palm: number) => rows[palm], owner: (palm: number) => palm >> 1 }
    const expected = new Map<string, number>()
    for (let a = 0; a < rows.length; a++) {
      for (let b = a + 1; b < rows.length; b++) {
        const score = cosine(rows[a], rows[b])
        const key = `${a >> 1}/${b >> 1}`
        if (a >> 1 !== b >> 1 && score >= threshold && score > (expected.get(key) ?? -1)) expected.set(key, score)
      }
    }
    expect(expected.size).toBeGreaterThan(20)
    // Every cell probed: the search is exhaustive, so the cells' rows and their bookkeeping are all checked.
    const result = await findPairsByCells(matcher, register, { threshold, cells: 20, probes: 20 })
    expect(result.complete).toBe(true)
    expect(new Map(result.pairs.map((pair) => [`${pair.a >> 1}/${pair.b >> 1}`, pair.score]))).toEqual(expected)
    // Fewer cells probed: never a pair that is not one, and every score exact.
    const fewer = await findPairsByCells(matcher, register, { threshold, cells: 20, probes: 3 })
    expect(fewer.candidateScores).toBeLessThan(result.candidateScores)
    for (const pair of fewer.pairs) expect(expected.get(`${pair.a >> 1}/${pair.b >> 1}`)).toBe(pair.score)
  })
})
