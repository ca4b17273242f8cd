// Latency summaries shared by the load generators: percentiles over recorded samples (ms).

/** p-th percentile (0..100) of an ascending-sorted array, nearest-rank. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]
}

/** { count, p50, p95, p99, max, mean } in milliseconds, rounded to 0.01 ms. */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort()
  const round = (value) => (value === null ? null : Math.round(value * 100) / 100)
  const sum = sorted.reduce((total, value) => total + value, 0)
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length ? sorted[sorted.length - 1] : null),
    mean: round(sorted.length ? sum / sorted.length : null),
  }
}
