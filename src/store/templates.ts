// Queries of palm templates: the encrypted captures and the per-hand reference rows of a member,
// and the environment-wide scan of reference rows that fills a gallery.
import type { Queryable, Sql } from './database.js'

export type Hand = 'left' | 'right'

export interface TemplateInsert {
  id: string
  member_id: string
  environment_id: string
  hand: Hand
  kind: 'enroll' | 'identify' | 'reference'
  ciphertext: Buffer
  silhouette: string | null
  palm_position: Record<string, number> | null
}

/** Replaces every template of the member's `hands` with `rows`; returns the captures now stored. */
export async function replaceHandTemplates(tx: Queryable, memberId: string, hands: Hand[], rows: TemplateInsert[]): Promise<number> {
  await tx`DELETE FROM palm_templates WHERE member_id = ${memberId} AND hand = ANY(${hands}::text[])`
  if (rows.length > 0) {
    await tx`INSERT INTO palm_templates ${tx(rows.map((row) => ({
      ...row, palm_position: row.palm_position === null ? null : tx.json(row.palm_position),
    })))}`
  }
  const [{ count }] = await tx<{ count: number }[]>`
    SELECT count(*)::int AS count FROM palm_templates WHERE member_id = ${memberId} AND kind <> 'reference'`
  return count
}

export interface ReferenceRow {
  id: string
  member_id: string
  hand: Hand
  ciphertext: Buffer
  wrapped_key: Buffer | null
}

/** The member's reference rows with its wrapped key (none when the member is gone). */
export function referenceRowsOfMember(sql: Queryable, memberId: string) {
  return sql<ReferenceRow[]>`
    SELECT t.id, t.member_id, t.hand, t.ciphertext, m.wrapped_key
    FROM palm_templates t JOIN members m ON m.id = t.member_id
    WHERE t.member_id = ${memberId} AND t.kind = 'reference'`
}

export async function countEnvironmentReferences(sql: Sql, environmentId: string): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`
    SELECT count(*)::int AS count FROM palm_templates WHERE environment_id = ${environmentId} AND kind = 'reference'`
  return count
}

/** Reference rows per environment (environments without any are absent). */
export async function referenceCountsByEnvironment(sql: Sql): Promise<Map<string, number>> {
  const rows = await sql<{ environment_id: string; count: number }[]>`
    SELECT environment_id, count(*)::int AS count FROM palm_templates WHERE kind = 'reference' GROUP BY environment_id`
  return new Map(rows.map((row) => [row.environment_id, row.count]))
}

/** A shard of an environment's members (cluster mode): `shard` of `shards`. */
export interface ShardFilter { shard: number; shards: number }

/**
 * Where a page of `rows` reference rows after `afterId` ends (its last template id; null when fewer
 * are left): a walk over the index alone, so a load can ask for the next pages while it reads one.
 */
export async function referencePageEnd(sql: Sql, environmentId: string, afterId: string | null, rows: number, only?: ShardFilter): Promise<string | null> {
  // The order is the references index's, (environment_id, id), with the environment in a row
  // comparison rather than an equality (which would make it a constant the planner drops from the
  // order): otherwise PostgreSQL walked the primary key at 10M members, reading every capture
  // row's heap page to filter it out, where this reads the index alone.
  const where = new BootParameters(environmentId, afterId)
  const [end] = await sql.unsafe<Array<{ id: string }>>(`
    SELECT t.id FROM palm_templates t
    WHERE ${where.range()} AND t.kind = 'reference'
      ${where.shard(only)}
    ORDER BY t.environment_id, t.id OFFSET ${Math.trunc(rows) - 1} LIMIT 1`, where.values, { prepare: false })
  return end?.id ?? null
}

/**
 * A boot's statements go unprepared, so PostgreSQL plans each with its values: a prepared
 * statement's generic plan (used from the sixth call) cannot see that an id range holds one page,
 * and at 10M members it read every page with two parallel workers, through the primary key.
 */
class BootParameters {
  readonly values: Array<string | number>
  constructor(environmentId: string, afterId: string | null) {
    this.values = [environmentId, afterId ?? '00000000-0000-0000-0000-000000000000']
  }

  private next(value: string | number): string {
    this.values.push(value)
    return `$${this.values.length}`
  }

  /** The environment's rows after `afterId`, as a range of the references index's key. */
  range(): string {
    return '(t.environment_id, t.id) > ($1::uuid, $2::uuid) AND t.environment_id <= $1::uuid'
  }

