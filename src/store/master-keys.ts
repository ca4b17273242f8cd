// Queries of master key rotation: the rotation record, and every blob wrapped by the master key
// (environment keys; webhook secrets of projects without an environment, sealed under the master;
// audit keys).
import type { Queryable } from './engine/database.js'

export interface RotationRow {
  old_key_id: string
  new_key_id: string
  new_key_under_old: Buffer
  old_key_under_new: Buffer
}

export type MasterWrappedKind = 'environment' | 'webhook_secret' | 'audit_key'

export interface MasterWrappedBlob {
  kind: MasterWrappedKind
  id: string
  blob: Buffer
}

export async function rotationRecord(sql: Queryable, options: { lock?: boolean } = {}): Promise<RotationRow | null> {
  const [row] = options.lock
    ? await sql<RotationRow[]>`SELECT old_key_id, new_key_id, new_key_under_old, old_key_under_new FROM master_key_rotation FOR UPDATE`
    : await sql<RotationRow[]>`SELECT old_key_id, new_key_id, new_key_under_old, old_key_under_new FROM master_key_rotation`
  return row ?? null
}

export async function saveRotationRecord(sql: Queryable, row: RotationRow): Promise<void> {
  await sql`
    INSERT INTO master_key_rotation (old_key_id, new_key_id, new_key_under_old, old_key_under_new)
    VALUES (${row.old_key_id}, ${row.new_key_id}, ${row.new_key_under_old}, ${row.old_key_under_new})
    ON CONFLICT (singleton) DO UPDATE SET old_key_id = EXCLUDED.old_key_id, new_key_id = EXCLUDED.new_key_id,
      new_key_under_old = EXCLUDED.new_key_under_old, old_key_under_new = EXCLUDED.old_key_under_new`
}

export async function deleteRotationRecord(sql: Queryable): Promise<void> {
  await sql`DELETE FROM master_key_rotation`
}

/** Every master-wrapped blob, locked until the transaction ends (new ones wait for the rotation). */
export async function lockMasterWrapped(sql: Queryable): Promise<MasterWrappedBlob[]> {
  const environments = await sql<Array<{ id: string; blob: Buffer }>>`
    SELECT id, wrapped_key AS blob FROM environments ORDER BY id FOR UPDATE`
  const secrets = await sql<Array<{ id: string; blob: Buffer }>>`
    SELECT subscription.id, subscription.secret_sealed AS blob
    FROM webhook_subscriptions AS subscription JOIN projects AS project ON project.id = subscription.project_id
    WHERE project.environment_id IS NULL AND subscription.secret_sealed IS NOT NULL
    ORDER BY subscription.id FOR UPDATE OF subscription`
  const auditKeys = await sql<Array<{ id: string; blob: Buffer }>>`SELECT key_id AS id, secret_sealed AS blob FROM audit_keys ORDER BY key_id FOR UPDATE`
  return [
    ...environments.map((row) => ({ kind: 'environment' as const, ...row })),
    ...secrets.map((row) => ({ kind: 'webhook_secret' as const, ...row })),
    ...auditKeys.map((row) => ({ kind: 'audit_key' as const, ...row })),
  ]
}

export async function replaceMasterWrapped(sql: Queryable, blob: MasterWrappedBlob): Promise<void> {
  if (blob.kind === 'environment') await sql`UPDATE environments SET wrapped_key = ${blob.blob} WHERE id = ${blob.id}`
  else if (blob.kind === 'audit_key') await sql`UPDATE audit_keys SET secret_sealed = ${blob.blob} WHERE key_id = ${blob.id}`
  else await sql`UPDATE webhook_subscriptions SET secret_sealed = ${blob.blob} WHERE id = ${blob.id}`
}
