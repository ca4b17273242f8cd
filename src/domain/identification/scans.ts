// Scan results: every identify and enroll leaves one. Identify is the hot path, so its result is
// queued and written in batches (one INSERT for many scans, plus the members' last_used_at);
// close() writes whatever is queued, so a clean shutdown loses nothing. Enroll writes its scan in
// its own transaction instead (insertScans with the transaction).
import type { Logger } from 'pino'
import type { Sql } from '../../store/engine/database.js'
import { touchMembersUsed } from '../../store/members.js'
import { insertScans, scansOfProject, type ScanInsert, type ScanRow } from '../../store/scans.js'

export interface ScanRecorder {
  /** Queue an identify's scan; written within `flushIntervalMs`. */
  record(scan: ScanInsert): void
  /** Write everything queued now (listing scans calls it first, so a client reads its writes). */
  flush(): Promise<void>
  /** Final flush; later records are written immediately. */
  close(): Promise<void>
}

const MAX_QUEUED = 100_000
const BATCH_ROWS = 1_000

export function createScanRecorder(sql: Sql, log: Logger, options: { flushIntervalMs?: number } = {}): ScanRecorder {
  const interval = options.flushIntervalMs ?? 100
  let queue: ScanInsert[] = []
  let timer: NodeJS.Timeout | null = null
  let writing: Promise<void> = Promise.resolve()
  let failures = 0

  async function writeQueued(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, BATCH_ROWS)
      try {
        await insertScans(sql, batch)
        const found = [...new Set(batch.flatMap((scan) => scan.member_id ?? []))]
        await touchMembersUsed(sql, found)
        queue = queue.slice(batch.length)
        failures = 0
      } catch (error) {
        failures += 1
        log.warn({ err: error, queued: queue.length }, 'scan results: write failed, will retry')
        schedule(Math.min(30_000, interval * 2 ** failures))
        return
      }
    }
  }

  function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer)
      timer = null
    }
    // Serialised: two flushes never write the same rows twice.
    writing = writing.then(writeQueued)
    return writing
  }

  function schedule(delay = interval): void {
    if (timer) return
    timer = setTimeout(() => {
      timer = null
      void flush()
    }, delay)
    timer.unref()
  }

  let closed = false
  return {
    record(scan) {
      if (queue.length >= MAX_QUEUED) {
        // The database has been unreachable for long: keep memory bounded, say so loudly.
        queue.shift()
        log.error('scan results: queue full, dropping the oldest scan result')
      }
      queue.push(scan)
      if (closed) void flush()
      else schedule()
    },
    flush,
    async close() {
      closed = true
      await flush()
      if (timer) {
        clearTimeout(timer)
        timer = null
      }
      if (queue.length > 0) log.error({ lost: queue.length }, 'scan results: could not be written before shutdown')
    },
  }
}

/** Scan results created in [from, to], newest first, one page; this process's queued writes first. */
export async function scanResults(
  deps: { sql: Sql; scans: Pick<ScanRecorder, 'flush'> },
  projectId: string,
  query: { from: Date; to: Date; page: number; per_page: number },
): Promise<ScanRow[]> {
  // Identify results are written in batches: make this process's own writes visible first.
  await deps.scans.flush()
  return scansOfProject(deps.sql, projectId, { from: query.from, to: query.to, limit: query.per_page, offset: (query.page - 1) * query.per_page })
}
