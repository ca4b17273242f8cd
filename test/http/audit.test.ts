// The audit trail through the real service: representative requests of every resource group,
// allowed and refused, leave exactly one record each with the right organization, actor, action
// and status; no record holds a secret or a capture; `palmvein audit verify` passes, then names
// the record edited or deleted in the database (inside its block, as someone with the database
// would); an organization admin reads only its own records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../src/ids.js'
import { appendBlock, type AuditRow, type ChainTail } from '../../src/store/audit-log.js'
import { enrollBody, population } from '../support/palms.js'
import { runCli } from '../support/process.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'

const palms = population({ seed: 5, identities: 4 })
const DAY = 86_400_000

interface Sent {
  requestId: string
  org: string | null
  actorKind: string
  actorId: string | null
  action: string
  status: number
}

describe('audit trail', () => {
  let svc: TestService
  let a: Tenant
  let b: Tenant
  const sent: Sent[] = []
  const secrets: string[] = []

  beforeAll(async () => {
    svc = await bootService({ config: { webhookAllowLocalhost: true } })
    a = await createTenant(svc, 'audit-a@example.com')
    b = await createTenant(svc, 'audit-b@example.com')
  })
  afterAll(async () => {
    await svc.close()
  })

  /** Sends a request with a fresh request id and remembers what its record must say. */
  async function send(
    method: string,
    path: string,
    auth: string | undefined,
    expected: Omit<Sent, 'requestId' | 'status'> & { status: number },
    body?: unknown,
  ) {
    const requestId = newId()
    const answer = await svc.request(method, path, { auth, body, headers: { 'x-request-id': requestId, 'user-agent': 'audit-test/1.0' } })
    expectStatus(answer, expected.status, `${method} ${path}`)
    sent.push({ ...expected, requestId })
    return answer
  }
  const recordsOf = async (requestId: string) =>
    svc.storage.db.sql<
      {
        org_id: string | null
        actor_kind: string
        actor_id: string | null
        action: string
        status: number
        user_agent: string
        resource_ids: Record<string, string>
      }[]
    >`
      SELECT org_id, actor_kind, actor_id, action, status, user_agent, resource_ids FROM audit_log WHERE request_id = ${requestId}`

  it('records every group of requests once, allowed and refused, with its organization, actor, action and status', async () => {
    const project = `/v1/projects/${a.projectId}`
    const member = (
      await send(
        'POST',
        `${project}/members`,
        a.orgKey,
        { org: a.orgId, actorKind: 'api_key', actorId: a.orgKeyId, action: 'POST /v1/projects/{project_id}/members', status: 201 },
        { display_name: 'Audited' },
      )
    ).body.member_id
    const enrolled = enrollBody(palms, 0, member)
    const left = enrolled.left_hand as { enroll_capture: string; identify_capture: string }
    secrets.push(left.enroll_capture, left.identify_capture)
    await send(
      'POST',
      `${project}/biometrics/enroll`,
      a.orgKey,
      { org: a.orgId, actorKind: 'api_key', actorId: a.orgKeyId, action: 'POST /v1/projects/{project_id}/biometrics/enroll', status: 200 },
      enrolled,
    )
    await send('GET', `${project}/members/${member}`, a.token, {
      org: a.orgId,
      actorKind: 'token',
      actorId: a.subject,
      action: 'GET /v1/projects/{project_id}/members/{member_id}',
      status: 200,
    })
    const hook = await send(
      'POST',
      `${project}/webhooks`,
      a.orgKey,
      { org: a.orgId, actorKind: 'api_key', actorId: a.orgKeyId, action: 'POST /v1/projects/{project_id}/webhooks', status: 201 },
      { url: 'http://127.0.0.1:9/hook', event_types: ['enrollment.completed'] },
    )
    secrets.push(hook.body.secret)
    const key = await send(
      'POST',
      `/v1/organization/${a.orgId}/api-keys`,
      a.token,
      { org: a.orgId, actorKind: 'token', actorId: a.subject, action: 'POST /v1/organization/{org_id}/api-keys', status: 201 },
      { name: 'audited', project_ids: null },
    )
    secrets.push(key.body.key, a.orgKey, a.token)
    await send('GET', `/v1/organization/${a.orgId}/environments`, a.token, {
      org: a.orgId,
      actorKind: 'token',
      actorId: a.subject,
      action: 'GET /v1/organization/{org_id}/environments',
      status: 200,
    })
    const window = `from=${new Date(Date.now() - DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}`
    await send('GET', `${project}/transactions?${window}`, a.orgKey, {
      org: a.orgId,
      actorKind: 'api_key',
      actorId: a.orgKeyId,
      action: 'GET /v1/projects/{project_id}/transactions',
      status: 200,
    })
    // Refused: another tenant's key on A's project (404, kept in B's chain), no credential (401), a
    // token on an organization it does not administer (kept in the platform chain).
    await send('GET', `${project}/members/${member}`, b.orgKey, {
      org: b.orgId,
      actorKind: 'api_key',
      actorId: b.orgKeyId,
      action: 'GET /v1/projects/{project_id}/members/{member_id}',
      status: 404,
    })
    await send('DELETE', `${project}/members/${member}`, undefined, {
      org: null,
      actorKind: 'anonymous',
      actorId: null,
      action: 'DELETE /v1/projects/{project_id}/members/{member_id}',
      status: 401,
    })
    await send('GET', `/v1/organization/${a.orgId}/api-keys`, b.token, {
      org: null,
      actorKind: 'token',
      actorId: b.subject,
      action: 'GET /v1/organization/{org_id}/api-keys',
      status: 404,
    })
    // Not audited: liveness and the API description reach no tenant data.
    const livez = newId()
    await svc.request('GET', '/livez', { headers: { 'x-request-id': livez } })

    await svc.service.app.audit.flush()
    for (const request of sent) {
      const records = await recordsOf(request.requestId)
      expect(records, `${request.action} ${request.status}`).toHaveLength(1)
      expect(records[0]).toMatchObject({
        org_id: request.org,
        actor_kind: request.actorKind,
        actor_id: request.actorId,
        action: request.action,
        status: request.status,
        user_agent: 'audit-test/1.0',
      })
    }
    expect(await recordsOf(livez)).toHaveLength(0)
    expect((await recordsOf(sent[2].requestId))[0].resource_ids).toEqual({ project_id: a.projectId, member_id: member })
  })

  it('holds no secret, credential or capture', async () => {
    const rows = await svc.storage.db.sql<{ dump: string }[]>`SELECT row_to_json(b)::text AS dump FROM audit_blocks b`
    const dump = rows.map((row) => row.dump).join('\n')
    expect(secrets.length).toBeGreaterThan(5)
    for (const secret of secrets) expect(dump).not.toContain(secret)
  })

  it("shows an organization admin its own organization's records only, filtered and exported", async () => {
    const window = `from=${new Date(Date.now() - DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}`
    const page = await svc.request('GET', `/v1/organization/${a.orgId}/audit-log?${window}&page=1&per_page=1000`, { auth: a.token })
    expectStatus(page, 200)
    expect(page.body.total_count).toBe(page.body.items.length)
    expect(page.body.items.every((item: { org_id: string }) => item.org_id === a.orgId)).toBe(true)
    const seqs = page.body.items.map((item: { seq: number }) => item.seq)
    expect(seqs).toEqual([...seqs].sort((x, y) => y - x))
    const ids = new Set(page.body.items.map((item: { request_id: string }) => item.request_id))
    for (const request of sent) expect(ids.has(request.requestId)).toBe(request.org === a.orgId)

    const filtered = await svc.request(
      'GET',
      `/v1/organization/${a.orgId}/audit-log?${window}&page=1&per_page=10&action=${encodeURIComponent('POST /v1/projects/{project_id}/biometrics/enroll')}`,
      { auth: a.token },
    )
    expect(filtered.body.items.map((item: { action: string }) => item.action)).toEqual(['POST /v1/projects/{project_id}/biometrics/enroll'])
    const byActor = await svc.request('GET', `/v1/organization/${a.orgId}/audit-log?${window}&page=1&per_page=100&actor_id=${a.orgKeyId}`, { auth: a.token })
    expect(byActor.body.items.length).toBeGreaterThan(0)
    expect(byActor.body.items.every((item: { actor_id: string }) => item.actor_id === a.orgKeyId)).toBe(true)

    const exported = await svc.request('GET', `/v1/organization/${a.orgId}/audit-log/export?${window}`, { auth: a.token })
    expectStatus(exported, 200)
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson')
    const lines = exported.text
      .trim()
      .split('\n')
      .map((line: string) => JSON.parse(line))
    // Oldest first, and every listed record is there (records appended since the list may follow).
    const exportedSeqs = lines.map((line: { seq: number }) => line.seq)
    expect(exportedSeqs).toEqual([...exportedSeqs].sort((x, y) => x - y))
    expect(exportedSeqs.slice(0, seqs.length)).toEqual([...seqs].reverse())

    // B's admin cannot read A's trail, and A's key cannot read it at all (tokens only).
    expect((await svc.request('GET', `/v1/organization/${a.orgId}/audit-log?${window}&page=1&per_page=10`, { auth: b.token })).status).toBe(404)
    expect((await svc.request('GET', `/v1/organization/${a.orgId}/audit-log?${window}&page=1&per_page=10`, { auth: a.orgKey })).status).toBe(403)
  })

  it('`palmvein audit verify` passes, then names a record edited or deleted in the database', async () => {
    await svc.service.app.audit.flush()
    const env = { PALMVEIN_DATA_DIR: svc.storage.dataDir, DATABASE_URL: svc.storage.databaseUrl ?? undefined }
    const sql = svc.storage.db.sql
    const clean = await runCli(['audit', 'verify'], env)
    expect(clean.code, clean.stderr).toBe(0)
    expect(clean.stdout).toMatch(new RegExp(`^ok organization ${a.orgId}: \\d+ record`, 'm'))
    expect(clean.stdout).toMatch(/^ok platform \(no organization\): \d+ record/m)

    const [victim] = await sql<{ seq: number; status: number }[]>`SELECT seq, status FROM audit_log WHERE org_id = ${a.orgId} ORDER BY seq LIMIT 1 OFFSET 2`
    const withStatus = (status: number) => (records: StoredRecord[]) => records.map((record) => (record.seq === victim.seq ? { ...record, status } : record))
    await editBlock(a.orgId, victim.seq, withStatus(200 + victim.status))
    const edited = await runCli(['audit', 'verify', '--org', a.orgId], env)
    expect(edited.code).toBe(1)
    expect(edited.stdout).toContain(`BROKEN organization ${a.orgId}: record ${victim.seq}: its content does not match its hash`)
    await editBlock(a.orgId, victim.seq, withStatus(victim.status))
    expect((await runCli(['audit', 'verify', '--org', a.orgId], env)).code).toBe(0)

    await editBlock(a.orgId, victim.seq, (records) => records.filter((record) => record.seq !== victim.seq))
    const deleted = await runCli(['audit', 'verify', '--org', a.orgId], env)
    expect(deleted.code).toBe(1)
    expect(deleted.stdout).toMatch(new RegExp(`BROKEN organization ${a.orgId}: record \\d+: its prev_hash is not the hash of the record before it`))
    // Other organizations' chains are untouched.
    expect((await runCli(['audit', 'verify', '--org', b.orgId], env)).code).toBe(0)

    // A block that is no longer a list of records is named, not a crash.
    const [last] = await sql<{ first_seq: number; records: string }[]>`
      SELECT first_seq, records FROM audit_blocks WHERE chain = 'platform' ORDER BY first_seq DESC LIMIT 1`
    await sql`UPDATE audit_blocks SET records = ${last.records.slice(0, 20)} WHERE chain = 'platform' AND first_seq = ${last.first_seq}`
    const unreadable = await runCli(['audit', 'verify'], env)
    expect(unreadable.code).toBe(1)
    expect(unreadable.stdout).toContain(`BROKEN platform (no organization): record ${last.first_seq}: its block cannot be read`)
    await sql`UPDATE audit_blocks SET records = ${last.records} WHERE chain = 'platform' AND first_seq = ${last.first_seq}`
  }, 60_000)

  it('`palmvein audit purge` removes records past the retention and the chains still verify from their anchors', async () => {
    await svc.service.app.audit.flush()
    const env = { PALMVEIN_DATA_DIR: svc.storage.dataDir, DATABASE_URL: svc.storage.databaseUrl ?? undefined }
    const sql = svc.storage.db.sql
    // B's two oldest records are backdated past a 30-day retention, the chain rehashed as the service
    // would have written it then.
    const rows = await sql<{ seq: number }[]>`SELECT seq FROM audit_log WHERE chain = ${b.orgId} ORDER BY seq`
    expect(rows.length).toBeGreaterThan(2)
    const old = rows.slice(0, 2).map((row) => row.seq)
    await rechain(b.orgId, (seq) => (old.includes(seq) ? new Date(Date.now() - 40 * DAY) : null))
    expect((await runCli(['audit', 'verify', '--org', b.orgId], env)).code).toBe(0)

    const purged = await runCli(['audit', 'purge', '--days', '30'], env)
    expect(purged.code, purged.stderr).toBe(0)
    expect(purged.stdout).toContain('purged 2 audit record(s) older than 30 day(s)')
    expect((await sql`SELECT seq FROM audit_log WHERE chain = ${b.orgId} AND seq = ANY(${old}::int8[])`).length).toBe(0)
    const verified = await runCli(['audit', 'verify', '--org', b.orgId], env)
    expect(verified.code, verified.stdout).toBe(0)
    expect(verified.stdout).toContain(`ok organization ${b.orgId}: ${rows.length - 2} record(s)`)
    // New records keep chaining from where the chain is.
    await svc.request('GET', `/v1/projects/${b.projectId}`, { auth: b.orgKey })
    await svc.service.app.audit.flush()
    expect((await runCli(['audit', 'verify', '--org', b.orgId], env)).code).toBe(0)
  }, 60_000)

  /** A record as its block keeps it. */
  type StoredRecord = Record<string, unknown> & { seq: number }

  /** Rewrites the records of the block holding record `seq`, as someone with the database could. */
  async function editBlock(chain: string, seq: number, edit: (records: StoredRecord[]) => StoredRecord[]) {
    const sql = svc.storage.db.sql
    const [block] = await sql<{ first_seq: number; records: string }[]>`
      SELECT first_seq, records FROM audit_blocks WHERE chain = ${chain} AND ${seq} BETWEEN first_seq AND last_seq`
    await sql`UPDATE audit_blocks SET records = ${JSON.stringify(edit(JSON.parse(block.records)))} WHERE chain = ${chain} AND first_seq = ${block.first_seq}`
  }

  /** Rewrites a chain, one record a block, with some records' times changed, hashing as the service does. */
  async function rechain(orgId: string, timeOf: (seq: number) => Date | null) {
    const sql = svc.storage.db.sql
    const rows = await sql<AuditRow[]>`
      SELECT seq, org_id, created_at, request_id, project_id, actor_kind, actor_id, action, resource_ids, status, client_address, user_agent
      FROM audit_log WHERE chain = ${orgId} ORDER BY seq`
    await sql`DELETE FROM audit_blocks WHERE chain = ${orgId}`
    let tail: ChainTail = { nextSeq: rows[0].seq, prev: Buffer.alloc(32) }
    for (const row of rows) {
      const next = await appendBlock(sql, orgId, tail, [{ ...row, created_at: timeOf(row.seq) ?? row.created_at }], svc.service.app.audit.keys.current)
      if (!next) throw new Error(`record ${row.seq} was not appended`)
      tail = next
    }
  }
})
