// Appending records to their organizations' hash chains: each chain's records in blocks of at most
// BLOCK_RECORDS, one statement a block, from the tail this writer last left (re-read when another
// writer moved it); and signing a checkpoint of each chain appended to since the last one.
import type { Logger } from 'pino'
import { appendBlock, byChain, chainTail, type AuditInsert, type ChainTail } from '../../store/audit-log.js'
import { insertCheckpoint } from '../../store/audit-keys.js'
import type { Sql } from '../../store/engine/database.js'
import { signCheckpoint } from './audit-checkpoints.js'
import type { AuditKeys } from './audit-keys.js'

/** Records per block: one statement holds the embedded database's single session a few ms at most. */
export const BLOCK_RECORDS = 250
/** Appends from a tail that moved before giving up until the next flush (writers racing on one chain). */
const APPEND_ATTEMPTS = 20

export interface AuditChainWriter {
  /** Appends the batch; records appended before a failure are added to `done`. */
  append(batch: AuditInsert[], done: Set<AuditInsert>): Promise<void>
  /** Signs a checkpoint of each chain appended to since this writer's last one (a failure is logged, retried next time). */
  checkpoint(): Promise<void>
}

export function createAuditChainWriter(options: { sql: Sql; log: Logger; keys: AuditKeys }): AuditChainWriter {
  const { sql, log, keys } = options
  /** Where each chain ended after our last append, so an append is one statement. */
  const tails = new Map<string, ChainTail>()
  /** The position each chain was last checkpointed at by this writer. */
  const checkpointed = new Map<string, number>()

  async function appendPart(chain: string, records: AuditInsert[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const tail = tails.get(chain) ?? (await chainTail(sql, chain))
      const next = await appendBlock(sql, chain, tail, records, keys.current)
      if (next) {
        tails.set(chain, next)
        return
      }
      tails.delete(chain)
      if (attempt === APPEND_ATTEMPTS) throw new Error(`the audit chain ${chain} moved under every append`)
    }
  }

  return {
    async append(batch, done) {
      for (const [chain, records] of byChain(batch)) {
        for (let start = 0; start < records.length; start += BLOCK_RECORDS) {
          const part = records.slice(start, start + BLOCK_RECORDS)
          // On a failure the records stay queued. Had the block gone in after all (its answer lost
          // with the connection), the retry collides, re-reads the tail and appends them again:
          // twice rather than never.
          await appendPart(chain, part)
          for (const record of part) done.add(record)
        }
      }
    },
    async checkpoint() {
      for (const [chain, tail] of tails) {
        const seq = tail.nextSeq - 1
        if (checkpointed.get(chain) === seq) continue
        try {
          await insertCheckpoint(sql, signCheckpoint(keys.current, chain, seq, tail.prev))
          checkpointed.set(chain, seq)
        } catch (error) {
          log.warn({ err: error, chain }, 'Audit: signing a checkpoint failed; retrying with the next one')
        }
      }
    },
  }
}
