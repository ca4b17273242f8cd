// Two audit trails appending to the same chains (two services on one database: each appends a
// block from the tail it remembers, which the other's appends move) keep every chain whole, and no
// record is lost or written twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { createAuditTrail, verifyAuditChains, type AuditRecord } from '../../src/domain/audit/audit.js'
import { newId } from '../../src/ids.js'
import { testAuditKeys } from '../support/audit-keys.js'
import { createTestStorage, type TestStorage } from '../support/database.js'

describe('audit appends from two writers', () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage?.cleanup()
  })

  it('interleaved flushes of two trails leave each chain verifiable with every record once', async () => {
    const log = pino({ level: 'silent' })
    const keys = await testAuditKeys(storage.db.sql)
    const options = { sql: storage.db.sql, log, keys, retentionDays: 400, purge: false }
    const first = createAuditTrail(options)
    const second = createAuditTrail(options)
    const orgs = [newId(), newId()]
    const record = (org: string | null, n: number): AuditRecord => ({
      org_id: org,
      created_at: new Date(),
      request_id: `req-${n}`,
      project_id: null,
      actor_kind: 'token',
      actor_id: 'someone',
      action: 'GET /v1/projects',
      resource_ids: {},
      status: 200,
      client_address: '127.0.0.1',
      user_agent: null,
    })
    let n = 0
    for (let round = 0; round < 6; round++) {
      for (const trail of round % 2 === 0 ? [first, second] : [second, first]) {
        for (const org of [...orgs, null]) for (let i = 0; i < 3; i++) trail.record(record(org, n++))
        await trail.flush()
      }
    }
    await Promise.all([first.close(), second.close()])
    const reports = await verifyAuditChains(storage.db.sql, keys)
    for (const org of orgs) expect(reports.find((report) => report.chain === org)).toEqual({ chain: org, records: 36, broken: null })
    expect(reports.find((report) => report.chain === 'platform')?.broken).toBeNull()
    const ids = await storage.db.sql<{ request_id: string }[]>`SELECT request_id FROM audit_log WHERE request_id LIKE 'req-%'`
    expect(ids).toHaveLength(n)
    expect(new Set(ids.map((row) => row.request_id)).size).toBe(n)
  })
})
