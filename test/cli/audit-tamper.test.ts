// Someone with the database but not the master key tampers with the audit trail in SQL (through the
// store's own client, as `psql` would), each time in a way the unkeyed SHA-256 chain could not
// see: `palmvein audit verify` exits 1 naming what failed, and the HTTP list does not silently
// hide records. The four attacks: a record edited and every later hash recomputed; block time
// bounds edited so the list skips blocks; the oldest blocks deleted behind a forged retention
// anchor; records reordered by swapping their positions.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { runCli } from '../support/process.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const DAY = 86_400_000

/** A record as its block keeps it. */
interface StoredRecord {
  seq: number
  created_at: string
  prev_hash: string
  hash: string
  status: number
  [field: string]: unknown
}
interface Block {
  first_seq: number
  last_seq: number
  org_id: string | null
  records: StoredRecord[]
}

/** The unkeyed link anyone can compute (the chain's published algorithm before it was keyed). */
function sha256Link(prev: Buffer, orgId: string | null, record: StoredRecord): Buffer {
  const content = JSON.stringify([
    record.created_at,
    record.request_id,
    orgId,
    record.project_id,
    record.actor_kind,
    record.actor_id,
    record.action,
    Object.entries(record.resource_ids as Record<string, string>).sort(([a], [b]) => a.localeCompare(b)),
    record.status,
    record.client_address,
    record.user_agent,
  ])
  return createHash('sha256').update(prev).update(content).digest()
}

