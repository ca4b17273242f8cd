// Queries of the audit trail (migration 0013): appending hash-chained records under each chain's
// lock, reading an organization's records, walking a chain to verify it, and the retention purge.
import type { Queryable, Sql } from './database.js'

export interface AuditInsert {
  org_id: string | null
  created_at: Date
  request_id: string
  project_id: string | null
  actor_kind: 'token' | 'api_key' | 'device' | 'anonymous'
  actor_id: string | null
  action: string
  resource_ids: Record<string, string>
  status: number
  client_address: string | null
  user_agent: string | null
}

export interface AuditRow extends AuditInsert {
  seq: number
  prev_hash: Buffer
  hash: Buffer
}

/** The chain's name: the organization id, or 'platform' for records of no organization. */
export const chainOf = (orgId: string | null): string => orgId ?? 'platform'
const ZERO_HASH = Buffer.alloc(32)
const AUDIT_LOCK_CLASS = 7_310_044

type Link = (prev: Buffer, record: AuditInsert) => Buffer

/** Where a chain ends: the hash its next record links to, and its last record's hash (null when it has none). */
export interface ChainTail { prev: Buffer; last: Buffer | null }

/** The records of each chain, in order. */
export function byChain(records: AuditInsert[]): Map<string, AuditInsert[]> {
  const chains = new Map<string, AuditInsert[]>()
  for (const record of records) {
    const chain = chainOf(record.org_id)
    const list = chains.get(chain)
    if (list) list.push(record)
    else chains.set(chain, [record])
  }
  return chains
}

const orgOfChain = (chain: string): string | null => (chain === 'platform' ? null : chain)

function linked(records: AuditInsert[], from: Buffer, link: Link) {
  let prev = from
  const rows = records.map((record) => {
    const hash = link(prev, record)
    const row = { ...record, prev_hash: prev, hash }
    prev = hash
    return row
  })
  return { rows, last: prev }
}

/**
 * Appends each chain's records in order: under the chain's advisory lock, from the chain's last
 * hash (or its purge anchor, or zeros), each record's hash computed by `link` from its predecessor.
 * Returns where each chain now ends.
 */
export async function appendAuditRecords(sql: Sql, records: AuditInsert[], link: Link): Promise<Map<string, ChainTail>> {
  const chains = byChain(records)
  const tails = new Map<string, ChainTail>()
  await sql.begin(async (tx) => {
    // In one order, so two processes flushing the same chains cannot deadlock.
    for (const chain of [...chains.keys()].sort()) {
      await tx`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_CLASS}, hashtext(${chain}))`
      const { rows, last } = linked(chains.get(chain)!, (await chainTail(tx, orgOfChain(chain))).prev, link)
      await tx`INSERT INTO audit_log ${tx(rows.map((row) => ({ ...row, resource_ids: tx.json(row.resource_ids) })) as never)}`
      tails.set(chain, { prev: last, last })
    }
  })
  return tails
}

/**
 * The embedded database's append: one statement per chain and no transaction, so the one PGlite
 * session is held for the insert alone, not for the round trips of a locked transaction (every
 * other query of the service waits meanwhile). The rows go in only if the chain still ends at
 * `tail`, checked in the same statement, which PGlite runs alone: atomic there, and never used on
 * PostgreSQL, where two processes' statements can interleave. Returns the new tail, or null when
 * the chain had moved on (another service on the same files, a purge): nothing was inserted.
 */
export async function appendToTail(sql: Sql, chain: string, tail: ChainTail, records: AuditInsert[], link: Link): Promise<ChainTail | null> {
  const { rows, last } = linked(records, tail.prev, link)
  const column = <K extends keyof (typeof rows)[number]>(name: K) => rows.map((row) => row[name])
  const inserted = await sql`
    INSERT INTO audit_log (org_id, created_at, request_id, project_id, actor_kind, actor_id, action, resource_ids, status, client_address, user_agent, prev_hash, hash)
    SELECT o, c, rq, p, ak, ai, a, ri::jsonb, st, ca, ua, decode(ph, 'hex'), decode(h, 'hex') FROM unnest(
      ${column('org_id') as string[]}::uuid[], ${rows.map((row) => row.created_at.toISOString())}::timestamptz[], ${column('request_id')}::text[],
      ${column('project_id') as string[]}::uuid[], ${column('actor_kind')}::text[], ${column('actor_id') as string[]}::text[], ${column('action')}::text[],
      ${rows.map((row) => JSON.stringify(row.resource_ids))}::text[], ${column('status')}::int[], ${column('client_address') as string[]}::text[],
      ${column('user_agent') as string[]}::text[], ${rows.map((row) => row.prev_hash.toString('hex'))}::text[], ${rows.map((row) => row.hash.toString('hex'))}::text[]
    ) AS u(o, c, rq, p, ak, ai, a, ri, st, ca, ua, ph, h)
    WHERE (SELECT hash FROM audit_log WHERE org_id IS NOT DISTINCT FROM ${orgOfChain(chain)}::uuid ORDER BY seq DESC LIMIT 1)
      IS NOT DISTINCT FROM ${tail.last}::bytea`
  return inserted.count === rows.length ? { prev: last, last } : null
}

