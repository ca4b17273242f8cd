// Queries of the member aggregate. Every query is scoped by project: a member of another project
// is invisible, exactly like a missing one.
import type postgres from 'postgres'
import { copyTuples, encodeCopyTuples, pickTuples, type CopyColumn, type CopyTuples } from './engine/copy-binary.js'
import type { Database, Queryable, Sql } from './engine/database.js'
import type { TemplateInsert } from './templates.js'

/** A client or an open transaction. */

export interface MemberRow {
  id: string
  project_id: string
  environment_id: string
  display_name: string
  metadata: postgres.JSONValue | null
  palm_templates_enrolled: number
  created_at: Date
  updated_at: Date
  last_enrolled_at: Date | null
  last_used_at: Date | null
}

/** The member with its wrapped data key (never leaves the domain layer). */
export interface MemberKeyRow extends MemberRow {
  wrapped_key: Buffer | null
}

const memberColumns = (sql: Queryable) => sql`
  id, project_id, environment_id, display_name, metadata, palm_templates_enrolled,
  created_at, updated_at, last_enrolled_at, last_used_at`

export function membersOfProject(sql: Sql, projectId: string, page?: { offset: number; limit: number }) {
  return page
    ? sql<
        MemberRow[]
      >`SELECT ${memberColumns(sql)} FROM members WHERE project_id = ${projectId} ORDER BY created_at, id OFFSET ${page.offset} LIMIT ${page.limit}`
    : sql<MemberRow[]>`SELECT ${memberColumns(sql)} FROM members WHERE project_id = ${projectId} ORDER BY created_at, id`
}

/** The largest code point: a prefix's byte range ends below prefix + this character. */
const LAST_CHARACTER = String.fromCodePoint(0x10ffff)

/**
 * One page of a project's members whose display name starts with `prefix` (case-insensitive), in
 * name order, or the member whose id is `memberId` among them: members_project_name serves the
 * name range and its order.
 */
export function searchMembers(sql: Sql, projectId: string, search: { prefix: string; memberId: string | null }, page: { offset: number; limit: number }) {
  const low = search.prefix.toLowerCase()
  return sql<MemberRow[]>`
    SELECT ${memberColumns(sql)} FROM members
    WHERE project_id = ${projectId} AND (
      (lower(display_name) COLLATE "C" >= ${low} AND lower(display_name) COLLATE "C" < ${low + LAST_CHARACTER})
      ${search.memberId ? sql`OR id = ${search.memberId}` : sql``})
    ORDER BY lower(display_name) COLLATE "C", id
    OFFSET ${page.offset} LIMIT ${page.limit}`
}

export async function memberById(sql: Queryable, projectId: string, memberId: string): Promise<MemberRow | null> {
  const [row] = await sql<MemberRow[]>`SELECT ${memberColumns(sql)} FROM members WHERE id = ${memberId} AND project_id = ${projectId}`
  return row ?? null
}

export async function memberWithKey(sql: Queryable, projectId: string, memberId: string, options: { lock?: boolean } = {}): Promise<MemberKeyRow | null> {
  const [row] = options.lock
    ? await sql<MemberKeyRow[]>`SELECT ${memberColumns(sql)}, wrapped_key FROM members WHERE id = ${memberId} AND project_id = ${projectId} FOR UPDATE`
    : await sql<MemberKeyRow[]>`SELECT ${memberColumns(sql)}, wrapped_key FROM members WHERE id = ${memberId} AND project_id = ${projectId}`
  return row ?? null
}

/**
 * Inserts a member unless the project's headcount is reached. The project row is locked for the
 * count, so concurrent creations cannot overshoot. Returns null when the headcount is reached.
 */
