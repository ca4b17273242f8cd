// Calibration of an environment's match threshold from a target FPIR (ISO/IEC 19795-1 open-set
// FPIR at the gallery size N). A sample of the environment's stored identify captures is searched
// against the gallery as identify would (same partition rule, same search mode), each capture's own
// member left out: the best other member's score is a non-mated top-1 score at N. From those,
// domain/accuracy/calibration.ts derives the threshold; it is stored, and every service process takes it
// up as the environment's match_threshold. One process calibrates at a time (a claim in the
// database). The check runs every PALMVEIN_CALIBRATION_CHECK_MS; an environment is recalibrated when
// its settings change and when its gallery has grown or shrunk by RECALIBRATE_AT_CHANGE since.
import type { Logger } from 'pino'
import { calibrate, type CalibrationSettings } from './calibration.js'
import { thinnedDet } from './det.js'
import { fnirAt, type OpenSetScores } from './open-set.js'
import type { Config } from '../../config.js'
import type { Sql } from '../../store/engine/database.js'
import {
  claimCalibration,
  environmentsToCalibrate,
  identifyCaptureSample,
  releaseCalibrationClaim,
  saveCalibration,
  type CalibratedFor,
} from '../../store/calibrations.js'
import { parseCapture, probeVector } from '../identification/captures.js'
import type { EnvironmentGallery, Galleries } from '../galleries/galleries.js'
import type { Keyring } from '../../keys/keyring.js'
import { openTemplate, unwrapMemberKey } from '../../keys/template-crypto.js'

/** A gallery this much larger or smaller than at the last calibration is calibrated again. */
export const RECALIBRATE_AT_CHANGE = 0.1
// A process that died calibrating holds its claim this long.
const CLAIM_MS = 10 * 60_000
// Probes in flight at once: the matcher batches them (one pass over the gallery serves up to 16).
const BATCH = 16
// Rows asked of each search: the capture's own member has at most two, one per hand.
const ROWS_PER_SEARCH = 3

export interface Calibrator {
  /** Checks now (after a settings change) rather than at the next interval. */
  kick(): void
  close(): Promise<void>
}

export interface CalibratorOptions {
  config: Pick<Config, 'calibrationCheckMs' | 'calibrationSamples'>
  sql: Sql
  galleries: Galleries
  keyring: Keyring
  log: Logger
}

/** Whether the stored calibration is missing or stale for these settings and gallery size. */
function calibrationDue(calibrated: CalibratedFor | null, settings: CalibrationSettings, gallerySize: number): boolean {
  if (!calibrated || calibrated.threshold === null || calibrated.gallery_size === null) return true
  if (calibrated.target_fpir !== settings.target_fpir || calibrated.min_match_threshold !== settings.min_match_threshold) return true
  return Math.abs(gallerySize - calibrated.gallery_size) >= RECALIBRATE_AT_CHANGE * calibrated.gallery_size
}

/**
 * Up to `samples` stored identify captures searched as identify would: the best other member's score
 * is a non-mated top-1 score, and the capture's own member's rank a mated result (det.ts).
 */
async function sampleScores(
  options: Pick<CalibratorOptions, 'sql' | 'keyring' | 'log'>,
  { environment, gallery }: EnvironmentGallery,
  samples: number,
): Promise<OpenSetScores> {
  // About one stored identify capture per gallery row (both are per hand).
  const rows = await identifyCaptureSample(options.sql, environment.id, samples, gallery.size)
  const probes: Array<{ memberId: string; vector: Int8Array; hand: string | null }> = []
  for (const row of rows) {
    try {
      const key = unwrapMemberKey(options.keyring, environment, row.member_id, row.wrapped_key!)
      const bytes = openTemplate(key, row.member_id, row.hand, 'identify', row.ciphertext)
      // Captures stored before a stricter setting (min_quality) are refused by it: left out.
      const capture = parseCapture(bytes.toString('base64url'), '/identify_capture', environment, row.hand)
      probes.push({ memberId: row.member_id, vector: probeVector(capture), hand: capture.template.hand })
    } catch (error) {
      options.log.debug({ member_id: row.member_id, reason: (error as Error).message }, 'Calibration: a stored capture was left out')
    }
  }
  const scores: OpenSetScores = { mated: [], nonMated: [] }
  for (let start = 0; start < probes.length; start += BATCH) {
    // Sent together, the micro-batcher serves them with shared passes over the gallery.
    const batch = probes.slice(start, start + BATCH)
    const results = await Promise.all(
      batch.map((probe) =>
        gallery.search(probe.vector, {
          k: ROWS_PER_SEARCH,
          partition: probe.hand ?? undefined,
          mode: environment.search_mode,
          candidates: environment.candidates,
        }),
      ),
    )
    results.forEach((hits, index) => {
      const best = hits.find((hit) => hit.id !== batch[index].memberId)
      if (best) scores.nonMated.push(best.score)
      const mateRank = hits.findIndex((hit) => hit.id === batch[index].memberId)
      if (hits.length > 0) scores.mated.push({ top1Score: hits[0].score, mateRank: mateRank === -1 ? null : mateRank + 1 })
    })
  }
  return scores
}

