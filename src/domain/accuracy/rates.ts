// Error rates with their uncertainty (ISO/IEC 19795-1): a rate is a count over a sample, reported
// with a 95 % Wilson score interval, and a rate too small for the sample is said to be so rather
// than printed as 0.

/** z for a two-sided 95 % interval. */
const Z95 = 1.959963984540054

export interface Rate {
  /** Errors counted. */
  errors: number
  /** Trials (probes). */
  trials: number
  /** errors / trials (null without trials). */
  rate: number | null
  /** 95 % Wilson score interval. */
  low: number | null
  high: number | null
}

export function wilson(errors: number, trials: number, z = Z95): Rate {
  if (trials === 0) return { errors, trials, rate: null, low: null, high: null }
  const p = errors / trials
  const z2 = z * z
  const centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
  const spread = (z / (1 + z2 / trials)) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))
  // At 0 and at n the bounds are exactly 0 and 1 (the subtraction leaves a rounding residue).
  return { errors, trials, rate: p, low: errors === 0 ? 0 : Math.max(0, centre - spread), high: errors === trials ? 1 : Math.min(1, centre + spread) }
}

/**
 * The smallest rate `trials` can support at 95 % confidence (the rule of three: with no error in
 * n trials, the rate is below 3/n). A target below it is not measurable with this sample.
 */
export function smallestMeasurableRate(trials: number): number {
  return trials > 0 ? 3 / trials : 1
}

/** "0.12 % [0.08 %, 0.18 %] (12 / 10 000)", or why it cannot be given. */
export function describeRate(rate: Rate): string {
  if (rate.rate === null) return 'not measured (no probes)'
  const percent = (value: number) => `${(value * 100).toPrecision(3).replace(/\.?0+$/, '')} %`
  if (rate.errors === 0)
    return `0 of ${rate.trials.toLocaleString('en-US')} (below ${percent(smallestMeasurableRate(rate.trials))} at 95 %: not measurable lower with ${rate.trials.toLocaleString('en-US')} probes)`
  return `${percent(rate.rate)} [${percent(rate.low!)}, ${percent(rate.high!)}] (${rate.errors.toLocaleString('en-US')} / ${rate.trials.toLocaleString('en-US')})`
}
