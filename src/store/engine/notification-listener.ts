// LISTEN on PostgreSQL over one dedicated connection that comes back after it drops. postgres.js's
// own `sql.listen` re-subscribes once when its connection closes and gives up silently if that
// attempt fails (the database still down), so after an outage notifications would stop for good.
// Here a dropped connection is re-subscribed until it succeeds, and every listener hears that it
// was away (`onReconnect`): notifications sent meanwhile are lost, and it must catch up itself.
import type { Sql } from './sql.js'

export interface Subscription {
  onPayload(payload: string): void
  onReconnect?(): void
}

export interface NotificationListener {
  listen(channel: string, subscription: Subscription): Promise<{ unlisten(): Promise<void> }>
  close(): Promise<void>
}

const RETRY_MIN_MS = 100
const RETRY_MAX_MS = 2_000

export function createNotificationListener(
  open: (hooks: { onnotify(channel: string, payload: string): void; onclose(): void }) => Sql,
  log?: { warn(message: string): void; info(message: string): void },
): NotificationListener {
  const channels = new Map<string, Set<Subscription>>()
  let closed = false
  let _resubscribing: Promise<void> | null = null
  let dropped = false
  const quote = (channel: string) => `"${channel.replace(/"/g, '""')}"`

  const sql = open({
    onnotify(channel, payload) {
      for (const subscription of channels.get(channel) ?? []) subscription.onPayload(payload)
    },
    onclose() {
      if (closed || channels.size === 0) return
      dropped = true
      _resubscribing ??= resubscribe().finally(() => {
        _resubscribing = null
      })
    },
  })

  async function resubscribe(): Promise<void> {
    for (let attempt = 0; !closed; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** attempt)).unref())
      if (attempt === 0) log?.warn('DB: the notification connection dropped; subscribing again')
      try {
        dropped = false
        for (const channel of channels.keys()) await sql.unsafe(`LISTEN ${quote(channel)}`)
        // The connection closed again while we subscribed: the new one has not heard the channels yet.
        if (dropped) continue
      } catch {
        continue
      }
      log?.info(`DB: notifications resumed after ${attempt + 1} attempt(s); listeners catch up on what they missed`)
      for (const subscriptions of channels.values()) for (const subscription of subscriptions) subscription.onReconnect?.()
      return
    }
  }

  return {
    async listen(channel, subscription) {
      let subscriptions = channels.get(channel)
      if (!subscriptions) {
        subscriptions = new Set()
        channels.set(channel, subscriptions)
        try {
          await sql.unsafe(`LISTEN ${quote(channel)}`)
        } catch (error) {
          channels.delete(channel)
          throw error
        }
      }
      subscriptions.add(subscription)
      return {
        async unlisten() {
          subscriptions.delete(subscription)
          if (subscriptions.size > 0 || channels.get(channel) !== subscriptions) return
          channels.delete(channel)
          // Not awaited: a notification on a channel nobody holds is dropped here anyway, and on a
          // connection the availability watch cut the UNLISTEN never settles (a failed boot's
          // cleanup waited on it until the event loop emptied and the process exited 0).
          if (!closed) sql.unsafe(`UNLISTEN ${quote(channel)}`).catch(() => {})
        },
      }
    },
    async close() {
      closed = true
      await sql.end({ timeout: 1 })
    },
  }
}
