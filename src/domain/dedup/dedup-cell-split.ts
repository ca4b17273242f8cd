// Splitting k-means' oversized cells (dedup-cells.ts): a cell whose share of the training sample is
// more than SPLIT_ABOVE times the mean is replaced by sub-cells, found by a local spherical k-means
// on its own sample palms. The result is still a set of centroids every palm is placed by (nearest
// first), a finer Voronoi partition where the palms are dense, so a palm's stored and probed cells
// stay consistent (a cap that moved palms to farther cells lost pairs, docs/dedup.md).
import { quantizeFloat } from '@palmvein/matcher'
import type { Random } from '@palmvein/matcher/random'

/**
 * Cells with more than this many times the mean sample palms are split into round(share / mean)
 * cells of about the mean: in effect from 1.5 times the mean (below that, one part), and exactly 1.5 included.
 */
export const SPLIT_ABOVE = 1.2
const LOCAL_ROUNDS = 4
/** The cell search's cells are numbered in two bytes. */
const MOST_CELLS = 65535

export interface TrainingSample {
  /** The sample palms end to end, int8. */
  packed: Int8Array
  /** Each sample palm's squared norm. */
  norms: Uint32Array
  /** Each sample palm's nearest centroid. */
  cellOf: Int32Array
}

/** The centroids with every oversized cell replaced by its sub-cells' centroids (the first in its place, the rest appended). */
export function splitOversizedCells(centroids: Int8Array, dimension: number, sample: TrainingSample, mean: number, random: Random): Int8Array {
  const cells = centroids.length / dimension
  const members: number[][] = Array.from({ length: cells }, () => [])
  sample.cellOf.forEach((cell, index) => members[cell].push(index))
  const added: Float64Array[] = []
  const out = Int8Array.from(centroids)
  for (let cell = 0; cell < cells; cell++) {
    const palms = members[cell]
    if (palms.length <= SPLIT_ABOVE * mean) continue
    const parts = Math.min(Math.round(palms.length / mean), MOST_CELLS - cells - added.length + 1)
    if (parts < 2) continue
    const subCentroids = localKMeans(palms, parts, dimension, sample, random)
    quantizeFloat(subCentroids[0], out.subarray(cell * dimension, (cell + 1) * dimension))
    added.push(...subCentroids.slice(1))
  }
  if (added.length === 0) return out
  const grown = new Int8Array((cells + added.length) * dimension)
  grown.set(out)
  added.forEach((centroid, index) => quantizeFloat(centroid, grown.subarray((cells + index) * dimension, (cells + index + 1) * dimension)))
  return grown
}

/** Spherical k-means of the sample palms `palms` into `parts` centroids (unit palms averaged; empty parts dropped). */
function localKMeans(palms: number[], parts: number, dimension: number, sample: TrainingSample, random: Random): Float64Array[] {
  const unit = palms.map((index) => {
    const scale = 1 / Math.sqrt(sample.norms[index] || 1)
    return Float64Array.from(sample.packed.subarray(index * dimension, (index + 1) * dimension), (value) => value * scale)
  })
  // Seeded distinct sample palms to start from.
  const order = seededShuffle(
    unit.map((_, index) => index),
    random,
  )
  let centroids: Float64Array[] = order.slice(0, parts).map((index) => Float64Array.from(unit[index]))
  const nearest = new Int32Array(unit.length)
  for (let round = 0; round < LOCAL_ROUNDS; round++) {
    unit.forEach((vector, index) => {
      let best = -Infinity
      centroids.forEach((centroid, part) => {
        let dot = 0
        for (let component = 0; component < dimension; component++) dot += vector[component] * centroid[component]
        if (dot > best) [best, nearest[index]] = [dot, part]
      })
    })
    const sums = centroids.map(() => new Float64Array(dimension))
    const counts = new Uint32Array(centroids.length)
    unit.forEach((vector, index) => {
      counts[nearest[index]]++
      const sum = sums[nearest[index]]
      for (let component = 0; component < dimension; component++) sum[component] += vector[component]
    })
    centroids = sums.filter((_, part) => counts[part] > 0).map(normalised)
  }
  return centroids
}

/** Fisher-Yates in place with the seeded generator (trainCentroids' first centroids too). */
export function seededShuffle<T>(items: T[], random: Random): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(random.next() * (index + 1))
    ;[items[index], items[other]] = [items[other], items[index]]
  }
  return items
}

function normalised(vector: Float64Array): Float64Array {
  let norm = 0
  for (const value of vector) norm += value * value
  const scale = 1 / Math.sqrt(norm || 1)
  return vector.map((value) => value * scale)
}
