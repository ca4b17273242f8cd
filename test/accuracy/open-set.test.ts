// The open-set metrics as ISO/IEC 19795-1 defines them, on small hand-made score lists.
import { describe, expect, it } from 'vitest'
import { cmc, detCurve, equalErrorRate, fnirAt, fpirAt, thresholdForFpir, type OpenSetScores } from '../../src/domain/accuracy/open-set.js'
import { describeRate, smallestMeasurableRate, wilson } from '../../src/domain/accuracy/rates.js'

const scores: OpenSetScores = {
  // Four mated probes: two right at the top, one right but weak, one whose mate is second.
  mated: [
    { top1Score: 0.95, mateRank: 1 },
    { top1Score: 0.9, mateRank: 1 },
    { top1Score: 0.7, mateRank: 1 },
    { top1Score: 0.85, mateRank: 2 },
  ],
  nonMated: [0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.88],
}

describe('open-set identification metrics', () => {
  it('counts FNIR (wrong top-1 or below T) and FPIR (non-mated top-1 at or above T)', () => {
    expect(fnirAt(scores, 0.8)).toMatchObject({ errors: 2, trials: 4, rate: 0.5 })
    expect(fnirAt(scores, 0.5)).toMatchObject({ errors: 1, trials: 4 })
    expect(fpirAt(scores, 0.8)).toMatchObject({ errors: 2, trials: 10, rate: 0.2 })
    expect(fpirAt(scores, 0.881)).toMatchObject({ errors: 0 })
  })

  it('finds the lowest threshold whose FPIR stays within the target, or says the sample cannot measure it', () => {
    const threshold = thresholdForFpir(scores, 0.1)!
    expect(threshold).toBeGreaterThan(0.8)
    expect(threshold).toBeLessThan(0.80001)
    expect(fpirAt(scores, threshold).rate).toBe(0.1)
    expect(fpirAt(scores, 0.8).rate).toBeGreaterThan(0.1)
    expect(thresholdForFpir(scores, 0.05)).toBeNull()
  })

  it("draws the DET curve from the top-1 scores and the CMC from the mates' ranks", () => {
    const det = detCurve(scores)
    expect(det.find((point) => point.threshold === 0.85)).toEqual({ threshold: 0.85, fpir: 0.1, fnir: 0.5 })
    for (let index = 1; index < det.length; index++) {
      expect(det[index].fpir).toBeLessThanOrEqual(det[index - 1].fpir)
      expect(det[index].fnir).toBeGreaterThanOrEqual(det[index - 1].fnir)
    }
    expect(cmc(scores, 3)).toEqual([
      { rank: 1, rate: 0.75 },
      { rank: 2, rate: 1 },
      { rank: 3, rate: 1 },
    ])
  })

  it('counts a score equal to the threshold as passing, for mated and non-mated probes alike', () => {
    const tied: OpenSetScores = { mated: [{ top1Score: 0.8, mateRank: 1 }], nonMated: [0.8, 0.8, 0.5] }
    expect(fnirAt(tied, 0.8).errors).toBe(0)
    expect(fpirAt(tied, 0.8).errors).toBe(2)
    // Two tied non-mated scores cannot be split: FPIR 1/3 is reached only above both.
    expect(fpirAt(tied, thresholdForFpir(tied, 1 / 3)!).errors).toBe(0)
  })

  it('handles empty classes: no rate, no EER, an empty CMC', () => {
    const empty: OpenSetScores = { mated: [], nonMated: [] }
    expect(fnirAt(empty, 0.5)).toMatchObject({ trials: 0, rate: null })
    expect(thresholdForFpir(empty, 0.1)).toBeNull()
    expect(equalErrorRate(empty)).toBeNull()
    expect(detCurve(empty)).toEqual([])
    expect(cmc(empty, 2)).toEqual([
      { rank: 1, rate: 0 },
      { rank: 2, rate: 0 },
    ])
  })

  it('finds the equal error rate where FNIR and FPIR cross', () => {
    const crossing: OpenSetScores = {
      mated: [0.9, 0.8, 0.7, 0.6].map((top1Score) => ({ top1Score, mateRank: 1 })),
      nonMated: [0.3, 0.4, 0.5, 0.65],
    }
    // At 0.65: FNIR 1/4 (0.6 misses), FPIR 1/4 (0.65 passes).
    expect(equalErrorRate(crossing)).toEqual({ threshold: 0.65, rate: 0.25 })
  })

  it('gives Wilson intervals, and the smallest rate a sample supports', () => {
    const rate = wilson(20, 600)
    // Reference: the roots of |p̂ − p| = z·sqrt(p(1 − p)/n), found by bisection (the Wilson bounds' definition).
    expect(rate.low).toBeCloseTo(0.0216802, 6)
    expect(rate.high).toBeCloseTo(0.0509241, 6)
    expect(wilson(0, 100).low).toBe(0)
    expect(smallestMeasurableRate(1000)).toBe(0.003)
    expect(describeRate(wilson(0, 1000))).toBe('0 of 1,000 (below 0.3 % at 95 %: not measurable lower with 1,000 probes)')
    expect(describeRate(wilson(0, 0))).toBe('not measured (no probes)')
  })
})
