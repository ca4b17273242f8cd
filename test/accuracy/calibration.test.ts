// The threshold from a target FPIR: the exponential fit of the tail of non-mated top-1 scores (peaks
// over a threshold), its inverse, the carry of an FPIR from one gallery size to another, and the
// choice between counting and fitting.
import { describe, expect, it } from 'vitest'
import { calibrate, MIN_CALIBRATION_SAMPLES } from '../../src/domain/accuracy/calibration.js'
import { fitTail, fpirAtSize, tailExceedance, tailExceedanceInterval, tailSize, tailThreshold } from '../../src/domain/accuracy/extreme-value.js'
import { fpirAt } from '../../src/domain/accuracy/open-set.js'

/** n scores of start + Exp(scale) at evenly spaced quantiles (no randomness): P(≥ t) = exp(−(t − start) / scale). */
function exponentialSample(n: number, start: number, scale: number): number[] {
  return Array.from({ length: n }, (_, index) => start - scale * Math.log1p(-(index + 0.5) / n))
}

describe('extreme-value tail of non-mated scores', () => {
  it('fits the k highest scores by hand', () => {
    // u = 0.7 (the third highest), excesses 0.2 and 0.1: scale 0.15, share 2 / 5.
    const fit = fitTail([0.1, 0.9, 0.7, 0.8, 0.1], 2)!
    expect(fit.start).toBe(0.7)
    expect(fit.scale).toBeCloseTo(0.15, 12)
    expect(fit.share).toBe(0.4)
    expect(tailExceedance(fit, 1)).toBeCloseTo(0.4 * Math.exp(-2), 12)
    expect(tailThreshold(fit, 0.4 * Math.exp(-2))).toBeCloseTo(1, 12)
    expect(tailExceedance(fit, 0.5)).toBe(0.4)
  })

  it('recovers an exponential tail and extrapolates it past the sample', () => {
    const sample = exponentialSample(2500, 0.2, 0.05)
    expect(tailSize(2500)).toBe(50)
    const fit = fitTail(sample)!
    expect(fit.scale).toBeCloseTo(0.05, 2)
    // By hand: P(≥ T) = 1e-4 at T = 0.2 + 0.05 · ln(10⁴) = 0.66052, far beyond the sample's 1/2500.
    expect(tailThreshold(fit, 1e-4)).toBeCloseTo(0.66052, 2)
  })

  it('has no fit without spread at the top', () => {
    expect(fitTail([0.4, 0.4, 0.4], 1)).toBeNull()
    expect(fitTail([0.4])).toBeNull()
    expect(tailSize(25)).toBe(20)
    expect(tailSize(10)).toBe(9)
  })

  it('carries an FPIR to another gallery size as 1 − (1 − p)^(N₂/N₁)', () => {
    expect(fpirAtSize(0.01, 100, 200)).toBeCloseTo(0.0199, 12)
    expect(fpirAtSize(0.01, 200, 100)).toBeCloseTo(1 - Math.sqrt(0.99), 12)
    expect(fpirAtSize(0.01, 100, 100)).toBe(0.01)
    expect(fpirAtSize(1e-9, 1_000, 10_000_000)).toBeCloseTo(1e-5, 9)
  })

  it('bootstraps an interval around the fitted exceedance, the same on every run', () => {
    const sample = exponentialSample(400, 0.2, 0.05)
    const threshold = tailThreshold(fitTail(sample)!, 1e-4)
    const interval = tailExceedanceInterval(sample, threshold)!
    expect(interval.low).toBeLessThan(1e-4)
    expect(interval.high).toBeGreaterThan(1e-4)
    expect(tailExceedanceInterval(sample, threshold)).toEqual(interval)
  })
})

describe('calibrate', () => {
  it('needs a minimum sample', () => {
    expect(calibrate(exponentialSample(MIN_CALIBRATION_SAMPLES - 1, 0.2, 0.05), { target_fpir: 0.01, min_match_threshold: 0.1 })).toBeNull()
  })

  it('counts the target where the sample expects ten exceedances or more', () => {
    // 1 000 scores 0.000, 0.001, …, 0.999: FPIR 5 % leaves the 50 highest (0.950 …) at or above T.
    const scores = Array.from({ length: 1000 }, (_, index) => index / 1000)
    const result = calibrate(scores, { target_fpir: 0.05, min_match_threshold: 0.1 })!
    expect(result.method).toBe('empirical')
    expect(result.tail).toBeNull()
    expect(result.threshold).toBeGreaterThan(0.949)
    expect(result.threshold).toBeLessThanOrEqual(0.95)
    expect(result.exceedances).toBe(50)
    expect(result.estimated_fpir.rate).toBe(0.05)
    expect(result.estimated_fpir.low).toBeLessThan(0.05)
    expect(result.estimated_fpir.high).toBeGreaterThan(0.05)
    expect(result.floor_applied).toBe(false)
  })

  it('fits the tail where the target is beyond what the sample can count', () => {
    const scores = exponentialSample(2500, 0.2, 0.05)
    const result = calibrate(scores, { target_fpir: 1e-4, min_match_threshold: 0.1 })!
    expect(result.method).toBe('extreme_value')
    expect(result.tail).toMatchObject({ tailSamples: 50, share: 0.02 })
    expect(result.threshold).toBeCloseTo(0.66052, 2)
    expect(result.estimated_fpir.rate).toBeCloseTo(1e-4, 8)
    expect(result.estimated_fpir.low).toBeLessThan(1e-4)
    expect(result.estimated_fpir.high).toBeGreaterThan(1e-4)
    expect(result.exceedances).toBe(fpirAt({ mated: [], nonMated: scores }, result.threshold).errors)
  })

  it('follows the few look-alikes rather than the many strangers', () => {
    // 98 % strangers (scores near 0.2) and 2 % relatives spread over 0.55–0.75: the FPIR at 3e-3 is the relatives'.
    const strangers = exponentialSample(1960, 0.2, 0.03)
    const relatives = Array.from({ length: 40 }, (_, index) => 0.55 + (0.2 * index) / 39)
    const scores = [...strangers, ...relatives]
    const result = calibrate(scores, { target_fpir: 3e-3, min_match_threshold: 0.1 })!
    expect(result.method).toBe('extreme_value')
    expect(result.threshold).toBeGreaterThan(0.7)
    expect(fpirAt({ mated: [], nonMated: scores }, result.threshold).rate).toBeLessThanOrEqual(3e-3)
  })

  it('never goes below the floor nor above 1, and says when the floor decided', () => {
    const floored = calibrate(exponentialSample(500, 0.1, 0.02), { target_fpir: 1e-3, min_match_threshold: 0.5 })!
    expect(floored.derived_threshold).toBeLessThan(0.5)
    expect(floored.threshold).toBe(0.5)
    expect(floored.floor_applied).toBe(true)
    expect(floored.estimated_fpir.rate).toBeLessThan(1e-3)
    const capped = calibrate(exponentialSample(500, 0.8, 0.05), { target_fpir: 1e-6, min_match_threshold: 0.5 })!
    expect(capped.derived_threshold).toBeGreaterThan(1)
    expect(capped.threshold).toBe(1)
  })

  it('puts the threshold just above equal scores that cannot be fitted', () => {
    const result = calibrate(new Array(50).fill(0.42), { target_fpir: 1e-3, min_match_threshold: 0.1 })!
    expect(result.method).toBe('empirical')
    expect(result.threshold).toBeGreaterThan(0.42)
    expect(result.exceedances).toBe(0)
  })
})
