// Reading an environment's reference rows (or one shard's, in cluster mode) out of the database
// and opening them into int8 vectors: pages in id order, the next page read while this one is
// decrypted, large loads decrypted on threads of their own (decrypt-pool.ts), small ones here.
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Sql } from '../store/database.js'
import type { EnvironmentRow } from '../store/organizations.js'
import { environmentReferencePage, type Hand, type ReferenceRow, type ShardFilter } from '../store/templates.js'
import { createDecryptPool, type DecryptPool } from './decrypt-pool.js'
import type { Keyring } from './keyring.js'
import { decryptReferences, packRows } from './reference-decrypt-worker.js'

const PAGE_ROWS = 2_000
// Loads of at least this many rows decrypt on threads (decrypt-pool.ts); a pool costs ~50 ms to start.
const PARALLEL_DECRYPT_FROM_ROWS = 4_096
const PROGRESS_EVERY_MS = 2_000

export interface ReferenceReader {
  /** The rows' int8 vectors, here; a row that cannot be read is logged and null. */
  open(environment: EnvironmentRow, rows: ReferenceRow[]): Promise<Array<Int8Array | null>>
  /** Reads every row (of the shard) and hands each to `onRow` (null: unreadable); `expected` sizes the decryption. Returns the rows read. */
  read(environment: EnvironmentRow, expected: number, onRow: (memberId: string, hand: Hand, vector: Int8Array | null) => void, only?: ShardFilter): Promise<number>
}

export function createReferenceReader(options: { config: Config; sql: Sql; keyring: Keyring; log: Logger; stopped: () => boolean }): ReferenceReader {
  const { config, sql, keyring, log } = options

  /** Opened by one implementation (reference-decrypt-worker.ts): on the load's threads when it has them, else here. */
  async function open(environment: EnvironmentRow, rows: ReferenceRow[], pool: DecryptPool | null): Promise<Array<Int8Array | null>> {
    const environmentKey = keyring.environmentKey(environment.id, environment.wrapped_key)
    const { dimension } = environment
    const { vectors, failures } = pool ? await pool.decrypt(environmentKey, dimension, rows) : decryptReferences(packRows(environmentKey, dimension, rows))
    const failed = new Map(failures.map((failure) => [failure.index, failure.reason]))
    return rows.map((row, index) => {
      const reason = failed.get(index)
      if (reason === undefined) return vectors.subarray(index * dimension, (index + 1) * dimension)
      log.error({ template_id: row.id, member_id: row.member_id, reason }, 'Galleries: reference template unreadable, skipped')
      return null
    })
  }

  return {
    open: (environment, rows) => open(environment, rows, null),
    async read(environment, expected, onRow, only) {
      const started = performance.now()
      const what = `environment ${environment.id}${only ? ` shard ${only.shard}/${only.shards}` : ''}`
      let lastLog = started
      let read = 0
      const pool = expected >= PARALLEL_DECRYPT_FROM_ROWS && config.bootDecryptThreads > 0 ? createDecryptPool(config.bootDecryptThreads) : null
      try {
        const pageAfter = (afterId: string | null) => environmentReferencePage(sql, environment.id, afterId, PAGE_ROWS, only)
        let next: Promise<ReferenceRow[]> | null = pageAfter(null)
        while (next && !options.stopped()) {
          const page: ReferenceRow[] = await next
          next = page.length < PAGE_ROWS ? null : pageAfter(page[page.length - 1].id)
          // Not awaited until the next turn: an error surfaces there (or is dropped if the load stops).
          next?.catch(() => {})
          const vectors = await open(environment, page, pool)
          page.forEach((row, index) => onRow(row.member_id, row.hand, vectors[index]))
          read += page.length
          if (performance.now() - lastLog > PROGRESS_EVERY_MS) {
            lastLog = performance.now()
            log.info(`Galleries: ${what} loading, ${read}/${expected} rows, ${((lastLog - started) / 1000).toFixed(1)} s`)
          }
        }
      } finally {
        await pool?.close()
      }
      const seconds = (performance.now() - started) / 1000
      log.info(`Galleries: ${what} ready, ${read} rows in ${seconds.toFixed(2)} s (${Math.round(read / seconds)} rows/s, decrypted ${pool ? `on ${config.bootDecryptThreads} threads` : 'on the main thread'})`)
      return read
    },
  }
}
