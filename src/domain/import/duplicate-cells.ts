// The cell index of a large import's duplicate-palm search: an inverted file, as `palmvein dedup`
// uses, over the palms the environment's gallery holds when the import starts. Two levels of
// centroids (about √M coarse ones, each with its share of the M fine ones; spherical k-means on a
// sample) make placing the gallery's palms cost some hundreds of scores each instead of M; a
// batch's few thousand probes and accepted palms are compared with every fine centroid (their
// exact nearest cells). Each palm is stored in its `stored` nearest cells (rows laid out cell after
// cell in a gallery of the index's own), and a probe reads the rows of its `probed` nearest cells,
// all the batch's cells in one scan task per matcher thread. Only the (probe, row) pairs whose
// rotated sign codes lie within the Hamming radius of the threshold (the matcher's rotated-codes.ts: a pair
// at the threshold falls outside it with probability ~1e-9) are scored, exactly, with the
// matcher's int8 kernels, so every score it reports is the exact search's. What it can miss is a palm at or
// above the threshold outside the probe's cells: the agreement with the exact search is measured,
// not guaranteed (bench/results/2026-11-29T18-00Z-import-1m: 20 000 of 20 000 lines decided alike
// into 100k members, 19 995 into 1M, the others look-alikes just above the threshold). Members
// the import accepts are placed and written into the room after their cells' rows (cell-rows.ts).
import { normSquaredInt8, type Gallery, type Matcher } from '@palmvein/matcher'
import { byScoreThenId } from '@palmvein/matcher/gallery-search'
import { type CellRead, hammingRadius, rotatedSignCodes, scanCellsTopK, scanRowRangeTopK } from '@palmvein/matcher/row-range-scan'
import { rowId } from '../dedup/dedup-cell-layout.js'
import { trainCentroids } from '../dedup/dedup-cells.js'
import { HANDS } from '../galleries/galleries.js'
import type { GalleryHit } from '../identification/identify-decision.js'
import type { Hand } from '../../store/templates.js'
import { createCellRows } from './cell-rows.js'
import { PalmOwners } from './palm-owners.js'

export interface CellIndexSettings {
  /** Fine cells a probe reads. */
  probed: number
  /** Fine cells a palm stored when the index is built is stored in. */
  stored: number
  /** Fine cells a palm the import adds is stored in (more: they may lie far from every centroid, trained before them). */
  storedAdded: number
  /** Coarse centroids whose fine cells a probe compares with. */
  coarseProbed: number
  /** Coarse centroids whose fine cells a palm being stored compares with. */
  coarsePlaced: number
  /** Rows a cell holds on average (cells = stored palms × stored / this). */
  rowsPerCell: number
  /**
   * Scores a placement may spend comparing its palms with every fine centroid (their exact nearest
   * cells); past it, placement goes through the coarse centroids. At 1M members (2M palms, 7 812
   * cells) building the index flat costs 15.6G scores (~160 CPU-s here), and only flat did the
   * index decide every line of a measured sample as the exact search (bench/results/
   * 2026-11-28-import-search-2): placed through 4 or 16 coarse centroids, the index let in a
   * look-alike the exact search refused at 0.81.
   */
  flatScores: number
}

/** Measured against the exact search on planted registers (bench/results/2026-11-28-import-search). */
export const CELL_INDEX_SETTINGS: CellIndexSettings = {
  probed: 48,
  stored: 2,
  storedAdded: 4,
  coarseProbed: 32,
  coarsePlaced: 4,
  rowsPerCell: 512,
  flatScores: 20_000_000_000,
}

const SEED = 52
/** Probes a stage-1 list holds before its cell is read again with more room (as dedup's). */
const GATE_CANDIDATES = 32
/** Probes placed per scan of the coarse centroids. */
const BLOCK = 4096

