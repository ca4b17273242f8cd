// The DET curve a calibration stores: open-set.ts's curve thinned to DET_POINTS, ends kept, the
// threshold in use on it with the rates counted at exactly that threshold.
import { describe, expect, it } from 'vitest'
import { DET_POINTS, thinnedDet } from '../../src/domain/accuracy/det.js'
import { detCurve, type OpenSetScores } from '../../src/domain/accuracy/open-set.js'

const scores: OpenSetScores = {
  // 300 non-mated top-1 scores over [0, 0.6); 200 mated, the member first at 0.3..0.99, and 10 outranked.
  nonMated: Array.from({ length: 300 }, (_, index) => (index * 0.6) / 300),
  mated: [
    ...Array.from({ length: 200 }, (_, index) => ({ top1Score: 0.3 + (index * 0.69) / 200, mateRank: 1 })),
    ...Array.from({ length: 10 }, () => ({ top1Score: 0.5, mateRank: 2 })),
  ],
}

describe('thinnedDet', () => {
  it('keeps at most DET_POINTS points of the full curve, its ends and the threshold in use', () => {
    const full = detCurve(scores)
    expect(full.length).toBeGreaterThan(400)
    const thinned = thinnedDet(scores, 0.45)
    expect(thinned.length).toBeLessThanOrEqual(DET_POINTS)
    expect(thinned[0]).toEqual(full[0])
    expect(thinned.at(-1)).toEqual(full.at(-1))
    // At 0.45: non-mated 0.45..0.598 pass (75 of 300); mated below 0.45 (44) plus the 10 outranked miss.
    expect(thinned.find((point) => point.threshold === 0.45)).toEqual({ threshold: 0.45, fpir: 75 / 300, fnir: 54 / 210 })
    for (const point of thinned.filter((candidate) => candidate.threshold !== 0.45)) expect(full).toContainEqual(point)
  })

  it('is empty without a mated or a non-mated sample', () => {
    expect(thinnedDet({ mated: [], nonMated: [0.1] }, 0.5)).toEqual([])
    expect(thinnedDet({ mated: [{ top1Score: 0.9, mateRank: 1 }], nonMated: [] }, 0.5)).toEqual([])
  })
})
