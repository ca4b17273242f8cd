// Per-project request limits, counted in the database so every service process on one PostgreSQL
// shares them: a per-minute window (the plan's rate) and a per-UTC-day window (daily_request_limit).
// A request refused with 429 is not counted (its increments are taken back).
//
// Fast path: a process reserves a *lease* of N requests from the database counters in one upsert
// and serves them from memory, so an enterprise project does not pay a database write per
// request. The counters include every lease handed out, so the total across processes never
// exceeds the limit; the price is that requests leased by one process and not used by the end of
// the window are lost to the others, at most (N − 1) per process per window. N is 1 (exact, one
// upsert per request, as before) for limits under LEASE_FROM, and limit / 100 above (50 for the
// enterprise plan's 5 000 per minute), so the loss stays under 1 % of the limit per process.
import { ServiceError } from '../errors.js'
import type { Sql } from '../store/engine/database.js'
import { addToCounters, deleteOldCounters, returnToCounters, type Bucket } from '../store/rate-limits.js'

export interface LimitedProject {
  id: string
  /** Whose limit, in a 429's detail; default "the project's". */
  label?: string
  requests_per_minute: number
  daily_request_limit: number
}

export interface RateLimiter {
  /** Count one request; returns the RateLimit-* headers, or throws 429 with Retry-After. */
  charge(project: LimitedProject): Promise<Record<string, string>>
  /** Give unused leased requests back to the database counters (shutdown). */
  release(): Promise<void>
}

export interface RateLimiterOptions {
  /** Largest lease; 1 turns the fast path off (one upsert per request). Default 100. */
  maxLease?: number
}

/** Limits below this are counted exactly, one upsert per request. */
export const LEASE_FROM = 200

export function leaseSize(limit: number, maxLease = 100): number {
  if (limit < LEASE_FROM) return 1
  return Math.max(1, Math.min(maxLease, Math.floor(limit / 100)))
}

interface Window {
  /** Requests this process may still serve in the window, already counted in the database. */
  remaining: number
  /** The database count after our last lease (everyone's requests, including our whole lease). */
  counted: number
  /** Local monotonic deadline of the window (performance.now() milliseconds). */
  endsAt: number
  /** The window's row in rate_limit_counters, to give unused requests back. */
  start: Date | null
}

const BUCKETS: Bucket[] = ['minute', 'day']

interface Lease {
  minute: Window
  day: Window
  /** A lease request in flight: concurrent requests of the project wait for it instead of racing. */
  pending: Promise<void> | null
}

const empty = (): Window => ({ remaining: 0, counted: 0, endsAt: 0, start: null })

function headersOf(limit: number, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, remaining)),
    'RateLimit-Reset': String(Math.max(1, resetSeconds)),
  }
}

const limitOf = (project: LimitedProject, bucket: Bucket) => (bucket === 'minute' ? project.requests_per_minute : project.daily_request_limit)

interface Refusal {
  refusedBy: Bucket
  resetMs: number
}

async function giveBack(sql: Sql, projectId: string, returns: Array<{ bucket: Bucket; size: number; start: Date }>) {
  if (!returns.length) return
  await returnToCounters(sql, projectId, returns)
}

/**
 * Reserve a lease in every window whose local lease is used up: add its size to the database
 * counter, keep what fits under the limit, give back the rest. When a window has nothing left,
 * the request is refused and nothing taken in this round is kept (a refused request is not counted).
 */
