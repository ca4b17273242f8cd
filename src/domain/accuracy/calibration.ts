// The match threshold for a target FPIR, from a sample of non-mated top-1 scores taken at gallery
// size N (the service's calibration, domain/accuracy/calibrator.ts). Where the sample expects enough
// exceedances of the target to count them, the threshold is the empirical one and its FPIR a
// Wilson interval; further out, a fit of the sample's tail gives both (extreme-value.ts). The
// threshold never falls below the configured floor, and never passes 1 (no score can).
import { fitTail, tailExceedance, tailExceedanceInterval, tailThreshold, type TailFit } from './extreme-value.js'
import { fpirAt, thresholdForFpir } from './open-set.js'

/** Fewer non-mated samples than this cannot calibrate (a fit of a handful of points says little). */
export const MIN_CALIBRATION_SAMPLES = 20
/** The sample counts the target directly when it expects at least this many scores above it. */
const COUNTABLE_EXCEEDANCES = 10

export interface CalibrationSettings {
  target_fpir: number
  min_match_threshold: number
}

export interface EstimatedRate {
  rate: number
  low: number
  high: number
}

export interface Calibration {
  /** The threshold identify uses: the derived one, raised to the floor. */
  threshold: number
  /** The threshold the sample gives for the target, before the floor. */
  derived_threshold: number
  floor_applied: boolean
  method: 'empirical' | 'extreme_value'
  non_mated_samples: number
  /** Samples at or above `threshold`. */
  exceedances: number
  /** FPIR at `threshold` at the sample's gallery size, with its 95 % interval. */
  estimated_fpir: EstimatedRate
  /** The tail fit (extreme_value only). */
  tail: TailFit | null
}

export function calibrate(nonMated: readonly number[], settings: CalibrationSettings): Calibration | null {
  const n = nonMated.length
  if (n < MIN_CALIBRATION_SAMPLES) return null
  const scores = { mated: [], nonMated: [...nonMated] }
  const countable = settings.target_fpir * n >= COUNTABLE_EXCEEDANCES
  const tail = countable ? null : fitTail(nonMated)
  // No spread to fit (the top scores all equal): just above the highest, the sample's best guess.
  const derived = countable ? thresholdForFpir(scores, settings.target_fpir)! : tail ? tailThreshold(tail, settings.target_fpir) : Math.max(...nonMated) + 1e-6
  const threshold = Math.min(1, Math.max(settings.min_match_threshold, derived))
  const counted = fpirAt(scores, threshold)
  let estimated: EstimatedRate = { rate: counted.rate!, low: counted.low!, high: counted.high! }
  if (tail) {
    const interval = tailExceedanceInterval(nonMated, threshold)
    const rate = tailExceedance(tail, threshold)
    estimated = { rate, low: Math.min(rate, interval?.low ?? rate), high: Math.max(rate, interval?.high ?? counted.high!) }
  }
  return {
    threshold,
    derived_threshold: derived,
    floor_applied: threshold > derived,
    method: tail ? 'extreme_value' : 'empirical',
    non_mated_samples: n,
    exceedances: counted.errors,
    estimated_fpir: estimated,
    tail,
  }
}
