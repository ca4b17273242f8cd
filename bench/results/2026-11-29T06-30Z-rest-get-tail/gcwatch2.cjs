// Diagnostic preload (not part of the product): event-loop delay and GC pauses of every thread of `serve`, every 2 s.
if (process.argv.includes('serve') || !require('node:worker_threads').isMainThread) {
  const { threadId, isMainThread, workerData } = require('node:worker_threads')
  const { PerformanceObserver, monitorEventLoopDelay } = require('node:perf_hooks')
  const fs = require('node:fs')
  const out = `/tmp/gcwatch2-${process.pid}-${threadId}.ndjson`
  const label = isMainThread ? 'main' : 'worker'
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  const gcs = []
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([e.detail?.kind ?? 0, e.duration])
  }).observe({ entryTypes: ['gc'] })
  const timer = setInterval(() => {
    const ms = gcs.map((g) => g[1])
    fs.appendFileSync(out, JSON.stringify({ t: new Date().toISOString().slice(11, 19), label, eld50: +(h.percentile(50) / 1e6).toFixed(2), eld95: +(h.percentile(95) / 1e6).toFixed(2), eld99: +(h.percentile(99) / 1e6).toFixed(2), eldMax: +(h.max / 1e6).toFixed(1), gcs: ms.length, gcMs: +ms.reduce((a, b) => a + b, 0).toFixed(1), gcMax: +Math.max(0, ...ms).toFixed(1), gcOver5: ms.filter((m) => m > 5).length }) + '\n')
    h.reset()
    gcs.length = 0
  }, 2000)
  timer.unref()
}
