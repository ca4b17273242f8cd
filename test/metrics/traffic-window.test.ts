// The in-process traffic window behind GET /v1/operations/traffic: slots of a ring, percentiles
// from log-scale histograms (within their 4 % buckets), a slot reused after a full turn.
import { describe, expect, it } from 'vitest'
import { createTrafficWindow } from '../../src/metrics/traffic-window.js'

const T0 = Date.parse('2026-11-28T12:00:00.000Z')

describe('traffic window', () => {
  it('counts requests and identifies per slot, with p50 and p95 within a bucket of the true values', () => {
    const window = createTrafficWindow({ slotSeconds: 10, slots: 6 })
    for (let index = 1; index <= 100; index++) window.record(true, 200, index, T0 + 1_000)
    window.record(false, 503, 2, T0 + 11_000)
    window.record(false, 200, 2, T0 + 12_000)
    const snapshot = window.snapshot(60, T0 + 15_000)
    expect(snapshot.slot_seconds).toBe(10)
    expect(snapshot.points.map((point) => point.at)).toEqual([-40, -30, -20, -10, 0, 10].map((seconds) => new Date(T0 + seconds * 1000).toISOString()))
    const [first, second] = snapshot.points.slice(-2)
    expect(first).toMatchObject({ requests: 100, identifies: 100, server_errors: 0 })
    expect(second).toMatchObject({ requests: 2, identifies: 0, server_errors: 1, identify_p50_ms: null, identify_p95_ms: null })
    expect(first.identify_p50_ms).toBeGreaterThanOrEqual(50)
    expect(first.identify_p50_ms).toBeLessThanOrEqual(50 * 1.04)
    expect(first.identify_p95_ms).toBeGreaterThanOrEqual(95)
    expect(first.identify_p95_ms).toBeLessThanOrEqual(95 * 1.04)
    expect(snapshot.identify_p95_ms).toBe(first.identify_p95_ms)
    // 102 requests over the 55 s the span has run (five whole slots and 5 s of the current one).
    expect(snapshot.requests_per_second).toBeCloseTo(102 / 55, 2)
  })

  it('forgets a slot once the ring has turned, and answers at most its window', () => {
    const window = createTrafficWindow({ slotSeconds: 10, slots: 6 })
    window.record(true, 200, 5, T0)
    expect(window.snapshot(60, T0 + 50_000).identify_p50_ms).not.toBeNull()
    // A minute later the same ring position holds the new slot: the old counts are gone.
    window.record(false, 200, 1, T0 + 60_000)
    const later = window.snapshot(600, T0 + 60_000)
    expect(later.points).toHaveLength(6)
    expect(later.points.reduce((sum, point) => sum + point.identifies, 0)).toBe(0)
    expect(later.points.at(-1)).toMatchObject({ requests: 1 })
    expect(window.windowSeconds).toBe(60)
  })
})
