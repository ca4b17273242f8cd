// Queries of the audit trail (migrations 0013, 0017, 0035): appending a chain's records as one
// block, reading an organization's records (the audit_log view unpacks the blocks), walking a
// chain's blocks to verify it, the blocks around a listed window, and the retention purge.
import type { Queryable, Sql } from './engine/database.js'

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
  chain: string
  /** The audit key whose MAC `hash` is; null: written before the trail was keyed (SHA-256). */
  key_id: string | null
}

/** The chain's name: the organization id, or 'platform' for records of no organization. */
export const chainOf = (orgId: string | null): string => orgId ?? 'platform'
export const orgOfChain = (chain: string): string | null => (chain === 'platform' ? null : chain)
const ZERO_HASH = Buffer.alloc(32)
const AUDIT_LOCK_CLASS = 7_310_044

/** The hash of the record at position `seq` after `prev`. */
export type Link = (prev: Buffer, record: AuditInsert, seq: number) => Buffer
/** What links appended records: the audit key's id and its MAC. */
export interface Linker {
  id: string
  link: Link
}

/** Where a chain ends: the position of its next record and the hash that record links to. */
export interface ChainTail {
  nextSeq: number
  prev: Buffer
}

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
interface StoredRecord extends Omit<AuditInsert, 'org_id' | 'created_at'> {
  seq: number
  created_at: string
  prev_hash: string
  hash: string
}

/**
 * Appends a chain's records as one block (migration 0017) at `tail`, each linked by `key` to its
 * predecessor. The block goes in only where its position is free and its first record links to
 * what really precedes it (the last block, else the purge anchor, else zeros). Returns the new
 * tail, or null when the chain had moved on (another writer appended, a purge anchored past
 * there): nothing was written; read the tail again.
 */
export async function appendBlock(sql: Queryable, chain: string, tail: ChainTail, records: AuditInsert[], key: Linker): Promise<ChainTail | null> {
  let prev = tail.prev
  let first = records[0].created_at
  let last = first
  const stored = records.map((record, index): StoredRecord => {
    const hash = key.link(prev, record, tail.nextSeq + index)
    // A literal of one shape: spreading the record cost twice the rest of the append in V8.
    const line: StoredRecord = {
      seq: tail.nextSeq + index,
      created_at: record.created_at.toISOString(),
      request_id: record.request_id,
      project_id: record.project_id,
      actor_kind: record.actor_kind,
      actor_id: record.actor_id,
      action: record.action,
      resource_ids: record.resource_ids,
      status: record.status,
      client_address: record.client_address,
      user_agent: record.user_agent,
      prev_hash: prev.toString('hex'),
      hash: hash.toString('hex'),
    }
    if (record.created_at < first) first = record.created_at
    if (record.created_at > last) last = record.created_at
    prev = hash
    return line
  })
  const lastSeq = tail.nextSeq + records.length - 1
  const inserted = await sql`
    INSERT INTO audit_blocks (chain, org_id, first_seq, last_seq, first_at, last_at, last_hash, records, key_id)
    SELECT ${chain}, ${orgOfChain(chain)}::uuid, ${tail.nextSeq}::bigint, ${lastSeq}::bigint, ${first}::timestamptz, ${last}::timestamptz,
      ${prev}::bytea, ${JSON.stringify(stored)}::text, ${key.id}::text
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

/** Where a purged chain starts: the last purged record's position and hash, and the MAC over both. */
export interface Anchor {
  chain: string
  hash: Buffer
  last_seq: number
  key_id: string | null
  mac: Buffer | null
}

export async function anchorOf(sql: Queryable, chain: string): Promise<Anchor | null> {
  const [anchor] = await sql<Anchor[]>`SELECT chain, hash, last_seq, key_id, mac FROM audit_anchors WHERE chain = ${chain}`
  return anchor ?? null
}

/** Anchors written before the trail was keyed. */
export async function unkeyedAnchors(sql: Queryable): Promise<Anchor[]> {
  return sql<Anchor[]>`SELECT chain, hash, last_seq, key_id, mac FROM audit_anchors WHERE mac IS NULL`
}

export async function setAnchorMac(sql: Queryable, anchor: Anchor, keyId: string, mac: Buffer): Promise<void> {
  await sql`UPDATE audit_anchors SET key_id = ${keyId}, mac = ${mac} WHERE chain = ${anchor.chain} AND last_seq = ${anchor.last_seq}`
}

/** Whether any record carries a MAC or any checkpoint exists: the trail has been keyed. */
export async function trailIsKeyed(sql: Queryable): Promise<boolean> {
  const [row] = await sql<{ keyed: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM audit_blocks WHERE key_id IS NOT NULL) OR EXISTS (SELECT 1 FROM audit_checkpoints) AS keyed`
  return row.keyed
}

