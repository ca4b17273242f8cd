// The tail of the non-mated top-1 score distribution, past what a sample can count. A non-mated
// probe's top-1 score is the largest of N comparisons, so its law tends to a Gumbel distribution
// (Fisher–Tippett); fitted by maximum likelihood, it gives FPIR(T) = P(top-1 ≥ T) and the threshold
// for a target FPIR far below 1 / sample size. Cosine scores are bounded, so the true tail is
// lighter than the Gumbel's: the fit errs on the safe side (a higher threshold, a lower real FPIR).

export interface GumbelFit {
  location: number
  scale: number
}

const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length

/**
 * Maximum-likelihood Gumbel fit (bisection on the scale's likelihood equation; the location then
 * has a closed form). Null for fewer than two distinct values: no spread to fit.
 */
export function fitGumbel(samples: readonly number[]): GumbelFit | null {
  if (samples.length < 2) return null
  const average = mean(samples)
  const low = Math.min(...samples)
  const spread = Math.sqrt(mean(samples.map((value) => (value - average) ** 2)))
  if (!(spread > 1e-12)) return null
  // Weights are taken relative to the minimum so that no exponential overflows.
  const weights = (scale: number) => samples.map((value) => Math.exp(-(value - low) / scale))
  // The likelihood equation: scale = mean − Σ x·w / Σ w, increasing in the scale.
  const equation = (scale: number) => {
    const w = weights(scale)
    const total = w.reduce((sum, value) => sum + value, 0)
    return scale - average + samples.reduce((sum, value, index) => sum + value * w[index], 0) / total
  }
  let below = spread * 1e-3
  let above = spread * 10
  for (let step = 0; step < 60; step++) {
    const middle = (below + above) / 2
    if (equation(middle) < 0) below = middle
    else above = middle
  }
  const scale = (below + above) / 2
  const location = low - scale * Math.log(mean(weights(scale)))
  return { location, scale }
}

/** P(score ≥ threshold) under the fit: the estimated FPIR at the sample's gallery size. */
export function gumbelExceedance(fit: GumbelFit, threshold: number): number {
  return -Math.expm1(-Math.exp(-(threshold - fit.location) / fit.scale))
}

/** The threshold whose exceedance under the fit is `target`. */
export function gumbelThreshold(fit: GumbelFit, target: number): number {
  return fit.location - fit.scale * Math.log(-Math.log1p(-target))
}

/**
 * FPIR measured at gallery size `from`, carried to size `to`: a non-mated top-1 score passes when
 * any of N comparisons does, so 1 − FPIR is a power of N (independent comparisons; for the Gumbel
 * this is its location moving by scale · ln(to / from)).
 */
export function fpirAtSize(fpir: number, from: number, to: number): number {
  if (from <= 0 || to === from) return fpir
  return -Math.expm1((to / from) * Math.log1p(-Math.min(fpir, 1 - 1e-16)))
}

/** A seeded generator (mulberry32): the same sample gives the same interval on every process. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A 95 % percentile-bootstrap interval of the fitted exceedance at `threshold`: the sample is
 * resampled with replacement and refitted `rounds` times.
 */
export function gumbelExceedanceInterval(samples: readonly number[], threshold: number, rounds = 200, seed = 1): { low: number; high: number } | null {
  const next = random(seed)
  const estimates: number[] = []
  for (let round = 0; round < rounds; round++) {
    const resample = samples.map(() => samples[Math.floor(next() * samples.length)])
    const fit = fitGumbel(resample)
    if (fit) estimates.push(gumbelExceedance(fit, threshold))
  }
  if (estimates.length < rounds / 2) return null
  estimates.sort((a, b) => a - b)
  const at = (share: number) => estimates[Math.min(estimates.length - 1, Math.floor(share * estimates.length))]
  return { low: at(0.025), high: at(0.975) }
}
