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
import path from 'node:path'
import fs from 'node:fs/promises'
import type { Config } from '../../config.js'
import { erasureLedgerFile } from '../members/erasures.js'
import { readErasures } from '../../store/erasure-ledger.js'
import { galleryChangesOf, latestGalleryChange, latestGalleryChanges } from '../../store/gallery-changes.js'
import { allEnvironments, type EnvironmentRow } from '../../store/organizations.js'
import type { Hand } from '../../store/templates.js'
import type { Gallery } from '@palmvein/matcher'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { HANDS, loadPageSink } from './gallery-rows.js'
import type { GallerySync } from './gallery-sync.js'
import { openSnapshot, SNAPSHOT_SUFFIX, SnapshotInvalidError, snapshotFile, writeSnapshot, type RowsPage } from './gallery-snapshot-file.js'

const PAGE_ROWS = 8_192
const TICK_MS = 5_000
// A temporary file untouched this long is a write a crash cut short (a live write touches it every page).
const STALE_TEMPORARY_MS = 10 * 60_000
// The latest changes a snapshot names, which the database's change log must hold.
const CHANGES_CHECKED = 64

export const snapshotDirectory = (config: Pick<Config, 'snapshotDir' | 'dataDir'>): string => config.snapshotDir ?? path.join(config.dataDir, 'snapshots')

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
  const { options, sql, log, entries } = context
  const { config, keyring } = options
  const directory = snapshotDirectory(config)
  const enabled = config.snapshotIntervalMs > 0 && !options.distribution
  /** Per environment, the change number and time of the snapshot on disk. */
  const written = new Map<string, { seq: number; at: number }>()
  /** Per environment being copied, the members changed meanwhile. */
  const copying = new Map<string, Set<string>>()
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> = Promise.resolve()
  const environmentKeyOf = (environment: EnvironmentRow) => keyring.environmentKey(environment.id, environment.wrapped_key)

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
    if (!enabled) return false
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

  /** The gallery's pages, hand by hand; throws when a compaction moved rows mid-copy (the next tick starts again). */
  async function* pagesOf(gallery: Gallery): AsyncGenerator<RowsPage> {
    for (const hand of HANDS) {
      if (!gallery.partitions().includes(hand)) continue
      let layout: number | null = null
      for (let from: number | null = 0; from !== null; ) {
        const page = gallery.readRows(hand, from, PAGE_ROWS)
        if (layout !== null && page.layout !== layout) throw new Error('the gallery was compacted while it was copied')
        layout = page.layout
        from = page.next
        yield { ids: page.ids, hand: hand as Hand, vectors: page.vectors, norms: page.norms, signBits: page.signBits }
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
  }

  async function snapshot(entry: Entry): Promise<void> {
    const environment = entry.environment!
    const environmentId = environment.id
    // Started on the environment's chain, caught up: no change of this process is in flight, the
    // copy covers every change up to `seq`, and the changes queued after are listed as touched.
    const touched = new Set<string>()
    const begin = entry.chain.then(async () => {
      await sync.catchUp(entry)
      copying.set(environmentId, touched)
      return entry.syncedSeq
    })
    entry.chain = begin.catch(() => {})
    const seq = await begin
    const gallery = entry.gallery!
    const started = performance.now()
    try {
      const result = await writeSnapshot({
        directory,
        keyring,
        environmentKey: environmentKeyOf(environment),
        header: {
          environment_id: environmentId,
          seq,
          dimension: environment.dimension,
          latest_changes: (await latestGalleryChanges(sql, environmentId, seq, CHANGES_CHECKED)).map((change) => [change.member_id, change.seq]),
          rows_hint: gallery.size,
        },
        pages: pagesOf(gallery),
        finish: () => ({ touched: [...touched] }),
      })
      written.set(environmentId, { seq, at: Date.now() })
      log.info(
        {
          environment_id: environmentId,
          change: seq,
          rows: result.rows,
          bytes: result.bytes,
          seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
        },
        'Galleries: snapshot written',
      )
    } finally {
      copying.delete(environmentId)
    }
  }

  /** Snapshots of environments that no longer exist, and temporary files a crash left, go. */
  async function tidy(): Promise<void> {
    const names = await fs.readdir(directory).catch(() => [] as string[])
    if (names.length === 0) return
    const existing = new Set((await allEnvironments(sql)).map((environment) => environment.id))
    for (const name of names) {
      const file = path.join(directory, name)
      const id = /^gallery-([0-9a-f-]{36})\.snapshot/.exec(name)?.[1]
      if (!id) continue
      if (name.endsWith(SNAPSHOT_SUFFIX) && !existing.has(id)) await fs.rm(file, { force: true })
      else if (name.endsWith('.tmp')) {
        const stats = await fs.stat(file).catch(() => null)
        if (stats && Date.now() - stats.mtimeMs > STALE_TEMPORARY_MS) await fs.rm(file, { force: true })
      }
    }
  }

  async function tick(): Promise<void> {
    for (const [environmentId, entry] of entries) {
      if (context.closed()) return
      if (entry.loading || !entry.gallery || !entry.environment || entry.shardsHeld) continue
      const last = written.get(environmentId)
      if (last && Date.now() - last.at < config.snapshotIntervalMs) continue
      const latest = await latestGalleryChange(sql, environmentId)
      if (last ? latest <= last.seq : latest === 0 && entry.gallery.size === 0) continue
      await snapshot(entry).catch((error) => log.warn({ err: error, environment_id: environmentId }, 'Galleries: snapshot not written; trying again later'))
    }
    await tidy()
  }

  return {
    restore,
    has: async (environmentId) =>
      enabled &&
      (await fs.stat(snapshotFile(directory, environmentId)).then(
        () => true,
        () => false,
      )),
    touched(environmentId, memberId) {
      copying.get(environmentId)?.add(memberId.toLowerCase())
    },
    start() {
      if (!enabled || timer) return
      const schedule = () => {
        timer = setTimeout(
          () => {
            running = tick()
              .catch((error) => log.warn({ err: error }, 'Galleries: snapshot pass failed'))
              .finally(() => {
                if (!context.closed()) schedule()
              })
          },
          Math.min(TICK_MS, config.snapshotIntervalMs),
        )
        timer.unref()
      }
      schedule()
    },
    async stop() {
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
