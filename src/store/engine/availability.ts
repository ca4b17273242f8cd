// Whether the database can be reached, known within about a second: a probe on its own connection
// every 250 ms, with a 1 s limit. When a probe fails the database is down: the caller cuts every
// open connection (queries stuck on a silent network fail at once instead of waiting minutes for
// TCP), requests that need the database get 503 database_unavailable, and the log says so once.
// The first probe that succeeds again ends the outage.

export const PROBE_INTERVAL_MS = 250
export const PROBE_TIMEOUT_MS = 1_000
/** A timer this late means our event loop was blocked, not that the database was silent. */
const LAG_TOLERANCE_MS = 150
/** What a 503 database_unavailable tells the client to wait, in seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 2

// Errors of a database that cannot be reached or went away mid-query, as node, postgres.js and
// PostgreSQL name them (class 08: connection exception; 57P01..57P03: shutting down or starting).
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'DATABASE_CUT',
  '57P01',
  '57P02',
  '57P03',
])

export function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return false
  return UNREACHABLE_CODES.has(code) || code.startsWith('08')
}

export interface Availability {
  readonly up: boolean
  stop(): void
}

export interface AvailabilityOptions {
  /** One round trip on a connection of its own. */
  probe(): Promise<void>
  /**
   * A probe failed (`first`: the outage starts now). Cut the open connections: queries stuck on a
   * silent network fail at once, and the next probe starts on a fresh connection.
   */
  onProbeFailed(reason: string, first: boolean): void
  /** The database answers again after `downForMs`. */
  onUp(downForMs: number): void
  intervalMs?: number
  timeoutMs?: number
}

export function watchAvailability(options: AvailabilityOptions): Availability {
  const intervalMs = options.intervalMs ?? PROBE_INTERVAL_MS
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  let up = true
  let downSince = 0
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  /**
   * Rejects after `timeoutMs` of the database's silence, not of ours: when this process's event
   * loop was blocked (a long synchronous task), the timer fires late and the answer may be waiting
   * unread, so the deadline is extended by the lag and the verdict deferred past the I/O phase.
   */
  function deadline(): { promise: Promise<never>; clear(): void } {
    let handle: NodeJS.Timeout | undefined
    let cleared = false
    const promise = new Promise<never>((_, reject) => {
      const arm = (ms: number) => {
        const due = performance.now() + ms
        handle = setTimeout(() => {
          const lag = performance.now() - due
          if (lag > LAG_TOLERANCE_MS) return arm(LAG_TOLERANCE_MS)
          setImmediate(() => {
            if (!cleared) reject(new Error(`no answer within ${timeoutMs} ms`))
          })
        }, ms)
      }
      arm(timeoutMs)
    })
    promise.catch(() => {})
    return {
      promise,
      clear() {
        cleared = true
        clearTimeout(handle)
      },
    }
  }

  async function probeOnce(): Promise<void> {
    const limit = deadline()
    try {
      await Promise.race([options.probe(), limit.promise])
      if (!up) {
        up = true
        options.onUp(Date.now() - downSince)
      }
    } catch (error) {
      const first = up
      if (first) {
        up = false
        downSince = Date.now()
      }
      options.onProbeFailed((error as Error).message, first)
    } finally {
      limit.clear()
      if (!stopped)
        timer = setTimeout(() => {
          void probeOnce()
        }, intervalMs).unref()
    }
  }
  timer = setTimeout(() => {
    void probeOnce()
  }, intervalMs).unref()

  return {
    get up() {
      return up
    },
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
