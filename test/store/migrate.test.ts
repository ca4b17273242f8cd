import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate } from '../../src/store/migrate.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'

describe(`migrations (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  beforeAll(async () => { storage = await createTestStorage() })
  afterAll(async () => { await storage.cleanup() })

  it('creates every table of the domain', async () => {
    const rows = await storage.db.sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
    const names = rows.map((row) => row.table_name)
    for (const table of ['organizations', 'organization_admins', 'environments', 'projects', 'api_keys', 'members',
      'palm_templates', 'devices', 'registration_codes', 'enrollment_sessions', 'scan_results', 'transactions',
      'webhook_subscriptions', 'event_outbox', 'webhook_deliveries', 'webhook_attempts', 'rate_limit_counters']) {
      expect(names).toContain(table)
    }
  })

  it('is idempotent: a second run applies nothing', async () => {
    expect(await migrate(storage.db.sql)).toEqual([])
  })

  it('enforces the schema: an unknown organization kind is refused', async () => {
    await expect(storage.db.sql`INSERT INTO organizations (id, name, kind) VALUES (gen_random_uuid(), 'x', 'other')`)
      .rejects.toThrow(/check constraint/)
  })

  it('delivers notifications to listeners', async () => {
    const received: string[] = []
    const listener = await storage.db.listen('palmvein_test', (payload) => received.push(payload))
    await storage.db.notify('palmvein_test', 'hello')
    await expect.poll(() => received, { timeout: 2000 }).toEqual(['hello'])
    await listener.unlisten()
  })
})
