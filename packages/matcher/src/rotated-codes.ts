// Rotated sign codes, the Hamming gate of a self-join (the deduplication's cell search, the
// import's cell index): each vector's sign bits after a seeded random rotation (three rounds of
// random signs and a Walsh-Hadamard transform, as FALCONN's cross-polytope hashing rotates).
// Rotated, each bit of two vectors at angle θ differs with probability about θ/π whatever the data
// (on raw components it depends on the data: a vector with many components near zero flips their
// signs at any angle), so the Hamming distance of a pair at a threshold has a known spread, and a
// radius some standard deviations above its mean keeps every such pair while a cell's far more
// numerous distant rows fall outside it. The gate only chooses which pairs are scored: every pair
// reported is still scored exactly. A gallery given codes as its rows' sign bits (upsertRows)
// serves only gated scans (row-range-scan.ts).
import { createRandom } from './random.js'
import { signBytesFor } from './sign-bits.js'

const ROUNDS = 3

/**
 * Standard deviations above the mean distance at the threshold: a pair at the threshold is outside
 * the radius with probability ~1e-9 (binomial upper tail); at 0.8 and 256 dimensions a pair at cosine 0.3 is within it
 * ~8 % of the time, two unrelated vectors (cosine 0) ~5 times in 10^6.
 */
const DEVIATIONS = 6

/** The Hamming radius that keeps a pair at cosine `threshold` (or above) with the margin above; null when it would keep every pair. */
export function hammingRadius(threshold: number, dimension: number): number | null {
  const bits = signBytesFor(dimension) * 8
  const differs = Math.acos(Math.max(-1, Math.min(1, threshold))) / Math.PI
  const radius = Math.ceil(bits * differs + DEVIATIONS * Math.sqrt(bits * differs * (1 - differs)))
  return radius >= bits ? null : radius
}

/** Vectors [first, end) of `vectors` (int8, `dimension` each, end to end) to code into `out`, `signBytesFor(dimension)` bytes a vector at its number. */
export interface CodesTask {
  vectors: Int8Array
  dimension: number
  first: number
  end: number
  seed: number
  out: Uint8Array
}

/** Writes the codes of the task's vectors (a pool worker's share, or all of them on the calling thread). */
export function writeRotatedCodes({ vectors, dimension, first, end, seed, out }: CodesTask): void {
  const bytes = signBytesFor(dimension)
  const width = Math.max(bytes * 8, 2 ** Math.ceil(Math.log2(Math.max(1, dimension))))
  const random = createRandom(seed)
  const signs = Array.from({ length: ROUNDS }, () => Int32Array.from({ length: width }, () => (random.next() < 0.5 ? -1 : 1)))
  // In i32 where it cannot overflow (faster): the transform scales a vector's length by sqrt(width)
  // a round, so no component exceeds 127 x sqrt(dimension) x width^(ROUNDS / 2), 8.3M at 256.
  const bound = 127 * Math.sqrt(dimension) * width ** (ROUNDS / 2)
  const work = bound < 2 ** 31 ? new Int32Array(width) : new Float64Array(width)
  for (let vector = first; vector < end; vector++) {
    const base = vector * dimension
    work.fill(0, dimension)
    for (let component = 0; component < dimension; component++) work[component] = vectors[base + component]
    for (const round of signs) {
      for (let index = 0; index < width; index++) work[index] *= round[index]
      walshHadamard(work)
    }
    const at = vector * bytes
    for (let byte = 0; byte < bytes; byte++) {
      const bit = byte * 8
      out[at + byte] =
        negative(work[bit]) |
        (negative(work[bit + 1]) << 1) |
        (negative(work[bit + 2]) << 2) |
        (negative(work[bit + 3]) << 3) |
        (negative(work[bit + 4]) << 4) |
        (negative(work[bit + 5]) << 5) |
        (negative(work[bit + 6]) << 6) |
        (negative(work[bit + 7]) << 7)
    }
  }
}

/** The codes of the first `count` vectors on the calling thread (rotatedSignCodes spreads them over a pool). */
export function rotatedCodes(vectors: Int8Array, dimension: number, count: number, seed: number): Uint8Array {
  const out = new Uint8Array(count * signBytesFor(dimension))
  writeRotatedCodes({ vectors, dimension, first: 0, end: count, seed, out })
  return out
}

const negative = (value: number) => (value < 0 ? 1 : 0)

/**
 * In place, unnormalized (only signs are read): `values.length` is a power of two. Two stages at a
 * time (radix 4), a last radix-2 stage when the length is an odd power of two: 1.6 times faster
 * than stage by stage in V8 at 256 (7.4 against 12.0 us a palm for the three rounds).
 */
export function walshHadamard(values: Int32Array | Float64Array): void {
  const width = values.length
  let quarter = 1
  for (; quarter * 4 <= width; quarter *= 4) {
    for (let start = 0; start < width; start += 4 * quarter) {
      for (let index = start, end = start + quarter; index < end; index++) {
        const a = values[index]
        const b = values[index + quarter]
        const c = values[index + 2 * quarter]
        const d = values[index + 3 * quarter]
        const sumAB = a + b
        const differenceAB = a - b
        const sumCD = c + d
        const differenceCD = c - d
        values[index] = sumAB + sumCD
        values[index + quarter] = differenceAB + differenceCD
        values[index + 2 * quarter] = sumAB - sumCD
        values[index + 3 * quarter] = differenceAB - differenceCD
      }
    }
  }
  if (quarter < width) {
    for (let index = 0; index < quarter; index++) {
      const a = values[index]
      const b = values[index + quarter]
      values[index] = a + b
      values[index + quarter] = a - b
    }
  }
}

/** Copies the codes (`bytes` each) of vectors `indices` of `codes` into `out` end to end. */
export function gatherCodes(codes: Uint8Array, bytes: number, indices: ArrayLike<number>, out: Uint8Array): void {
  for (let index = 0; index < indices.length; index++) out.set(codes.subarray(indices[index] * bytes, (indices[index] + 1) * bytes), index * bytes)
}
