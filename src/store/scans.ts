// Queries of scan results: batched inserts from the scan recorder, and the windowed listing.
import type postgres from 'postgres'
import type { Queryable, Sql } from './engine/database.js'

export interface PalmPosition {
  x: number
  y: number
  z: number
  pitch: number
  roll: number
  yaw: number
}

export interface ScanInsert {
  id: string
  project_id: string
  caller_type: 'api_key' | 'token' | 'device'
  operation_type: 'identify' | 'enroll'
  response_time_ms: number
  success: boolean
  member_id: string | null
  device_id: string | null
  posture: PalmPosition | null
  results: Array<{ match_score: number; position: number }>
  created_at: Date
}

export interface ScanRow extends ScanInsert {}

export async function insertScans(sql: Queryable, scans: ScanInsert[]): Promise<void> {
  if (scans.length === 0) return
  await sql`INSERT INTO scan_results ${sql(
    scans.map((scan) => ({
      ...scan,
      posture: scan.posture === null ? null : sql.json(scan.posture as unknown as postgres.JSONValue),
      results: sql.json(scan.results as unknown as postgres.JSONValue),
    })),
  )}`
}

/** Newest first; `from` and `to` inclusive. */
export function scansOfProject(sql: Sql, projectId: string, window: { from: Date; to: Date; limit: number; offset: number }) {
  return sql<ScanRow[]>`
    SELECT id, project_id, caller_type, operation_type, response_time_ms, success, member_id, device_id, posture, results, created_at
    FROM scan_results
    WHERE project_id = ${projectId} AND created_at >= ${window.from} AND created_at <= ${window.to}
    ORDER BY created_at DESC, id DESC
    LIMIT ${window.limit} OFFSET ${window.offset}`
}