/** Where the chain ends now (read, not locked). */
export async function chainTail(sql: Queryable, orgId: string | null): Promise<ChainTail> {
  const [last] = await sql<{ hash: Buffer }[]>`
    SELECT hash FROM audit_log WHERE org_id IS NOT DISTINCT FROM ${orgId}::uuid ORDER BY seq DESC LIMIT 1`
  if (last) return { prev: last.hash, last: last.hash }
  return { prev: (await anchorOf(sql, chainOf(orgId)))?.hash ?? ZERO_HASH, last: null }
}

export async function anchorOf(sql: Queryable, chain: string): Promise<{ hash: Buffer; last_seq: number } | null> {
  const [anchor] = await sql<{ hash: Buffer; last_seq: number }[]>`SELECT hash, last_seq FROM audit_anchors WHERE chain = ${chain}`
  return anchor ?? null
}

export interface AuditFilter {
  orgId: string
  from: Date
  to: Date
  projectId?: string
  actorId?: string
  action?: string
}

function where(sql: Sql, filter: AuditFilter) {
  return sql`org_id = ${filter.orgId} AND created_at >= ${filter.from} AND created_at <= ${filter.to}
    ${filter.projectId ? sql`AND project_id = ${filter.projectId}` : sql``}
    ${filter.actorId ? sql`AND actor_id = ${filter.actorId}` : sql``}
    ${filter.action ? sql`AND action = ${filter.action}` : sql``}`
}

/** One page of an organization's records, newest first, and how many match. */
export async function auditPage(sql: Sql, filter: AuditFilter, page: number, perPage: number): Promise<{ items: AuditRow[]; total: number }> {
  const [{ total }] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM audit_log WHERE ${where(sql, filter)}`
  const items = await sql<AuditRow[]>`
    SELECT * FROM audit_log WHERE ${where(sql, filter)} ORDER BY seq DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`
  return { items, total }
}

/** Records of the window in pages of `limit`, oldest first, after `afterSeq`. */
export function auditRowsAfter(sql: Sql, filter: AuditFilter, afterSeq: number, limit: number) {
  return sql<AuditRow[]>`SELECT * FROM audit_log WHERE ${where(sql, filter)} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`
}

/** The chains present (with their anchors' too). */
export async function auditChains(sql: Sql): Promise<string[]> {
  const rows = await sql<{ chain: string }[]>`
    SELECT DISTINCT coalesce(org_id::text, 'platform') AS chain FROM audit_log
    UNION SELECT chain FROM audit_anchors`
  return rows.map((row) => row.chain).sort()
}

/** One page of a chain in order, after `afterSeq`. */
export function chainPage(sql: Sql, chain: string, afterSeq: number, limit: number) {
  const orgId = chain === 'platform' ? null : chain
  return sql<AuditRow[]>`
    SELECT * FROM audit_log WHERE org_id IS NOT DISTINCT FROM ${orgId}::uuid AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`
}

/**
 * Deletes every chain's records older than `cutoff`, each chain under its lock, and anchors the
 * chain at the last deleted record's hash so it still verifies. Returns how many were deleted.
 */
export async function purgeAuditBefore(sql: Sql, cutoff: Date): Promise<number> {
  let deleted = 0
  for (const chain of await auditChains(sql)) {
    const orgId = chain === 'platform' ? null : chain
    deleted += await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_CLASS}, hashtext(${chain}))`
      const [last] = await tx<{ seq: number; hash: Buffer }[]>`
        SELECT seq, hash FROM audit_log WHERE org_id IS NOT DISTINCT FROM ${orgId}::uuid AND created_at < ${cutoff} ORDER BY seq DESC LIMIT 1`
      if (!last) return 0
      const removed = await tx`DELETE FROM audit_log WHERE org_id IS NOT DISTINCT FROM ${orgId}::uuid AND seq <= ${last.seq}`
      await tx`INSERT INTO audit_anchors (chain, hash, last_seq, purged_at) VALUES (${chain}, ${last.hash}, ${last.seq}, now())
        ON CONFLICT (chain) DO UPDATE SET hash = excluded.hash, last_seq = excluded.last_seq, purged_at = excluded.purged_at`
      return removed.count
    })
  }
  return deleted
}
