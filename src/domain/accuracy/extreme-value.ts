// The tail of the non-mated top-1 score distribution, past what a sample can count: peaks over a
// threshold (extreme-value theory). Above u, the k-th highest of n scores, the excesses of a score
// whose law is in the Gumbel domain (a maximum of many comparisons is) are exponential; their mean
// is the scale's maximum-likelihood estimate, so FPIR(T) = (k / n) · exp(−(T − u) / scale).
// Only the tail is fitted, not the whole sample, because non-mated scores are a mixture: most
// strangers resemble nobody, a few resemble a relative. A fit of every score follows the many and
// misses the few (measured on the synthetic generator at N = 10 000: a whole-sample Gumbel fit for
// FPIR 3e-3 let 1.9 % through; this tail fit, 0.09–0.14 %).

import { createRandom } from '@palmvein/matcher/random'

export interface TailFit {
  /** u: the score the excesses are counted above. */
  start: number
  /** Mean excess over u. */
  scale: number
  /** k / n: the share of the sample above u. */
  share: number
  /** k. */
  tailSamples: number
}

/** k for a sample of n: about √n (a few dozen at thousands of samples), at least 20, at most n − 1. */
export function tailSize(n: number): number {
  return Math.min(n - 1, Math.max(20, Math.round(Math.sqrt(n))))
}

/** The exponential tail of the k highest scores; null without spread among them (nothing to fit). */
export function fitTail(samples: readonly number[], k = tailSize(samples.length)): TailFit | null {
  if (samples.length < 2 || k < 1) return null
  const descending = [...samples].sort((a, b) => b - a)
  const start = descending[k]
  const scale = descending.slice(0, k).reduce((sum, value) => sum + value - start, 0) / k
  if (!(scale > 1e-12)) return null
  return { start, scale, share: k / samples.length, tailSamples: k }
}

/** P(score ≥ threshold) under the fit (thresholds at or above its start). */
export function tailExceedance(fit: TailFit, threshold: number): number {
  return fit.share * Math.exp(-Math.max(0, threshold - fit.start) / fit.scale)
}

/** The threshold whose exceedance under the fit is `target` (a target below the fit's share). */
export function tailThreshold(fit: TailFit, target: number): number {
  return fit.start + fit.scale * Math.log(fit.share / target)
}

/**
 * FPIR measured at gallery size `from`, carried to size `to`: a non-mated top-1 score passes when
 * any of N comparisons does, so 1 − FPIR is a power of N (independent comparisons).
 */
export function fpirAtSize(fpir: number, from: number, to: number): number {
  if (from <= 0 || to === from) return fpir
  return -Math.expm1((to / from) * Math.log1p(-Math.min(fpir, 1 - 1e-16)))
}

/**
 * A 95 % percentile-bootstrap interval of the fitted exceedance at `threshold`: the sample is
 * resampled with replacement and its tail refitted `rounds` times.
 */
export function tailExceedanceInterval(samples: readonly number[], threshold: number, rounds = 200, seed = 1): { low: number; high: number } | null {
  // Seeded: the same sample gives the same interval on every process.
  const { next } = createRandom(seed)
  const k = tailSize(samples.length)
  const estimates: number[] = []
  for (let round = 0; round < rounds; round++) {
    const fit = fitTail(
      samples.map(() => samples[Math.floor(next() * samples.length)]),
      k,
    )
    if (fit) estimates.push(tailExceedance(fit, threshold))
  }
  if (estimates.length < rounds / 2) return null
  estimates.sort((a, b) => a - b)
  const at = (share: number) => estimates[Math.min(estimates.length - 1, Math.floor(share * estimates.length))]
  return { low: at(0.025), high: at(0.975) }
}
