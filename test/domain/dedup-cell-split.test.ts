// Splitting k-means' oversized cells (dedup-cell-split.ts) in the deduplication's cell search: on a
// planted register whose k-means cells are uneven (the largest over 5 times the mean), it reports
// exactly the exact search's pairs, with a fifth fewer scores than on the unsplit cells and no cell
// over 5 times the mean.
import { describe, expect, it } from 'vitest'
import { createMatcher, quantizeFloat } from '@palmvein/matcher'
import { findPairsExhaustively } from '../../bench/dedup-exact.js'
import { createPlantedRegister } from '../../bench/dedup-register.js'
import { findPairsByCells } from '../../src/domain/dedup/dedup-cells.js'

const DIMENSION = 256
const THRESHOLD = 0.8

describe('cell search with oversized cells split', () => {
  it('finds the exact pairs with fewer scores and a bounded largest cell', async () => {
    const planted = createPlantedRegister({ seed: 5, dimension: DIMENSION, base: 4_000, duplicates: 80, lookAlikes: 80, threshold: THRESHOLD })
    const palms = Array.from({ length: planted.members * 2 }, (_, palm) =>
      quantizeFloat(planted.palm(palm >> 1, (palm & 1) as 0 | 1), new Int8Array(DIMENSION)),
    )
    const register = { count: palms.length, dimension: DIMENSION, vector: (palm: number) => palms[palm], owner: (palm: number) => palm >> 1 }
    const matcher = await createMatcher({ dimension: DIMENSION, threads: 2 })
    try {
      const key = (pair: { a: number; b: number; score: number }) => `${pair.a >> 1}/${pair.b >> 1} ${pair.score}`
      const exact = (await findPairsExhaustively(matcher, register, THRESHOLD)).map(key).sort()
      const split = await findPairsByCells(matcher, register, { threshold: THRESHOLD, seed: 5 })
      const unsplit = await findPairsByCells(matcher, register, { threshold: THRESHOLD, seed: 5, split: false })
      expect(exact.length).toBeGreaterThan(100)
      expect(split.pairs.map(key).sort()).toEqual(exact)
      expect(unsplit.pairs.map(key).sort()).toEqual(exact)
      // k-means alone leaves a cell of more than 5 times the mean rows (each palm stored twice); split, none.
      const meanRows = (cells: number) => (2 * register.count) / cells
      expect(unsplit.largestCell).toBeGreaterThan(5 * meanRows(unsplit.cells))
      expect(split.cells).toBeGreaterThan(unsplit.cells)
      expect(split.largestCell).toBeLessThan(5 * meanRows(split.cells))
      expect(split.candidateScores).toBeLessThan(0.8 * unsplit.candidateScores)
    } finally {
      await matcher.close()
    }
  }, 120_000)
})
