// Open-set 1:N identification metrics at gallery size N (ISO/IEC 19795-1, NIST FRTE 1:N), pure
// functions over each probe's search result:
//   FNIR(T) = share of mated probes whose top-1 candidate is not their subject or scores below T;
//   FPIR(T) = share of non-mated probes whose top-1 candidate scores at least T;
//   CMC(r)  = share of mated probes whose subject is among the r best candidates (no threshold).
import { wilson, type Rate } from './rates.js'

export interface MatedResult {
  /** The best candidate's score. */
  top1Score: number
  /** 1-based rank of the probe's own subject among the candidates; null when not among them. */
  mateRank: number | null
}

export interface OpenSetScores {
  mated: MatedResult[]
  /** The best candidate's score of each non-mated probe (its subject is not in the gallery). */
  nonMated: number[]
}

export interface DetPoint {
  threshold: number
  fpir: number
  fnir: number
}

export function fnirAt(scores: OpenSetScores, threshold: number): Rate {
  const missed = scores.mated.filter((probe) => probe.mateRank !== 1 || probe.top1Score < threshold).length
  return wilson(missed, scores.mated.length)
}

export function fpirAt(scores: OpenSetScores, threshold: number): Rate {
  return wilson(scores.nonMated.filter((score) => score >= threshold).length, scores.nonMated.length)
}

/**
 * The lowest threshold whose FPIR does not exceed `target`: just above the non-mated top-1 score
 * that `target` allows to pass. Null when the sample cannot measure the target (fewer than one
 * non-mated probe per 1 / target).
 */
export function thresholdForFpir(scores: OpenSetScores, target: number): number | null {
  const n = scores.nonMated.length
  const allowed = Math.floor(target * n)
  if (n === 0 || target * n < 1) return null
  const descending = [...scores.nonMated].sort((a, b) => b - a)
  if (allowed >= n) return descending[n - 1]
  // Scores at or above the threshold pass: put it just above the first one that must not.
  return nextUp(descending[allowed])
}

/** The smallest double above `value` (a threshold just over a score). */
function nextUp(value: number): number {
  const buffer = new DataView(new ArrayBuffer(8))
  buffer.setFloat64(0, value)
  const bits = buffer.getBigInt64(0)
  buffer.setBigInt64(0, value >= 0 ? bits + 1n : bits - 1n)
  return value === 0 ? Number.MIN_VALUE : buffer.getFloat64(0)
}

/** The DET curve: FNIR against FPIR at each distinct top-1 score (plus the ends). */
export function detCurve(scores: OpenSetScores): DetPoint[] {
  const thresholds = [...new Set([...scores.mated.map((probe) => probe.top1Score), ...scores.nonMated])].sort((a, b) => a - b)
  const matedTop = scores.mated
    .filter((probe) => probe.mateRank === 1)
    .map((probe) => probe.top1Score)
    .sort((a, b) => a - b)
  const nonMated = [...scores.nonMated].sort((a, b) => a - b)
  const wrongTop = scores.mated.length - matedTop.length
  const points: DetPoint[] = []
  let m = 0
  let q = 0
  for (const threshold of thresholds) {
    while (m < matedTop.length && matedTop[m] < threshold) m++
    while (q < nonMated.length && nonMated[q] < threshold) q++
    points.push({
      threshold,
      fnir: scores.mated.length ? (wrongTop + m) / scores.mated.length : 0,
      fpir: nonMated.length ? (nonMated.length - q) / nonMated.length : 0,
    })
  }
  return points
}

/**
 * The equal error rate: where the DET curve crosses FNIR = FPIR (the mean of the two rates at the
 * threshold where they are closest). Null without mated or non-mated probes.
 */
export function equalErrorRate(scores: OpenSetScores): { threshold: number; rate: number } | null {
  if (scores.mated.length === 0 || scores.nonMated.length === 0) return null
  let best: DetPoint | null = null
  for (const point of detCurve(scores)) {
    if (!best || Math.abs(point.fnir - point.fpir) < Math.abs(best.fnir - best.fpir)) best = point
  }
  return { threshold: best!.threshold, rate: (best!.fnir + best!.fpir) / 2 }
}

/** Rank-1 … rank-`maxRank` identification rates (the CMC curve). */
export function cmc(scores: OpenSetScores, maxRank = 10): Array<{ rank: number; rate: number }> {
  const n = scores.mated.length
  return Array.from({ length: maxRank }, (_, index) => {
    const rank = index + 1
    const hits = scores.mated.filter((probe) => probe.mateRank !== null && probe.mateRank <= rank).length
    return { rank, rate: n ? hits / n : 0 }
  })
}
