// The audit trail ("Access is logged"): who reached or changed what, and who was refused. Requests
// hand their record to `record()`, which only queues it; a flush every 250 ms (or at 500 queued)
// appends the queue in one transaction, hash-chained per organization (on PostgreSQL in a transaction under each chain's lock; on the
// embedded database in one statement per chain, so its single session is not held), and `close()` flushes what
// is left. Records hold ids, the route template, the status and the client, never a body. A daily
// job purges records past the retention, anchoring each chain so that it still verifies.
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import { appendAuditRecords, appendToTail, byChain, chainTail, anchorOf, auditChains, chainPage, purgeAuditBefore, type AuditInsert, type AuditRow, type ChainTail } from '../store/audit-log.js'
import type { Sql } from '../store/database.js'

export type AuditRecord = AuditInsert

const FLUSH_EVERY_MS = 250
const FLUSH_AT = 500
const EMBEDDED_STATEMENT_ROWS = 50
const PURGE_EVERY_MS = 24 * 3600_000

/** The record's content in a fixed order: what its hash covers. */
function content(record: AuditInsert): string {
  return JSON.stringify([
    record.created_at.toISOString(), record.request_id, record.org_id, record.project_id, record.actor_kind, record.actor_id,
    record.action, Object.entries(record.resource_ids).sort(([a], [b]) => a.localeCompare(b)), record.status,
    record.client_address, record.user_agent,
  ])
}

export function chainHash(prev: Buffer, record: AuditInsert): Buffer {
  return createHash('sha256').update(prev).update(content(record)).digest()
}

export interface AuditTrail {
  /** Queues the record (never waits, never throws). */
  record(record: AuditRecord): void
  /** Appends everything queued so far. */
  flush(): Promise<void>
  close(): Promise<void>
}

export function createAuditTrail(options: {
  sql: Sql; log: Logger; retentionDays: number; purge: boolean
  /** The embedded database: one session that runs one statement at a time (see appendToTail). */
  embedded?: boolean
}): AuditTrail {
  const { sql, log } = options
  let queue: AuditRecord[] = []
  let flushing: Promise<void> = Promise.resolve()
  let closed = false
  /** Embedded: where each chain ended after our last append, so an append is one statement. */
  const tails = new Map<string, ChainTail>()

  /** Appends the batch; records appended before a failure are added to `done`. */
  async function append(batch: AuditRecord[], done: Set<AuditRecord>): Promise<void> {
    if (!options.embedded) {
      await appendAuditRecords(sql, batch, chainHash)
      for (const record of batch) done.add(record)
      return
    }
    for (const [chain, records] of byChain(batch)) {
      // Small statements: the service's other queries (every request's key lookup) queue behind
      // each one on the single session, so each holds it for a few milliseconds at most.
      for (let start = 0; start < records.length; start += EMBEDDED_STATEMENT_ROWS) {
        const part = records.slice(start, start + EMBEDDED_STATEMENT_ROWS)
        try {
          const tail = tails.get(chain) ?? await chainTail(sql, part[0].org_id)
          // Null: the chain moved on without us (a purge emptied it, another service): the locked path.
          const next = await appendToTail(sql, chain, tail, part, chainHash)
            ?? (await appendAuditRecords(sql, part, chainHash)).get(chain)!
          tails.set(chain, next)
          for (const record of part) done.add(record)
        } catch (error) {
          tails.delete(chain)
          throw error
        }
      }
    }
  }

  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      while (queue.length > 0) {
        const batch = queue.slice(0, FLUSH_AT * 4)
        const done = new Set<AuditRecord>()
        try {
          await append(batch, done)
          queue = queue.slice(batch.length)
        } catch (error) {
          // Kept for the next flush (the database may be away); the oldest go first if it never returns.
          queue = queue.filter((record) => !done.has(record))
          if (queue.length > 100_000) queue = queue.slice(queue.length - 100_000)
          log.warn({ err: error, queued: queue.length }, 'Audit: appending records failed; retrying')
          return
        }
      }
    })
    return flushing
  }

  const timer = setInterval(() => { if (queue.length > 0) void flush() }, FLUSH_EVERY_MS)
  timer.unref()
  const purge = async () => {
    try {
      const deleted = await purgeAuditBefore(sql, new Date(Date.now() - options.retentionDays * 86_400_000))
      if (deleted > 0) log.info(`Audit: purged ${deleted} record(s) older than ${options.retentionDays} days`)
    } catch (error) {
      log.warn({ err: error }, 'Audit: the retention purge failed; it runs again tomorrow')
    }
  }
  const purgeTimer = options.purge ? setInterval(() => { void purge() }, PURGE_EVERY_MS) : null
  purgeTimer?.unref()
  if (options.purge) setTimeout(() => { void purge() }, 60_000).unref()

  return {
    record(record) {
      if (closed) return
      queue.push(record)
      if (queue.length >= FLUSH_AT) void flush()
    },
    flush,
    async close() {
      closed = true
      clearInterval(timer)
      if (purgeTimer) clearInterval(purgeTimer)
      await flush()
      if (queue.length > 0) log.error({ lost: queue.length }, 'Audit: records could not be appended before shutdown')
    },
  }
}

export interface ChainReport {
  chain: string
  records: number
  /** The first record whose hash or link does not hold, or null. */
  broken: { seq: number; reason: string } | null
}

/** Walks each chain (or the organization's) from its anchor, recomputing every hash. */
export async function verifyAuditChains(sql: Sql, orgId?: string): Promise<ChainReport[]> {
  const chains = orgId ? [orgId] : await auditChains(sql)
  const reports: ChainReport[] = []
  for (const chain of chains) {
    const anchor = await anchorOf(sql, chain)
    let prev = anchor?.hash ?? Buffer.alloc(32)
    let after = anchor?.last_seq ?? 0
    let records = 0
    let broken: ChainReport['broken'] = null
    for (;;) {
      const page: AuditRow[] = await chainPage(sql, chain, after, 2_000)
      for (const row of page) {
        records += 1
        if (!broken && !row.prev_hash.equals(prev)) broken = { seq: row.seq, reason: 'its prev_hash is not the hash of the record before it (a record was deleted or inserted)' }
        if (!broken && !chainHash(row.prev_hash, row).equals(row.hash)) broken = { seq: row.seq, reason: 'its content does not match its hash (the record was edited)' }
        prev = row.hash
        after = row.seq
      }
      if (page.length < 2_000) break
    }
    reports.push({ chain, records, broken })
  }
  return reports
}
