// The self-join scans of the deduplication (row-range-scan.ts) on every backend, native once per
// ISA the addon offers: a scan of a run of rows with a score floor equals the brute force over
// those rows (rows at or above the floor, by score then row). The service's cell search over these
// scans is tested in test/domain/dedup-cells-backends.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableBackends, loadNativeAddon, type BackendName } from '../src/backend.js'
import { createMatcher, type Matcher } from '../src/index.js'
import { copyGalleryRow, scanRowRangeTopK } from '../src/row-range-scan.js'
import { lookAlikes, normSquared, rankRows } from './brute-force.js'

const nativeAddon = loadNativeAddon()
const variants = availableBackends().flatMap((backend): { name: string, backend: BackendName, isa?: string }[] => backend === 'native' && nativeAddon.ok
  ? nativeAddon.value.availableIsas().map((isa) => ({ name: `native:${isa}`, backend, isa }))
  : [{ name: backend, backend }])
const DIMENSION = 128
const uuidOf = (row: number) => `${row.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`

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
    const rows = lookAlikes(300, 5, DIMENSION)
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
})
