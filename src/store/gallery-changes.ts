// The galleries' change log (migration 0009): the per-environment lock that orders gallery
// writers across processes, the change numbers they record, and the reads that catch up on them.
import type { Queryable } from './engine/database.js'

/** Namespace of the two-key advisory locks taken per environment (the other key hashes its id). */
const GALLERY_LOCK_CLASS = 7_310_043

/** Until the transaction ends, no other process writes this environment's gallery rows. */
export async function lockEnvironmentGallery(tx: Queryable, environmentId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${GALLERY_LOCK_CLASS}, hashtext(${environmentId}))`
}

/** Records that the member's reference rows changed; returns the change number (call under the lock). */
export async function recordGalleryChange(tx: Queryable, environmentId: string, memberId: string): Promise<number> {
  const [{ seq }] = await tx<{ seq: number }[]>`
    INSERT INTO gallery_changes (environment_id, member_id, seq) VALUES (${environmentId}, ${memberId}, nextval('gallery_change_seq'))
    ON CONFLICT (environment_id, member_id) DO UPDATE SET seq = excluded.seq
    RETURNING seq`
  return seq
}

/** Records a change of each member (one statement); returns the highest change number (call under the lock). */
export async function recordGalleryChanges(tx: Queryable, environmentId: string, memberIds: readonly string[]): Promise<number> {
  const [{ seq }] = await tx<{ seq: number }[]>`
    WITH changed AS (
      INSERT INTO gallery_changes (environment_id, member_id, seq)
      SELECT ${environmentId}, member_id, nextval('gallery_change_seq') FROM unnest(${memberIds as string[]}::uuid[]) AS member_id
      ON CONFLICT (environment_id, member_id) DO UPDATE SET seq = excluded.seq
      RETURNING seq)
    SELECT coalesce(max(seq), 0)::int8 AS seq FROM changed`
  return seq
}

/** The number of the environment's latest change (0 when none). */
export async function latestGalleryChange(sql: Queryable, environmentId: string): Promise<number> {
  const [{ seq }] = await sql<{ seq: number }[]>`
    SELECT coalesce(max(seq), 0)::int8 AS seq FROM gallery_changes WHERE environment_id = ${environmentId}`
  return seq
}

/** The members changed after change `afterSeq`, oldest change first. */
export function galleryChangesSince(sql: Queryable, environmentId: string, afterSeq: number) {
  return sql<{ member_id: string; seq: number }[]>`
    SELECT member_id, seq FROM gallery_changes WHERE environment_id = ${environmentId} AND seq > ${afterSeq} ORDER BY seq`
}

/** The environment's latest `limit` changes up to change `throughSeq`, latest first. */
export function latestGalleryChanges(sql: Queryable, environmentId: string, throughSeq: number, limit: number) {
  return sql<{ member_id: string; seq: number }[]>`
    SELECT member_id, seq FROM gallery_changes WHERE environment_id = ${environmentId} AND seq <= ${throughSeq} ORDER BY seq DESC LIMIT ${limit}`
}

/** The latest change number of each of `memberIds` that has one. */
export async function galleryChangesOf(sql: Queryable, environmentId: string, memberIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await sql<{ member_id: string; seq: number }[]>`
    SELECT member_id, seq FROM gallery_changes WHERE environment_id = ${environmentId} AND member_id = ANY(${memberIds as string[]}::uuid[])`
  return new Map(rows.map((row) => [row.member_id, row.seq]))
}
