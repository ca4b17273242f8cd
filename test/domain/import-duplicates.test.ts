// The import's batched duplicate screen (import-duplicates.ts) against a real gallery, with the
// exact search and with the cell index: it leaves in the gallery exactly the candidates it
// accepts, whether they are refused as duplicates, past the headcount, or decided one by one after
// the batched search could not tell, and a member accepted in one batch refuses its copy in the next.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { EnvironmentGallery } from '../../src/domain/galleries/galleries.js'
import { screenCandidates, type ScreenedCandidate } from '../../src/domain/import/import-duplicates.js'
import { createBatchDuplicateSearch, EXACT_SEARCH, type BatchDuplicateSearch } from '../../src/domain/import/import-duplicate-search.js'
import { createMatcher, createSyntheticPopulation, quantizeFloat, templateToInt8, decodeTemplate, type Matcher } from '@palmvein/matcher'
import type { EnvironmentRow } from '../../src/store/organizations.js'

describe.each(['exact', 'cells'] as const)('screenCandidates (%s search)', (mode) => {
  let matcher: Matcher
  let search: BatchDuplicateSearch
  beforeAll(async () => {
    matcher = await createMatcher({ dimension: 256, threads: 2, backend: 'auto' })
  })
  afterEach(async () => {
    await search?.close()
  })
  afterAll(async () => {
    await matcher?.close()
  })

  const population = createSyntheticPopulation({ seed: 3, dimension: 256, identities: 40 })
  const vector = (identity: number, attempt: number) =>
    templateToInt8(decodeTemplate(population.template(identity, 'left', 0, attempt, { elementType: 'int8' })))
  const candidate = (id: number, identity: number): ScreenedCandidate => ({
    id: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
    hands: [
      {
        hand: 'left',
        reference: quantizeFloat(Float64Array.from(vector(identity, 0), (value, index) => value + vector(identity, 1)[index])),
        enroll: vector(identity, 0),
        identify: vector(identity, 1),
      },
    ],
  })

  function setting() {
    // A fresh search each time: the cell index is built over the gallery at the first batch.
    search = mode === 'exact' ? EXACT_SEARCH : createBatchDuplicateSearch('cells', { threads: 1 })
    const gallery = matcher.createGallery({ ids: 'uuid' })
    const environment: EnvironmentGallery = { environment: { id: 'e', match_threshold: 0.8, dimension: 256 } as EnvironmentRow, gallery }
    const galleries = {
      upsert: (_: EnvironmentGallery, id: string, hand: 'left' | 'right', reference: Int8Array) => gallery.upsert(id, reference, { partition: hand }),
      removeMember: (_: string, id: string) => {
        gallery.remove(id)
      },
    }
    return { gallery, environment, galleries }
  }

  it('keeps only the accepted candidates staged: duplicates and those past the headcount leave the gallery', async () => {
    const { gallery, environment, galleries } = setting()
    const batch = [candidate(1, 1), candidate(2, 2), candidate(3, 1), candidate(4, 3), candidate(5, 4), candidate(6, 5)]
    const verdicts = await screenCandidates(galleries, environment, batch, 3, search)
    expect(verdicts.map((verdict) => (verdict.accepted ? 'accepted' : verdict.headcount ? 'headcount' : 'duplicate'))).toEqual([
      'accepted',
      'accepted',
      'duplicate',
      'accepted',
      'headcount',
      'headcount',
    ])
    expect(batch.map((entry) => gallery.has(entry.id))).toEqual([true, true, false, true, false, false])
  })

  it('decides one by one after an undecidable candidate, with the same result', async () => {
    const { gallery, environment, galleries } = setting()
    // Nine copies of one palm: the first copy's hits are all later copies, so the batch falls back.
    const batch = [candidate(10, 7), ...Array.from({ length: 9 }, (_, index) => candidate(11 + index, 8)), candidate(20, 9)]
    const verdicts = await screenCandidates(galleries, environment, batch, 100, search)
    expect(verdicts.map((verdict) => verdict.accepted)).toEqual([true, true, false, false, false, false, false, false, false, false, true])
    expect(gallery.size).toBe(3)
  })

  it('refuses in a later batch the copy of a member an earlier batch accepted, and accepts the rest', async () => {
    const { gallery, environment, galleries } = setting()
    gallery.upsert(candidate(30, 10).id, candidate(30, 10).hands[0].reference, { partition: 'left' })
    const first = await screenCandidates(galleries, environment, [candidate(31, 11), candidate(32, 10)], 100, search)
    const second = await screenCandidates(galleries, environment, [candidate(33, 12), candidate(34, 11), candidate(35, 10)], 100, search)
    expect([...first, ...second].map((verdict) => verdict.accepted)).toEqual([true, false, true, false, false])
    expect(gallery.size).toBe(3)
  })
})
