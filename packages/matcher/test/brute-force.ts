// The float64 brute-force oracle the tests compare every backend with: no SIMD, no top-k
// structure, no shortcuts; just every score, sorted.
import { createRandom } from '../src/random.js'

export interface RankedRow {
  row: number
  score: number
}

export interface RankedId {
  id: string
  score: number
}

export function normSquared(vector: Int8Array): number {
  let sum = 0
  for (const value of vector) sum += value * value
  return sum
}

export function cosine(probe: Int8Array, row: Int8Array): number {
  let dot = 0
  for (let index = 0; index < probe.length; index++) dot += probe[index] * row[index]
  const product = normSquared(probe) * normSquared(row)
  return product === 0 ? 0 : Math.max(dot, 0) / Math.sqrt(product)
}

/** Rows ranked by score desc, then row asc (the kernels' order). */
export function rankRows(probe: Int8Array, rows: readonly (Int8Array | null)[], k: number): RankedRow[] {
  return rows
    .map((row, index) => (row ? { row: index, score: cosine(probe, row) } : null))
    .filter((entry): entry is RankedRow => entry !== null)
    .sort((a, b) => b.score - a.score || a.row - b.row)
    .slice(0, k)
}

/** Ids ranked by score desc, then id asc (the public API's order). */
export function rankIds(probe: Int8Array, vectors: ReadonlyMap<string, Int8Array>, k: number): RankedId[] {
  return [...vectors]
    .map(([id, vector]) => ({ id, score: cosine(probe, vector) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, k)
}

/** Deterministic int8 vectors in [-127, 127] (a tiny LCG; tests only need variety). */
export function randomInt8(seed: number, dimension: number): Int8Array {
  const vector = new Int8Array(dimension)
  let state = (seed * 2654435761) >>> 0 || 1
  for (let index = 0; index < dimension; index++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    vector[index] = ((state >>> 8) % 255) - 127
  }
  if (vector.every((value) => value === 0)) vector[0] = 1
  return vector
}

/** Rows of which every fifth is a look-alike (cosine about 0.9) of the row before it. */
export function lookAlikes(count: number, seed: number, dimension: number): Int8Array[] {
  const random = createRandom(seed)
  const rows: Int8Array[] = []
  for (let index = 0; index < count; index++) {
    if (index % 5 !== 4) {
      rows.push(randomInt8(seed * 1000 + index, dimension))
      continue
    }
    const base = rows[index - 1]
    rows.push(Int8Array.from(base, (value) => Math.max(-127, Math.min(127, Math.round(value * 0.9 + random.gaussian() * 20)))))
  }
  return rows
}
