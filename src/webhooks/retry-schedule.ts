// When to try a delivery again (DECISIONS.md, Webhooks): attempt 1 at once, then 5 s doubling to
// a 1 h cap, each delay with ±10 % jitter, 336 attempts in all (about 14 days), then `failed`.
// A Retry-After on 429/503 may lengthen a delay up to 1 h but never shortens the schedule.

export const MAX_ATTEMPTS = 336
export const BASE_DELAY_MS = 5_000
export const MAX_DELAY_MS = 3_600_000
export const JITTER = 0.1

/** The delay before attempt `attemptsMade + 1`, without jitter. */
export function scheduledDelayMs(attemptsMade: number): number {
  if (attemptsMade < 1) return 0
  // 2^30 already exceeds the cap; keeps the power finite for absurd inputs.
  return Math.min(BASE_DELAY_MS * 2 ** Math.min(attemptsMade - 1, 30), MAX_DELAY_MS)
}

/**
 * The delay after a failed attempt number `attemptsMade`, jittered by ±10 % (`random` in [0, 1)),
 * then raised to `retryAfterMs` when the receiver asked for more (at most 1 h).
 */
export function retryDelayMs(attemptsMade: number, options: { random?: () => number; retryAfterMs?: number | null } = {}): number {
  const random = options.random ?? Math.random
  const base = scheduledDelayMs(attemptsMade)
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()))
  const asked = options.retryAfterMs ?? null
  if (asked === null) return jittered
  return Math.max(jittered, Math.min(asked, MAX_DELAY_MS))
}

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from `now`; null if unusable. */
export function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (!text) return null
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  if (Number.isNaN(date)) return null
  return Math.max(0, date - now.getTime())
}

/** Whether the answer's Retry-After is honoured (429 Too Many Requests, 503 Unavailable). */
export const honoursRetryAfter = (status: number | null): boolean => status === 429 || status === 503