describe('audit trail tampering by someone holding the database', () => {
  let svc: TestService
  let env: Record<string, string | undefined>
  beforeAll(async () => {
    svc = await bootService()
    env = { PALMVEIN_DATA_DIR: svc.storage.dataDir, DATABASE_URL: svc.storage.databaseUrl ?? undefined }
  })
  afterAll(async () => {
    await svc.close()
  })

  const sql = () => svc.storage.db.sql
  const window = () => `from=${new Date(Date.now() - DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}`

  /** A tenant whose chain ends with `refused` requests of its key for members that do not exist (404), one block each. */
  async function tenantWithRefusals(subject: string, refused: number): Promise<{ tenant: Tenant; requestIds: string[] }> {
    const tenant = await createTenant(svc, subject)
    await svc.service.app.audit.flush()
    const requestIds: string[] = []
    for (let i = 0; i < refused; i++) {
      const requestId = newId()
      const answer = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${newId()}`, {
        auth: tenant.orgKey,
        headers: { 'x-request-id': requestId },
      })
      expectStatus(answer, 404)
      requestIds.push(requestId)
      await svc.service.app.audit.flush()
    }
    return { tenant, requestIds }
  }

  async function blocksOf(chain: string): Promise<Block[]> {
    const rows = await sql()<{ first_seq: number; last_seq: number; org_id: string | null; records: string }[]>`
      SELECT first_seq, last_seq, org_id, records FROM audit_blocks WHERE chain = ${chain} ORDER BY first_seq`
    return rows.map((row) => ({ ...row, records: JSON.parse(row.records) as StoredRecord[] }))
  }

  async function writeBlock(chain: string, block: Block): Promise<void> {
    await sql()`UPDATE audit_blocks SET records = ${JSON.stringify(block.records)}, last_hash = ${Buffer.from(block.records.at(-1)!.hash, 'hex')}
      WHERE chain = ${chain} AND first_seq = ${block.first_seq}`
  }

  /** Recomputes the hashes of the chain from record `fromSeq` on with the unkeyed link, as the attacker can. */
  async function recomputeChain(chain: string, fromSeq: number): Promise<void> {
    let prev: Buffer | null = null
    for (const block of await blocksOf(chain)) {
      if (block.last_seq < fromSeq) continue
      for (const record of block.records) {
        if (record.seq < fromSeq) {
          prev = Buffer.from(record.hash, 'hex')
          continue
        }
        prev ??= Buffer.from(record.prev_hash, 'hex')
        record.prev_hash = prev.toString('hex')
        prev = sha256Link(prev, block.org_id, record)
        record.hash = prev.toString('hex')
      }
      await writeBlock(chain, block)
    }
  }

  const verify = (orgId: string) => runCli(['audit', 'verify', '--org', orgId], env)

  it('catches a record changed from 404 to 200 with every later hash recomputed', async () => {
    const { tenant, requestIds } = await tenantWithRefusals('tamper-edit@example.com', 3)
    expect((await verify(tenant.orgId)).code).toBe(0)

    const blocks = await blocksOf(tenant.orgId)
    const victim = blocks.flatMap((block) => block.records).find((record) => record.request_id === requestIds[0])!
    const block = blocks.find((candidate) => candidate.records.includes(victim))!
    victim.status = 200
    await writeBlock(tenant.orgId, block)
    await recomputeChain(tenant.orgId, victim.seq)

    const edited = await verify(tenant.orgId)
    expect(edited.code, edited.stdout).toBe(1)
    expect(edited.stdout).toContain(`BROKEN organization ${tenant.orgId}: record ${victim.seq}: its content does not match its hash, a MAC under the audit key`)

    // Claiming the rewritten blocks were written before the chain was keyed does not help.
    await sql()`UPDATE audit_blocks SET key_id = NULL WHERE chain = ${tenant.orgId} AND first_seq >= ${block.first_seq}`
    const downgraded = await verify(tenant.orgId)
    expect(downgraded.code, downgraded.stdout).toBe(1)
    expect(downgraded.stdout).toContain(`BROKEN organization ${tenant.orgId}: record ${block.first_seq}: it carries no MAC although records before it do`)
  }, 60_000)

  it('catches block time bounds edited so that the list hides 5 of 6 refused requests, and the list says so', async () => {
    const { tenant, requestIds } = await tenantWithRefusals('tamper-bounds@example.com', 6)
    const listed = async () => svc.request('GET', `/v1/organization/${tenant.orgId}/audit-log?${window()}&page=1&per_page=1000`, { auth: tenant.token })
    const before = await listed()
    expectStatus(before, 200)
    const shown = new Set(before.body.items.map((item: { request_id: string }) => item.request_id))
    for (const requestId of requestIds) expect(shown.has(requestId)).toBe(true)

    // The blocks of five of them claim to hold records from 2001.
    const blocks = (await blocksOf(tenant.orgId)).filter((block) => requestIds.slice(0, 5).includes(block.records[0].request_id as string))
    expect(blocks).toHaveLength(5)
    for (const block of blocks) {
      await sql()`UPDATE audit_blocks SET first_at = '2001-01-01T00:00:00Z', last_at = '2001-01-01T00:00:01Z' WHERE chain = ${tenant.orgId} AND first_seq = ${block.first_seq}`
    }

    const verified = await verify(tenant.orgId)
    expect(verified.code, verified.stdout).toBe(1)
    expect(verified.stdout).toContain(`BROKEN organization ${tenant.orgId}: record ${blocks[0].first_seq}: its block's first_at/last_at`)
    const after = await listed()
    expect(after.status, JSON.stringify(after.body)).toBe(500)
    expect(after.body).toMatchObject({ code: 'audit_trail_broken' })
    expect(after.body.detail).toContain(`record ${blocks[0].first_seq}`)

    // Nor does the retention purge take the moved bounds at their word (it would delete the blocks and sign an anchor).
    const purged = await runCli(['audit', 'purge', '--days', '30'], env)
    expect(purged.code, purged.stdout + purged.stderr).toBe(1)
    expect(purged.stdout).toContain(
      `NOT PURGED organization ${tenant.orgId}: record ${blocks[4].first_seq}: its block's first_at/last_at do not match its records`,
    )
    expect((await verify(tenant.orgId)).code).toBe(1)
  }, 90_000)

  it('catches the oldest blocks deleted behind a forged retention anchor', async () => {
    const { tenant } = await tenantWithRefusals('tamper-anchor@example.com', 3)
    const blocks = await blocksOf(tenant.orgId)
    expect(blocks.length).toBeGreaterThan(2)
    const cut = blocks[1]
    await sql()`DELETE FROM audit_blocks WHERE chain = ${tenant.orgId} AND first_seq <= ${cut.first_seq}`
    await sql()`INSERT INTO audit_anchors (chain, hash, last_seq, purged_at)
      VALUES (${tenant.orgId}, ${Buffer.from(cut.records.at(-1)!.hash, 'hex')}, ${cut.last_seq}, now())`

    const verified = await verify(tenant.orgId)
    expect(verified.code, verified.stdout).toBe(1)
    expect(verified.stdout).toContain(`BROKEN organization ${tenant.orgId}: record ${cut.last_seq}: the retention anchor is not authenticated`)
    const listed = await svc.request('GET', `/v1/organization/${tenant.orgId}/audit-log?${window()}&page=1&per_page=10`, { auth: tenant.token })
    expect(listed.status).toBe(500)
    expect(listed.body).toMatchObject({ code: 'audit_trail_broken' })
  }, 60_000)

  it('catches records reordered by swapping their positions', async () => {
    const { tenant, requestIds } = await tenantWithRefusals('tamper-order@example.com', 3)
    const blocks = await blocksOf(tenant.orgId)
    const [first, second] = requestIds.map((requestId) => blocks.find((block) => block.records[0].request_id === requestId)!)
    const [a, b] = [first.records[0].seq, second.records[0].seq]
    first.records[0].seq = b
    second.records[0].seq = a
    await writeBlock(tenant.orgId, first)
    await writeBlock(tenant.orgId, second)
    const listed = await svc.request('GET', `/v1/organization/${tenant.orgId}/audit-log?${window()}&page=1&per_page=1000`, { auth: tenant.token })
    expect(listed.status).toBe(500)

    const verified = await verify(tenant.orgId)
    expect(verified.code, verified.stdout).toBe(1)
    expect(verified.stdout).toContain(`BROKEN organization ${tenant.orgId}: record ${b}: its position does not follow the record before it`)
  }, 60_000)
})
