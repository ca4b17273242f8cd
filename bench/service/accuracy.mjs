// The benchmark's accuracy pass (ISO/IEC 19795-1 open-set, at the environment's gallery size):
// every probe identified once more with ?k=10 through the service, then FNIR at FPIR 3e-3 (NIST
// FRTE's headline point) and 1e-4, the rates at the environment's threshold, the EER, a thinned
// DET curve, and the misses explained by what the generator made of each identity.
import { environmentAdmin } from './environment-admin.mjs'

const CONCURRENCY = 8
export const ACCURACY_TARGET_FPIRS = [3e-3, 1e-4]
const DET_POINTS = 120

/**
 * @param {{ url: string, credential: string, base: string, probes: Array<{ capture: string, member_id: string | null, hard?: boolean, related?: boolean }>,
 *           threshold: number, margin: number }} input
 */
export async function measureAccuracy(input) {
  const { fnirAt, fpirAt, detCurve, equalErrorRate } = await import('../../src/domain/accuracy/open-set.ts')
  const { operatingPoint, thin } = await import('../../src/domain/accuracy/report.ts')
  const answers = new Array(input.probes.length)
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < input.probes.length) {
        const index = next++
        const response = await fetch(`${input.url}${input.base}/biometrics/identify?k=10`, {
          method: 'POST',
          headers: { authorization: `Bearer ${input.credential}`, 'content-type': 'application/json' },
          body: JSON.stringify({ palm: { identify_capture: input.probes[index].capture } }),
        })
        if (response.status !== 200) throw new Error(`identify answered ${response.status}: ${await response.text()}`)
        answers[index] = await response.json()
      }
    }),
  )
  const scores = { mated: [], nonMated: [] }
  const misses = { total: 0, hard: 0, related: 0, other: 0 }
  input.probes.forEach((probe, index) => {
    const answer = answers[index]
    const top1Score = answer.candidates[0]?.match_score ?? 0
    if (probe.member_id === null) {
      scores.nonMated.push(top1Score)
      return
    }
    const rank = answer.candidates.findIndex((candidate) => candidate.member_id === probe.member_id)
    scores.mated.push({ top1Score, mateRank: rank === -1 ? null : rank + 1 })
    if (answer.status === 'Found' && answer.member_id === probe.member_id) return
    misses.total += 1
    misses[probe.hard ? 'hard' : probe.related ? 'related' : 'other'] += 1
  })
  return {
    matedProbes: scores.mated.length,
    nonMatedProbes: scores.nonMated.length,
    threshold: input.threshold,
    atThreshold: { fnir: fnirAt(scores, input.threshold), fpir: fpirAt(scores, input.threshold) },
    points: ACCURACY_TARGET_FPIRS.map((target) => operatingPoint(scores, target)),
    eer: equalErrorRate(scores),
    det: thin(detCurve(scores), DET_POINTS),
    misses,
    // For the calibration pass; not part of the result.
    scores,
  }
}

export const CALIBRATION_TARGET_FPIR = 3e-3
const CALIBRATION_TIMEOUT_MS = 15 * 60_000

/**
 * The service's own calibration (PATCH target_fpir, then GET …/accuracy until calibrated), checked
 * against the pass's non-mated probes: the FPIR they give at the calibrated threshold, and the
 * threshold they alone would set for the target. The environment goes back to a fixed 0.80 after.
 * @param {{ url: string, token: string, orgId: string, environmentId: string, scores: { mated: any[], nonMated: number[] } }} input
 */
export async function measureCalibration(input) {
  const { fnirAt, fpirAt, thresholdForFpir } = await import('../../src/domain/accuracy/open-set.ts')
  const admin = environmentAdmin(input)
  const started = performance.now()
  await admin.patch({ target_fpir: CALIBRATION_TARGET_FPIR })
  let accuracy = await admin.get('/accuracy')
  while (accuracy.status !== 'calibrated') {
    if (performance.now() - started > CALIBRATION_TIMEOUT_MS)
      throw new Error(`not calibrated after ${CALIBRATION_TIMEOUT_MS / 1000} s: ${JSON.stringify(accuracy)}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
    accuracy = await admin.get('/accuracy')
  }
  const seconds = (performance.now() - started) / 1000
  await admin.patch({ target_fpir: null, match_threshold: 0.8 })
  const { calibration } = accuracy
  return {
    targetFpir: CALIBRATION_TARGET_FPIR,
    threshold: calibration.threshold,
    method: calibration.method,
    samples: calibration.non_mated_samples,
    estimatedFpir: calibration.estimated_fpir,
    seconds,
    measuredFpir: fpirAt(input.scores, calibration.threshold),
    fnir: fnirAt(input.scores, calibration.threshold),
    probesThreshold: thresholdForFpir(input.scores, CALIBRATION_TARGET_FPIR),
  }
}
