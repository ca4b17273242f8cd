// Queries of the audit trail (migrations 0013, 0017): appending a chain's records as one block,
// reading an organization's records (the audit_log view unpacks the blocks), walking a chain's
// blocks to verify it, and the retention purge.
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
const orgOfChain = (chain: string): string | null => (chain === 'platform' ? null : chain)
const ZERO_HASH = Buffer.alloc(32)
const AUDIT_LOCK_CLASS = 7_310_044

type Link = (prev: Buffer, record: AuditInsert) => Buffer

/** Where a chain ends: the position of its next record and the hash that record links to. */
export interface ChainTail { nextSeq: number; prev: Buffer }

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

/** A record as a block keeps it (the organization is the block's). */
interface StoredRecord extends Omit<AuditInsert, 'org_id' | 'created_at'> { seq: number; created_at: string; prev_hash: string; hash: string }

/**
 * Appends a chain's records as one block (migration 0017) at `tail`, each linked by `link` to its
 * predecessor. The block goes in only where its position is free and its first record links to
 * what really precedes it (the last block, else the purge anchor, else zeros). Returns the new
 * tail, or null when the chain had moved on (another writer appended, a purge anchored past
 * there): nothing was written; read the tail again.
 */
export async function appendBlock(sql: Queryable, chain: string, tail: ChainTail, records: AuditInsert[], link: Link): Promise<ChainTail | null> {
  let prev = tail.prev
  let first = records[0].created_at
  let last = first
  const stored = records.map((record, index): StoredRecord => {
    const hash = link(prev, record)
    // A literal of one shape: spreading the record cost twice the rest of the append in V8.
    const line: StoredRecord = {
      seq: tail.nextSeq + index, created_at: record.created_at.toISOString(), request_id: record.request_id, project_id: record.project_id,
      actor_kind: record.actor_kind, actor_id: record.actor_id, action: record.action, resource_ids: record.resource_ids, status: record.status,
      client_address: record.client_address, user_agent: record.user_agent, prev_hash: prev.toString('hex'), hash: hash.toString('hex'),
    }
    if (record.created_at < first) first = record.created_at
    if (record.created_at > last) last = record.created_at
    prev = hash
    return line
  })
  const lastSeq = tail.nextSeq + records.length - 1
  const inserted = await sql`
    INSERT INTO audit_blocks (chain, org_id, first_seq, last_seq, first_at, last_at, last_hash, records)
    SELECT ${chain}, ${orgOfChain(chain)}::uuid, ${tail.nextSeq}::bigint, ${lastSeq}::bigint, ${first}::timestamptz, ${last}::timestamptz,
      ${prev}::bytea, ${JSON.stringify(stored)}::text
    WHERE NOT EXISTS (SELECT 1 FROM audit_anchors WHERE chain = ${chain} AND last_seq >= ${tail.nextSeq}::bigint)
      AND coalesce(
        (SELECT last_hash FROM audit_blocks WHERE chain = ${chain} AND first_seq < ${tail.nextSeq}::bigint ORDER BY first_seq DESC LIMIT 1),
        (SELECT hash FROM audit_anchors WHERE chain = ${chain}), ${ZERO_HASH}::bytea) = ${tail.prev}::bytea
    ON CONFLICT (chain, first_seq) DO NOTHING`
  return inserted.count === 1 ? { nextSeq: lastSeq + 1, prev } : null
}

