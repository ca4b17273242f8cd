// Boot from a gallery snapshot (gallery-snapshots.ts says when one is trusted): the file's rows
// into the gallery, erased members left out, then the change log replayed past it. Any doubt
// returns false and the caller reads the database.
import type { Gallery } from '@palmvein/matcher'
import { readErasures } from '../../store/erasure-ledger.js'
import { galleryChangesOf } from '../../store/gallery-changes.js'
import type { EnvironmentRow } from '../../store/organizations.js'
import { erasureLedgerFile } from '../members/erasures.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { HANDS, loadPageSink } from './gallery-rows.js'
import { openSnapshot, SnapshotInvalidError, snapshotFile } from './gallery-snapshot-file.js'
import type { SnapshotState } from './gallery-snapshot-state.js'
import type { GallerySync } from './gallery-sync.js'

export type SnapshotRestore = (entry: Entry, environment: EnvironmentRow, gallery: Gallery, watermark: number) => Promise<boolean>

export function createSnapshotRestore(context: GalleriesContext, sync: GallerySync, state: SnapshotState): SnapshotRestore {
  const { options, sql, log } = context
  const { config, keyring } = options
  const { directory, written, environmentKeyOf } = state

  async function erasedIn(environmentId: string): Promise<Set<string>> {
    const { erasures } = await readErasures(erasureLedgerFile(config))
    return new Set(erasures.filter((erasure) => erasure.environment_id === environmentId).map((erasure) => erasure.member_id.toLowerCase()))
  }

  /** How many of a snapshot's latest changes the database's change log does not hold (at their number or a later one). */
  async function changesMissing(environmentId: string, latest: ReadonlyArray<[string, number]>): Promise<number> {
    if (latest.length === 0) return 0
    const held = await galleryChangesOf(
      sql,
      environmentId,
      latest.map(([memberId]) => memberId),
    )
    return latest.filter(([memberId, seq]) => (held.get(memberId) ?? -1) < seq).length
  }

  /** The snapshot's rows into `gallery` (erased members left out); null when there is none to use. */
  async function fill(entry: Entry, environment: EnvironmentRow, gallery: Gallery, watermark: number) {
    const file = snapshotFile(directory, environment.id)
    const refuse = (reason: string) => {
      log.warn({ environment_id: environment.id, file, reason }, 'Galleries: snapshot not used; reading the database instead')
      return null
    }
    let opened: Awaited<ReturnType<typeof openSnapshot>>
    try {
      opened = await openSnapshot(file, {
        environmentId: environment.id,
        dimension: environment.dimension,
        environmentKey: environmentKeyOf(environment),
        keyring,
      })
    } catch (error) {
      return refuse(error instanceof SnapshotInvalidError ? error.message : `unreadable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
    }
    if (!opened) return null
    try {
      const { header } = opened
      if (header.seq > watermark) return refuse(`it covers change ${header.seq}, the database's change log ends at ${watermark} (a restored backup?)`)
      const missing = await changesMissing(environment.id, header.latest_changes)
      if (missing > 0) {
        return refuse(
          `the database's change log lacks ${missing} of its ${header.latest_changes.length} latest changes (a restored backup, or another database's snapshot)`,
        )
      }
      const erased = await erasedIn(environment.id)
      // The hands' id maps sized once (members enroll both hands), not regrown page after page.
      entry.total = Math.max(entry.total, header.rows_hint)
      for (const hand of HANDS) gallery.reserve(Math.ceil((entry.total / 2) * 1.05), { partition: hand })
      const sink = loadPageSink(log, entry, gallery, erased)
      let skipped = 0
      const trailer = await opened.load((page) => {
        skipped += sink(page)
      })
      if (skipped > 0) log.info({ environment_id: environment.id, rows: skipped }, 'Galleries: snapshot rows of erased members left out')
      return { seq: header.seq, touched: trailer.touched, writtenAt: Date.parse(header.written_at) }
    } catch (error) {
      return refuse(error instanceof SnapshotInvalidError ? error.message : (error as Error).message)
    } finally {
      await opened.close()
    }
  }

  async function restore(entry: Entry, environment: EnvironmentRow, gallery: Gallery, watermark: number): Promise<boolean> {
    if (!state.enabled) return false
    const started = performance.now()
    const filled = await fill(entry, environment, gallery, watermark)
    if (!filled) return false
    entry.gallery = gallery
    entry.syncedSeq = filled.seq
    const replayed = await sync.catchUp(entry)
    await sync.syncMembers({ environment, gallery }, filled.touched)
    entry.loaded = gallery.size + entry.notStored
    entry.total = entry.loaded
    written.set(environment.id, { seq: filled.seq, at: filled.writtenAt })
    const seconds = (performance.now() - started) / 1000
    log.info(
      `Galleries: environment ${environment.id} ready from its snapshot (change ${filled.seq}) and ${replayed} change(s) since, ${gallery.size} rows in ${seconds.toFixed(2)} s`,
    )
    return true
  }

  return restore
}
