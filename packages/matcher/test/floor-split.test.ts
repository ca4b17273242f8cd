// The multi-thread bandwidth floor's split (bench/matcher-floor-threads.ts): every byte of the
// gallery's segments goes to exactly one worker, in shares that differ by less than a cache line
// plus the rounding.
import { describe, expect, it } from 'vitest'
import { splitRanges } from '../bench/matcher-floor-threads.js'

describe('splitRanges', () => {
  it.each([
    { ranges: [[0, 1000]] as [number, number][], parts: 2 },
    {
      ranges: [
        [0, 4096],
        [65536, 1 << 20],
        [1 << 22, 300],
      ] as [number, number][],
      parts: 2,
    },
    {
      ranges: [
        [128, 64 * 1000],
        [1 << 30, 64 * 999],
      ] as [number, number][],
      parts: 3,
    },
    { ranges: [[0, 100]] as [number, number][], parts: 4 },
  ])('covers $ranges.length range(s) in $parts shares, each byte once', ({ ranges, parts }) => {
    const shares = splitRanges(ranges, parts)
    expect(shares).toHaveLength(parts)
    const covered = shares.flat().sort((a, b) => a[0] - b[0])
    // Merging adjacent pieces gives back the input ranges exactly.
    const merged: [number, number][] = []
    for (const [offset, length] of covered) {
      const last = merged.at(-1)
      if (last && last[0] + last[1] === offset) last[1] += length
      else merged.push([offset, length])
    }
    expect(merged).toEqual(ranges)
    const total = ranges.reduce((sum, [, length]) => sum + length, 0)
    const share = Math.ceil(total / parts / 64) * 64
    for (const part of shares.slice(0, -1)) expect(part.reduce((sum, [, length]) => sum + length, 0)).toBeLessThanOrEqual(share)
    for (const part of shares) for (const [, length] of part) expect(length).toBeGreaterThan(0)
  })
})
