// Queries of the per-project request counters (rate_limit_counters): one row per project, bucket
// and window start, shared by every service process on the database.
import type { Sql } from './engine/database.js'

export type Bucket = 'minute' | 'day'

/**
 * Adds `size` to the current window of each bucket (minute, UTC day) and answers the new counts,
 * with the milliseconds left in each window.
 */
export function addToCounters(sql: Sql, projectId: string, buckets: Bucket[], size: number) {
  return sql<{ bucket: Bucket; count: number; window_start: Date; reset_ms: number }[]>`
    INSERT INTO rate_limit_counters (project_id, bucket, window_start, count)
    SELECT ${projectId}, b.bucket,
      CASE b.bucket WHEN 'minute' THEN date_trunc('minute', now()) ELSE date_trunc('day', now(), 'UTC') END, ${size}
    FROM unnest(${buckets}::text[]) AS b(bucket)
    ON CONFLICT (project_id, bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
    RETURNING bucket, count, window_start,
      (extract(epoch FROM window_start + CASE bucket WHEN 'minute' THEN interval '1 minute' ELSE interval '1 day' END - now()) * 1000)::float8 AS reset_ms`
}

/** Takes requests back from the named windows (never below zero). */
export async function returnToCounters(sql: Sql, projectId: string, returns: Array<{ bucket: Bucket; size: number; start: Date }>): Promise<void> {
  await sql`
    UPDATE rate_limit_counters c SET count = greatest(0, c.count - r.size)
    FROM unnest(${returns.map((r) => r.bucket)}::text[], ${returns.map((r) => r.size)}::int[], ${returns.map((r) => r.start.toISOString())}::timestamptz[]) AS r(bucket, size, start)
    WHERE c.project_id = ${projectId} AND c.bucket = r.bucket AND c.window_start = r.start`
}

export async function deleteOldCounters(sql: Sql): Promise<void> {
  await sql`DELETE FROM rate_limit_counters WHERE window_start < now() - interval '2 days'`
}

export interface RateLimitUseRow {
  project_id: string
  project_name: string
  org_id: string
  org_name: string
  plan: string
  requests_per_minute: number
  minute_count: number
  daily_request_limit: number
  day_count: number
}

/**
 * The projects with requests counted today, the busiest in this minute first (then today): their
 * counts in the current minute and UTC day against their plan's limits. Counts include the leases
 * processes hold (auth/rate-limit.ts), so they may run ahead of the requests served by a lease.
 */
export function rateLimitUse(sql: Sql, limit: number) {
  return sql<RateLimitUseRow[]>`
    SELECT p.id AS project_id, p.name AS project_name, o.id AS org_id, o.name AS org_name, p.plan,
      p.requests_per_minute, coalesce(m.count, 0)::int AS minute_count, p.daily_request_limit, d.count::int AS day_count
    FROM rate_limit_counters d
    JOIN projects p ON p.id = d.project_id
    JOIN organizations o ON o.id = p.org_id
    LEFT JOIN rate_limit_counters m ON m.project_id = d.project_id AND m.bucket = 'minute' AND m.window_start = date_trunc('minute', now())
    WHERE d.bucket = 'day' AND d.window_start = date_trunc('day', now(), 'UTC')
    ORDER BY minute_count DESC, day_count DESC, p.id
    LIMIT ${limit}`
}
