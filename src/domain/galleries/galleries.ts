// One in-memory gallery per environment: every member's reference template per hand, decrypted
// and quantised, under the member id (16 bytes) in the hand's partition, so a capture of known
// hand is compared with that hand's rows only (DECISIONS "Palm captures and matching"). Loaded from the database at boot (requests
// for an environment still loading get 503 unavailable); environments created later are loaded
// on first use. Changes made by other service processes arrive by NOTIFY and are re-read from the
// database, one environment at a time in order, so a late notification never undoes a newer change.
// What changed is read from the change log (store/gallery-changes.ts) past the last change this
// process applied, so a notification lost with a dropped connection is caught up on reconnect, and
// an enrollment catches up under the environment's lock before its duplicate check. A change of an
// environment's settings (PATCH, calibration) is announced on the same channel and re-read. On
// PostgreSQL an answer that names a member first checks the change log (`fresh`): a notification
// in flight or lost never lets a process name a member another one has deleted.
// In cluster mode (src/cluster/) a gallery holds only the shards the node was assigned
// (loadShard/dropShard), and its searches go through `distribution` to every shard's holder.
import { ServiceError } from '../../errors.js'
import { releaseLoadGarbage } from './process-memory.js'
import type { Gallery } from '@palmvein/matcher'
import { shardOf } from './shard-of.js'
import { memberIdsOfShard } from '../../store/cluster.js'
import { createGalleryMatchers } from './gallery-matchers.js'
import type { Queryable } from '../../store/engine/database.js'
import { galleryChangesSince, latestGalleryChange } from '../../store/gallery-changes.js'
import { createLatestChangeReader } from './latest-change-reader.js'
import { allEnvironments, environmentById, type EnvironmentRow } from '../../store/organizations.js'
import { countEnvironmentReferences, referenceCountsByEnvironment, referenceRowsOfMember, type Hand } from '../../store/templates.js'
import { createReferenceReader } from './reference-reader.js'

export type { Distribution, EnvironmentGallery, Galleries, GalleriesOptions } from './galleries-api.js'
import type { EnvironmentGallery, Galleries, GalleriesOptions } from './galleries-api.js'
import { handOfPartition, isMemoryFull, shardPartition, type Entry } from './gallery-entry.js'

export const GALLERY_CHANNEL = 'palmvein_gallery'
export const HANDS: readonly Hand[] = ['left', 'right']
// How often a service on the embedded database looks for gallery changes other processes made.
const FOREIGN_CHANGES_EVERY_MS = 1_000
// Rows of a load read before its hand partitions are sized (see store).
const RESERVE_AFTER_ROWS = 4_000

