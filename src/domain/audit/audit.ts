// The audit trail ("Access is logged"): who reached or changed what, and who was refused. Requests
// hand their record to `record()`, which only queues it; a flush every 250 ms (or at 50 queued)
// appends the queue hash-chained per organization, each chain's records as one block in one
// statement (see appendBlock: a writer whose tail another moved re-reads it), and `close()`
// flushes what is left. Records hold ids, the route template, the status and the client, never a
// body. Records link by HMAC under the audit key (audit-keys.ts); every 15 minutes and at close the
// trail signs a checkpoint of each chain it appended to (audit-checkpoints.ts). A daily job purges
// records past the retention, anchoring each chain (with a MAC) so it still verifies.
import type { Logger } from 'pino'
import type { AuditKeys } from './audit-keys.js'
import type { AuditInsert } from '../../store/audit-log.js'
import type { Sql } from '../../store/engine/database.js'
import { BLOCK_RECORDS, createAuditChainWriter } from './audit-chain-writer.js'
import { retentionPurge } from './audit-retention.js'

export { chainHash } from './audit-legacy-hash.js'
export { verifyAuditChains, type ChainReport } from './audit-verify.js'

export type AuditRecord = AuditInsert

const FLUSH_EVERY_MS = 250
/**
 * Under load, a block every 50 records: hashing and inserting 250 at once held the main thread
 * ~2 ms and the embedded database's ~3 ms four times a second, and requests arriving then waited
 * (20 000 members, GET member p95 at 1 000/s, two series: 3.2 → 2.7 and 3.7 → 3.5 ms). Smaller
 * blocks cost ~30 % more CPU per record (27 against 21 µs, bench/audit-append.mjs): under 3 % of a
 * core at 1 000 requests/s.
 */
const FLUSH_AT = 50
const PURGE_EVERY_MS = 24 * 3600_000
/** Signed checkpoints are batched: one per chain appended to, this often (and at close). */
const CHECKPOINT_EVERY_MS = 15 * 60_000

export interface AuditTrail {
  /** Queues the record (never waits, never throws). */
  record(record: AuditRecord): void
  /** Appends everything queued so far. */
  flush(): Promise<void>
  /** Signs a checkpoint of each chain this trail appended to since its last one. */
  checkpoint(): Promise<void>
  close(): Promise<void>
  /** The keys it links, MACs and signs with, and verifies with. */
  readonly keys: AuditKeys
}

/** Runs `task` every `ms` without keeping the process alive. */
function every(ms: number, task: () => void): NodeJS.Timeout {
  const timer = setInterval(task, ms)
  timer.unref()
  return timer
}

/** The retention purge: a minute after start, then daily. Returns what stops the daily one. */
function scheduleRetentionPurges(options: Parameters<typeof retentionPurge>[0]): () => void {
  const purge = retentionPurge(options)
  const daily = every(PURGE_EVERY_MS, () => {
    void purge()
  })
  setTimeout(() => {
    void purge()
  }, 60_000).unref()
  return () => clearInterval(daily)
}

/**
 * `flushEveryMs`: how often a light trickle of records is appended (default 250 ms);
 * `checkpointEveryMs`: how often the chains appended to are checkpointed (default 15 minutes).
 */
export function createAuditTrail(options: {
  sql: Sql
  log: Logger
  keys: AuditKeys
  retentionDays: number
  purge: boolean
  flushEveryMs?: number
  checkpointEveryMs?: number
}): AuditTrail {
  const { sql, log, keys } = options
  let queue: AuditRecord[] = []
  let flushing: Promise<void> = Promise.resolve()
  let closed = false
  const writer = createAuditChainWriter({ sql, log, keys })

  /** A flush is chained and has not started: records arriving meanwhile need no other. */
  let flushPending = false
  /** Records at the head of the queue that the running flush is appending. */
  let taken = 0

  function flush(): Promise<void> {
    flushPending = true
    flushing = flushing.then(async () => {
      flushPending = false
      // What was queued when this flush began. Records arriving while it appends wait for the next
      // one: draining them too would append a block of one or two records after every block.
      taken = queue.length
      try {
        while (taken > 0) {
          const batch = queue.slice(0, Math.min(taken, BLOCK_RECORDS * 8))
          const done = new Set<AuditRecord>()
          try {
            await writer.append(batch, done)
            queue = queue.slice(batch.length)
            taken -= batch.length
          } catch (error) {
            // Kept for the next flush (the database may be away); the oldest go first if it never returns.
            queue = queue.filter((record) => !done.has(record))
            if (queue.length > 100_000) queue = queue.slice(queue.length - 100_000)
            log.warn({ err: error, queued: queue.length }, 'Audit: appending records failed; retrying')
            return
          }
        }
      } finally {
        taken = 0
      }
    })
    return flushing
  }

  const timer = every(options.flushEveryMs ?? FLUSH_EVERY_MS, () => {
    if (queue.length > 0 && !flushPending) void flush()
  })
  const checkpointTimer = every(options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS, () => {
    void writer.checkpoint()
  })
  const stopPurges = options.purge ? scheduleRetentionPurges(options) : () => {}

  return {
    record(record) {
      if (closed) return
      queue.push(record)
      // Counted without the records a running flush is appending.
      if (queue.length - taken >= FLUSH_AT && !flushPending) void flush()
    },
    flush,
    checkpoint: () => writer.checkpoint(),
    keys,
    async close() {
      closed = true
      clearInterval(timer)
      clearInterval(checkpointTimer)
      stopPurges()
      await flush()
      if (queue.length > 0) log.error({ lost: queue.length }, 'Audit: records could not be appended before shutdown')
      await writer.checkpoint()
    },
  }
}
