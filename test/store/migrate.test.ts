import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate } from '../../src/store/migrate.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'

describe(`migrations (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage.cleanup()
  })

  it('creates every table of the domain', async () => {
    const rows = await storage.db.sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
    const names = rows.map((row) => row.table_name)
    for (const table of [
      'organizations',
      'organization_admins',
      'environments',
      'projects',
      'api_keys',
      'members',
      'palm_templates',
      'devices',
      'registration_codes',
      'enrollment_sessions',
      'scan_results',
      'transactions',
      'webhook_subscriptions',
      'event_outbox',
      'webhook_deliveries',
      'webhook_attempts',
      'rate_limit_counters',
    ]) {
      expect(names).toContain(table)
    }
  })

  it('is idempotent: a second run applies nothing', async () => {
    expect(await migrate(storage.db.sql)).toEqual([])
  })

  it('enforces the schema: an unknown organization kind is refused', async () => {
    await expect(storage.db.sql`INSERT INTO organizations (id, name, kind) VALUES (gen_random_uuid(), 'x', 'other')`).rejects.toThrow(/check constraint/)
  })

  it("keeps a template in its member's environment, and deletes it with the member", async () => {
    const { sql } = storage.db
    const [organization] = await sql<{ id: string }[]>`INSERT INTO organizations (id, name, kind) VALUES (gen_random_uuid(), 'keys', 'customer') RETURNING id`
    const environments = await sql<{ id: string }[]>`
      INSERT INTO environments (id, owner_org_id, name, wrapped_key)
      SELECT gen_random_uuid(), ${organization.id}, 'env ' || n, '\\x00'::bytea FROM generate_series(1, 2) AS n RETURNING id`
    const [project] = await sql<{ id: string }[]>`
      INSERT INTO projects (id, org_id, name, environment_id, plan, headcount, daily_request_limit, requests_per_minute)
      VALUES (gen_random_uuid(), ${organization.id}, 'p', ${environments[0].id}, 'sandbox', 10, 10, 10) RETURNING id`
    const [member] = await sql<{ id: string }[]>`
      INSERT INTO members (id, project_id, environment_id, display_name) VALUES (gen_random_uuid(), ${project.id}, ${environments[0].id}, 'm') RETURNING id`
    const template = (environmentId: string) => sql`
      INSERT INTO palm_templates (id, member_id, environment_id, hand, kind, ciphertext) VALUES (gen_random_uuid(), ${member.id}, ${environmentId}, 'left', 'reference', '\\x00'::bytea)`
    await expect(template(environments[1].id)).rejects.toThrow(/foreign key/)
    await template(environments[0].id)
    await sql`DELETE FROM members WHERE id = ${member.id}`
    expect(await sql`SELECT 1 FROM palm_templates WHERE member_id = ${member.id}`).toHaveLength(0)
  })

  it('delivers notifications to listeners', async () => {
    const received: string[] = []
    const listener = await storage.db.listen('palmvein_test', (payload) => received.push(payload))
    await storage.db.notify('palmvein_test', 'hello')
    await expect.poll(() => received, { timeout: 2000 }).toEqual(['hello'])
    await listener.unlisten()
  })
})