/**
 * Under this process's claim: derives the threshold from a fresh sample of non-mated scores and
 * stores it, or remembers the gallery size at which the sample was too small.
 */
async function calibrateClaimed(
  options: CalibratorOptions,
  id: string,
  environment: EnvironmentGallery,
  settings: CalibrationSettings,
  { claimant, tooSmallAt }: { claimant: string; tooSmallAt: Map<string, number> },
): Promise<void> {
  const { config, sql, galleries, log } = options
  const size = environment.gallery.size
  const started = performance.now()
  const scores = await sampleScores(options, environment, config.calibrationSamples)
  const result = calibrate(scores.nonMated, settings)
  if (!result) {
    tooSmallAt.set(id, size)
    log.info(
      `Calibration: environment ${id} has ${scores.nonMated.length} non-mated samples at ${size} rows; its threshold stays ${environment.environment.match_threshold} until there are more`,
    )
    return
  }
  tooSmallAt.delete(id)
  const mated = { samples: scores.mated.length, fnir: fnirAt(scores, result.threshold), det: thinnedDet(scores, result.threshold) }
  if (await saveCalibration(sql, id, claimant, settings, size, { ...result, mated })) await galleries.environmentChanged(id)
  log.info(
    {
      environment_id: id,
      threshold: result.threshold,
      derived_threshold: result.derived_threshold,
      method: result.method,
      gallery_size: size,
      non_mated_samples: result.non_mated_samples,
      estimated_fpir: result.estimated_fpir.rate,
      seconds: Math.round(performance.now() - started) / 1000,
    },
    'Calibration: match threshold derived from the target FPIR',
  )
}

export function createCalibrator(options: CalibratorOptions): Calibrator {
  const { config, sql, galleries, log } = options
  const claimant = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`
  // Environments whose sample was too small at a gallery size: not sampled again until it changes.
  const tooSmallAt = new Map<string, number>()
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> | null = null
  let again = false
  let closed = false

  async function calibrateEnvironment(id: string, settings: CalibrationSettings, calibrated: CalibratedFor | null): Promise<void> {
    let environment: EnvironmentGallery
    try {
      environment = await galleries.acquire(id)
    } catch {
      return // loading (or gone): the next check tries again
    }
    const size = environment.gallery.size
    if (!calibrationDue(calibrated, settings, size) || tooSmallAt.get(id) === size) return
    if (!(await claimCalibration(sql, id, claimant, CLAIM_MS))) return
    try {
      await calibrateClaimed(options, id, environment, settings, { claimant, tooSmallAt })
    } finally {
      await releaseCalibrationClaim(sql, id, claimant)
    }
  }

  async function check(): Promise<void> {
    for (const row of await environmentsToCalibrate(sql)) {
      if (closed) return
      const settings = { target_fpir: row.target_fpir, min_match_threshold: row.min_match_threshold }
      await calibrateEnvironment(row.id, settings, row.calibrated.threshold === null && row.calibrated.gallery_size === null ? null : row.calibrated).catch(
        (error) => log.error({ err: error, environment_id: row.id }, 'Calibration failed; retried at the next check'),
      )
    }
  }

  function run(): void {
    if (closed) return
    if (running) {
      again = true
      return
    }
    if (timer) clearTimeout(timer)
    running = check()
      .catch((error) => log.error({ err: error }, 'Calibration check failed'))
      .finally(() => {
        running = null
        if (again) {
          again = false
          run()
        } else if (!closed) {
          timer = setTimeout(run, config.calibrationCheckMs)
          timer.unref()
        }
      })
  }

  timer = setTimeout(run, config.calibrationCheckMs)
  timer.unref()
  return {
    kick: run,
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
