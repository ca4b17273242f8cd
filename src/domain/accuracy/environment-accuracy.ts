// What an environment's threshold is worth now (GET …/environments/{id}/accuracy, admins only): the
// threshold in use, how it was derived, and the estimated FPIR at the current gallery size, the
// calibration's estimate carried from its size to today's (domain/accuracy/extreme-value.ts fpirAtSize).
import { fpirAtSize } from './extreme-value.js'
import type { DomainResources } from '../resources.js'
import { ServiceError } from '../../errors.js'
import { timestamp } from '../../ids.js'
import { calibrationOf } from '../../store/calibrations.js'
import { environmentById } from '../../store/organizations.js'
import { countEnvironmentReferences } from '../../store/templates.js'
import { RECALIBRATE_AT_CHANGE } from './calibrator.js'

export async function environmentAccuracy(app: Pick<DomainResources, 'sql' | 'galleries'>, orgId: string, environmentId: string) {
  // One snapshot: the threshold and the calibration that set it are read as they were committed together.
  const [environment, row] = await app.sql.begin(
    'isolation level repeatable read read only',
    async (tx) => [await environmentById(tx, environmentId), await calibrationOf(tx, environmentId)] as const,
  )
  if (!environment || environment.owner_org_id !== orgId) throw new ServiceError('not_found', `organization ${orgId} has no environment ${environmentId}`)
  // The gallery's own count when it is loaded here; the database's while it loads.
  const gallerySize = await app.galleries.acquire(environmentId).then(
    ({ gallery }) => gallery.size,
    () => countEnvironmentReferences(app.sql, environmentId),
  )
  const calibration =
    environment.target_fpir === null || row?.threshold == null
      ? null
      : {
          threshold: row.threshold,
          derived_threshold: row.derived_threshold!,
          floor_applied: row.threshold > row.derived_threshold!,
          method: row.method!,
          gallery_size: row.gallery_size!,
          non_mated_samples: row.non_mated_samples!,
          exceedances: row.exceedances!,
          estimated_fpir: { rate: row.estimated_fpir!, low: row.fpir_low!, high: row.fpir_high! },
          tail: row.tail_start === null ? null : { start: row.tail_start, scale: row.tail_scale!, samples: row.tail_samples! },
          target_fpir: row.target_fpir!,
          min_match_threshold: row.min_match_threshold!,
          computed_at: timestamp(row.computed_at!),
          // Calibrations computed before the mated side was kept (migration 0041) have none.
          mated_samples: row.mated_samples,
          fnir: row.fnir === null ? null : { rate: row.fnir, low: row.fnir_low!, high: row.fnir_high! },
          det: row.det ?? [],
        }
  // Computed for today's settings (a new target or floor waits for the next calibration).
  const current =
    calibration !== null && calibration.target_fpir === environment.target_fpir && calibration.min_match_threshold === environment.min_match_threshold
  const scale = (rate: number) => (calibration ? fpirAtSize(rate, calibration.gallery_size, gallerySize) : rate)
  return {
    environment_id: environment.id,
    match_threshold: environment.match_threshold,
    target_fpir: environment.target_fpir,
    min_match_threshold: environment.min_match_threshold,
    status: environment.target_fpir === null ? ('fixed' as const) : current ? ('calibrated' as const) : ('pending' as const),
    gallery_size: gallerySize,
    estimated_fpir:
      calibration && current
        ? { rate: scale(calibration.estimated_fpir.rate), low: scale(calibration.estimated_fpir.low), high: scale(calibration.estimated_fpir.high) }
        : null,
    // The gallery sizes at which the next calibration runs.
    recalibrates_at:
      calibration && current
        ? {
            at_most: Math.floor(calibration.gallery_size * (1 - RECALIBRATE_AT_CHANGE)),
            at_least: Math.ceil(calibration.gallery_size * (1 + RECALIBRATE_AT_CHANGE)),
          }
        : null,
    calibration,
  }
}