export interface DuplicateCellIndex {
  readonly cells: number
  readonly palms: number
  /** Places and stores palms (the members an import batch accepted). */
  add(palms: ReadonlyArray<{ memberId: string; hand: Hand; vector: Int8Array }>): Promise<void>
  /** Per probe, every stored palm of its cells scoring at or above `threshold`, best first (ties by id, then hand), at most `k`. */
  search(probes: readonly Int8Array[], k: number, threshold: number): Promise<GalleryHit[][]>
}

/** Two-level centroids: coarse c owns the fine cells [fineStart[c], fineStart[c + 1]). */
interface Centroids {
  coarse: Gallery
  fine: Gallery
  fineStart: number[]
  cells: number
}

/** The palms of `gallery` (both hands) now, as one packed copy, with the squared norms the gallery keeps. */
function readPalms(gallery: Gallery, dimension: number) {
  const vectors: Int8Array[] = []
  const normParts: Uint32Array[] = []
  const owners = new PalmOwners()
  for (const hand of HANDS) {
    for (let from: number | null = 0; from !== null; ) {
      const page = gallery.readRows(hand, from, 65536)
      vectors.push(page.vectors)
      normParts.push(page.norms)
      for (const id of page.ids) {
        owners.add(id, hand)
      }
      from = page.next
    }
  }
  // Shared: the matcher's threads code the palms in place.
  const packed = new Int8Array(new SharedArrayBuffer(owners.size * dimension))
  const norms = new Uint32Array(owners.size)
  let offset = 0
  vectors.forEach((part, index) => {
    packed.set(part, offset)
    norms.set(normParts[index], offset / dimension)
    offset += part.length
  })
  return { packed, norms, owners }
}

/** Trains the two levels on a seeded sample of the packed palms. */
async function trainTwoLevels(matcher: Matcher, packed: Int8Array, count: number, cells: number): Promise<Centroids> {
  const { dimension } = matcher
  const vectorOf = (palm: number) => packed.subarray(palm * dimension, (palm + 1) * dimension)
  const coarseCount = Math.max(1, Math.min(cells, Math.round(Math.sqrt(cells))))
  const coarseVectors = await trainCentroids(matcher, { count, dimension, vector: vectorOf, owner: (palm) => palm }, coarseCount, SEED)
  const coarse = matcher.createGallery({ ids: 'uuid' })
  for (let cell = 0; cell < coarseCount; cell++) coarse.upsert(rowId(cell), coarseVectors.subarray(cell * dimension, (cell + 1) * dimension))
  // Each coarse centroid's fine cells are trained on a sample of the palms nearest it, as many as its share of the sample.
  const sampleSize = Math.min(count, cells * 16)
  const step = count / sampleSize
  const sample = Array.from({ length: sampleSize }, (_, index) => Math.floor(index * step))
  const groups: number[][] = Array.from({ length: coarseCount }, () => [])
  for (let first = 0; first < sample.length; first += BLOCK) {
    const block = sample.slice(first, first + BLOCK)
    const { vectors, norms } = pack(block.map(vectorOf), dimension)
    const top = await scanRowRangeTopK(coarse, 0, coarseCount, vectors, norms, 1, 0)
    block.forEach((palm, index) => groups[top.rows[index]].push(palm))
  }
  const fine = matcher.createGallery({ ids: 'uuid' })
  const fineStart = [0]
  for (let group = 0; group < coarseCount; group++) {
    const members = groups[group]
    // An empty gallery still gets one cell, for the palms added later.
    const share = members.length ? Math.max(1, Math.round((cells * members.length) / sampleSize)) : sampleSize === 0 && group === 0 ? 1 : 0
    const register = { count: members.length, dimension, vector: (index: number) => vectorOf(members[index]), owner: (index: number) => index }
    const vectors = share ? await trainCentroids(matcher, register, share, SEED + group) : new Int8Array(0)
    for (let cell = 0; cell < share; cell++) fine.upsert(rowId(fineStart[group] + cell), vectors.subarray(cell * dimension, (cell + 1) * dimension))
    fineStart.push(fineStart[group] + share)
  }
  return { coarse, fine, fineStart, cells: fineStart[coarseCount] }
}

