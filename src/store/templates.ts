// Queries of palm templates: the encrypted captures and the per-hand reference rows of a member,
// and the environment-wide scan of reference rows that fills a gallery.
import type { Queryable, Sql } from './engine/database.js'

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
    await tx`INSERT INTO palm_templates ${tx(
      rows.map((row) => ({
        ...row,
        palm_position: row.palm_position === null ? null : tx.json(row.palm_position),
      })),
    )}`
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
/** The reference rows of several members (a catch-up's batch of changes). */
export function referenceRowsOfMembers(sql: Queryable, memberIds: readonly string[]) {
  return sql<ReferenceRow[]>`
    SELECT t.id, t.member_id, t.hand, t.ciphertext, m.wrapped_key
    FROM palm_templates t JOIN members m ON m.id = t.member_id
    WHERE t.member_id = ANY(${memberIds as string[]}::uuid[]) AND t.kind = 'reference'`
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