export async function insertMemberWithinHeadcount(
  sql: Sql,
  member: { id: string; project_id: string; environment_id: string; display_name: string; metadata: postgres.JSONValue | null; wrapped_key: Buffer },
): Promise<MemberRow | null> {
  return sql.begin(async (tx) => {
    const [project] = await tx<{ headcount: number }[]>`SELECT headcount FROM projects WHERE id = ${member.project_id} FOR UPDATE`
    const [{ count }] = await tx<{ count: number }[]>`SELECT count(*)::int AS count FROM members WHERE project_id = ${member.project_id}`
    if (count >= project.headcount) return null
    const [row] = await tx<MemberRow[]>`
      INSERT INTO members (id, project_id, environment_id, display_name, metadata, wrapped_key)
      VALUES (${member.id}, ${member.project_id}, ${member.environment_id}, ${member.display_name},
              ${member.metadata === null ? null : tx.json(member.metadata)}, ${member.wrapped_key})
      RETURNING ${memberColumns(tx)}`
    return row
  })
}

export async function updateMember(
  sql: Sql,
  projectId: string,
  memberId: string,
  changes: { display_name?: string; metadata?: postgres.JSONValue | null },
): Promise<MemberRow | null> {
  const setName = changes.display_name !== undefined
  const setMetadata = changes.metadata !== undefined
  const metadata = changes.metadata === undefined || changes.metadata === null ? null : sql.json(changes.metadata)
  const [row] = await sql<MemberRow[]>`
    UPDATE members SET
      display_name = CASE WHEN ${setName} THEN ${changes.display_name ?? ''} ELSE display_name END,
      metadata = CASE WHEN ${setMetadata} THEN ${metadata}::jsonb ELSE metadata END,
      updated_at = now()
    WHERE id = ${memberId} AND project_id = ${projectId}
    RETURNING ${memberColumns(sql)}`
  return row ?? null
}

/** Deletes the member and, by cascade, its templates; the wrapped data key goes with the row. */
export async function deleteMember(sql: Queryable, projectId: string, memberId: string): Promise<{ environment_id: string } | null> {
  const [row] = await sql<{ environment_id: string }[]>`
    DELETE FROM members WHERE id = ${memberId} AND project_id = ${projectId} RETURNING environment_id`
  return row ?? null
}

/** Which of `memberIds` still exist, with where they live. */
export function membersAmong(sql: Queryable, memberIds: readonly string[]) {
  return sql<{ id: string; project_id: string; environment_id: string }[]>`
    SELECT id, project_id, environment_id FROM members WHERE id = ANY(${memberIds as string[]}::uuid[])`
}

export async function touchMembersUsed(sql: Sql, memberIds: string[]): Promise<void> {
  if (memberIds.length === 0) return
  await sql`UPDATE members SET last_used_at = now() WHERE id = ANY(${memberIds}::uuid[])`
}

/** Sets the member's wrapped data key (its first enrollment), inside the enrollment's transaction. */
export async function setMemberKey(tx: Queryable, memberId: string, wrappedKey: Buffer): Promise<void> {
  await tx`UPDATE members SET wrapped_key = ${wrappedKey} WHERE id = ${memberId}`
}

export async function markMemberEnrolled(tx: Queryable, memberId: string, captures: number, at: Date): Promise<void> {
  await tx`UPDATE members SET palm_templates_enrolled = ${captures}, last_enrolled_at = ${at}, updated_at = ${at} WHERE id = ${memberId}`
}

