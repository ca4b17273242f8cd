// Per-project request limits, counted in the database so every service process on one PostgreSQL
// shares them: a per-minute window (the plan's rate) and a per-UTC-day window (daily_request_limit).
// A request refused with 429 is not counted (its increments are taken back).
import type { Sql } from '../store/database.js'
import { ServiceError } from '../errors.js'

export interface LimitedProject {
  id: string
  requests_per_minute: number
  daily_request_limit: number
}

export interface RateLimiter {
  /** Count one request; returns the RateLimit-* headers, or throws 429 with Retry-After. */
  charge(project: LimitedProject): Promise<Record<string, string>>
}

export function createRateLimiter(sql: Sql): RateLimiter {
  let lastCleanup = 0
  return {
    async charge(project) {
      const rows = await sql<{ bucket: 'minute' | 'day'; count: number; reset: number }[]>`
        INSERT INTO rate_limit_counters (project_id, bucket, window_start, count)
        VALUES (${project.id}, 'minute', date_trunc('minute', now()), 1),
               (${project.id}, 'day', date_trunc('day', now(), 'UTC'), 1)
        ON CONFLICT (project_id, bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
        RETURNING bucket, count,
          ceil(extract(epoch FROM window_start + CASE bucket WHEN 'minute' THEN interval '1 minute' ELSE interval '1 day' END - now()))::int AS reset`
      const minute = rows.find((row) => row.bucket === 'minute')!
      const day = rows.find((row) => row.bucket === 'day')!
      const overMinute = minute.count > project.requests_per_minute
      const overDay = day.count > project.daily_request_limit
      if (Date.now() - lastCleanup > 3_600_000) {
        lastCleanup = Date.now()
        void sql`DELETE FROM rate_limit_counters WHERE window_start < now() - interval '2 days'`.catch(() => {})
      }
      if (!overMinute && !overDay) {
        return {
          'RateLimit-Limit': String(project.requests_per_minute),
          'RateLimit-Remaining': String(project.requests_per_minute - minute.count),
          'RateLimit-Reset': String(Math.max(1, minute.reset)),
        }
      }
      await sql`
        UPDATE rate_limit_counters SET count = count - 1
        WHERE project_id = ${project.id} AND ((bucket = 'minute' AND window_start = date_trunc('minute', now()))
           OR (bucket = 'day' AND window_start = date_trunc('day', now(), 'UTC')))`
      const retryAfter = Math.max(1, overDay ? day.reset : minute.reset)
      const headers = {
        'RateLimit-Limit': String(overDay ? project.daily_request_limit : project.requests_per_minute),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(retryAfter),
      }
      if (overDay) {
        throw new ServiceError('daily_limit_reached', `the project's daily limit of ${project.daily_request_limit} requests is reached`, { retryAfter, headers })
      }
      throw new ServiceError('rate_limited', `the project's limit of ${project.requests_per_minute} requests per minute is reached`, { retryAfter, headers })
    },
  }
}