  through(id: string | null): string {
    return id ? `AND (t.environment_id, t.id) <= ($1::uuid, ${this.next(id)}::uuid)` : ''
  }

  shard(only: ShardFilter | undefined): string {
    return only ? `AND palmvein_shard_of(t.member_id, ${this.next(only.shards)}::int) = ${this.next(only.shard)}::int` : ''
  }
}

/**
 * A page of an environment's reference rows (or one shard's): those after `afterId` through
 * `throughId` (to the end when null), packed into one result row where each column holds every
 * row's value end to end, in the same order. A boot reads millions of rows, and a row object each
 * (its bytea hex-decoded apart) cost the main thread more than decrypting them.
 */
export interface PackedReferencePage {
  rows: number
  /** 36 characters per row. */
  member_ids: string
  /** 'l' or 'r' per row. */
  hands: string
  /** The members' wrapped keys end to end (a member without one has a length of 0). */
  keys: Buffer
  key_lengths: number[]
  ciphertexts: Buffer
  cipher_lengths: number[]
}

export async function environmentReferencePage(sql: Sql, environmentId: string, afterId: string | null, throughId: string | null, rows: number, only?: ShardFilter): Promise<PackedReferencePage> {
  // Every aggregate reads the page's rows in the one order the aggregation sees them. The page is
  // the walk's range of the references index, with a literal LIMIT and each member's key read by
  // a subquery rather than a join: at 10M members the range's estimate (one histogram bucket,
  // ~200k rows) made PostgreSQL hash-join every page against all of members on parallel workers.
  // The bytes come as base64 text, not bytea: the client reads results as text, and bytea's hex
  // text (twice the size, decoded apart) was a seventh of a 10M-member boot's main thread.
  const where = new BootParameters(environmentId, afterId)
  const [page] = await sql.unsafe<Array<Omit<PackedReferencePage, 'keys' | 'ciphertexts'> & { keys: string; ciphertexts: string }>>(`
    SELECT count(*)::int AS rows,
      coalesce(string_agg(p.member_id::text, ''), '') AS member_ids,
      coalesce(string_agg(left(p.hand, 1), ''), '') AS hands,
      encode(coalesce(string_agg(p.wrapped_key, ''::bytea), ''::bytea), 'base64') AS keys,
      coalesce(array_agg(coalesce(octet_length(p.wrapped_key), 0)), '{}') AS key_lengths,
      encode(coalesce(string_agg(p.ciphertext, ''::bytea), ''::bytea), 'base64') AS ciphertexts,
      coalesce(array_agg(octet_length(p.ciphertext)), '{}') AS cipher_lengths
    FROM (
      SELECT t.member_id, t.hand, t.ciphertext, (SELECT m.wrapped_key FROM members m WHERE m.id = t.member_id) AS wrapped_key
      FROM palm_templates t
      WHERE ${where.range()} AND t.kind = 'reference'
        ${where.through(throughId)}
        ${where.shard(only)}
      ORDER BY t.environment_id, t.id LIMIT ${Math.trunc(rows)}
    ) p`, where.values, { prepare: false })
  // PostgreSQL breaks base64 lines every 76 characters; Buffer's decoder skips the line ends.
  return { ...page, keys: Buffer.from(page.keys, 'base64'), ciphertexts: Buffer.from(page.ciphertexts, 'base64') }
}

export interface CaptureRow {
  member_id: string
  hand: Hand
  kind: 'enroll' | 'identify'
  ciphertext: Buffer
  silhouette: string | null
  palm_position: Record<string, number> | null
}

/** The stored enroll and identify captures of these members (export). */
export function captureRowsOfMembers(sql: Queryable, memberIds: readonly string[]) {
  return sql<CaptureRow[]>`
    SELECT member_id, hand, kind, ciphertext, silhouette, palm_position FROM palm_templates
    WHERE member_id = ANY(${memberIds as string[]}::uuid[]) AND kind IN ('enroll', 'identify')`
}

/** A page of the environment's reference rows without their ciphertext, in id order (dedup). */
export function environmentReferenceKeysPage(sql: Queryable, environmentId: string, afterId: string | null, limit: number) {
  return sql<Array<{ id: string; member_id: string; hand: Hand }>>`
    SELECT id, member_id, hand FROM palm_templates
    WHERE environment_id = ${environmentId} AND kind = 'reference'
      AND id > ${afterId ?? '00000000-0000-0000-0000-000000000000'}
    ORDER BY id LIMIT ${limit}`
}
