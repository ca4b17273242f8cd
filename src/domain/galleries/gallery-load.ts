// Loading an environment's gallery from the database: on first use while the caller waits, at boot
// one environment after another (retried until it succeeds or the service stops; from the
// environment's snapshot when one is to be trusted, gallery-snapshots.ts), and in cluster mode as
// an empty gallery whose shards arrive later (gallery-shards.ts).
import type { Gallery } from '@palmvein/matcher'
import { ServiceError } from '../../errors.js'
import { latestGalleryChange } from '../../store/gallery-changes.js'
import { allEnvironments, environmentById, type EnvironmentRow } from '../../store/organizations.js'
import { countEnvironmentReferences, referenceCountsByEnvironment } from '../../store/templates.js'
import type { GalleriesContext } from './galleries-context.js'
import type { Entry } from './gallery-entry.js'
import { HANDS, loadReadPageSink } from './gallery-rows.js'
import { releaseGarbage } from '../../runtime/process-memory.js'

export function newEntry(blocking: boolean, environment: EnvironmentRow | null, total: number): Entry {
  return {
    environment,
    gallery: null,
    loading: true,
    blocking,
    loaded: 0,
    total,
    ready: Promise.resolve(),
    chain: Promise.resolve(),
    catchingUp: Promise.resolve(),
    settingsRead: Promise.resolve(),
    notStored: 0,
    syncedSeq: 0,
    shardsHeld: null,
    shardsReady: new Set(),
    distributed: null,
  }
}

/** A boot's faster way to fill an environment's gallery (gallery-snapshots.ts): false when the database must be read. */
export type Restore = (entry: Entry, environment: EnvironmentRow, gallery: Gallery, watermark: number) => Promise<boolean>

/** Reads the environment's rows into a new gallery (from its snapshot when `restore` can) and makes the entry ready with it. */
export async function loadEntry(context: GalleriesContext, entry: Entry, environmentId: string, restore?: Restore): Promise<void> {
  const { sql, options, reader, log } = context
  const environment = entry.environment ?? (await environmentById(sql, environmentId))
  if (!environment) throw new ServiceError('not_found', `environment ${environmentId} not found`)
  entry.environment = environment
  // Taken first: a change committed while the pages are read is applied again by the next catch-up.
  const watermark = await latestGalleryChange(sql, environmentId)
  const newGallery = async () => (await context.matchers.forDimension(environment.dimension)).createGallery({ ids: 'uuid' })
  let gallery = await newGallery()
  entry.loaded = 0
  if (options.distribution) {
    // Cluster mode: the node's shards are loaded as they are assigned (loadShard).
    entry.shardsHeld = new Set()
    entry.distributed = options.distribution.wrap(environment, gallery, () => entry.syncedSeq)
    entry.total = 0
    entry.syncedSeq = watermark
  } else {
    if (!restore || !(await restore(entry, environment, gallery, watermark))) {
      // A snapshot refused part way leaves rows behind: the database's go into a gallery of their own.
      if (gallery.size > 0) gallery = await newGallery()
      entry.loaded = 0
      entry.notStored = 0
      // The count sizes the load (and shows its progress): a boot that reads snapshots took none,
      // nor does a load on demand (an environment first used after boot, a CLI command).
      if (entry.total === 0) entry.total = await countEnvironmentReferences(sql, environmentId)
      // The hands' id maps sized once (members enroll both hands), then a page at a time into the gallery.
      for (const hand of HANDS) gallery.reserve(Math.ceil((entry.total / 2) * 1.05), { partition: hand })
      await reader.read(environment, entry.total, loadReadPageSink(log, entry, gallery))
      entry.syncedSeq = watermark
    }
  }
  entry.total = Math.max(entry.total, entry.loaded)
  entry.gallery = gallery
  entry.loading = false
}

/** Boot loads retry until they succeed or the service stops; the environment stays 'loading'. */
async function loadWithRetry(context: GalleriesContext, entry: Entry, environmentId: string, restore: Restore): Promise<void> {
  for (let attempt = 1; !context.closed(); attempt++) {
    try {
      return await loadEntry(context, entry, environmentId, restore)
    } catch (error) {
      const delay = Math.min(30_000, 500 * 2 ** attempt)
      context.log.error({ err: error, environment_id: environmentId }, `Galleries: loading failed, retrying in ${delay} ms`)
      await new Promise((resolve) => setTimeout(resolve, delay).unref())
    }
  }
}

/**
 * Registers every environment as loading (requests get 503), then loads them in the background.
 * An environment with a snapshot to boot from (`hasSnapshot`) is not counted first (seconds on
 * the embedded database at a million rows): it takes its size from its snapshot, or counts its
 * rows before it reads them if the snapshot is refused.
 */
export async function loadAtBoot(context: GalleriesContext, restore: Restore, hasSnapshot: (environmentId: string) => Promise<boolean>): Promise<void> {
  const { sql, entries, log } = context
  const environments = await allEnvironments(sql)
  const withSnapshots = await Promise.all(environments.map((environment) => hasSnapshot(environment.id)))
  const counts = withSnapshots.some(Boolean)
    ? new Map(
        await Promise.all(
          environments
            .filter((_, index) => !withSnapshots[index])
            .map(async (environment) => [environment.id, await countEnvironmentReferences(sql, environment.id)] as const),
        ),
      )
    : await referenceCountsByEnvironment(sql)
  const queued: Entry[] = []
  for (const environment of environments) {
    if (entries.has(environment.id)) continue
    const entry = newEntry(true, environment, counts.get(environment.id) ?? 0)
    entries.set(environment.id, entry)
    queued.push(entry)
  }
  const rows = [...counts.values()].reduce((sum, count) => sum + count, 0)
  const snapshots = withSnapshots.filter(Boolean).length
  log.info(`Galleries: loading ${environments.length} environment(s), ${rows} reference rows${snapshots ? ` besides ${snapshots} from snapshots` : ''}`)
  loadOneAfterAnother(context, queued, restore).catch((error) => log.error({ err: error }, 'Galleries: loading stopped'))
}

/** One environment after another: a small one is ready (and answers) before a huge one is. */
async function loadOneAfterAnother(context: GalleriesContext, queued: Entry[], restore: Restore): Promise<void> {
  for (const entry of queued) {
    entry.ready = loadWithRetry(context, entry, entry.environment!.id, restore)
    entry.chain = entry.ready
    await entry.ready
  }
  // Even with no rows: the boot's own garbage (the embedded database's start and migrations
  // leave ~100 MiB of freed C heap in the threads' malloc arenas) is given back (process-memory.ts).
  if (context.closed()) return
  const before = process.memoryUsage.rss()
  const released = releaseGarbage()
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20)
  context.log.info(
    { ...released, rss_before_mib: mib(before), rss_after_mib: mib(process.memoryUsage.rss()) },
    'Galleries: boot loads done, their garbage released',
  )
}
