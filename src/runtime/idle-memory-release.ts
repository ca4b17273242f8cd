// Gives memory back while the service is quiet. Boot and traffic leave V8's young generation grown
// to its largest (32 MiB on the main thread) and freed C heap in glibc's arenas, and neither shrinks
// while nothing allocates: an idle embedded service sat at 238-246 MiB, 184-187 after one full
// collection and a malloc_trim (process-memory.ts). Checked every `intervalMs`: a check that finds
// the service quiet (no request in flight, fewer than one a second since the last check, no
// gallery loading) and its RSS grown by GROWTH_BYTES since the last release releases once. The
// growth rule keeps a service that stays quiet from paying a collection every interval, and a
// large gallery's service from paying a trim (hundreds of ms on a fragmented GiB heap) when there
// is little to give back.
import { releaseGarbage } from './process-memory.js'

const GROWTH_BYTES = 16 * 2 ** 20

export interface IdleMemoryOptions {
  intervalMs: number
  /** Requests started so far and in flight now (http/server.ts). */
  requests: () => { started: number; inFlight: number }
  /** True while work the check cannot see (a gallery load) runs. */
  busy: () => boolean
  onRelease: (rssBefore: number, rssAfter: number) => void
  /** What is released before this thread's garbage (the embedded database's thread). */
  releaseElsewhere?: () => Promise<void>
  /** For tests: the process's RSS and the release itself. */
  rss?: () => number
  release?: () => void
}

/** Starts the checks; returns their stop. */
export function watchIdleMemory(options: IdleMemoryOptions): () => void {
  const rss = options.rss ?? (() => process.memoryUsage.rss())
  const release = options.release ?? (() => void releaseGarbage())
  let startedBefore = options.requests().started
  let releasedAt = 0
  let releasing = false
  const check = async () => {
    if (releasing) return
    const { started, inFlight } = options.requests()
    const quiet = inFlight === 0 && (started - startedBefore) * 1000 < options.intervalMs && !options.busy()
    startedBefore = started
    if (!quiet) return
    const before = rss()
    if (before < releasedAt + GROWTH_BYTES) return
    releasing = true
    try {
      await options.releaseElsewhere?.()
      release()
    } finally {
      releasing = false
    }
    releasedAt = rss()
    options.onRelease(before, releasedAt)
  }
  const timer = setInterval(() => void check().catch(() => {}), options.intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}