export interface AuditFilter {
  orgId: string
  from: Date
  to: Date
  projectId?: string
  actorId?: string
  action?: string
}

const ROW_COLUMNS =
  'seq, org_id, created_at, request_id, project_id, actor_kind, actor_id, action, resource_ids, status, client_address, user_agent, prev_hash, hash, chain, key_id'

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

/** The chains present (with their anchors' and checkpoints' too). */
export async function auditChains(sql: Queryable): Promise<string[]> {
  const rows = await sql<{ chain: string }[]>`
    SELECT DISTINCT chain FROM audit_blocks UNION SELECT chain FROM audit_anchors UNION SELECT chain FROM audit_checkpoints`
  return rows.map((row) => row.chain).sort()
}

/** A block row as stored: every column but its records is checked against them when verifying. */
export interface BlockRow {
  chain: string
  org_id: string | null
  first_seq: number
  last_seq: number
  first_at: Date
  last_at: Date
  last_hash: Buffer
  key_id: string | null
  records: string
}

/** A block with its records read, or why they cannot be read. */
export type ReadBlock = (BlockRow & { rows: AuditRow[] }) | (BlockRow & { unreadable: string })

const BLOCK_COLUMNS = 'chain, org_id, first_seq, last_seq, first_at, last_at, last_hash, key_id, records'

/** A block's records as rows; a block that is not a readable array of records is named unreadable. */
export function readBlock(block: BlockRow): ReadBlock {
  try {
    const stored = JSON.parse(block.records) as StoredRecord[]
    if (!Array.isArray(stored)) throw new Error('not an array of records')
    return {
      ...block,
      rows: stored.map((record) => ({
        ...record,
        org_id: block.org_id,
        chain: block.chain,
        key_id: block.key_id,
        created_at: new Date(record.created_at),
        prev_hash: Buffer.from(record.prev_hash, 'hex'),
        hash: Buffer.from(record.hash, 'hex'),
      })),
    }
  } catch (error) {
    return { ...block, unreadable: (error as Error).message }
  }
}

/** The chain's blocks in order after position `afterSeq`, `limit` at a time. */
export async function* chainBlocks(sql: Sql, chain: string, afterSeq: number, limit = 200): AsyncGenerator<ReadBlock> {
  for (let after = afterSeq; ; ) {
    const blocks = await sql<BlockRow[]>`
      SELECT ${sql.unsafe(BLOCK_COLUMNS)} FROM audit_blocks WHERE chain = ${chain} AND first_seq > ${after} ORDER BY first_seq LIMIT ${limit}`
    for (const block of blocks) {
      yield readBlock(block)
      after = block.first_seq
    }
    if (blocks.length < limit) return
  }
}

/**
 * The blocks a list of [from, to] does not read but must trust to be outside it: those just
 * before and after the window by time and by position, and those between the first and the last
 * block read that claim to lie outside. A block whose time bounds were edited to hide it is among
 * them (its true records are in the window, so its position is), and its bounds then disagree with
 * its records. Index walks only: (chain, last_at) and the primary key.
 */
