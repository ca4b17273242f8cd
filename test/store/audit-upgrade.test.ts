// Upgrading a database whose audit trail was written a row per record (migration 0013) to blocks
// (0017) and then keyed (0035): every record keeps its position, content and hashes; the first
// start adopts the unkeyed chains (a signed checkpoint at each end), after which they verify; new
// records chain on, keyed, from where each chain ended.
import fs from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chainHash, createAuditTrail, verifyAuditChains, type AuditRecord } from '../../src/domain/audit/audit.js'
import { newId } from '../../src/ids.js'
import { migrate } from '../../src/store/migrate.js'
import { adoptUnkeyedTrail } from '../../src/domain/audit/audit-adoption.js'
import { testAuditKeys } from '../support/audit-keys.js'
import { createTestStorage, type TestStorage } from '../support/database.js'

const MIGRATION_0013 = fileURLToPath(new URL('../../src/store/migrations/0013_audit_log.sql', import.meta.url))

describe('audit trail upgrade to blocks', () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage?.cleanup()
  })

  it('keeps the records written before, verifiable, and chains new ones after them', async () => {
    const sql = storage.db.sql
    // The database as it was before migration 0017.
    await sql
      .unsafe(`DROP VIEW audit_log; DROP TABLE audit_blocks; DROP TABLE audit_anchors; DROP TABLE audit_checkpoints; DROP TABLE audit_keys;
      DELETE FROM schema_migrations WHERE name IN ('0017_audit_blocks.sql', '0035_audit_keyed.sql')`)
      .simple()
    await sql.unsafe(await fs.readFile(MIGRATION_0013, 'utf8')).simple()

    const org = newId()
    const record = (orgId: string | null, n: number): AuditRecord => ({
      org_id: orgId,
      created_at: new Date(Date.UTC(2026, 10, 1, 12, 0, n, 123)),
      request_id: `old-${n}`,
      project_id: null,
      actor_kind: 'api_key',
      actor_id: `key-${n}`,
      action: 'GET /v1/projects/{project_id}',
      resource_ids: { project_id: `p-${n}` },
      status: 200 + n,
      client_address: '10.0.0.1',
      user_agent: n % 2 ? null : 'old/1.0',
    })
    // Two chains interleaved, so each chain's positions have gaps (the old seq was global).
    const prev = new Map<string | null, Buffer>([
      [org, Buffer.alloc(32)],
      [null, Buffer.alloc(32)],
    ])
    for (let n = 0; n < 5; n++) {
      const old = record(n % 2 ? null : org, n)
      const hash = chainHash(prev.get(old.org_id)!, old)
      await sql`INSERT INTO audit_log ${sql({ ...old, resource_ids: sql.json(old.resource_ids), prev_hash: prev.get(old.org_id)!, hash } as never)}`
      prev.set(old.org_id, hash)
    }

    expect(await migrate(sql)).toEqual(['0017_audit_blocks.sql', '0035_audit_keyed.sql'])
    const keys = await testAuditKeys(sql)
    // Before the first start adopts them, nothing vouches for the end of the unkeyed chains.
    expect((await verifyAuditChains(sql, keys, { orgId: org }))[0].broken).toEqual({
      seq: 5,
      reason: expect.stringContaining('the records up to here carry no MAC and no signed checkpoint covers them'),
    })
    expect((await adoptUnkeyedTrail(sql, keys)).sort()).toEqual([org, 'platform'].sort())
    expect(await adoptUnkeyedTrail(sql, keys)).toEqual([])
    expect(await verifyAuditChains(sql, keys)).toEqual(
      [
        { chain: org, records: 3, broken: null },
        { chain: 'platform', records: 2, broken: null },
      ].sort((a, b) => a.chain.localeCompare(b.chain)),
    )
    const kept = await sql<{ seq: number; created_at: Date; request_id: string; status: number; resource_ids: unknown; user_agent: string | null }[]>`
      SELECT seq, created_at, request_id, status, resource_ids, user_agent FROM audit_log WHERE chain = ${org} ORDER BY seq`
    expect(kept).toEqual(
      [0, 2, 4].map((n) => ({
        seq: n + 1,
        created_at: record(org, n).created_at,
        request_id: `old-${n}`,
        status: 200 + n,
        resource_ids: { project_id: `p-${n}` },
        user_agent: 'old/1.0',
      })),
    )

    const trail = createAuditTrail({ sql, log: pino({ level: 'silent' }), keys, retentionDays: 400, purge: false })
    trail.record({ ...record(org, 9), created_at: new Date() })
    await trail.close()
    expect((await verifyAuditChains(sql, keys, { orgId: org }))[0]).toEqual({ chain: org, records: 4, broken: null })
    const [newest] = await sql<{ seq: number }[]>`SELECT seq FROM audit_log WHERE chain = ${org} ORDER BY seq DESC LIMIT 1`
    expect(newest.seq).toBe(6)
  })
})