function pack(vectors: readonly Int8Array[], dimension: number): { vectors: Int8Array; norms: Uint32Array } {
  const packed = new Int8Array(vectors.length * dimension)
  const norms = new Uint32Array(vectors.length)
  vectors.forEach((vector, index) => {
    packed.set(vector, index * dimension)
    norms[index] = normSquaredInt8(vector)
  })
  return { vectors: packed, norms }
}

/**
 * Each vector's `want` nearest fine cells (nearest first, ties by lower cell; -1 past the cells
 * there are): among all of them when that costs at most `flatScores` scores, otherwise among the
 * fine cells of its `coarseWant` nearest coarse centroids.
 */
async function nearestCells(
  centroids: Centroids,
  vectors: Int8Array,
  norms: Uint32Array,
  want: number,
  { coarseWant, flatScores }: { coarseWant: number; flatScores: number },
): Promise<Int32Array> {
  const dimension = vectors.length / Math.max(1, norms.length)
  const count = norms.length
  const nearest = new Int32Array(count * want).fill(-1)
  const flat = count * centroids.cells <= flatScores
  for (let first = 0; first < count; first += BLOCK) {
    const last = Math.min(count, first + BLOCK)
    const block = { vectors: vectors.subarray(first * dimension, last * dimension), norms: norms.subarray(first, last) }
    const found = flat
      ? (await scanRowRangeTopK(centroids.fine, 0, centroids.cells, block.vectors, block.norms, want, 0)).rows
      : await nearestThroughCoarse(centroids, block.vectors, block.norms, want, coarseWant)
    nearest.set(found, first * want)
  }
  return nearest
}

/** nearestCells for one block through the coarse centroids: their fine cells' best, merged per vector. */
async function nearestThroughCoarse(centroids: Centroids, vectors: Int8Array, norms: Uint32Array, want: number, coarseWant: number): Promise<Int32Array> {
  const { coarse, fine, fineStart } = centroids
  const count = norms.length
  const coarseCount = fineStart.length - 1
  const coarseK = Math.min(coarseWant, coarseCount)
  const top = await scanRowRangeTopK(coarse, 0, coarseCount, vectors, norms, coarseK, 0)
  // Per coarse centroid, the vectors of the block that compare with its fine cells.
  const readers: number[][] = Array.from({ length: coarseCount }, () => [])
  for (let index = 0; index < count; index++) {
    for (let slot = 0; slot < coarseK; slot++) {
      const group = top.rows[index * coarseK + slot]
      if (group >= 0 && fineStart[group + 1] > fineStart[group]) readers[group].push(index)
    }
  }
  const reads: CellRead[] = []
  readers.forEach((indices, group) => {
    if (indices.length) reads.push({ ranges: [fineStart[group], fineStart[group + 1]], probes: indices })
  })
  const result = await scanCellsTopK(fine, reads, vectors, norms, want, 0)
  // Each vector's candidates (coarseK lists of `want`), then the best `want` of them.
  const width = coarseK * want
  const cells = new Int32Array(count * width).fill(-1)
  const scores = new Float64Array(count * width)
  const filled = new Uint32Array(count)
  let list = 0
  for (const read of reads) {
    for (const vector of read.probes) {
      for (let rank = 0; rank < want && result.rows[list * want + rank] >= 0; rank++) {
        const at = vector * width + filled[vector]++
        cells[at] = result.rows[list * want + rank]
        scores[at] = result.scores[list * want + rank]
      }
      list++
    }
  }
  const nearest = new Int32Array(count * want).fill(-1)
  const order = new Uint32Array(width)
  for (let vector = 0; vector < count; vector++) {
    const base = vector * width
    const candidates = order.subarray(0, filled[vector])
    for (let slot = 0; slot < candidates.length; slot++) candidates[slot] = base + slot
    candidates.sort((a, b) => scores[b] - scores[a] || cells[a] - cells[b])
    for (let slot = 0; slot < Math.min(want, candidates.length); slot++) nearest[vector * want + slot] = cells[candidates[slot]]
  }
  return nearest
}

