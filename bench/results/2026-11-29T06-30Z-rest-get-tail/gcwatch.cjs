// Diagnostic preload (not part of the product): event-loop delay and GC pauses of `serve`'s threads,
// every 2 s, into /tmp/gcwatch-<pid>-<thread>.ndjson. NODE_OPTIONS=--require reaches the main thread
// only; a worker watched too must require this file itself (for one run, the built pglite-worker.js).
// Its first version (commit 14dd128) watched the main thread alone, into /tmp/gcwatch-<pid>.ndjson.
const { threadId, isMainThread } = require('node:worker_threads')
if (process.argv.includes('serve') || !isMainThread) {
  const { PerformanceObserver, constants, monitorEventLoopDelay } = require('node:perf_hooks')
  const fs = require('node:fs')
  const out = `/tmp/gcwatch-${process.pid}-${threadId}.ndjson`
  const label = isMainThread ? 'main' : 'worker'
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const gcs = []
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcs.push([entry.detail?.kind ?? 0, entry.duration])
  }).observe({ entryTypes: ['gc'] })
  const ms = (nanoseconds) => +(nanoseconds / 1e6).toFixed(2)
  setInterval(() => {
    const pauses = gcs.map((gc) => gc[1])
    const line = {
      t: new Date().toISOString().slice(11, 19),
      label,
      eld50: ms(delay.percentile(50)),
      eld95: ms(delay.percentile(95)),
      eld99: ms(delay.percentile(99)),
      eldMax: ms(delay.max),
      gcs: pauses.length,
      gcMs: +pauses.reduce((sum, pause) => sum + pause, 0).toFixed(1),
      gcMax: +Math.max(0, ...pauses).toFixed(1),
      gcOver5: pauses.filter((pause) => pause > 5).length,
      major: gcs.filter((gc) => gc[0] === constants.NODE_PERFORMANCE_GC_MAJOR).length,
    }
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`)
    delay.reset()
    gcs.length = 0
  }, 2000).unref()
}
