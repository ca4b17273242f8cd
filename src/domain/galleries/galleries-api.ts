// What the galleries (galleries.ts) offer the rest of the service: one in-memory matcher gallery
// per environment, kept equal to the database across processes, and in cluster mode the node's
// share of each environment.
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import type { ExactAuditCounts, Gallery, Hit, SearchOptions } from '@palmvein/matcher'
import type { Database, Queryable } from '../../store/engine/database.js'
import type { EnvironmentRow } from '../../store/organizations.js'
import type { Hand } from '../../store/templates.js'
import type { Keyring } from '../../keys/keyring.js'

export interface GalleryState {
  environmentId: string
  rows: number
  loading: boolean
  /** A boot load (identify answers 503 meanwhile), not a load on demand. */
  blocking: boolean
  loaded: number
  total: number
  /** Reference rows left out because the matcher's memory is full. */
  notStored: number
  /** The environment's match threshold as this process uses it (null before its settings are read). */
  matchThreshold: number | null
  exactAudit: ExactAuditCounts
}

export interface EnvironmentGallery {
  environment: EnvironmentRow
  gallery: Gallery
}

export interface Galleries {
  /** The ready gallery of an environment: 503 while the boot load runs, awaited when loaded on demand. */
  acquire(environmentId: string): Promise<EnvironmentGallery>
  /** Runs `task` after every earlier change of the environment (enroll, remote syncs) has finished. */
  exclusive<T>(environmentId: string, task: (environment: EnvironmentGallery) => Promise<T>): Promise<T>
  /** Stores one hand's reference; 503 unavailable when the matcher's memory is full (nothing changes). */
  upsert(environment: EnvironmentGallery, memberId: string, hand: Hand, vector: Int8Array): void
  /** Makes the gallery match the database for one member (after a change, or to undo a failed one). */
  syncMember(environment: EnvironmentGallery, memberId: string, via?: Queryable): Promise<void>
  /**
   * Applies every change committed since this process last caught up (run inside `exclusive`,
   * under the environment's lock to see all of them; `via` the caller's transaction). Returns how many.
   */
  catchUp(environment: EnvironmentGallery, via?: Queryable): Promise<number>
  /**
   * On PostgreSQL (several processes): catches the gallery up when the database holds a change it
   * has not applied (its notification late or lost); true when it did. Asked before an answer
   * names a member, so none erased by another process is named once its DELETE has answered.
   */
  fresh(environmentId: string): Promise<boolean>
  /** Records that this process applied change `seq` itself (only when caught up just before it, under the lock). */
  applied(environmentId: string, seq: number): void
  /** Takes a deleted member out at once (no database read: the rows are gone). */
  removeMember(environmentId: string, memberId: string): void
  /** Tells the other service processes on this database; call after commit. */
  announce(environmentId: string, memberId: string): Promise<void>
  /** Re-reads the environment's settings here and in every other service process (after a change). */
  environmentChanged(environmentId: string): Promise<void>
  /** Registers every environment as loading, then loads them in the background. */
  startLoading(): Promise<void>
  /** Each environment's gallery, for /healthz and the metrics. */
  states(): GalleryState[]
  /** The matchers in use ("d=256 native (avx512vnni)"). */
  backends(): Promise<string[]>
  /** Cluster mode: loads one shard's rows into the environment's gallery; resolves with the rows held when it serves. */
  loadShard(environmentId: string, shard: number): Promise<number>
  /** Cluster mode: takes one shard's members out. */
  dropShard(environmentId: string, shard: number): Promise<void>
  /**
   * Cluster mode: searches this node's rows for a peer, once they hold every change up to
   * `minSeq`; 503 shard_unavailable when one of `shards` is not held here (the peer asks another replica).
   */
  searchShards(environmentId: string, shards: readonly number[], minSeq: number, probe: Int8Array, options: SearchOptions): Promise<Hit[]>
  close(): Promise<void>
}

/** Cluster mode: how a node's searches reach every shard (src/cluster/scatter.ts). */
export interface Distribution {
  /** The gallery identify, enrollment and calibration search: local changes, searches sent to each shard's holder. */
  wrap(environment: EnvironmentRow, local: Gallery, syncedSeq: () => number): Gallery
}

export interface GalleriesOptions {
  config: Config
  db: Database
  keyring: Keyring
  log: Logger
  /** Each matcher pass over a gallery (the metrics). */
  onScan?: (probes: number, seconds: number) => void
  /** Cluster mode: galleries start empty and hold the shards the node is given. */
  distribution?: Distribution
}
