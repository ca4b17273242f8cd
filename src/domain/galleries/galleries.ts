// One in-memory gallery per environment: every member's reference template per hand, decrypted
// and quantised, under the member id (16 bytes) in the hand's partition, so a capture of known
// hand is compared with that hand's rows only (DECISIONS "Palm captures and matching"). Loaded from
// the database at boot (requests for an environment still loading get 503 unavailable);
// environments created later are loaded on first use (gallery-load.ts, gallery-registry.ts).
// Changes made by other service processes arrive by NOTIFY (gallery-notifications.ts) and are
// re-read from the database, one environment at a time in order, so a late notification never
// undoes a newer change. What changed is read from the change log (store/gallery-changes.ts) past
// the last change this process applied (gallery-sync.ts), so a notification lost with a dropped
// connection is caught up on reconnect, and an enrollment catches up under the environment's lock
// before its duplicate check. A change of an environment's settings (PATCH, calibration) is
// announced on the same channel and re-read. On PostgreSQL an answer that names a member first
// checks the change log (`fresh`): a notification in flight or lost never lets a process name a
// member another one has deleted. A boot reads an environment's encrypted snapshot, when one
// verifies, and replays the change log past it (gallery-snapshots.ts). In cluster mode
// (src/cluster/) a gallery holds only the shards the node was assigned (gallery-shards.ts), and its
// searches go through `distribution` to every shard's holder.
import type { Galleries, GalleriesOptions } from './galleries-api.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { loadAtBoot } from './gallery-load.js'
import { createGalleryMatchers } from './gallery-matchers.js'
import { createGalleryNotifications } from './gallery-notifications.js'
import { createGalleryRegistry } from './gallery-registry.js'
import { storeRow } from './gallery-rows.js'
import { createGalleryShards } from './gallery-shards.js'
import { createGallerySnapshots } from './gallery-snapshots.js'
import { createGallerySync } from './gallery-sync.js'
import { createReferenceReader } from './reference-reader.js'

export type { Distribution, EnvironmentGallery, Galleries, GalleriesOptions } from './galleries-api.js'
export { GALLERY_CHANNEL } from './gallery-notifications.js'
export { HANDS } from './gallery-rows.js'

export function createGalleries(options: GalleriesOptions): Galleries {
  const { config, db, keyring, log } = options
  let closed = false
  const context: GalleriesContext = {
    options,
    sql: db.sql,
    log,
    entries: new Map<string, Entry>(),
    closed: () => closed,
    matchers: createGalleryMatchers(config, log, options.onScan),
    reader: createReferenceReader({ config, sql: db.sql, keyring, log, stopped: () => closed }),
  }
  const { entries, matchers } = context
  const registry = createGalleryRegistry(context)
  const sync = createGallerySync(context)
  const notifications = createGalleryNotifications(context, sync)
  const shards = createGalleryShards(context, registry, sync)
  const snapshots = createGallerySnapshots(context, sync)

  return {
    ...registry,
    ...shards,
    syncMember(environment, memberId, via) {
      snapshots.touched(environment.environment.id, memberId)
      return sync.syncMember(environment, memberId, via)
    },
    catchUp: (environment, via) => sync.catchUp(entries.get(environment.environment.id)!, via),
    fresh: sync.fresh,
    applied(environmentId, seq) {
      const entry = entries.get(environmentId)
      if (entry) entry.syncedSeq = Math.max(entry.syncedSeq, seq)
    },
    upsert(environment, memberId, hand, vector) {
      snapshots.touched(environment.environment.id, memberId)
      storeRow(log, entries.get(environment.environment.id), environment.gallery, memberId, hand, vector, true)
    },
    removeMember(environmentId, memberId) {
      snapshots.touched(environmentId, memberId)
      entries.get(environmentId)?.gallery?.remove(memberId)
    },
    announce: notifications.announce,
    environmentChanged: notifications.environmentChanged,
    async startLoading() {
      await notifications.listen()
      await loadAtBoot(context, snapshots.restore, snapshots.has)
      snapshots.start()
    },
    states: () =>
      [...entries].map(([environmentId, entry]) => ({
        environmentId,
        rows: entry.gallery?.size ?? 0,
        loading: entry.loading,
        blocking: entry.blocking,
        loaded: entry.loaded,
        total: entry.total,
        notStored: entry.notStored,
        matchThreshold: entry.environment?.match_threshold ?? null,
        exactAudit: entry.gallery?.exactAudit ?? { audited: 0, disagreements: 0 },
      })),
    backends: () => matchers.backends(),
    async close() {
      closed = true
      await snapshots.stop()
      await notifications.stop()
      await matchers.close()
    },
  }
}
