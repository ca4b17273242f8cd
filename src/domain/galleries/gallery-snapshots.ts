// Gallery snapshots (gallery-snapshot-file.ts): a boot reads an environment's snapshot instead of
// decrypting every template row from the database, then replays the change log past it. Written in
// the background, at most once per PALMVEIN_SNAPSHOT_INTERVAL_MS per environment and only when the
// environment changed, by copying the live gallery a page at a time (requests go on meanwhile);
// members changed in the gallery while it is copied are listed in the file and re-read at boot,
// so a change copied mid-way (even one whose transaction then failed) never outlives the boot.
//
// Never trusted: a snapshot that does not verify, is newer than the database's change log (an
// older backup restored), or whose latest changes the database's change log does not hold (a
// backup restored and written to since, or another database's snapshot) is ignored with a warning
// and the database is read instead. That check reads 64 change-log rows by key: the count of the
// environment's reference rows it replaces took seconds on the embedded database at 200k rows
// (rows written behind the change log's back, which no path of the service does, it cannot see).
// Erasure holds: rows of members in the erasure ledger are never loaded from a snapshot, a member
// erased after it is removed by the replay (its change is in the log), and an erasure is a change,
// so the next snapshot (within the interval) no longer holds the member and replaces the file
// that did. Cluster mode does not use
// snapshots: a node's shards are assigned at run time and read from the database as they come.
import fs from 'node:fs/promises'
import type { Gallery } from '@palmvein/matcher'
import type { EnvironmentRow } from '../../store/organizations.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { snapshotFile } from './gallery-snapshot-file.js'
import { createSnapshotRestore } from './gallery-snapshot-restore.js'
import { snapshotState } from './gallery-snapshot-state.js'
import { createSnapshotWriter } from './gallery-snapshot-writer.js'
import type { GallerySync } from './gallery-sync.js'

export { snapshotDirectory } from './gallery-snapshot-state.js'

export interface GallerySnapshots {
  /**
   * Boot: fills `gallery` from the environment's snapshot and replays the change log past it, or
   * returns false (no snapshot, or one not to trust) and the caller reads the database.
   */
  restore(entry: Entry, environment: EnvironmentRow, gallery: Gallery, watermark: number): Promise<boolean>
  /** A member's rows changed in a gallery outside a catch-up (enrollment, import, delete). */
  touched(environmentId: string, memberId: string): void
  /** Whether a boot would try the environment's snapshot: snapshots on and its file there (see loadAtBoot). */
  has(environmentId: string): Promise<boolean>
  /** Starts the background writer. */
  start(): void
  stop(): Promise<void>
}

export function createGallerySnapshots(context: GalleriesContext, sync: GallerySync): GallerySnapshots {
  const state = snapshotState(context)
  const writer = createSnapshotWriter(context, sync, state)
  return {
    restore: createSnapshotRestore(context, sync, state),
    has: async (environmentId) =>
      state.enabled &&
      (await fs.stat(snapshotFile(state.directory, environmentId)).then(
        () => true,
        () => false,
      )),
    touched: writer.touched,
    start: writer.start,
    stop: writer.stop,
  }
}