export function createGalleries(options: GalleriesOptions): Galleries {
  const { config, db, keyring, log } = options
  const sql = db.sql
  const origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`
  const matchers = createGalleryMatchers(config, log, options.onScan)
  const reader = createReferenceReader({ config, sql, keyring, log, stopped: () => closed })
  const entries = new Map<string, Entry>()
  // Identify's freshness check: concurrent identifies share one change-log read (latest-change-reader.ts).
  const latestChange = createLatestChangeReader((environmentId) => latestGalleryChange(sql, environmentId))
  let closed = false
  let listener: { unlisten(): Promise<void> } | null = null
  let changeWatch: NodeJS.Timeout | null = null

  /**
   * What a load does with each row read: stored (or counted out when the matcher is full), counted
   * as loaded. A load of `expected` rows into hand partitions sizes each hand's id maps once, from
   * the hands' shares of its first rows (plus 5 % for the sample's error), instead of regrowing
   * them by doubling: at 10M members that was 6 s of a boot and up to 200 MB of slack.
   */
  const store = (entry: Entry, gallery: Gallery, expected = 0) => {
    const seen = { left: 0, right: 0 }
    return (memberId: string, hand: Hand, vector: Int8Array | null) => {
      if (entry.loaded === RESERVE_AFTER_ROWS && expected > 2 * RESERVE_AFTER_ROWS) {
        for (const side of HANDS) gallery.reserve(Math.ceil((expected - entry.loaded) * (seen[side] / entry.loaded) * 1.05), { partition: side })
      }
      seen[hand] += 1
      if (vector) storeRow(entry, gallery, memberId, hand, vector, false)
      entry.loaded += 1
    }
  }

  async function load(entry: Entry, environmentId: string): Promise<void> {
    const environment = entry.environment ?? (await environmentById(sql, environmentId))
    if (!environment) throw new ServiceError('not_found', `environment ${environmentId} not found`)
    entry.environment = environment
    // Taken first: a change committed while the pages are read is applied again by the next catch-up.
    const watermark = await latestGalleryChange(sql, environmentId)
    const gallery = (await matchers.forDimension(environment.dimension)).createGallery({ ids: 'uuid' })
    entry.loaded = 0
    if (options.distribution) {
      // Cluster mode: the node's shards are loaded as they are assigned (loadShard).
      entry.shardsHeld = new Set()
      entry.distributed = options.distribution.wrap(environment, gallery, () => entry.syncedSeq)
      entry.total = 0
    } else {
      // Loads on demand (an environment first used after boot, a CLI command) count first, as boot does.
      if (entry.total === 0) entry.total = await countEnvironmentReferences(sql, environmentId)
      await reader.read(environment, entry.total, store(entry, gallery, entry.total))
    }
    entry.total = Math.max(entry.total, entry.loaded)
    entry.syncedSeq = watermark
    entry.gallery = gallery
    entry.loading = false
  }

  /** Boot loads retry until they succeed or the service stops; the environment stays 'loading'. */
  async function loadWithRetry(entry: Entry, environmentId: string): Promise<void> {
    for (let attempt = 1; !closed; attempt++) {
      try {
        return await load(entry, environmentId)
      } catch (error) {
        const delay = Math.min(30_000, 500 * 2 ** attempt)
        log.error({ err: error, environment_id: environmentId }, `Galleries: loading failed, retrying in ${delay} ms`)
        await new Promise((resolve) => setTimeout(resolve, delay).unref())
      }
    }
  }

  function newEntry(blocking: boolean, environment: EnvironmentRow | null, total: number): Entry {
    return { environment, gallery: null, loading: true, blocking, loaded: 0, total, ready: Promise.resolve(), chain: Promise.resolve(), catchingUp: Promise.resolve(), settingsRead: Promise.resolve(), notStored: 0, syncedSeq: 0, shardsHeld: null, shardsReady: new Set(), distributed: null }
  }

  /**
   * Stores a reference row. When the matcher's memory is full the row is left out (counted, and
   * shown in /healthz); a request that needs it stored gets 503, a load goes on without it.
   */
  function storeRow(entry: Entry | undefined, gallery: Gallery, memberId: string, hand: Hand, vector: Int8Array, strict: boolean): void {
    if (!keeps(entry, memberId)) return
    try {
      gallery.upsert(memberId, vector, { partition: rowPartition(entry, memberId, hand) })
    } catch (error) {
      if (!isMemoryFull(error)) throw error
      if (entry) {
        if (entry.notStored === 0) log.error({ environment_id: entry.environment?.id, reason: (error as Error).message }, 'Galleries: matcher memory is full; references are left out')
        entry.notStored += 1
      }
      if (strict) throw new ServiceError('unavailable', `${(error as Error).message.split(' (')[0]}; the reference cannot be stored`, { retryAfter: 60 })
    }
  }

  async function acquire(environmentId: string): Promise<EnvironmentGallery> {
    if (closed) throw new ServiceError('unavailable', 'the service is shutting down')
    let entry = entries.get(environmentId)
    if (!entry) {
      // Created after boot (or first seen here): small enough to load while the caller waits.
      const fresh = newEntry(false, null, 0)
      fresh.ready = load(fresh, environmentId)
      fresh.chain = fresh.ready.catch(() => {})
      entries.set(environmentId, fresh)
      fresh.ready.catch((error) => {
        entries.delete(environmentId)
        log.error({ err: error, environment_id: environmentId }, 'Galleries: on-demand load failed')
      })
      entry = fresh
    }
    if (entry.loading && entry.blocking) {
      throw new ServiceError('unavailable', `the gallery of environment ${environmentId} is loading (${entry.loaded}/${entry.total} rows); retry shortly`, { retryAfter: 5 })
    }
    try {
      await entry.ready
    } catch (error) {
      if (error instanceof ServiceError) throw error
      throw new ServiceError('unavailable', `the gallery of environment ${environmentId} could not be loaded; retry shortly`, { retryAfter: 5, cause: error })
    }
    await entry.settingsRead
    return { environment: entry.environment!, gallery: entry.distributed ?? entry.gallery! }
  }

  /**
   * The matcher partition of a member's row: its hand, and in cluster mode its hand in its shard
   * ("left.3"), so a peer's search of some shards reads only their rows.
   */
  function rowPartition(entry: Entry | undefined, memberId: string, hand: Hand): string {
    return entry?.shardsHeld && entry.environment ? shardPartition(hand, shardOf(memberId, entry.environment.shards)) : hand
  }

  /** Whether this process keeps the member's rows (always, unless a node holds some shards only). */
  function keeps(entry: Entry | undefined, memberId: string): boolean {
    if (!entry?.shardsHeld || !entry.environment) return true
    return entry.shardsHeld.has(shardOf(memberId, entry.environment.shards))
  }

  async function syncMember(environment: EnvironmentGallery, memberId: string, via: Queryable = sql): Promise<void> {
    if (!keeps(entries.get(environment.environment.id), memberId)) return
    const rows = await referenceRowsOfMember(via, memberId)
    const vectors = await reader.open(environment.environment, rows)
    const present = new Set<Hand>()
    for (const [index, row] of rows.entries()) {
      const vector = vectors[index]
      if (!vector) continue
      storeRow(entries.get(environment.environment.id), environment.gallery, memberId, row.hand, vector, true)
      present.add(row.hand)
    }
    const entry = entries.get(environment.environment.id)
    for (const hand of HANDS) if (!present.has(hand)) environment.gallery.remove(memberId, { partition: rowPartition(entry, memberId, hand) })
  }

  /** Catch-ups run one at a time (a peer's search catches up outside the environment's chain). */
  function catchUpEntry(entry: Entry, via: Queryable = sql): Promise<number> {
    const run = entry.catchingUp.then(() => applyChanges(entry, via))
    entry.catchingUp = run.catch(() => 0)
    return run
  }

  async function applyChanges(entry: Entry, via: Queryable): Promise<number> {
    if (closed || !entry.gallery || !entry.environment) return 0
    const environment = { environment: entry.environment, gallery: entry.gallery }
    const changes = await galleryChangesSince(via, entry.environment.id, entry.syncedSeq)
    for (const change of changes) {
      await syncMember(environment, change.member_id, via)
      entry.syncedSeq = change.seq
    }
    return changes.length
  }

  /** Catches up every loaded gallery whose environment has changes past the ones applied. */
  async function watchForeignChanges(): Promise<void> {
    for (const entry of entries.values()) {
      if (closed || !entry.gallery || !entry.environment) continue
      const latest = await latestGalleryChange(sql, entry.environment.id).catch(() => 0)
      if (latest > entry.syncedSeq) await queueCatchUp(entry, 'changes by another process').catch(() => 0)
    }
  }

  /** Queues a catch-up after the environment's earlier changes. */
  function queueCatchUp(entry: Entry, why: string): Promise<number> {
    const result = entry.chain.then(() => catchUpEntry(entry))
    entry.chain = result.catch((error) => log.error({ err: error, environment_id: entry.environment?.id }, `Galleries: catching up (${why}) failed`))
    return result
  }

  function exclusive<T>(environmentId: string, task: (environment: EnvironmentGallery) => Promise<T>): Promise<T> {
    const run = acquire(environmentId).then((environment) => {
      const entry = entries.get(environmentId)!
      const result = entry.chain.then(() => task(environment))
      entry.chain = result.catch(() => {})
      return result
    })
    return run
  }

  /** The environment's settings as they are now in the database (changed by PATCH or calibration). */
  async function rereadSettings(entry: Entry, environmentId: string): Promise<void> {
    const environment = await environmentById(sql, environmentId)
    if (environment) entry.environment = environment
  }

  function onNotification(payload: string): void {
    let message: { origin: string; environment_id: string; settings?: boolean }
    try {
      message = JSON.parse(payload)
    } catch {
      return
    }
    if (message.origin === origin) return
    // An environment this process has not loaded yet reads the change when it loads.
    const entry = entries.get(message.environment_id)
    if (entry && message.settings) {
      entry.settingsRead = rereadSettings(entry, message.environment_id).catch((error) => log.error({ err: error }, 'Galleries: re-reading settings failed'))
    }
    else if (entry) void queueCatchUp(entry, 'a notification').catch(() => {})
  }

  /** The notification connection was away: every loaded gallery reads what changed meanwhile. */
  function onReconnect(): void {
    const loaded = [...entries.values()].filter((entry) => entry.gallery)
    const settings = loaded.map((entry) => rereadSettings(entry, entry.environment!.id).catch(() => {}))
    void Promise.all([...loaded.map((entry) => queueCatchUp(entry, 'after reconnecting').catch(() => 0)), ...settings]).then((counts) => {
      const changes = counts.reduce<number>((sum, count) => sum + (count ?? 0), 0)
      log.info(`Galleries: notifications were interrupted; caught up ${changes} change(s) in ${loaded.length} environment(s)`)
    })
  }

  return {
    acquire,
    exclusive,
    syncMember,
    catchUp: (environment, via) => catchUpEntry(entries.get(environment.environment.id)!, via),
    async fresh(environmentId) {
      const entry = entries.get(environmentId)
      // The embedded database is served by one process, whose own deletes reach its galleries at once.
      if (db.kind !== 'postgres' || !entry?.gallery || !entry.environment) return false
      if (await latestChange(environmentId) <= entry.syncedSeq) return false
      // Not queued behind the environment's chain: an enrollment there may wait for another process's lock.
      await catchUpEntry(entry)
      return true
    },
    applied(environmentId, seq) {
      const entry = entries.get(environmentId)
      if (entry) entry.syncedSeq = Math.max(entry.syncedSeq, seq)
    },
    upsert: (environment, memberId, hand, vector) => storeRow(entries.get(environment.environment.id), environment.gallery, memberId, hand, vector, true),
    removeMember(environmentId, memberId) {
      entries.get(environmentId)?.gallery?.remove(memberId)
    },
    async announce(environmentId, memberId) {
      await db.notify(GALLERY_CHANNEL, JSON.stringify({ origin, environment_id: environmentId, member_id: memberId }))
    },
    async environmentChanged(environmentId) {
      const entry = entries.get(environmentId)
      if (entry) await rereadSettings(entry, environmentId)
      await db.notify(GALLERY_CHANNEL, JSON.stringify({ origin, environment_id: environmentId, settings: true }))
    },
    async startLoading() {
      listener = await db.listen(GALLERY_CHANNEL, onNotification, onReconnect)
      // The embedded database's notifications stay inside this process; another process writing
      // through its loopback server (palmvein import) is seen from the change numbers instead.
      if (db.kind === 'embedded') {
        changeWatch = setInterval(() => { void watchForeignChanges() }, FOREIGN_CHANGES_EVERY_MS)
        changeWatch.unref()
      }
      const environments = await allEnvironments(sql)
      const counts = await referenceCountsByEnvironment(sql)
      const queued: Array<[Entry, string]> = []
      for (const environment of environments) {
        if (entries.has(environment.id)) continue
        const entry = newEntry(true, environment, counts.get(environment.id) ?? 0)
        entries.set(environment.id, entry)
        queued.push([entry, environment.id])
      }
      const rows = [...counts.values()].reduce((sum, count) => sum + count, 0)
      log.info(`Galleries: loading ${environments.length} environment(s), ${rows} reference rows`)
      // One environment after another: a small one is ready (and answers) before a huge one is.
      const all = (async () => {
        for (const [entry, id] of queued) {
          entry.ready = loadWithRetry(entry, id)
          entry.chain = entry.ready
          await entry.ready
        }
        // Even with no rows: the boot's own garbage (the embedded database's start and migrations
        // leave ~100 MiB of freed C heap in the threads' malloc arenas) is given back (domain/galleries/process-memory.ts).
        if (!closed) {
          const before = process.memoryUsage.rss()
          const released = releaseLoadGarbage()
          log.info({ ...released, rss_before_mib: Math.round(before / 2 ** 20), rss_after_mib: Math.round(process.memoryUsage.rss() / 2 ** 20) }, 'Galleries: boot loads done, their garbage released')
        }
      })()
      all.catch((error) => log.error({ err: error }, 'Galleries: loading stopped'))
    },
    states: () => [...entries].map(([environmentId, entry]) => ({
      environmentId, rows: entry.gallery?.size ?? 0, loading: entry.loading, blocking: entry.blocking, loaded: entry.loaded, total: entry.total,
      notStored: entry.notStored, matchThreshold: entry.environment?.match_threshold ?? null, exactAudit: entry.gallery?.exactAudit ?? { audited: 0, disagreements: 0 },
    })),
    backends: () => matchers.backends(),
    loadShard: (environmentId, shard) => exclusive(environmentId, async ({ environment }) => {
      const entry = entries.get(environmentId)!
      if (!entry.shardsHeld || !entry.gallery) throw new Error('loadShard needs cluster mode')
      // Held before the read: changes applied meanwhile keep the shard's rows too.
      entry.shardsHeld.add(shard)
      await reader.read(environment, 0, store(entry, entry.gallery), { shard, shards: environment.shards })
      await catchUpEntry(entry)
      entry.shardsReady.add(shard)
      return entry.gallery.size
    }),
    dropShard: (environmentId, shard) => exclusive(environmentId, async ({ environment }) => {
      const entry = entries.get(environmentId)!
      entry.shardsReady.delete(shard)
      entry.shardsHeld?.delete(shard)
      for (const memberId of await memberIdsOfShard(sql, environmentId, shard, environment.shards)) entry.gallery?.remove(memberId)
    }),
    async searchShards(environmentId, shards, minSeq, probe, searchOptions) {
      const entry = entries.get(environmentId)
      const missing = shards.filter((shard) => !entry?.shardsReady.has(shard))
      if (!entry?.gallery || missing.length) throw new ServiceError('shard_unavailable', `this node does not serve shard(s) ${missing.join(', ')} of environment ${environmentId}`)
      // Not queued behind the environment's changes: one of them may be an enrollment waiting for the peer's lock.
      if (entry.syncedSeq < minSeq) await catchUpEntry(entry)
      const environment = entry.environment!
      const hands = searchOptions.partition ? [searchOptions.partition] : HANDS
      let mode = searchOptions.mode
      if (mode === 'auto') {
        // As one process holding the whole environment would decide: by a hand's rows in it, not in one shard.
        const { twoStageFromRows } = await matchers.forDimension(environment.dimension)
        const handRows = (entry.gallery.size / HANDS.length) * (environment.shards / Math.max(1, entry.shardsHeld?.size ?? 1))
        mode = handRows >= twoStageFromRows ? 'two_stage' : 'exact'
      }
      const hits = await entry.gallery.search(probe, {
        k: searchOptions.k, mode, candidates: searchOptions.candidates,
        partitions: shards.flatMap((shard) => hands.map((hand) => shardPartition(hand, shard))),
      })
      return hits.map((hit) => ({ ...hit, partition: handOfPartition(hit.partition) }))
    },
    async close() {
      closed = true
      if (changeWatch) clearInterval(changeWatch)
      await listener?.unlisten().catch(() => {})
      await matchers.close()
    },
  }
}
