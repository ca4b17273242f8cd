// Reading an environment's reference rows (or one shard's, in cluster mode) out of the database
// and opening them into int8 vectors: pages in id order, the next page read while this one is
// decrypted, large loads decrypted on threads of their own (decrypt-pool.ts), small ones here.
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import type { Sql } from '../../store/engine/database.js'
import type { EnvironmentRow } from '../../store/organizations.js'
import { environmentReferencePage, referencePageEnd, type PackedReferencePage, type ShardFilter } from '../../store/reference-pages.js'
import type { Hand, ReferenceRow } from '../../store/templates.js'
import { createDecryptPool, type DecryptPool } from './decrypt-pool.js'
import { createBatchCipher } from '../../keys/gcm-batch.js'
import type { Keyring } from '../../keys/keyring.js'
import { decryptReferences, packRows, taskOfPage, type DecryptTask } from './reference-decrypt-worker.js'

const PAGE_ROWS = 2_000
const PAGES_AHEAD = 4
// Loads of at least this many rows decrypt on threads (decrypt-pool.ts) when node:crypto does the
// AES-GCM (~4 µs a blob); a pool costs ~50 ms to start. The native batch cipher opens a blob in
// ~0.3 µs, less than handing it to a thread costs, so with it every load decrypts here.
const PARALLEL_DECRYPT_FROM_ROWS = 4_096
const PROGRESS_EVERY_MS = 2_000

/** A page of reference rows as read: member ids (36 characters each) and hands ('l'/'r') end to end, and the vectors (null: unreadable). */
export interface ReadPage {
  memberIds: string
  hands: string
  vectors: Array<Int8Array | null>
}

/** A page sink that hands each row to `onRow`, in order. */
export function rowByRow(onRow: (memberId: string, hand: Hand, vector: Int8Array | null) => void): (page: ReadPage) => void {
  return ({ memberIds, hands, vectors }) =>
    vectors.forEach((vector, index) => onRow(memberIds.slice(36 * index, 36 * index + 36), hands[index] === 'l' ? 'left' : 'right', vector))
}

export interface ReferenceReader {
  /** The rows' int8 vectors, here; a row that cannot be read is logged and null. */
  open(environment: EnvironmentRow, rows: ReferenceRow[]): Promise<Array<Int8Array | null>>
  /** Reads every row (of the shard) and hands each page to `onPage` (rowByRow: a row at a time); `expected` sizes the decryption. Returns the rows read. */
  read(environment: EnvironmentRow, expected: number, onPage: (page: ReadPage) => void, only?: ShardFilter): Promise<number>
}

/**
 * The environment's (or shard's) reference pages in id order, until `stopped()`. Pages are ranges
 * of template ids: a walk over the index finds where each ends, so PAGES_AHEAD of them are read at
 * once (on PostgreSQL, each on a backend of its own) while the caller decrypts and stores the one before.
 */
async function* referencePages(sql: Sql, environmentId: string, only: ShardFilter | undefined, stopped: () => boolean): AsyncGenerator<PackedReferencePage> {
  const pages: Array<Promise<PackedReferencePage>> = []
  let after: string | null = null
  let walked = false
  const walk = async () => {
    while (!walked && pages.length < PAGES_AHEAD && !stopped()) {
      const through: string | null = await referencePageEnd(sql, environmentId, after, PAGE_ROWS, only)
      const page = environmentReferencePage(sql, environmentId, after, through, PAGE_ROWS, only)
      // Awaited in turn below: until then a failure must not count as unhandled.
      page.catch(() => {})
      pages.push(page)
      walked = through === null
      after = through
    }
  }
  let walking = walk()
  for (;;) {
    await walking
    const next = pages.shift()
    if (!next || stopped()) return
    walking = walk()
    walking.catch(() => {})
    yield await next
  }
}

export function createReferenceReader(options: { config: Config; sql: Sql; keyring: Keyring; log: Logger; stopped: () => boolean }): ReferenceReader {
  const { config, sql, keyring, log } = options
  // A forced wasm or js matcher means no native code: node:crypto then, as without the addon.
  const cipher = createBatchCipher(config.matcherBackend === 'wasm' || config.matcherBackend === 'js' ? null : undefined)

  /** The task's vectors: on the load's threads when it has them, else here; an unreadable row is logged and null. */
  async function open(task: DecryptTask, pool: DecryptPool | null, describe: (index: number) => object): Promise<Array<Int8Array | null>> {
    const { dimension } = task
    const { vectors, failures } = pool ? await pool.decrypt(task) : decryptReferences(task, cipher)
    const failed = new Map(failures.map((failure) => [failure.index, failure.reason]))
    return Array.from({ length: task.keyEnds.length }, (_, index) => {
      const reason = failed.get(index)
      if (reason === undefined) return vectors.subarray(index * dimension, (index + 1) * dimension)
      log.error({ ...describe(index), reason }, 'Galleries: reference template unreadable, skipped')
      return null
    })
  }

  const environmentKeyOf = (environment: EnvironmentRow) => keyring.environmentKey(environment.id, environment.wrapped_key)

  return {
    open: (environment, rows) =>
      open(packRows(environmentKeyOf(environment), environment.dimension, rows), null, (index) => ({
        template_id: rows[index].id,
        member_id: rows[index].member_id,
      })),
    async read(environment, expected, onPage, only) {
      const started = performance.now()
      const what = `environment ${environment.id}${only ? ` shard ${only.shard}/${only.shards}` : ''}`
      let lastLog = started
      let read = 0
      const pool =
        cipher.implementation === 'node:crypto' && expected >= PARALLEL_DECRYPT_FROM_ROWS && config.bootDecryptThreads > 0
          ? createDecryptPool(config.bootDecryptThreads)
          : null
      try {
        for await (const page of referencePages(sql, environment.id, only, options.stopped)) {
          const memberId = (index: number) => page.member_ids.slice(36 * index, 36 * index + 36)
          const hand = (index: number): Hand => (page.hands[index] === 'l' ? 'left' : 'right')
          const vectors = await open(taskOfPage(environmentKeyOf(environment), environment.dimension, page), pool, (index) => ({
            member_id: memberId(index),
            hand: hand(index),
          }))
          onPage({ memberIds: page.member_ids, hands: page.hands, vectors })
          read += page.rows
          if (performance.now() - lastLog > PROGRESS_EVERY_MS) {
            lastLog = performance.now()
            log.info(`Galleries: ${what} loading, ${read}/${expected} rows, ${((lastLog - started) / 1000).toFixed(1)} s`)
          }
        }
      } finally {
        await pool?.close()
      }
      const seconds = (performance.now() - started) / 1000
      const decrypted = pool ? `on ${config.bootDecryptThreads} threads` : `on the main thread (${cipher.implementation})`
      log.info(`Galleries: ${what} ready, ${read} rows in ${seconds.toFixed(2)} s (${Math.round(read / seconds)} rows/s, decrypted ${decrypted})`)
      return read
    },
  }
}
