// When the audit trail appends: a block as soon as 50 records are queued, holding what was queued
// when the flush began. Records that arrive while that block is being written wait for the next
// flush; appended at once, they would follow every block as a block of one or two records.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import pino from 'pino'
import { createAuditTrail, verifyAuditChains, type AuditRecord } from '../../src/domain/audit/audit.js'
import type { Sql } from '../../src/store/engine/database.js'
import { newId } from '../../src/ids.js'
import { testAuditKeys } from '../support/audit-keys.js'
import { createTestStorage, type TestStorage } from '../support/database.js'

describe('audit trail flushes', () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage?.cleanup()
  })

  it('appends a block at 50 queued records, and records arriving during its append wait for the next flush', async () => {
    const sql = storage.db.sql
    // Block inserts wait for `open()`, so records can arrive while the first block is being written.
    let open!: () => void
    const held = new Promise<void>((resolve) => {
      open = resolve
    })
    let blockInserts = 0
    const gated = ((strings: TemplateStringsArray, ...values: never[]) => {
      const query = sql(strings, ...values)
      if (!strings[0].includes('INSERT INTO audit_blocks')) return query
      blockInserts += 1
      return held.then(() => query)
    }) as unknown as Sql
    // No timed flush during the test: only the 50-record trigger and explicit flushes append.
    const keys = await testAuditKeys(sql)
    const trail = createAuditTrail({ sql: gated, log: pino({ level: 'silent' }), keys, retentionDays: 400, purge: false, flushEveryMs: 3_600_000 })
    const org = newId()
    const record = (n: number): AuditRecord => ({
      org_id: org,
      created_at: new Date(),
      request_id: `flush-${n}`,
      project_id: null,
      actor_kind: 'token',
      actor_id: 'someone',
      action: 'GET /v1/projects',
      resource_ids: {},
      status: 200,
      client_address: '127.0.0.1',
      user_agent: null,
    })
    const blocks = async () =>
      (
        await sql<{ first_seq: string; last_seq: string }[]>`
      SELECT first_seq, last_seq FROM audit_blocks WHERE chain = ${org} ORDER BY first_seq`
      ).map((row) => [Number(row.first_seq), Number(row.last_seq)])

    for (let n = 1; n <= 49; n++) trail.record(record(n))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(blockInserts).toBe(0)
    trail.record(record(50))
    await vi.waitFor(() => expect(blockInserts).toBe(1))
    for (let n = 51; n <= 53; n++) trail.record(record(n))
    open()
    await vi.waitFor(async () => expect(await blocks()).toEqual([[1, 50]]))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(blockInserts).toBe(1)

    await trail.flush()
    expect(await blocks()).toEqual([
      [1, 50],
      [51, 53],
    ])
    await trail.close()
    expect((await verifyAuditChains(sql, keys, { orgId: org }))[0]).toEqual({ chain: org, records: 53, broken: null })
  })
})