export async function windowEdgeBlocks(sql: Sql, chain: string, from: Date, to: Date): Promise<BlockRow[]> {
  return sql<BlockRow[]>`
    WITH inside AS (
      SELECT min(first_seq) AS lo, max(first_seq) AS hi FROM audit_blocks WHERE chain = ${chain} AND last_at >= ${from} AND first_at <= ${to}
    ), before AS (
      SELECT first_seq FROM audit_blocks WHERE chain = ${chain} AND last_at < ${from} ORDER BY last_at DESC LIMIT 1
    ), after AS (
      SELECT first_seq FROM audit_blocks WHERE chain = ${chain} AND last_at > ${to} AND first_at > ${to} ORDER BY last_at LIMIT 1
    ), edges AS (
      SELECT first_seq FROM before UNION SELECT first_seq FROM after
      UNION SELECT (SELECT min(first_seq) FROM audit_blocks WHERE chain = ${chain} AND first_seq > before.first_seq) FROM before
      UNION SELECT (SELECT max(first_seq) FROM audit_blocks WHERE chain = ${chain} AND first_seq < after.first_seq) FROM after
      UNION SELECT (SELECT max(first_seq) FROM audit_blocks WHERE chain = ${chain} AND first_seq < inside.lo) FROM inside
      UNION SELECT (SELECT min(first_seq) FROM audit_blocks WHERE chain = ${chain} AND first_seq > inside.hi) FROM inside
      UNION SELECT b.first_seq FROM audit_blocks b, inside WHERE b.chain = ${chain} AND b.first_seq BETWEEN inside.lo AND inside.hi
        AND NOT (b.last_at >= ${from} AND b.first_at <= ${to})
    )
    SELECT ${sql.unsafe(BLOCK_COLUMNS)} FROM audit_blocks WHERE chain = ${chain} AND first_seq IN (SELECT first_seq FROM edges) ORDER BY first_seq`
}

/** What the purge needs from the audit key: a MAC for each anchor, and a check of a block before trusting its time bounds. */
export interface PurgeKeys {
  seal(anchor: Pick<Anchor, 'chain' | 'hash' | 'last_seq'>): { key_id: string; mac: Buffer }
  /** Why the block (its row and its records) cannot be trusted, or null. */
  check(block: BlockRow): { seq: number; reason: string } | null
}

/**
 * Deletes every chain's blocks whose newest record is older than `cutoff`, each chain under its
 * lock, and anchors the chain (with a MAC) at the last deleted record's hash so it still
 * verifies. The newest block to go is checked first: a block row whose time bounds were moved
 * into the past would otherwise have the purge delete it, and every block before it, and sign the
 * anchor. Such a chain is left whole and named in `refused`.
 */
export async function purgeAuditBefore(
  sql: Sql,
  cutoff: Date,
  keys: PurgeKeys,
): Promise<{ deleted: number; refused: Array<{ chain: string; seq: number; reason: string }> }> {
  let deleted = 0
  const refused: Array<{ chain: string; seq: number; reason: string }> = []
  for (const chain of await auditChains(sql)) {
    deleted += await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_CLASS}, hashtext(${chain}))`
      const [last] = await tx<BlockRow[]>`
        SELECT ${tx.unsafe(BLOCK_COLUMNS)} FROM audit_blocks WHERE chain = ${chain} AND last_at < ${cutoff} ORDER BY first_seq DESC LIMIT 1`
      if (!last) return 0
      const problem = keys.check(last)
      if (problem) {
        refused.push({ chain, ...problem })
        return 0
      }
      const removed = await tx<{ records: number }[]>`
        DELETE FROM audit_blocks WHERE chain = ${chain} AND first_seq <= ${last.first_seq}
        RETURNING json_array_length(records::json) AS records`
      const { key_id, mac } = keys.seal({ chain, hash: last.last_hash, last_seq: last.last_seq })
      await tx`INSERT INTO audit_anchors (chain, hash, last_seq, purged_at, key_id, mac) VALUES (${chain}, ${last.last_hash}, ${last.last_seq}, now(), ${key_id}, ${mac})
        ON CONFLICT (chain) DO UPDATE SET hash = excluded.hash, last_seq = excluded.last_seq, purged_at = excluded.purged_at, key_id = excluded.key_id, mac = excluded.mac`
      return removed.reduce((sum, block) => sum + block.records, 0)
    })
  }
  return { deleted, refused }
}
