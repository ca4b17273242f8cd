// Keeping a loaded gallery equal to the database: one member re-read after a change, and catch-ups
// that apply the change log past the last change this process applied, one at a time per
// environment so a late catch-up never undoes a newer change.
import { galleryChangesSince, latestGalleryChange } from '../../store/gallery-changes.js'
import type { Queryable } from '../../store/engine/database.js'
import { environmentById } from '../../store/organizations.js'
import { referenceRowsOfMembers, type Hand } from '../../store/templates.js'
import type { EnvironmentGallery } from './galleries-api.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { HANDS, keeps, rowPartition, storeRow } from './gallery-rows.js'
import { createLatestChangeReader } from './latest-change-reader.js'

// Members re-read per statement when a catch-up applies many changes (a boot's replay after a snapshot).
const SYNC_BATCH = 500

export interface GallerySync {
  syncMember(environment: EnvironmentGallery, memberId: string, via?: Queryable): Promise<void>
  /** syncMember for several members, read in one statement. */
  syncMembers(environment: EnvironmentGallery, memberIds: readonly string[], via?: Queryable): Promise<void>
  /** Applies the changes past the entry's; catch-ups run one at a time (a peer's search catches up outside the environment's chain). */
  catchUp(entry: Entry, via?: Queryable): Promise<number>
  /** Queues a catch-up after the environment's earlier changes. */
  queueCatchUp(entry: Entry, why: string): Promise<number>
  /** The environment's settings as they are now in the database (changed by PATCH or calibration). */
  rereadSettings(entry: Entry, environmentId: string): Promise<void>
  fresh(environmentId: string): Promise<boolean>
}

export function createGallerySync(context: GalleriesContext): GallerySync {
  const { sql, entries, reader, log } = context
  // Identify's freshness check: concurrent identifies share one change-log read (latest-change-reader.ts).
  const latestChange = createLatestChangeReader((environmentId) => latestGalleryChange(sql, environmentId))

  async function syncMembers(environment: EnvironmentGallery, memberIds: readonly string[], via: Queryable = sql): Promise<void> {
    const environmentId = environment.environment.id
    const entry = entries.get(environmentId)
    const kept = memberIds.filter((memberId) => keeps(entry, memberId))
    if (kept.length === 0) return
    const rows = await referenceRowsOfMembers(via, kept)
    const vectors = await reader.open(environment.environment, rows)
    const present = new Map(kept.map((memberId) => [memberId, new Set<Hand>()]))
    for (const [index, row] of rows.entries()) {
      const vector = vectors[index]
      if (!vector) continue
      storeRow(log, entries.get(environmentId), environment.gallery, row.member_id, row.hand, vector, true)
      present.get(row.member_id)?.add(row.hand)
    }
    for (const [memberId, hands] of present) {
      for (const hand of HANDS) if (!hands.has(hand)) environment.gallery.remove(memberId, { partition: rowPartition(entry, memberId, hand) })
    }
  }

  const syncMember = (environment: EnvironmentGallery, memberId: string, via: Queryable = sql) => syncMembers(environment, [memberId], via)

  async function applyChanges(entry: Entry, via: Queryable): Promise<number> {
    if (context.closed() || !entry.gallery || !entry.environment) return 0
    const environment = { environment: entry.environment, gallery: entry.gallery }
    const changes = await galleryChangesSince(via, entry.environment.id, entry.syncedSeq)
    for (let start = 0; start < changes.length && !context.closed(); start += SYNC_BATCH) {
      const batch = changes.slice(start, start + SYNC_BATCH)
      await syncMembers(
        environment,
        batch.map((change) => change.member_id),
        via,
      )
      entry.syncedSeq = batch.at(-1)!.seq
    }
    return changes.length
  }

  function catchUp(entry: Entry, via: Queryable = sql): Promise<number> {
    const run = entry.catchingUp.then(() => applyChanges(entry, via))
    entry.catchingUp = run.catch(() => 0)
    return run
  }

  function queueCatchUp(entry: Entry, why: string): Promise<number> {
    const result = entry.chain.then(() => catchUp(entry))
    entry.chain = result.catch((error) => log.error({ err: error, environment_id: entry.environment?.id }, `Galleries: catching up (${why}) failed`))
    return result
  }

  async function rereadSettings(entry: Entry, environmentId: string): Promise<void> {
    const environment = await environmentById(sql, environmentId)
    if (environment) entry.environment = environment
  }

  async function fresh(environmentId: string): Promise<boolean> {
    const entry = entries.get(environmentId)
    // The embedded database is served by one process, whose own deletes reach its galleries at once.
    if (context.options.db.kind !== 'postgres' || !entry?.gallery || !entry.environment) return false
    if ((await latestChange(environmentId)) <= entry.syncedSeq) return false
    // Not queued behind the environment's chain: an enrollment there may wait for another process's lock.
    await catchUp(entry)
    return true
  }

  return { syncMember, syncMembers, catchUp, queueCatchUp, rereadSettings, fresh }
}
