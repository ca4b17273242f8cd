// Checkpoints are signed in batches, never per request: appending records signs nothing; the
// periodic checkpoint (and close) signs one per chain appended to, which verifies, and signs
// nothing again until the chain moves on.
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuditTrail, verifyAuditChains, type AuditRecord } from '../../src/domain/audit/audit.js'
import { newId } from '../../src/ids.js'
import { testAuditKeys } from '../support/audit-keys.js'
import { createTestStorage, type TestStorage } from '../support/database.js'

describe('audit checkpoints batched', () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage?.cleanup()
  })

  it('signs one checkpoint per chain appended to, at the checkpoint and at close, none per record', async () => {
    const sql = storage.db.sql
    const keys = await testAuditKeys(sql)
    const trail = createAuditTrail({
      sql,
      log: pino({ level: 'silent' }),
      keys,
      retentionDays: 400,
      purge: false,
      flushEveryMs: 3_600_000,
      checkpointEveryMs: 3_600_000,
    })
    const orgs = [newId(), newId()]
    const record = (org: string, n: number): AuditRecord => ({
      org_id: org,
      created_at: new Date(),
      request_id: `batch-${n}`,
      project_id: null,
      actor_kind: 'api_key',
      actor_id: 'key',
      action: 'POST /v1/projects/{project_id}/biometrics/identify',
      resource_ids: {},
      status: 200,
      client_address: '127.0.0.1',
      user_agent: null,
    })
    const checkpoints = async () =>
      (await sql<{ chain: string; seq: number }[]>`SELECT chain, seq FROM audit_checkpoints`).map((row) => `${row.chain}@${row.seq}`).sort()
    for (let n = 0; n < 120; n++) trail.record(record(orgs[n % 2], n))
    await trail.flush()
    expect(await checkpoints()).toEqual([])

    await trail.checkpoint()
    expect(await checkpoints()).toEqual(orgs.map((org) => `${org}@60`).sort())
    await trail.checkpoint()
    expect(await checkpoints()).toHaveLength(2)

    trail.record(record(orgs[0], 120))
    await trail.close()
    expect(await checkpoints()).toEqual([...orgs.map((org) => `${org}@60`), `${orgs[0]}@61`].sort())
    for (const org of orgs) expect((await verifyAuditChains(sql, keys, { orgId: org }))[0].broken).toBeNull()
  })
})
