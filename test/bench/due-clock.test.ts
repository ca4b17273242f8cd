// The open-loop generators' send clock: every request fired once, in order, never before it is due.
import { describe, expect, it } from 'vitest'
import { fireOnSchedule } from '../../bench/load/due-clock.mjs'

describe('fireOnSchedule', () => {
  it('fires each request once, in order, at or after its due time', async () => {
    const fired: Array<{ index: number; due: number; at: number }> = []
    const start = performance.now() + 20
    await fireOnSchedule({ start, interval: 0.5, total: 400, fire: (index: number, due: number) => fired.push({ index, due, at: performance.now() }) })
    expect(fired.map((entry) => entry.index)).toEqual(Array.from({ length: 400 }, (_, index) => index))
    for (const entry of fired) {
      expect(entry.due).toBeCloseTo(start + entry.index * 0.5, 9)
      expect(entry.at).toBeGreaterThanOrEqual(entry.due)
    }
  })

  it('resolves at once when there is nothing to send', async () => {
    let calls = 0
    await fireOnSchedule({
      start: performance.now(),
      interval: 1,
      total: 0,
      fire: () => {
        calls += 1
      },
    })
    expect(calls).toBe(0)
  })
})
