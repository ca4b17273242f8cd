// The DET curve an environment's calibration stores (GET …/accuracy): open-set.ts's curve over the
// calibration sample, thinned to DET_POINTS for storage and the wire, with the threshold in use on
// it. The sample's mated side: each stored identify capture against its own member. That capture
// was taken in the enrollment's session, so the FNIR is a same-session estimate, a floor for what
// later visits see.
import { detCurve, fnirAt, fpirAt, type DetPoint, type OpenSetScores } from './open-set.js'

/** Points kept: enough to draw the curve, few enough to store with the calibration. */
export const DET_POINTS = 64

export function thinnedDet(scores: OpenSetScores, threshold: number): DetPoint[] {
  if (scores.mated.length === 0 || scores.nonMated.length === 0) return []
  const full = detCurve(scores)
  const step = Math.max(1, (full.length - 1) / (DET_POINTS - 2))
  const kept = new Map<number, DetPoint>()
  for (let index = 0; index < full.length; index += step) kept.set(Math.round(index), full[Math.round(index)])
  kept.set(full.length - 1, full[full.length - 1])
  const points = [...kept.values()].filter((point) => point.threshold !== threshold)
  points.push({ threshold, fpir: fpirAt(scores, threshold).rate!, fnir: fnirAt(scores, threshold).rate! })
  return points.sort((a, b) => a.threshold - b.threshold)
}
