// One gallery past 4 GiB on the native backend (slab memory, pool workers), and the memory
// budget as a real limit. Bounded: 7.5M rows x 512 (4.36 GB of rows, norms, sign bits and live
// flags), one matcher; about a minute on a quiet machine.
import { afterAll, describe, expect, it } from 'vitest'
import { loadNativeAddon } from '../../src/matcher/backend.js'
import { createMatcher, type Matcher } from '../../src/matcher/index.js'
import { cosine, randomInt8 } from '../matcher/brute-force.js'

const GIB = 2 ** 30
const native = loadNativeAddon().ok

describe.runIf(native)('native gallery past 4 GiB', () => {
  let matcher: Matcher | undefined
  afterAll(async () => { await matcher?.close() })

  it('upserts 7.5M rows x 512, searches them exactly, removes, and stops at the budget with nothing changed', async () => {
    const dimension = 512
    const rows = 7_500_000
    matcher = await createMatcher({ dimension, threads: 2, backend: 'native', maxMemoryBytes: 4.5 * GIB })
    const gallery = matcher.createGallery()
    const fillers = Array.from({ length: 64 }, (_, index) => randomInt8(index + 1, dimension))
    // Needles: unique vectors, the last ones beyond the first 4 GiB of memory.
    const needles = new Map([[10, randomInt8(9001, dimension)], [4_000_000, randomInt8(9002, dimension)], [7_499_999, randomInt8(9003, dimension)]])
    for (let row = 0; row < rows; row++) gallery.upsert(`r${row}`, needles.get(row) ?? fillers[row % 64])
    expect(gallery.size).toBe(rows)
    expect(matcher.memoryBytes()).toBeGreaterThan(4 * GIB)
    for (const [row, vector] of needles) {
      const hits = await gallery.search(vector, { k: 3 })
      expect(hits[0]).toEqual({ id: `r${row}`, score: 1 })
      expect(hits[1].score).toBe(Math.max(...fillers.map((filler) => cosine(vector, filler))))
    }
    // The last rows reach stage 2 of a two-stage search from the far slab too.
    expect((await gallery.search(needles.get(7_499_999)!, { mode: 'two_stage', candidates: 16 }))[0]).toEqual({ id: 'r7499999', score: 1 })
    expect(gallery.remove('r7499999')).toBe(true)
    expect((await gallery.search(needles.get(7_499_999)!))[0].id).not.toBe('r7499999')

    // Upserts until the 4.5 GiB budget is reached: a clear error, and the failing upsert changes nothing.
    let extra = 0
    let failure: unknown
    try {
      for (; extra < 2_000_000; extra++) gallery.upsert(`x${extra}`, fillers[extra % 64])
    } catch (error) {
      failure = error
    }
    expect(String(failure)).toMatch(/matcher memory is full: .* raise maxMemoryBytes/)
    expect(gallery.has(`x${extra}`)).toBe(false)
    expect(gallery.size).toBe(rows - 1 + extra)
    expect(() => gallery.upsert('r10', fillers[0])).toThrow(/matcher memory is full/)
    expect((await gallery.search(needles.get(10)!))[0]).toEqual({ id: 'r10', score: 1 })
    expect(matcher.memoryBytes()).toBeLessThanOrEqual(4.5 * GIB)
  }, 900_000)
})
