// Queries of the match-threshold calibration (migration 0023): which environments want one, the
// claim that lets one process compute it, the result, and the sample of stored identify captures.
import type { Queryable, Sql } from './engine/database.js'
import type { Hand } from './templates.js'

/** A point of the DET curve (domain/accuracy/open-set.ts's DetPoint). */
export interface StoredDetPoint {
  threshold: number
  fpir: number
  fnir: number
}

export interface CalibrationRow {
  environment_id: string
  threshold: number | null
  derived_threshold: number | null
  method: 'empirical' | 'extreme_value' | null
  gallery_size: number | null
  non_mated_samples: number | null
  exceedances: number | null
  estimated_fpir: number | null
  fpir_low: number | null
  fpir_high: number | null
  tail_start: number | null
  tail_scale: number | null
  tail_samples: number | null
  target_fpir: number | null
  min_match_threshold: number | null
  computed_at: Date | null
  mated_samples: number | null
  fnir: number | null
  fnir_low: number | null
  fnir_high: number | null
  det: StoredDetPoint[] | null
}

export async function calibrationOf(sql: Queryable, environmentId: string): Promise<CalibrationRow | null> {
  const [row] = await sql<CalibrationRow[]>`SELECT * FROM environment_calibrations WHERE environment_id = ${environmentId}`
  return row ?? null
}

/** Environments given a target FPIR, with what their latest calibration was computed for (nulls when none). */
export function environmentsToCalibrate(sql: Sql) {
  return sql<Array<{ id: string; target_fpir: number; min_match_threshold: number; calibrated: CalibratedFor }>>`
    SELECT e.id, e.target_fpir, e.min_match_threshold,
      jsonb_build_object('threshold', c.threshold, 'gallery_size', c.gallery_size, 'target_fpir', c.target_fpir, 'min_match_threshold', c.min_match_threshold) AS calibrated
    FROM environments e LEFT JOIN environment_calibrations c ON c.environment_id = e.id
    WHERE e.target_fpir IS NOT NULL ORDER BY e.id`
}

export type CalibratedFor = Pick<CalibrationRow, 'threshold' | 'gallery_size' | 'target_fpir' | 'min_match_threshold'>

/** Takes the environment's calibration for `leaseMs` unless another process holds it. */
export async function claimCalibration(sql: Sql, environmentId: string, claimant: string, leaseMs: number): Promise<boolean> {
  const rows = await sql`
    INSERT INTO environment_calibrations (environment_id, claimed_by, claimed_until)
    VALUES (${environmentId}, ${claimant}, now() + ${leaseMs} * interval '1 millisecond')
    ON CONFLICT (environment_id) DO UPDATE SET claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until
    WHERE environment_calibrations.claimed_until IS NULL OR environment_calibrations.claimed_until < now()
    RETURNING environment_id`
  return rows.length === 1
}

export async function releaseCalibrationClaim(sql: Sql, environmentId: string, claimant: string): Promise<void> {
  await sql`UPDATE environment_calibrations SET claimed_by = NULL, claimed_until = NULL WHERE environment_id = ${environmentId} AND claimed_by = ${claimant}`
}

/** The columns of a calibration result (domain/accuracy/calibration.ts's Calibration is one). */
export interface CalibrationColumns {
  threshold: number
  derived_threshold: number
  method: string
  non_mated_samples: number
  exceedances: number
  estimated_fpir: { rate: number; low: number; high: number }
  tail: { start: number; scale: number; tailSamples: number } | null
  /** The sample's mated side: FNIR at the threshold and the DET curve (domain/accuracy/det.ts). */
  mated: { samples: number; fnir: { rate: number | null; low: number | null; high: number | null }; det: StoredDetPoint[] }
}

/**
 * Stores the result and sets the environment's match_threshold, if this process still holds the
 * claim and the settings are the ones it calibrated for. Returns whether the threshold changed hands.
 */
export async function saveCalibration(
  sql: Sql,
  environmentId: string,
  claimant: string,
  settings: { target_fpir: number; min_match_threshold: number },
  gallerySize: number,
  result: CalibrationColumns,
): Promise<boolean> {
  return sql.begin(async (tx) => {
    const saved = await tx`
      UPDATE environment_calibrations SET
        claimed_by = NULL, claimed_until = NULL, threshold = ${result.threshold}, derived_threshold = ${result.derived_threshold},
        method = ${result.method}, gallery_size = ${gallerySize}, non_mated_samples = ${result.non_mated_samples},
        exceedances = ${result.exceedances}, estimated_fpir = ${result.estimated_fpir.rate}, fpir_low = ${result.estimated_fpir.low},
        fpir_high = ${result.estimated_fpir.high}, tail_start = ${result.tail?.start ?? null}, tail_scale = ${result.tail?.scale ?? null},
        tail_samples = ${result.tail?.tailSamples ?? null}, mated_samples = ${result.mated.samples}, fnir = ${result.mated.fnir.rate},
        fnir_low = ${result.mated.fnir.low}, fnir_high = ${result.mated.fnir.high}, det = ${tx.json(result.mated.det as never)},
        target_fpir = ${settings.target_fpir}, min_match_threshold = ${settings.min_match_threshold}, computed_at = now()
      WHERE environment_id = ${environmentId} AND claimed_by = ${claimant}
      RETURNING environment_id`
    if (saved.length === 0) return false
    const updated = await tx`
      UPDATE environments SET match_threshold = ${result.threshold}
      WHERE id = ${environmentId} AND target_fpir = ${settings.target_fpir} AND min_match_threshold = ${settings.min_match_threshold}
      RETURNING id`
    return updated.length === 1
  })
}

export interface IdentifyCaptureRow {
  member_id: string
  hand: Hand
  ciphertext: Buffer
  wrapped_key: Buffer | null
}

// Pages read for a sample: enough for about this many times the rows asked for.
const SAMPLE_MARGIN = 4

/**
 * Up to `limit` stored identify captures of the environment, drawn at random. A large environment
 * is sampled by pages (TABLESAMPLE SYSTEM, about SAMPLE_MARGIN × limit of its rows), never by
 * sorting all of them: at 10M members that would read every template of the database.
 */
export function identifyCaptureSample(sql: Sql, environmentId: string, limit: number, environmentRows: number) {
  const percent = (100 * SAMPLE_MARGIN * limit) / Math.max(1, environmentRows)
  const source = percent >= 100 ? sql`palm_templates t` : sql`palm_templates t TABLESAMPLE SYSTEM (${percent})`
  return sql<IdentifyCaptureRow[]>`
    SELECT t.member_id, t.hand, t.ciphertext, m.wrapped_key
    FROM ${source} JOIN members m ON m.id = t.member_id
    WHERE t.environment_id = ${environmentId} AND t.kind = 'identify'
    ORDER BY random() LIMIT ${limit}`
}
