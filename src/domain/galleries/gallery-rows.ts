// Where a member's reference row goes in an environment's gallery: its hand's partition (in cluster
// mode its hand in its shard), unless the node does not hold the member's shard; a full matcher
// leaves the row out, counted.
import type { Logger } from 'pino'
import type { Gallery } from '@palmvein/matcher'
import { ServiceError } from '../../errors.js'
import type { Hand } from '../../store/templates.js'
import { isMemoryFull, shardPartition, type Entry } from './gallery-entry.js'
import { shardOf } from './shard-of.js'

export const HANDS: readonly Hand[] = ['left', 'right']
// Rows of a load read before its hand partitions are sized (see store).
const RESERVE_AFTER_ROWS = 4_000

/**
 * The matcher partition of a member's row: its hand, and in cluster mode its hand in its shard
 * ("left.3"), so a peer's search of some shards reads only their rows.
 */
export function rowPartition(entry: Entry | undefined, memberId: string, hand: Hand): string {
  return entry?.shardsHeld && entry.environment ? shardPartition(hand, shardOf(memberId, entry.environment.shards)) : hand
}

/** Whether this process keeps the member's rows (always, unless a node holds some shards only). */
export function keeps(entry: Entry | undefined, memberId: string): boolean {
  if (!entry?.shardsHeld || !entry.environment) return true
  return entry.shardsHeld.has(shardOf(memberId, entry.environment.shards))
}

/**
 * Stores a reference row. When the matcher's memory is full the row is left out (counted, and
 * shown in /healthz); a request that needs it stored (`strict`) gets 503, a load goes on without it.
 */
export function storeRow(log: Logger, entry: Entry | undefined, gallery: Gallery, memberId: string, hand: Hand, vector: Int8Array, strict: boolean): void {
  if (!keeps(entry, memberId)) return
  try {
    gallery.upsert(memberId, vector, { partition: rowPartition(entry, memberId, hand) })
  } catch (error) {
    if (!isMemoryFull(error)) throw error
    if (entry) {
      if (entry.notStored === 0) {
        log.error({ environment_id: entry.environment?.id, reason: (error as Error).message }, 'Galleries: matcher memory is full; references are left out')
      }
      entry.notStored += 1
    }
    if (strict) throw new ServiceError('unavailable', `${(error as Error).message.split(' (')[0]}; the reference cannot be stored`, { retryAfter: 60 })
  }
}

/**
 * What a load does with each row read: stored (or counted out when the matcher is full), counted
 * as loaded. A load of `expected` rows into hand partitions sizes each hand's id maps once, from
 * the hands' shares of its first rows (plus 5 % for the sample's error), instead of regrowing
 * them by doubling: at 10M members that was 6 s of a boot and up to 200 MB of slack.
 */
export function loadSink(log: Logger, entry: Entry, gallery: Gallery, expected = 0) {
  const seen = { left: 0, right: 0 }
  return (memberId: string, hand: Hand, vector: Int8Array | null): void => {
    if (entry.loaded === RESERVE_AFTER_ROWS && expected > 2 * RESERVE_AFTER_ROWS) {
      for (const side of HANDS) {
        gallery.reserve(Math.ceil((expected - entry.loaded) * (seen[side] / entry.loaded) * 1.05), { partition: side })
      }
    }
    seen[hand] += 1
    if (vector) storeRow(log, entry, gallery, memberId, hand, vector, false)
    entry.loaded += 1
  }
}
