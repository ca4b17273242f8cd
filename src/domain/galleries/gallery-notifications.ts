// The galleries' channel between service processes on one database: each change is announced after
// commit, and another process's announcement queues a catch-up (or a re-read of settings). A lost
// connection catches every gallery up on reconnect; on the embedded database, whose notifications
// stay inside this process, the change numbers are polled instead.
import type { GalleriesContext } from './galleries-context.js'
import type { GallerySync } from './gallery-sync.js'
import { latestGalleryChange } from '../../store/gallery-changes.js'

export const GALLERY_CHANNEL = 'palmvein_gallery'
// How often a service on the embedded database looks for gallery changes other processes made.
const FOREIGN_CHANGES_EVERY_MS = 1_000

export interface GalleryNotifications {
  /** Tells the other service processes a member changed; call after commit. */
  announce(environmentId: string, memberId: string): Promise<void>
  /** Re-reads the environment's settings here and in every other service process. */
  environmentChanged(environmentId: string): Promise<void>
  listen(): Promise<void>
  stop(): Promise<void>
}

export function createGalleryNotifications(context: GalleriesContext, sync: GallerySync): GalleryNotifications {
  const { db } = context.options
  const { entries, log } = context
  const origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`
  let listener: { unlisten(): Promise<void> } | null = null
  let changeWatch: NodeJS.Timeout | null = null

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
      entry.settingsRead = sync
        .rereadSettings(entry, message.environment_id)
        .catch((error) => log.error({ err: error }, 'Galleries: re-reading settings failed'))
    } else if (entry) void sync.queueCatchUp(entry, 'a notification').catch(() => {})
  }

  /** The notification connection was away: every loaded gallery reads what changed meanwhile. */
  function onReconnect(): void {
    const loaded = [...entries.values()].filter((entry) => entry.gallery)
    const settings = loaded.map((entry) => sync.rereadSettings(entry, entry.environment!.id).catch(() => {}))
    const catchUps = loaded.map((entry) => sync.queueCatchUp(entry, 'after reconnecting').catch(() => 0))
    void Promise.all([...catchUps, ...settings]).then((counts) => {
      const changes = counts.reduce<number>((sum, count) => sum + (count ?? 0), 0)
      log.info(`Galleries: notifications were interrupted; caught up ${changes} change(s) in ${loaded.length} environment(s)`)
    })
  }

  /** Catches up every loaded gallery whose environment has changes past the ones applied. */
  async function watchForeignChanges(): Promise<void> {
    for (const entry of entries.values()) {
      if (context.closed() || !entry.gallery || !entry.environment) continue
      const latest = await latestGalleryChange(context.sql, entry.environment.id).catch(() => 0)
      if (latest > entry.syncedSeq) await sync.queueCatchUp(entry, 'changes by another process').catch(() => 0)
    }
  }

  return {
    async announce(environmentId, memberId) {
      await db.notify(GALLERY_CHANNEL, JSON.stringify({ origin, environment_id: environmentId, member_id: memberId }))
    },
    async environmentChanged(environmentId) {
      const entry = entries.get(environmentId)
      if (entry) await sync.rereadSettings(entry, environmentId)
      await db.notify(GALLERY_CHANNEL, JSON.stringify({ origin, environment_id: environmentId, settings: true }))
    },
    async listen() {
      listener = await db.listen(GALLERY_CHANNEL, onNotification, onReconnect)
      // The embedded database's notifications stay inside this process; another process writing
      // through its loopback server (palmvein import) is seen from the change numbers instead.
      if (db.kind === 'embedded') {
        changeWatch = setInterval(() => {
          void watchForeignChanges()
        }, FOREIGN_CHANGES_EVERY_MS)
        changeWatch.unref()
      }
    },
    async stop() {
      if (changeWatch) clearInterval(changeWatch)
      await listener?.unlisten().catch(() => {})
    },
  }
}
