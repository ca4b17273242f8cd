// One gallery past 4 GiB on the native backend (slab memory, pool workers), and the memory
// budget as a real limit. The national shape: 18M rows x 256 (4.6 GB of rows; 5.3 GB with norms,
// sign bits and live flags) with UUID ids, as the service stores members; one matcher.
import { afterAll, describe, expect, it } from 'vitest'
import { loadNativeAddon } from '@palmvein/matcher/backend'
import { createMatcher, type Matcher } from '@palmvein/matcher'
import { cosine, randomInt8 } from '../../packages/matcher/test/brute-force.js'

const GIB = 2 ** 30
const native = loadNativeAddon().ok

describe.runIf(native)('native gallery past 4 GiB', () => {
  let matcher: Matcher | undefined
  afterAll(async () => {
    await matcher?.close()
  })

  it('upserts 18M rows x 256 with UUID ids, searches them exactly, removes, and stops at the budget with nothing changed', async () => {
    const dimension = 256
    const rows = 18_000_000
    const budget = 5.25 * GIB
    matcher = await createMatcher({ dimension, threads: 2, backend: 'native', maxMemoryBytes: budget })
    const gallery = matcher.createGallery({ ids: 'uuid' })
    // Ids from row numbers: r(row) and x(extra) never collide.
    const id = (prefix: 'a' | 'b', row: number) => `00000000-0000-4000-800${prefix}-${row.toString(16).padStart(12, '0')}`
    const r = (row: number) => id('a', row)
    const x = (extra: number) => id('b', extra)
    const fillers = Array.from({ length: 64 }, (_, index) => randomInt8(index + 1, dimension))
    // Needles: unique vectors, the last ones beyond the first 4 GiB of memory.
    const needles = new Map([
      [10, randomInt8(9001, dimension)],
      [9_000_000, randomInt8(9002, dimension)],
      [17_999_999, randomInt8(9003, dimension)],
    ])
    for (let row = 0; row < rows; row++) gallery.upsert(r(row), needles.get(row) ?? fillers[row % 64])
    expect(gallery.size).toBe(rows)
    expect(matcher.memoryBytes()).toBeGreaterThan(4 * GIB)
    for (const [row, vector] of needles) {
      const hits = await gallery.search(vector, { k: 3 })
      expect(hits[0]).toEqual({ id: r(row), score: 1 })
      expect(hits[1].score).toBe(Math.max(...fillers.map((filler) => cosine(vector, filler))))
    }
    // The last rows reach stage 2 of a two-stage search from the far slab too.
    expect((await gallery.search(needles.get(17_999_999)!, { mode: 'two_stage', candidates: 16 }))[0]).toEqual({ id: r(17_999_999), score: 1 })
    expect(gallery.remove(r(17_999_999))).toBe(true)
    expect((await gallery.search(needles.get(17_999_999)!))[0].id).not.toBe(r(17_999_999))

    // Upserts until the 5.25 GiB budget is reached: a clear error, and the failing upsert changes nothing.
    let extra = 0
    let failure: unknown
    try {
      for (; extra < 2_000_000; extra++) gallery.upsert(x(extra), fillers[extra % 64])
    } catch (error) {
      failure = error
    }
    expect(String(failure)).toMatch(/matcher memory is full: .* raise maxMemoryBytes/)
    expect(gallery.has(x(extra))).toBe(false)
    expect(gallery.size).toBe(rows - 1 + extra)
    expect(() => gallery.upsert(r(10), fillers[0])).toThrow(/matcher memory is full/)
    expect((await gallery.search(needles.get(10)!))[0]).toEqual({ id: r(10), score: 1 })
    expect(matcher.memoryBytes()).toBeLessThanOrEqual(budget)
  }, 900_000)
})