export async function countMembersOfProject(sql: Sql, projectId: string): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM members WHERE project_id = ${projectId}`
  return count
}

// A multi-row INSERT carries at most 65 535 parameters; template rows have 8 columns.
const TEMPLATE_ROWS_PER_STATEMENT = 6_000

const MEMBER_COLUMNS: CopyColumn[] = [
  { name: 'id', type: 'uuid' },
  { name: 'project_id', type: 'uuid' },
  { name: 'environment_id', type: 'uuid' },
  { name: 'display_name', type: 'text' },
  { name: 'metadata', type: 'jsonb' },
  { name: 'wrapped_key', type: 'bytea' },
  { name: 'palm_templates_enrolled', type: 'int4' },
  { name: 'created_at', type: 'timestamptz' },
  { name: 'updated_at', type: 'timestamptz' },
  { name: 'last_enrolled_at', type: 'timestamptz' },
]
const TEMPLATE_COLUMNS: CopyColumn[] = [
  { name: 'id', type: 'uuid' },
  { name: 'member_id', type: 'uuid' },
  { name: 'environment_id', type: 'uuid' },
  { name: 'hand', type: 'text' },
  { name: 'kind', type: 'text' },
  { name: 'ciphertext', type: 'bytea' },
  { name: 'silhouette', type: 'text' },
  { name: 'palm_position', type: 'jsonb' },
]

/**
 * How a bulk write reaches the database: binary COPY on PostgreSQL (several times cheaper for both
 * sides), multi-row INSERTs on the embedded database (it takes no COPY from a client).
 */
export type BulkWrite = 'copy' | 'insert'

export const bulkWriteFor = (db: Pick<Database, 'kind'>): BulkWrite => (db.kind === 'postgres' ? 'copy' : 'insert')

/**
 * Members and their templates ready for a bulk write, member i with template group i: encoded as
 * COPY tuples for PostgreSQL (where an import's threads prepare them, the writing thread only
 * picks and sends bytes), as rows for the embedded database.
 */
export type BulkRows =
  | { write: 'copy'; members: CopyTuples; references: CopyTuples; captures: CopyTuples }
  | { write: 'insert'; members: Array<Record<string, unknown>>; templates: TemplateInsert[][] }

export function bulkRows(write: BulkWrite, members: Array<Record<string, unknown>>, templates: TemplateInsert[][]): BulkRows {
  if (write === 'insert') return { write, members, templates }
  const rows = templates as unknown as Array<Array<Record<string, unknown>>>
  return {
    write,
    members: encodeCopyTuples(
      MEMBER_COLUMNS,
      members.map((row) => [row]),
    ),
    references: encodeCopyTuples(
      TEMPLATE_COLUMNS,
      rows.map((group) => group.filter((row) => row.kind === 'reference')),
    ),
    captures: encodeCopyTuples(
      TEMPLATE_COLUMNS,
      rows.map((group) => group.filter((row) => row.kind !== 'reference')),
    ),
  }
}

/**
 * The picked members of `rows` (indexes into it), then their templates, inside the caller's
 * transaction. A batch's references are written before its captures, so they share heap pages:
 * a boot reads references only, and on a 10M-member table (32 GB) interleaved rows made it read
 * every page from disk.
 */
export async function insertMembersAndTemplates(tx: Sql, rows: BulkRows, picked: readonly number[]): Promise<void> {
  if (rows.write === 'copy') {
    await copyTuples(tx, 'members', MEMBER_COLUMNS, pickTuples(rows.members, picked))
    await copyTuples(tx, 'palm_templates', TEMPLATE_COLUMNS, [...pickTuples(rows.references, picked), ...pickTuples(rows.captures, picked)])
    return
  }
  const memberRows = picked.map((index) => rows.members[index])
  const templates = picked.flatMap((index) => rows.templates[index])
  const templateRows = [...templates.filter((row) => row.kind === 'reference'), ...templates.filter((row) => row.kind !== 'reference')]
  await tx`INSERT INTO members ${tx(memberRows.map((row) => ({ ...row, metadata: row.metadata === null ? null : tx.json(row.metadata as postgres.JSONValue) })) as never)}`
  for (let start = 0; start < templateRows.length; start += TEMPLATE_ROWS_PER_STATEMENT) {
    await tx`INSERT INTO palm_templates ${tx(templateRows.slice(start, start + TEMPLATE_ROWS_PER_STATEMENT) as never)}`
  }
}

/** Which of these member ids exist, and in which project. */
export function existingMembers(sql: Queryable, ids: readonly string[]) {
  return sql<{ id: string; project_id: string }[]>`SELECT id, project_id FROM members WHERE id = ANY(${ids as string[]}::uuid[])`
}

/** A page of the project's members with their wrapped keys, in id order after `afterId` (export). */
export function membersPageWithKeys(sql: Queryable, projectId: string, afterId: string | null, limit: number) {
  return sql<Array<Pick<MemberKeyRow, 'id' | 'display_name' | 'metadata' | 'wrapped_key'>>>`
    SELECT id, display_name, metadata, wrapped_key FROM members
    WHERE project_id = ${projectId} AND id > ${afterId ?? '00000000-0000-0000-0000-000000000000'}
    ORDER BY id LIMIT ${limit}`
}
