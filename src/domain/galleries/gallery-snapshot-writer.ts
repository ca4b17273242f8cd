// Writes gallery snapshots in the background (gallery-snapshots.ts says when and why): the live
// gallery copied a page at a time on its environment's chain, members changed meanwhile listed in
// the file; stale temporary files and deleted environments' snapshots tidied away.
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Gallery } from '@palmvein/matcher'
import { latestGalleryChange, latestGalleryChanges } from '../../store/gallery-changes.js'
import { allEnvironments } from '../../store/organizations.js'
import type { Hand } from '../../store/templates.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { HANDS } from './gallery-rows.js'
import { SNAPSHOT_SUFFIX, writeSnapshot, type RowsPage } from './gallery-snapshot-file.js'
import type { SnapshotState } from './gallery-snapshot-state.js'
import type { GallerySync } from './gallery-sync.js'

const PAGE_ROWS = 8_192
const TICK_MS = 5_000
// A temporary file untouched this long is a write a crash cut short (a live write touches it every page).
const STALE_TEMPORARY_MS = 10 * 60_000
// The latest changes a snapshot names, which the database's change log must hold.
const CHANGES_CHECKED = 64

export interface SnapshotWriter {
  /** A member's rows changed in a gallery outside a catch-up (enrollment, import, delete). */
  touched(environmentId: string, memberId: string): void
  start(): void
  stop(): Promise<void>
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

/** Snapshots of environments that no longer exist, and temporary files a crash left, go. */
async function tidy(sql: GalleriesContext['sql'], directory: string): Promise<void> {
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

export function createSnapshotWriter(context: GalleriesContext, sync: GallerySync, state: SnapshotState): SnapshotWriter {
  const { options, sql, log, entries } = context
  const { config, keyring } = options
  const { directory, written, environmentKeyOf } = state
  /** Per environment being copied, the members changed meanwhile. */
  const copying = new Map<string, Set<string>>()
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> = Promise.resolve()

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
    await tidy(sql, directory)
  }

  return {
    touched(environmentId, memberId) {
      copying.get(environmentId)?.add(memberId.toLowerCase())
    },
    start() {
      if (!state.enabled || timer) return
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
