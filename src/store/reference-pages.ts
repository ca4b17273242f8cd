// A boot's read of an environment's reference rows (or one shard's), page by page in the order of
// the references index: where each page ends (a walk over the index alone, so the next pages are
// asked for while one is read), and the page's rows, read by binary COPY and packed for decryption.
import { parseCopyFields, copyOut } from './engine/copy-binary.js'
import type { Sql } from './engine/database.js'

/** A shard of an environment's members (cluster mode): `shard` of `shards`. */
export interface ShardFilter {
  shard: number
  shards: number
}

/** A page's rows, each column's values end to end in the same order. */
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A uuid or an integer as an SQL literal; anything else is refused. */
function literal(value: string | number): string {
  if (typeof value === 'number' ? !Number.isInteger(value) : !UUID.test(value)) throw new TypeError(`not a uuid or an integer: ${value}`)
  return typeof value === 'number' ? String(value) : `'${value}'`
}

/**
 * A boot's statements carry their values as literals (uuids and integers, checked), so PostgreSQL
 * plans each with its values: a prepared statement's generic plan (used from the sixth call) cannot
 * see that an id range holds one page, and at 10M members it read every page with two parallel
 * workers, through the primary key. A COPY takes no parameters anyway.
 */
class BootQuery {
  private readonly environment: string
  private readonly after: string

  constructor(environmentId: string, afterId: string | null) {
    this.environment = literal(environmentId)
    this.after = literal(afterId ?? '00000000-0000-0000-0000-000000000000')
  }

  /** The environment's rows after `afterId`, as a range of the references index's key. */
  range(): string {
    return `(t.environment_id, t.id) > (${this.environment}::uuid, ${this.after}::uuid) AND t.environment_id <= ${this.environment}::uuid`
  }

  through(id: string | null): string {
    return id ? `AND (t.environment_id, t.id) <= (${this.environment}::uuid, ${literal(id)}::uuid)` : ''
  }

  shard(only: ShardFilter | undefined): string {
    return only ? `AND palmvein_shard_of(t.member_id, ${literal(only.shards)}::int) = ${literal(only.shard)}::int` : ''
  }

  /**
   * The page's rows in index order, each with its member's wrapped key. The page is the walk's
   * range of the references index, with a literal LIMIT and each member's key read by a subquery
   * rather than a join: at 10M members the range's estimate (one histogram bucket, ~200k rows) made
   * PostgreSQL hash-join every page against all of members on parallel workers.
   */
  page(throughId: string | null, rows: number, only: ShardFilter | undefined): string {
    return `
      SELECT t.member_id::text AS member_id, t.hand, t.ciphertext, (SELECT m.wrapped_key FROM members m WHERE m.id = t.member_id) AS wrapped_key
      FROM palm_templates t
      WHERE ${this.range()} AND t.kind = 'reference' ${this.through(throughId)} ${this.shard(only)}
      ORDER BY t.environment_id, t.id LIMIT ${literal(rows)}`
  }
}

/**
 * Where a page of `rows` reference rows after `afterId` ends (its last template id; null when fewer
 * are left). The order is the references index's, (environment_id, id), with the environment in a
 * row comparison rather than an equality (which would make it a constant the planner drops from
 * the order): otherwise PostgreSQL walked the primary key at 10M members, reading every capture
 * row's heap page to filter it out, where this reads the index alone.
 */
export async function referencePageEnd(sql: Sql, environmentId: string, afterId: string | null, rows: number, only?: ShardFilter): Promise<string | null> {
  const where = new BootQuery(environmentId, afterId)
  const [end] = await sql.unsafe<Array<{ id: string }>>(`
    SELECT t.id FROM palm_templates t
    WHERE ${where.range()} AND t.kind = 'reference'
      ${where.shard(only)}
    ORDER BY t.environment_id, t.id OFFSET ${literal(rows - 1)} LIMIT 1`)
  return end?.id ?? null
}

// Columns of the page's COPY: member_id (as text, 36 bytes), hand, ciphertext, wrapped_key.
const PAGE_COLUMNS = 4

/**
 * The page of reference rows after `afterId` through `throughId` (to the end when null), read as a
 * binary COPY: raw bytes, where a result row of base64 text cost PostgreSQL its encoding and the
 * main thread its decoding (at 1M members, a third of the database's CPU and 1 s of the boot).
 */
export async function environmentReferencePage(
  sql: Sql,
  environmentId: string,
  afterId: string | null,
  throughId: string | null,
  rows: number,
  only?: ShardFilter,
): Promise<PackedReferencePage> {
  const query = new BootQuery(environmentId, afterId).page(throughId, rows, only)
  const bytes = await copyOut(sql, query)
  const fields = parseCopyFields(bytes, PAGE_COLUMNS)
  const { starts, lengths } = fields
  const count = fields.rows
  const ids = Buffer.allocUnsafe(36 * count)
  const hands = Buffer.allocUnsafe(count)
  const key_lengths = new Array<number>(count)
  const cipher_lengths = new Array<number>(count)
  let keyBytes = 0
  let cipherBytes = 0
  for (let row = 0, field = 0; row < count; row++, field += PAGE_COLUMNS) {
    bytes.copy(ids, 36 * row, starts[field], starts[field] + 36)
    hands[row] = bytes[starts[field + 1]]
    cipher_lengths[row] = lengths[field + 2]
    key_lengths[row] = Math.max(0, lengths[field + 3])
    cipherBytes += cipher_lengths[row]
    keyBytes += key_lengths[row]
  }
  const keys = Buffer.allocUnsafe(keyBytes)
  const ciphertexts = Buffer.allocUnsafe(cipherBytes)
  for (let row = 0, field = 0, keyAt = 0, cipherAt = 0; row < count; row++, field += PAGE_COLUMNS) {
    cipherAt += bytes.copy(ciphertexts, cipherAt, starts[field + 2], starts[field + 2] + cipher_lengths[row])
    keyAt += bytes.copy(keys, keyAt, starts[field + 3], starts[field + 3] + key_lengths[row])
  }
  return { rows: count, member_ids: ids.toString('latin1'), hands: hands.toString('latin1'), keys, key_lengths, ciphertexts, cipher_lengths }
}
