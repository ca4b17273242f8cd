// Timing for the matcher benchmark: tinybench where a run is short enough for it to take many
// samples, a plain loop (fewer, adaptive iterations) for large galleries.
import { Bench } from 'tinybench'

export interface Timing {
  medianMs: number
  p95Ms: number
  samples: number
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)))]
}

/** Plain loop: 1 warm-up, then as many runs as fit in `budgetMs` (3..maxIterations). */
export async function timeLoop(run: () => unknown, budgetMs: number, maxIterations: number): Promise<Timing> {
  let started = performance.now()
  await run()
  const first = performance.now() - started
  const iterations = Math.max(3, Math.min(maxIterations, Math.floor(budgetMs / Math.max(first, 0.01))))
  const samples: number[] = []
  for (let index = 0; index < iterations; index++) {
    started = performance.now()
    await run()
    samples.push(performance.now() - started)
  }
  samples.sort((a, b) => a - b)
  return { medianMs: percentile(samples, 0.5), p95Ms: percentile(samples, 0.95), samples: samples.length }
}

/** tinybench with retained samples, so the p95 is a real percentile. */
export async function timeBench(name: string, run: () => unknown, budgetMs: number): Promise<Timing> {
  // tinybench's `iterations` is a minimum (64 by default): keep it low so slow engines (the JS
  // reference at 100k rows) stay within the budget.
  const bench = new Bench({ time: budgetMs, iterations: 5, warmupTime: Math.min(100, budgetMs / 4), warmupIterations: 2, retainSamples: true })
  bench.add(name, run)
  await bench.run()
  const result = bench.tasks[0].result
  if (!('latency' in result)) throw new Error(`tinybench task ${name} did not complete (${result.state})`)
  const samples = [...(result.latency.samples ?? [])]
  if (samples.length === 0) throw new Error(`tinybench task ${name} kept no samples`)
  return { medianMs: result.latency.p50, p95Ms: percentile(samples, 0.95), samples: samples.length }
}

export function time(name: string, run: () => unknown, rows: number, options: { budgetMs: number; maxIterations: number }): Promise<Timing> {
  // Below ~100k rows a run takes milliseconds: tinybench's sampling is worth it.
  return rows <= 100_000 ? timeBench(name, run, options.budgetMs / 2) : timeLoop(run, options.budgetMs, options.maxIterations)
}
