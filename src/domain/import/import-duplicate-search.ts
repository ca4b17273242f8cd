// Where an import batch's duplicate probes are searched (import-duplicates.ts decides from the
// hits): the exact scan of the environment's gallery (the default, enrollment's search), or, when
// asked for, the cell index (duplicate-cells.ts) for the palms stored before the batch plus an
// exact scan of the batch's own candidates. The index is built at the import's first batch, holds
// what the import accepts after that, and is dropped (then built again) when another process
// changed the gallery. The cells are not the default: measured against the exact search they
// missed a few matches (bench/results/2026-11-28-import-search/report.md).
import { createMatcher, type Gallery, type Matcher } from '@palmvein/matcher'
import { byScoreThenId } from '@palmvein/matcher/gallery-search'
import { duplicateProbes, type HandProbes } from '../enrollment/enrollment.js'
import type { EnvironmentGallery } from '../galleries/galleries.js'
import type { GalleryHit } from '../identification/identify-decision.js'
import { buildDuplicateCellIndex, CELL_INDEX_SETTINGS, type CellIndexSettings, type DuplicateCellIndex } from './duplicate-cells.js'

export type DuplicateSearchMode = 'exact' | 'cells'

export interface SearchedCandidate {
  id: string
  hands: HandProbes[]
}

export interface BatchDuplicateSearch {
  /** Before a batch's candidates are staged in the gallery: builds the index when it is wanted and missing. */
  prepare(gallery: EnvironmentGallery): Promise<void>
  /** Per candidate, per duplicate probe, its best `k` hits (the candidates are staged in the gallery). */
  search(gallery: EnvironmentGallery, candidates: readonly SearchedCandidate[], k: number): Promise<GalleryHit[][][]>
  /** The batch's accepted candidates, which later batches must find. */
  accepted(candidates: readonly SearchedCandidate[]): Promise<void>
  /** Another process changed the gallery since the index was built. */
  invalidate(): void
  close(): Promise<void>
}

const exactSearch = (gallery: EnvironmentGallery, candidates: readonly SearchedCandidate[], k: number) =>
  Promise.all(candidates.map((candidate) => gallery.gallery.searchBatch(duplicateProbes(candidate.hands), { k })))

/** The exact scan of the environment's gallery, the same as enrollment's. */
export const EXACT_SEARCH: BatchDuplicateSearch = {
  prepare: async () => {},
  search: exactSearch,
  accepted: async () => {},
  invalidate: () => {},
  close: async () => {},
}

export function createBatchDuplicateSearch(
  mode: DuplicateSearchMode,
  matcherOptions: { threads: number },
  settings: CellIndexSettings = CELL_INDEX_SETTINGS,
): BatchDuplicateSearch {
  if (mode === 'exact') return EXACT_SEARCH
  let matcher: Promise<Matcher> | null = null
  let index: Promise<DuplicateCellIndex> | null = null
  // The batch's own candidates, searched exactly (they are not in the index).
  let batchGallery: Gallery | null = null

  async function searchCells(gallery: EnvironmentGallery, candidates: readonly SearchedCandidate[], k: number): Promise<GalleryHit[][][]> {
    const batch = batchGallery!
    for (const candidate of candidates) for (const hand of candidate.hands) batch.upsert(candidate.id, hand.reference, { partition: hand.hand })
    try {
      const probes = candidates.map((candidate) => duplicateProbes(candidate.hands))
      const flat = probes.flat()
      const threshold = gallery.environment.match_threshold
      const cells = await index!
      const [stored, staged] = await Promise.all([cells.search(flat, k, threshold), batch.searchBatch(flat, { k })])
      let next = 0
      return probes.map((ofCandidate) =>
        ofCandidate.map(() => {
          const at = next++
          return [...stored[at], ...staged[at]].sort(byScoreThenId).slice(0, k)
        }),
      )
    } finally {
      for (const candidate of candidates) batch.remove(candidate.id)
    }
  }

  return {
    async prepare(gallery) {
      if (index) return
      matcher ??= createMatcher({ dimension: gallery.environment.dimension, threads: matcherOptions.threads })
      const own = await matcher
      batchGallery ??= own.createGallery()
      index = buildDuplicateCellIndex(own, gallery.gallery, settings)
      await index.catch((error: unknown) => {
        index = null
        throw error
      })
    },
    search: (gallery, candidates, k) => (index ? searchCells(gallery, candidates, k) : exactSearch(gallery, candidates, k)),
    async accepted(candidates) {
      if (!index) return
      await (await index).add(
        candidates.flatMap((candidate) => candidate.hands.map((hand) => ({ memberId: candidate.id, hand: hand.hand, vector: hand.reference }))),
      )
    },
    invalidate() {
      index = null
    },
    async close() {
      index = null
      batchGallery = null
      const own = matcher
      matcher = null
      await (await own?.catch(() => null))?.close()
    },
  }
}
