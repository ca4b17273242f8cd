// The LISTEN connection's subscriptions end without waiting on the database: a failed boot's
// cleanup unsubscribed on a connection the availability watch had cut, the UNLISTEN never settled,
// and the process exited 0 once nothing else kept its event loop alive.
import { describe, expect, it } from 'vitest'
import { createNotificationListener } from '../../src/store/engine/notification-listener.js'
import type { Sql } from '../../src/store/engine/sql.js'

/** A connection whose queries answer until `stall()`, then never settle (a cut database). */
function stallableConnection() {
  let stalled = false
  const sent: string[] = []
  const connection = {
    unsafe: (text: string) => {
      sent.push(text)
      return stalled ? new Promise(() => {}) : Promise.resolve([])
    },
    end: async () => {},
  }
  return { sql: connection as unknown as Sql, sent, stall: () => (stalled = true) }
}

describe('notification listener', () => {
  it('unlistens at once on a connection whose queries no longer settle', async () => {
    const connection = stallableConnection()
    const listener = createNotificationListener(() => connection.sql)
    const subscription = await listener.listen('member_changes', { onPayload() {} })
    connection.stall()
    const outcome = await Promise.race([
      subscription.unlisten().then(() => 'returned'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 1 s'), 1_000)),
    ])
    expect(outcome).toBe('returned')
    expect(connection.sent).toEqual(['LISTEN "member_changes"', 'UNLISTEN "member_changes"'])
    await listener.close()
  })

  it('keeps the channel while another subscription holds it', async () => {
    const connection = stallableConnection()
    const listener = createNotificationListener(() => connection.sql)
    const first = await listener.listen('member_changes', { onPayload() {} })
    await listener.listen('member_changes', { onPayload() {} })
    await first.unlisten()
    expect(connection.sent).toEqual(['LISTEN "member_changes"'])
    await listener.close()
  })
})