/** Where the chain ends now: after its last block, else at its purge anchor, else at the start. */
export async function chainTail(sql: Queryable, chain: string): Promise<ChainTail> {
  const [last] = await sql<{ last_seq: number; last_hash: Buffer }[]>`
    SELECT last_seq, last_hash FROM audit_blocks WHERE chain = ${chain} ORDER BY first_seq DESC LIMIT 1`
  if (last) return { nextSeq: last.last_seq + 1, prev: last.last_hash }
  const anchor = await anchorOf(sql, chain)
  return anchor ? { nextSeq: anchor.last_seq + 1, prev: anchor.hash } : { nextSeq: 1, prev: ZERO_HASH }
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

const ROW_COLUMNS = 'seq, org_id, created_at, request_id, project_id, actor_kind, actor_id, action, resource_ids, status, client_address, user_agent, prev_hash, hash'

/** The filter over the audit_log view; the block bounds let the scan skip blocks outside the window. */
function where(sql: Sql, filter: AuditFilter) {
  return sql`chain = ${filter.orgId} AND block_last_at >= ${filter.from} AND block_first_at <= ${filter.to}
    AND created_at >= ${filter.from} AND created_at <= ${filter.to}
    ${filter.projectId ? sql`AND project_id = ${filter.projectId}` : sql``}
    ${filter.actorId ? sql`AND actor_id = ${filter.actorId}` : sql``}
    ${filter.action ? sql`AND action = ${filter.action}` : sql``}`
}

/** One page of an organization's records, newest first, and how many match. */
export async function auditPage(sql: Sql, filter: AuditFilter, page: number, perPage: number): Promise<{ items: AuditRow[]; total: number }> {
  const [{ total }] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM audit_log WHERE ${where(sql, filter)}`
  const items = await sql<AuditRow[]>`
    SELECT ${sql.unsafe(ROW_COLUMNS)} FROM audit_log WHERE ${where(sql, filter)} ORDER BY seq DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`
  return { items, total }
}

/** Records of the window in pages of `limit`, oldest first, after `afterSeq`. */
export function auditRowsAfter(sql: Sql, filter: AuditFilter, afterSeq: number, limit: number) {
  return sql<AuditRow[]>`SELECT ${sql.unsafe(ROW_COLUMNS)} FROM audit_log WHERE ${where(sql, filter)} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`
}

/** The chains present (with their anchors' too). */
export async function auditChains(sql: Sql): Promise<string[]> {
  const rows = await sql<{ chain: string }[]>`SELECT DISTINCT chain FROM audit_blocks UNION SELECT chain FROM audit_anchors`
  return rows.map((row) => row.chain).sort()
}

/** A block's records as rows; a block that is not a readable array of records throws. */
function rowsOfBlock(block: { org_id: string | null; records: string }): AuditRow[] {
  const stored = JSON.parse(block.records) as StoredRecord[]
  if (!Array.isArray(stored)) throw new Error('not an array of records')
  return stored.map((record) => ({
    ...record, org_id: block.org_id, created_at: new Date(record.created_at),
    prev_hash: Buffer.from(record.prev_hash, 'hex'), hash: Buffer.from(record.hash, 'hex'),
  }))
}

/** The chain's blocks in order after position `afterSeq`, `limit` at a time, each as its records or why they cannot be read. */
export async function* chainBlocks(sql: Sql, chain: string, afterSeq: number, limit = 200): AsyncGenerator<{ firstSeq: number; rows: AuditRow[] } | { firstSeq: number; unreadable: string }> {
  for (let after = afterSeq; ;) {
    const blocks = await sql<{ first_seq: number; last_seq: number; org_id: string | null; records: string }[]>`
      SELECT first_seq, last_seq, org_id, records FROM audit_blocks WHERE chain = ${chain} AND first_seq > ${after} ORDER BY first_seq LIMIT ${limit}`
    for (const block of blocks) {
      try {
        yield { firstSeq: block.first_seq, rows: rowsOfBlock(block) }
      } catch (error) {
        yield { firstSeq: block.first_seq, unreadable: (error as Error).message }
      }
      after = block.first_seq
    }
    if (blocks.length < limit) return
  }
}

/**
 * Deletes every chain's blocks whose newest record is older than `cutoff`, each chain under its
 * lock, and anchors the chain at the last deleted record's hash so it still verifies. Returns how
 * many records were deleted.
 */
export async function purgeAuditBefore(sql: Sql, cutoff: Date): Promise<number> {
  let deleted = 0
  for (const chain of await auditChains(sql)) {
    deleted += await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_CLASS}, hashtext(${chain}))`
      const [last] = await tx<{ first_seq: number; last_seq: number; last_hash: Buffer }[]>`
        SELECT first_seq, last_seq, last_hash FROM audit_blocks WHERE chain = ${chain} AND last_at < ${cutoff} ORDER BY first_seq DESC LIMIT 1`
      if (!last) return 0
      const removed = await tx<{ records: number }[]>`
        DELETE FROM audit_blocks WHERE chain = ${chain} AND first_seq <= ${last.first_seq}
        RETURNING json_array_length(records::json) AS records`
      await tx`INSERT INTO audit_anchors (chain, hash, last_seq, purged_at) VALUES (${chain}, ${last.last_hash}, ${last.last_seq}, now())
        ON CONFLICT (chain) DO UPDATE SET hash = excluded.hash, last_seq = excluded.last_seq, purged_at = excluded.purged_at`
      return removed.reduce((sum, block) => sum + block.records, 0)
    })
  }
  return deleted
}
