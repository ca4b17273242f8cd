// One environment's gallery as galleries.ts keeps it: its loading state, the serialised chains of
// its changes and catch-ups, what it has synced, and in cluster mode its shards and partitions.
import type { Gallery } from '@palmvein/matcher'
import type { EnvironmentRow } from '../../store/organizations.js'

/** Cluster mode's matcher partitions: a hand in a shard ("left.3"). */
export const shardPartition = (hand: string, shard: number): string => `${hand}.${shard}`
export const handOfPartition = (partition: string | undefined): string | undefined => partition?.split('.')[0]

export interface Entry {
  environment: EnvironmentRow | null
  gallery: Gallery | null
  loading: boolean
  /** Boot loads answer 503 rather than make requests wait for a whole environment. */
  blocking: boolean
  loaded: number
  total: number
  ready: Promise<void>
  /** Serialises the environment's changes. */
  chain: Promise<unknown>
  /** Serialises catch-ups. */
  catchingUp: Promise<unknown>
  /** The re-read of settings another process changed: searches wait for it, not use the old ones. */
  settingsRead: Promise<void>
  /** Reference rows left out because the matcher's memory is full. */
  notStored: number
  /** The change-log number up to which this gallery matches the database. */
  syncedSeq: number
  /** Cluster mode: the shards whose rows are kept here (loading or ready), and those that serve; null: all. */
  shardsHeld: Set<number> | null
  shardsReady: Set<number>
  /** Cluster mode: the gallery searches go through (scatter-gather). */
  distributed: Gallery | null
}

export const isMemoryFull = (error: unknown): boolean => error instanceof RangeError && error.message.startsWith('matcher memory is full')
