// The self-joins' Hamming gate (rotated-codes.ts): rotated sign codes whose distance follows the
// angle whatever the vectors look like, the radius it derives from the threshold, and the codes
// computed by a matcher's threads equal to those computed on the calling thread.
import { afterAll, describe, expect, it } from 'vitest'
import { createMatcher, type Matcher } from '../src/index.js'
import { createRandom } from '../src/random.js'
import { hammingRadius as gateRadius, rotatedCodes, walshHadamard } from '../src/rotated-codes.js'
import { rotatedSignCodes } from '../src/row-range-scan.js'
import { signBytesFor } from '../src/sign-bits.js'

const DIMENSION = 256
const BYTES = signBytesFor(DIMENSION)

function hamming(codes: Uint8Array, a: number, b: number): number {
  let distance = 0
  for (let byte = 0; byte < BYTES; byte++) for (let bits = codes[a * BYTES + byte] ^ codes[b * BYTES + byte]; bits; bits &= bits - 1) distance++
  return distance
}

const quantize = (values: number[]) => {
  const scale = 127 / Math.max(...values.map(Math.abs))
  return Int8Array.from(values, (value) => Math.round(value * scale))
}

const cosine = (a: Int8Array, b: Int8Array) => {
  let [dot, aa, bb] = [0, 0, 0]
  for (let index = 0; index < a.length; index++) [dot, aa, bb] = [dot + a[index] * b[index], aa + a[index] ** 2, bb + b[index] ** 2]
  return dot / Math.sqrt(aa * bb)
}

/**
 * Pairs of palms at cosine about `target`, built from `base` and noise. `sparse`: most components
 * near zero, which on raw signs would differ at any angle (the rotation is what makes the codes follow it).
 */
function pairsAt(target: number, count: number, sparse: boolean, seed: number): Int8Array[] {
  const random = createRandom(seed)
  const palms: Int8Array[] = []
  for (let pair = 0; pair < count; pair++) {
    const base = Array.from({ length: DIMENSION }, (_, index) => (sparse && index % 8 !== 0 ? random.next() * 0.02 - 0.01 : random.gaussian()))
    const noise = Array.from({ length: DIMENSION }, () => random.gaussian())
    const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
    const along = base.map((value) => value / norm(base))
    const dot = noise.reduce((sum, value, index) => sum + value * along[index], 0)
    const across = noise.map((value, index) => value - dot * along[index])
    const side = across.map((value) => value / norm(across))
    palms.push(quantize(along), quantize(along.map((value, index) => target * value + Math.sqrt(1 - target ** 2) * side[index])))
  }
  return palms
}

function codesOf(palms: Int8Array[], seed = 7): Uint8Array {
  const packed = new Int8Array(palms.length * DIMENSION)
  palms.forEach((palm, index) => packed.set(palm, index * DIMENSION))
  return rotatedCodes(packed, DIMENSION, palms.length, seed)
}

describe('sign codes', () => {
  it('derives the radius from the threshold: 92 bits of 256 at 0.8, none where it would keep every pair', () => {
    expect(gateRadius(0.8, DIMENSION)).toBe(92)
    expect(gateRadius(0.95, DIMENSION)).toBeLessThan(gateRadius(0.8, DIMENSION)!)
    expect(gateRadius(-0.99, DIMENSION)).toBeNull()
  })

  it.each([
    ['dense', false],
    ['sparse', true],
  ])('keeps %s pairs at the threshold inside the radius and keeps out unrelated palms', (_, sparse) => {
    const radius = gateRadius(0.8, DIMENSION)!
    const near = pairsAt(0.8, 400, sparse, 3)
    const nearCodes = codesOf(near)
    const distances = Array.from({ length: 400 }, (_, pair) => hamming(nearCodes, 2 * pair, 2 * pair + 1))
    for (let pair = 0; pair < 400; pair++) expect(cosine(near[2 * pair], near[2 * pair + 1])).toBeGreaterThan(0.77)
    // About 256 x acos(0.8) / pi = 52 bits apart, all of them within the radius.
    const mean = distances.reduce((sum, distance) => sum + distance, 0) / distances.length
    expect(mean).toBeGreaterThan(44)
    expect(mean).toBeLessThan(60)
    expect(Math.max(...distances)).toBeLessThanOrEqual(radius)
    // Unrelated palms (cosine about 0): about 128 bits apart, almost none within the radius.
    const far = pairsAt(0, 400, sparse, 4)
    const farCodes = codesOf(far)
    const within = Array.from({ length: 400 }, (_, pair) => hamming(farCodes, 2 * pair, 2 * pair + 1)).filter((distance) => distance <= radius)
    expect(within.length).toBeLessThan(4)
  })

  it.each([1, 2, 8, 32, 256])('transforms %i values as the Hadamard matrix multiplies them', (width) => {
    const values = Int32Array.from({ length: width }, (_, index) => ((index * 37 + 11) % 255) - 127)
    const expected = Array.from({ length: width }, (_, row) =>
      values.reduce((sum, value, column) => {
        let parity = 0
        for (let bits = row & column; bits; bits &= bits - 1) parity ^= 1
        return sum + (parity ? -value : value)
      }, 0),
    )
    walshHadamard(values)
    expect(Array.from(values)).toEqual(expected)
  })

  it('codes a palm the same for the same seed, otherwise for another', () => {
    const palms = pairsAt(0.5, 20, false, 5)
    expect(codesOf(palms, 7)).toEqual(codesOf(palms, 7))
    expect(codesOf(palms, 8)).not.toEqual(codesOf(palms, 7))
  })

  describe("on a matcher's threads", () => {
    let matcher: Matcher | undefined
    afterAll(async () => {
      await matcher?.close()
    })

    it.each([
      ['a SharedArrayBuffer, read in place', true],
      ['an ArrayBuffer, copied', false],
    ])('codes vectors in %s as the calling thread does, in shared memory', async (_, shared) => {
      matcher ??= await createMatcher({ dimension: DIMENSION, threads: 2 })
      const gallery = matcher.createGallery()
      // Past the size coded on the calling thread; an odd count, so the threads' shares differ.
      const count = 9001
      const random = createRandom(11)
      const vectors = new Int8Array(shared ? new SharedArrayBuffer(count * DIMENSION) : new ArrayBuffer(count * DIMENSION))
      for (let index = 0; index < vectors.length; index++) vectors[index] = Math.round(random.gaussian() * 40)
      const codes = await rotatedSignCodes(gallery, vectors, DIMENSION, count, 7)
      expect(codes.buffer).toBeInstanceOf(SharedArrayBuffer)
      expect(codes).toEqual(rotatedCodes(vectors, DIMENSION, count, 7))
      // A few vectors: on the calling thread.
      expect(await rotatedSignCodes(gallery, vectors, DIMENSION, 3, 7)).toEqual(rotatedCodes(vectors, DIMENSION, 3, 7))
    })
  })
})
