// The FAISS peer of `npm run bench:matcher` (bench/peers/faiss.ts + faiss_peer.py), on a small
// gallery: its exact int8 index returns the true inner-product best row, its binary index finds a
// row from the row's own sign bits, every index x batch x threads combination is timed, and a
// missing Python is reported, not thrown. The first run makes the cached virtualenv (PyPI).
import { describe, expect, it } from 'vitest'
import { measureFaiss } from '../bench/peers/faiss.js'
import { createRandom } from '../src/random.js'

const DIMENSION = 256
const ROWS = 3000

function gallery(): { rows: Int8Array; probes: Int8Array } {
  const random = createRandom(7)
  const rows = Int8Array.from({ length: ROWS * DIMENSION }, () => Math.round((random.next() - 0.5) * 254))
  // Probes 0..3 are rows 10, 20, 30, 40 themselves; the rest are noise.
  const probes = Int8Array.from({ length: 16 * DIMENSION }, () => Math.round((random.next() - 0.5) * 254))
  for (const [probe, row] of [10, 20, 30, 40].entries()) probes.set(rows.subarray(row * DIMENSION, (row + 1) * DIMENSION), probe * DIMENSION)
  return { rows, probes }
}

const dot = (a: Int8Array, b: Int8Array) => a.reduce((sum, value, index) => sum + value * b[index], 0)

describe('FAISS peer', () => {
  it('scans the same rows exactly (sq8) and by sign bits (binary), timed for every batch and thread count', () => {
    const { rows, probes } = gallery()
    const measured = measureFaiss({ rows, probes, dimension: DIMENSION, k: 10, threads: [1, 2], budgetMs: 50, maxIterations: 5 })
    if (!measured.available) throw new Error(`FAISS unavailable: ${measured.reason}`)
    expect(measured.version).toMatch(/^\d+\.\d+/)
    for (let probe = 0; probe < 16; probe++) {
      const vector = probes.subarray(probe * DIMENSION, (probe + 1) * DIMENSION)
      let best = -Infinity
      for (let row = 0; row < ROWS; row++) best = Math.max(best, dot(vector, rows.subarray(row * DIMENSION, (row + 1) * DIMENSION)))
      const chosen = measured.top1.sq8[probe]
      expect(dot(vector, rows.subarray(chosen * DIMENSION, (chosen + 1) * DIMENSION))).toBe(best)
    }
    expect(measured.top1.binary.slice(0, 4)).toEqual([10, 20, 30, 40])
    const combos = measured.timings.map(({ index, batch, threads }) => `${index}/${batch}/${threads}`).sort()
    expect(combos).toEqual(['binary/1/1', 'binary/1/2', 'binary/16/1', 'binary/16/2', 'sq8/1/1', 'sq8/1/2', 'sq8/16/1', 'sq8/16/2'])
    for (const timing of measured.timings) {
      expect(timing.medianMs).toBeGreaterThan(0)
      expect(timing.p95Ms).toBeGreaterThanOrEqual(timing.medianMs)
      expect(timing.samples).toBeGreaterThanOrEqual(3)
    }
  }, 300_000)

  it('reports a Python that cannot run FAISS instead of failing', () => {
    const previous = process.env.PALMVEIN_BENCH_PYTHON
    process.env.PALMVEIN_BENCH_PYTHON = '/nonexistent/python'
    try {
      const { rows, probes } = gallery()
      const measured = measureFaiss({ rows, probes, dimension: DIMENSION, k: 1, threads: [1], budgetMs: 10, maxIterations: 3 })
      expect(measured).toEqual({ available: false, reason: 'PALMVEIN_BENCH_PYTHON=/nonexistent/python cannot import faiss and numpy' })
    } finally {
      if (previous === undefined) delete process.env.PALMVEIN_BENCH_PYTHON
      else process.env.PALMVEIN_BENCH_PYTHON = previous
    }
  })
})
