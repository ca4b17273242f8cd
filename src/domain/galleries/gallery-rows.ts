// Where a member's reference row goes in an environment's gallery: its hand's partition (in cluster
// mode its hand in its shard), unless the node does not hold the member's shard; a full matcher
// leaves the row out, counted.
import type { Logger } from 'pino'
import type { Gallery } from '@palmvein/matcher'
import { ServiceError } from '../../errors.js'
import { uuidText } from '../../ids.js'
import type { Hand } from '../../store/templates.js'
import { isMemoryFull, shardPartition, type Entry } from './gallery-entry.js'
import type { ReadPage } from './reference-reader.js'
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

/** A page of one hand's rows for `loadPageSink`: ids as 16 bytes each, with the matcher's norms and sign bits when known (a snapshot's chunk). */
export interface RowsBlock {
  hand: Hand
  count: number
  ids: Uint8Array
  vectors: Int8Array
  norms?: Uint32Array
  signBits?: Uint8Array
}

const uuidAt = (ids: Uint8Array, row: number) => uuidText(ids, row * 16)

/**
 * What a load of whole pages does with each (a boot from a snapshot): one `upsertRows` a page
 * instead of an upsert a row; rows of `leftOut` members are skipped. A full matcher makes the page
 * go row by row, so the rows that fit are stored and the others counted out, as loadSink does.
 * Not for cluster mode, where a row's partition depends on its shard.
 */
export function loadPageSink(log: Logger, entry: Entry, gallery: Gallery, leftOut: ReadonlySet<string>) {
  // The left-out ids' first 4 bytes: a row's text is made only when its first 4 bytes are among them.
  const prefixes = new Set([...leftOut].map((id) => Number.parseInt(id.slice(0, 8), 16)))
  const prefixAt = (ids: Uint8Array, row: number) => ((ids[row * 16] << 24) | (ids[row * 16 + 1] << 16) | (ids[row * 16 + 2] << 8) | ids[row * 16 + 3]) >>> 0
  const rowByRow = (page: RowsBlock, keep: (row: number) => boolean) => {
    const dimension = page.vectors.length / page.count
    for (let row = 0; row < page.count; row++) {
      if (!keep(row)) continue
      storeRow(log, entry, gallery, uuidAt(page.ids, row), page.hand, page.vectors.subarray(row * dimension, (row + 1) * dimension), false)
      entry.loaded += 1
    }
  }
  return (page: RowsBlock): number => {
    if (leftOut.size > 0) {
      const skipped = new Set<number>()
      for (let row = 0; row < page.count; row++) if (prefixes.has(prefixAt(page.ids, row)) && leftOut.has(uuidAt(page.ids, row))) skipped.add(row)
      if (skipped.size > 0) {
        rowByRow(page, (row) => !skipped.has(row))
        return skipped.size
      }
    }
    try {
      gallery.upsertRows({ ids: page.ids, vectors: page.vectors, norms: page.norms, signBits: page.signBits }, { partition: page.hand })
      entry.loaded += page.count
    } catch (error) {
      if (!isMemoryFull(error)) throw error
      rowByRow(page, () => true)
    }
    return 0
  }
}

/**
 * What a load from the database does with each page read (reference-reader.ts): its rows grouped by
 * hand into `loadPageSink`, the ids hex-decoded in one call a page. Unreadable rows count as
 * loaded, as loadSink counts them. Not for cluster mode (see loadPageSink).
 */
export function loadReadPageSink(log: Logger, entry: Entry, gallery: Gallery) {
  const sink = loadPageSink(log, entry, gallery, new Set())
  return ({ memberIds, hands, vectors }: ReadPage): void => {
    const ids = Buffer.from(memberIds.replaceAll('-', ''), 'hex')
    for (const hand of HANDS) {
      const rows: number[] = []
      for (let row = 0; row < vectors.length; row++) if (hands[row] === hand[0] && vectors[row]) rows.push(row)
      if (rows.length === 0) continue
      const dimension = vectors[rows[0]]!.length
      const block: RowsBlock = { hand, count: rows.length, ids: Buffer.allocUnsafe(16 * rows.length), vectors: new Int8Array(rows.length * dimension) }
      rows.forEach((row, index) => {
        ids.copy(block.ids, 16 * index, 16 * row, 16 * row + 16)
        block.vectors.set(vectors[row]!, index * dimension)
      })
      sink(block)
    }
    entry.loaded += vectors.filter((vector) => !vector).length
  }
}
