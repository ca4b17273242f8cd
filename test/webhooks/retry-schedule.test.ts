import { describe, expect, it } from 'vitest'
import { MAX_ATTEMPTS, MAX_DELAY_MS, parseRetryAfter, retryDelayMs, scheduledDelayMs } from '../../src/webhooks/retry-schedule.js'

describe('retry schedule', () => {
  it('starts at 5 s, doubles, and caps at 1 h', () => {
    expect(scheduledDelayMs(0)).toBe(0)
    expect([1, 2, 3, 4, 10, 11, 12, 335].map(scheduledDelayMs)).toEqual([5_000, 10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000])
  })

  it('spans about 14 days over 336 attempts', () => {
    let total = 0
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) total += scheduledDelayMs(attempt)
    expect(total / 86_400_000).toBeGreaterThan(13.5)
    expect(total / 86_400_000).toBeLessThan(14.1)
  })

  it('jitters by at most 10 % either way', () => {
    expect(retryDelayMs(1, { random: () => 0 })).toBe(4_500)
    expect(retryDelayMs(1, { random: () => 0.999999 })).toBe(5_500)
    expect(retryDelayMs(20, { random: () => 0.5 })).toBe(3_600_000)
  })

  it('honours Retry-After between the scheduled delay and 1 h', () => {
    const middle = () => 0.5
    expect(retryDelayMs(1, { random: middle, retryAfterMs: 120_000 })).toBe(120_000)
    expect(retryDelayMs(1, { random: middle, retryAfterMs: 1_000 })).toBe(5_000)
    expect(retryDelayMs(1, { random: middle, retryAfterMs: 7_200_000 })).toBe(MAX_DELAY_MS)
  })

  it('parses Retry-After in seconds or as an HTTP date', () => {
    const now = new Date('2026-01-01T00:00:00Z')
    expect(parseRetryAfter('30', now)).toBe(30_000)
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:02:00 GMT', now)).toBe(120_000)
    expect(parseRetryAfter('soon', now)).toBeNull()
    expect(parseRetryAfter(undefined, now)).toBeNull()
  })
})