async function reserveLease(sql: Sql, project: LimitedProject, lease: Lease, maxLease: number): Promise<Refusal | null> {
  const size = Math.min(leaseSize(project.requests_per_minute, maxLease), leaseSize(project.daily_request_limit, maxLease))
  const asked = BUCKETS.filter((bucket) => lease[bucket].remaining < 1)
  const rows = await addToCounters(sql, project.id, asked, size)
  const now = performance.now()
  const results = rows.map((row) => ({ row, granted: Math.max(0, Math.min(size, size - (row.count - limitOf(project, row.bucket)))) }))
  const refused = results.find(({ row, granted }) => granted === 0 && row.bucket === 'day') ?? results.find(({ granted }) => granted === 0)
  await giveBack(
    sql,
    project.id,
    results
      .map(({ row, granted }) => ({ bucket: row.bucket, size: refused ? size : size - granted, start: row.window_start }))
      .filter((entry) => entry.size > 0),
  )
  if (refused) return { refusedBy: refused.row.bucket, resetMs: refused.row.reset_ms }
  for (const { row, granted } of results) {
    lease[row.bucket] = { remaining: granted, counted: row.count - (size - granted), endsAt: now + row.reset_ms, start: row.window_start }
  }
  return null
}

function refusalError(project: LimitedProject, { refusedBy, resetMs }: Refusal): ServiceError {
  const retryAfter = Math.max(1, Math.ceil(resetMs / 1000))
  const headers = headersOf(limitOf(project, refusedBy), 0, retryAfter)
  if (refusedBy === 'day') {
    return new ServiceError('daily_limit_reached', `${project.label ?? "the project's"} daily limit of ${project.daily_request_limit} requests is reached`, {
      retryAfter,
      headers,
    })
  }
  return new ServiceError('rate_limited', `${project.label ?? "the project's"} limit of ${project.requests_per_minute} requests per minute is reached`, {
    retryAfter,
    headers,
  })
}

export function createRateLimiter(sql: Sql, options: RateLimiterOptions = {}): RateLimiter {
  const maxLease = options.maxLease ?? 100
  const leases = new Map<string, Lease>()
  let lastCleanup = 0

  function cleanup() {
    if (Date.now() - lastCleanup < 3_600_000) return
    lastCleanup = Date.now()
    // Forget projects whose leases have all run out, so the map holds only recently active ones.
    const now = performance.now()
    for (const [projectId, lease] of leases) {
      if (!lease.pending && lease.minute.endsAt <= now && lease.day.endsAt <= now) leases.delete(projectId)
    }
    void deleteOldCounters(sql).catch(() => {})
  }

  /** Serve the request from the lease if both windows still hold a reserved request. */
  function take(project: LimitedProject, lease: Lease): Record<string, string> | null {
    const now = performance.now()
    for (const bucket of BUCKETS) if (lease[bucket].endsAt <= now) lease[bucket] = empty()
    if (lease.minute.remaining < 1 || lease.day.remaining < 1) return null
    lease.minute.remaining -= 1
    lease.day.remaining -= 1
    const used = lease.minute.counted - lease.minute.remaining
    return headersOf(project.requests_per_minute, project.requests_per_minute - used, Math.ceil((lease.minute.endsAt - now) / 1000))
  }

  async function charge(project: LimitedProject): Promise<Record<string, string>> {
    let lease = leases.get(project.id)
    if (!lease) {
      lease = { minute: empty(), day: empty(), pending: null }
      leases.set(project.id, lease)
    }
    for (;;) {
      const served = take(project, lease)
      if (served) return served
      if (lease.pending) {
        await lease.pending.catch(() => {})
        continue
      }
      let refusal: Refusal | null = null
      const current = lease
      current.pending = reserveLease(sql, project, current, maxLease)
        .then((result) => {
          refusal = result
        })
        .finally(() => {
          current.pending = null
        })
      await current.pending
      cleanup()
      if (!refusal) continue
      throw refusalError(project, refusal as Refusal)
    }
  }

  return {
    charge,
    async release() {
      const now = performance.now()
      for (const [projectId, lease] of leases) {
        await lease.pending?.catch(() => {})
        await giveBack(
          sql,
          projectId,
          BUCKETS.filter((bucket) => lease[bucket].remaining > 0 && lease[bucket].start && lease[bucket].endsAt > now).map((bucket) => ({
            bucket,
            size: lease[bucket].remaining,
            start: lease[bucket].start!,
          })),
        ).catch(() => {})
      }
      leases.clear()
    },
  }
}