/** Builds the index over the palms `gallery` holds now. `matcher` should be the caller's own (its memory goes back when it closes). */
export async function buildDuplicateCellIndex(
  matcher: Matcher,
  gallery: Gallery,
  settings: CellIndexSettings = CELL_INDEX_SETTINGS,
): Promise<DuplicateCellIndex> {
  const { dimension } = matcher
  const { packed, norms, owners } = readPalms(gallery, dimension)
  const cells = Math.max(1, Math.min(65535, Math.round((owners.size * settings.stored) / settings.rowsPerCell)))
  const centroids = await trainTwoLevels(matcher, packed, owners.size, cells)
  const cellRows = createCellRows(matcher, centroids.cells)

  const codesOf = (vectors: Int8Array, count: number) => rotatedSignCodes(cellRows.gallery, vectors, dimension, count, SEED)

  /** Stores the palms numbered `first`.. (their vectors packed) in their `cellsEach` nearest cells. */
  async function store(first: number, vectors: Int8Array, norms: Uint32Array, cellsEach: number): Promise<void> {
    const stored = Math.min(cellsEach, centroids.cells)
    const nearest = await nearestCells(centroids, vectors, norms, stored, { coarseWant: settings.coarsePlaced, flatScores: settings.flatScores })
    cellRows.append(first, { vectors, norms, codes: await codesOf(vectors, norms.length) }, nearest, stored)
  }

  await store(0, packed, norms, settings.stored)

  return {
    cells: centroids.cells,
    get palms() {
      return owners.size
    },
    async add(palms) {
      if (!palms.length) return
      const first = owners.size
      for (const palm of palms) owners.add(palm.memberId, palm.hand)
      const { vectors, norms: palmNorms } = pack(
        palms.map((palm) => palm.vector),
        dimension,
      )
      await store(first, vectors, palmNorms, settings.storedAdded)
    },
    async search(probes, k, threshold) {
      const { vectors, norms: probeNorms } = pack(probes, dimension)
      const probed = Math.min(settings.probed, centroids.cells)
      const nearest = await nearestCells(centroids, vectors, probeNorms, probed, { coarseWant: settings.coarseProbed, flatScores: settings.flatScores })
      const readers: number[][] = Array.from({ length: centroids.cells }, () => [])
      for (let probe = 0; probe < probes.length; probe++) {
        for (let slot = 0; slot < probed; slot++) {
          const cell = nearest[probe * probed + slot]
          if (cell >= 0 && cellRows.ranges[cell][1] > cellRows.ranges[cell][0]) readers[cell].push(probe)
        }
      }
      const reads: CellRead[] = []
      readers.forEach((indices, cell) => {
        if (indices.length) reads.push({ ranges: cellRows.ranges[cell], probes: indices })
      })
      // A cell's best k palms include every one of the probe's best k that the cell holds.
      const radius = hammingRadius(threshold, dimension)
      const gate = radius === null ? undefined : { codes: await codesOf(vectors, probes.length), radius, candidates: GATE_CANDIDATES }
      const result = await scanCellsTopK(cellRows.gallery, reads, vectors, probeNorms, k, threshold, gate)
      const found: Array<Map<number, number>> = probes.map(() => new Map())
      let list = 0
      for (const read of reads) {
        for (const probe of read.probes) {
          for (let rank = 0; rank < k; rank++) {
            const row = result.rows[list * k + rank]
            const score = result.scores[list * k + rank]
            if (row >= 0 && score >= threshold) found[probe].set(cellRows.palmAt(row), score)
          }
          list++
        }
      }
      return found.map((palms) =>
        [...palms]
          .map(([palm, score]): GalleryHit => ({ id: owners.memberOf(palm), score, partition: owners.handOf(palm) }))
          .sort(byScoreThenId)
          .slice(0, k),
      )
    },
  }
}
