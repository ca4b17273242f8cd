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
