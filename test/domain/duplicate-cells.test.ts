// The import's cell index (duplicate-cells.ts) over a gallery of a planted register: placing palms
// through the coarse centroids (how the whole gallery is placed when the index is built) finds the
// same nearest cells as comparing with every fine centroid (how a batch's probes are placed) when
// every coarse centroid is read, so both indexes answer alike; and reading every cell answers as
// the exact search does above the threshold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMatcher, quantizeFloat, type Gallery, type Matcher } from '@palmvein/matcher'
import { createPlantedRegister } from '../../bench/dedup-register.js'
import { buildDuplicateCellIndex, CELL_INDEX_SETTINGS, type CellIndexSettings } from '../../src/domain/import/duplicate-cells.js'
import { HANDS } from '../../src/domain/galleries/galleries.js'

const THRESHOLD = 0.8
const register = createPlantedRegister({ seed: 41, dimension: 256, base: 500, duplicates: 40, lookAlikes: 40, threshold: THRESHOLD })
const uuid = (member: number) => `00000000-0000-4000-8000-${String(member).padStart(12, '0')}`
// 1 160 palms in ~145 cells of ~16 rows, ~12 coarse centroids.
const SMALL_CELLS: CellIndexSettings = { ...CELL_INDEX_SETTINGS, rowsPerCell: 16, probed: 10, coarseProbed: 1_000, coarsePlaced: 1_000 }

describe('the import cell index', () => {
  let matcher: Matcher
  let gallery: Gallery
  const probes: Int8Array[] = []
  beforeAll(async () => {
    matcher = await createMatcher({ dimension: 256, threads: 2, backend: 'auto' })
    gallery = matcher.createGallery({ ids: 'uuid' })
    // The base members are stored; the planted ones (copies and look-alikes of base members) probe.
    for (let member = 0; member < register.members; member++) {
      const palms = HANDS.map((_, hand) => quantizeFloat(register.palm(member, hand as 0 | 1)))
      if (member < 500) HANDS.forEach((hand, index) => gallery.upsert(uuid(member), palms[index], { partition: hand }))
      else probes.push(...palms)
    }
  })
  afterAll(async () => {
    await matcher?.close()
  })

  it('places through the coarse centroids as through every fine one when it reads every coarse centroid', async () => {
    const throughCoarse = await buildDuplicateCellIndex(matcher, gallery, { ...SMALL_CELLS, flatScores: 0 })
    const flat = await buildDuplicateCellIndex(matcher, gallery, { ...SMALL_CELLS, flatScores: Number.POSITIVE_INFINITY })
    expect(throughCoarse.cells).toBeGreaterThan(100)
    expect(throughCoarse.cells).toBe(flat.cells)
    const [coarseHits, flatHits] = await Promise.all([throughCoarse.search(probes, 4, THRESHOLD), flat.search(probes, 4, THRESHOLD)])
    expect(coarseHits).toEqual(flatHits)
    // The planted copies are found (their look-alike halves are new people on the right hand).
    expect(coarseHits.filter((hits) => hits.length).length).toBeGreaterThanOrEqual(40)
  })

  it('reading every cell, reports what the exact search reports at or above the threshold', async () => {
    const index = await buildDuplicateCellIndex(matcher, gallery, { ...SMALL_CELLS, probed: 1_000, flatScores: 0 })
    const hits = await index.search(probes, 4, THRESHOLD)
    const exact = await gallery.searchBatch(probes, { k: 4 })
    expect(hits).toEqual(exact.map((found) => found.filter((hit) => hit.score >= THRESHOLD)))
  })
})
