// The deduplication's cell search (dedup-cells.ts) over the matcher's self-join scans, on every
// backend, native once per ISA the addon offers: on a small register with planted look-alikes it
// reports exactly the brute-force pairs, with its Hamming gate and without, and probing fewer cells
// never invents a pair.
import { describe, expect, it } from 'vitest'
import { cosine, lookAlikes } from '../../packages/matcher/test/brute-force.js'
import { SELF_JOIN_DIMENSION as DIMENSION, selfJoinVariants, useSelfJoinMatcher } from '../../packages/matcher/test/self-join-matcher.js'
import { type CellCheckpoint, findPairsByCells } from '../../src/domain/dedup/dedup-cells.js'

describe.each(selfJoinVariants)('$name cell search', (variant) => {
  const matcherOf = useSelfJoinMatcher(variant)

  it('finds by cells exactly the brute-force pairs of a register, owners never paired with themselves', async () => {
    const rows = lookAlikes(400, 9, DIMENSION)
    const threshold = 0.7
    const register = { count: rows.length, dimension: DIMENSION, vector: (palm: number) => rows[palm], owner: (palm: number) => palm >> 1 }
    const expected = new Map<string, number>()
    for (let a = 0; a < rows.length; a++) {
      for (let b = a + 1; b < rows.length; b++) {
        const score = cosine(rows[a], rows[b])
        const key = `${a >> 1}/${b >> 1}`
        if (a >> 1 !== b >> 1 && score >= threshold && score > (expected.get(key) ?? -1)) expected.set(key, score)
      }
    }
    expect(expected.size).toBeGreaterThan(20)
    // Every cell probed: the search is exhaustive, so the cells' rows and their bookkeeping are all checked.
    const result = await findPairsByCells(matcherOf(), register, { threshold, cells: 20, probes: 20 })
    expect(result.complete).toBe(true)
    expect(new Map(result.pairs.map((pair) => [`${pair.a >> 1}/${pair.b >> 1}`, pair.score]))).toEqual(expected)
    // The Hamming gate (the matcher's rotated-codes.ts) only spares scores: every candidate scored, the same pairs.
    const ungated = await findPairsByCells(matcherOf(), register, { threshold, cells: 20, probes: 20, gate: false })
    expect(ungated.pairs).toEqual(result.pairs)
    expect(ungated.exactScores).toBe(ungated.candidateScores)
    expect(result.exactScores).toBeLessThan(result.candidateScores / 2)
    // Fewer cells probed: never a pair that is not one, and every score exact.
    const fewer = await findPairsByCells(matcherOf(), register, { threshold, cells: 20, probes: 3 })
    expect(fewer.candidateScores).toBeLessThan(result.candidateScores)
    for (const pair of fewer.pairs) expect(expected.get(`${pair.a >> 1}/${pair.b >> 1}`)).toBe(pair.score)
    // The cells stored a few at a time (the gallery emptied and refilled run after run): the same
    // scores and pairs, also when a run pauses between cells and resumes from its checkpoint.
    for (const chunkRows of [1, 60]) {
      const chunked = await findPairsByCells(matcherOf(), register, { threshold, cells: 20, probes: 3, chunkRows })
      expect(chunked.candidateScores).toBe(fewer.candidateScores)
      expect(chunked.pairs).toEqual(fewer.pairs)
      let checkpoint: CellCheckpoint | null = null
      let searched = 0
      const paused = await findPairsByCells(matcherOf(), register, {
        threshold,
        cells: 20,
        probes: 3,
        chunkRows,
        shouldPause: () => searched++ >= 7,
        onCheckpoint: (state) => {
          checkpoint = state
        },
      })
      expect(paused.complete).toBe(false)
      expect(checkpoint!.cellsDone).toBeGreaterThan(0)
      const resumed = await findPairsByCells(matcherOf(), register, { threshold, cells: 20, probes: 3, chunkRows, resume: checkpoint })
      expect(resumed.complete).toBe(true)
      expect(resumed.pairs).toEqual(fewer.pairs)
    }
  })
})
