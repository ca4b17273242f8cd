// The threshold from a target FPIR: the Gumbel fit of non-mated top-1 scores, its inverse, the
// carry of an FPIR from one gallery size to another, and the choice between counting and fitting.
import { describe, expect, it } from 'vitest'
import { calibrate, MIN_CALIBRATION_SAMPLES } from '../../src/accuracy/calibration.js'
import { fitGumbel, fpirAtSize, gumbelExceedance, gumbelExceedanceInterval, gumbelThreshold } from '../../src/accuracy/extreme-value.js'
import { fpirAt } from '../../src/accuracy/open-set.js'

/** n draws of a Gumbel(location, scale) by the inverse CDF, at evenly spaced quantiles (no randomness). */
function gumbelSample(n: number, location: number, scale: number): number[] {
  return Array.from({ length: n }, (_, index) => location - scale * Math.log(-Math.log((index + 0.5) / n)))
}

describe('extreme-value tail of non-mated scores', () => {
  it('fits a Gumbel sample back to its parameters', () => {
    const fit = fitGumbel(gumbelSample(5000, 0.3, 0.04))!
    expect(fit.location).toBeCloseTo(0.3, 3)
    expect(fit.scale).toBeCloseTo(0.04, 3)
  })

  it('has no fit without spread', () => {
    expect(fitGumbel([0.4, 0.4, 0.4])).toBeNull()
    expect(fitGumbel([0.4])).toBeNull()
  })

  it('gives the threshold of a target exceedance and back', () => {
    const fit = { location: 0.3, scale: 0.04 }
    // By hand: T = 0.3 − 0.04 · ln(−ln(1 − 1e-4)) = 0.3 + 0.04 · 9.21029 = 0.668412.
    expect(gumbelThreshold(fit, 1e-4)).toBeCloseTo(0.668412, 5)
    expect(gumbelExceedance(fit, gumbelThreshold(fit, 1e-6))).toBeCloseTo(1e-6, 12)
    expect(gumbelExceedance(fit, 0.3)).toBeCloseTo(1 - Math.exp(-1), 12)
  })

  it('carries an FPIR to another gallery size as 1 − (1 − p)^(N₂/N₁)', () => {
    expect(fpirAtSize(0.01, 100, 200)).toBeCloseTo(0.0199, 12)
    expect(fpirAtSize(0.01, 200, 100)).toBeCloseTo(1 - Math.sqrt(0.99), 12)
    expect(fpirAtSize(0.01, 100, 100)).toBe(0.01)
    expect(fpirAtSize(1e-9, 1_000, 10_000_000)).toBeCloseTo(1e-5, 9)
  })

  it('bootstraps an interval around the fitted exceedance, the same on every run', () => {
    const sample = gumbelSample(400, 0.3, 0.04)
    const threshold = gumbelThreshold(fitGumbel(sample)!, 1e-4)
    const interval = gumbelExceedanceInterval(sample, threshold)!
    expect(interval.low).toBeLessThan(1e-4)
    expect(interval.high).toBeGreaterThan(1e-4)
    expect(gumbelExceedanceInterval(sample, threshold)).toEqual(interval)
  })
})

describe('calibrate', () => {
  it('needs a minimum sample', () => {
    expect(calibrate(gumbelSample(MIN_CALIBRATION_SAMPLES - 1, 0.3, 0.04), { target_fpir: 0.01, min_match_threshold: 0.1 })).toBeNull()
  })

  it('counts the target where the sample expects ten exceedances or more', () => {
    // 1 000 scores 0.000, 0.001, …, 0.999: FPIR 5 % leaves the 50 highest (0.950 …) at or above T.
    const scores = Array.from({ length: 1000 }, (_, index) => index / 1000)
    const result = calibrate(scores, { target_fpir: 0.05, min_match_threshold: 0.1 })!
    expect(result.method).toBe('empirical')
    expect(result.gumbel).toBeNull()
    expect(result.threshold).toBeGreaterThan(0.949)
    expect(result.threshold).toBeLessThanOrEqual(0.950)
    expect(result.exceedances).toBe(50)
    expect(result.estimated_fpir.rate).toBe(0.05)
    expect(result.estimated_fpir.low).toBeLessThan(0.05)
    expect(result.estimated_fpir.high).toBeGreaterThan(0.05)
    expect(result.floor_applied).toBe(false)
  })

  it('fits the tail where the target is beyond what the sample can count', () => {
    const scores = gumbelSample(500, 0.3, 0.04)
    const result = calibrate(scores, { target_fpir: 1e-4, min_match_threshold: 0.1 })!
    expect(result.method).toBe('extreme_value')
    expect(result.threshold).toBeCloseTo(0.668412, 2)
    expect(result.estimated_fpir.rate).toBeCloseTo(1e-4, 8)
    expect(result.estimated_fpir.low).toBeLessThan(1e-4)
    expect(result.estimated_fpir.high).toBeGreaterThan(1e-4)
    expect(result.exceedances).toBe(fpirAt({ mated: [], nonMated: scores }, result.threshold).errors)
  })

  it('never goes below the floor nor above 1, and says when the floor decided', () => {
    const floored = calibrate(gumbelSample(500, 0.1, 0.02), { target_fpir: 1e-3, min_match_threshold: 0.5 })!
    expect(floored.derived_threshold).toBeLessThan(0.5)
    expect(floored.threshold).toBe(0.5)
    expect(floored.floor_applied).toBe(true)
    expect(floored.estimated_fpir.rate).toBeLessThan(1e-3)
    const capped = calibrate(gumbelSample(500, 0.9, 0.05), { target_fpir: 1e-6, min_match_threshold: 0.5 })!
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
