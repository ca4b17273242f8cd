// Types of stats.mjs for the TypeScript benchmarks (bench/pgvector).
export function percentile(sorted: ArrayLike<number>, p: number): number | null
export function summarize(samples: ArrayLike<number>): {
  count: number
  p50: number | null
  p95: number | null
  p99: number | null
  max: number | null
  mean: number | null
}
