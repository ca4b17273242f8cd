// Queries of the audit keys and signed checkpoints (migration 0035).
import type { Queryable } from './engine/database.js'

export interface AuditKeyRow {
  key_id: string
  /** Ed25519, SubjectPublicKeyInfo DER. */
  public_key: Buffer
  /** The key's secret as a master key set (master-keys.ts). */
  secret_sealed: Buffer
}

/** Registers a key; a key registered before keeps its row. */
export async function insertAuditKey(sql: Queryable, row: AuditKeyRow): Promise<void> {
  await sql`INSERT INTO audit_keys (key_id, public_key, secret_sealed) VALUES (${row.key_id}, ${row.public_key}, ${row.secret_sealed})
    ON CONFLICT (key_id) DO NOTHING`
}

export async function auditKeyRows(sql: Queryable): Promise<AuditKeyRow[]> {
  return sql<AuditKeyRow[]>`SELECT key_id, public_key, secret_sealed FROM audit_keys ORDER BY created_at`
}

/** A signed statement that record `seq` of `chain` has hash `hash`. */
export interface CheckpointRow {
  chain: string
  seq: number
  hash: Buffer
  signed_at: Date
  key_id: string
  signature: Buffer
}

export async function insertCheckpoint(sql: Queryable, row: CheckpointRow): Promise<void> {
  await sql`INSERT INTO audit_checkpoints (chain, seq, hash, signed_at, key_id, signature)
    VALUES (${row.chain}, ${row.seq}, ${row.hash}, ${row.signed_at}, ${row.key_id}, ${row.signature}) ON CONFLICT (chain, seq) DO NOTHING`
}

export async function checkpointsOf(sql: Queryable, chain: string): Promise<CheckpointRow[]> {
  return sql<CheckpointRow[]>`SELECT chain, seq, hash, signed_at, key_id, signature FROM audit_checkpoints WHERE chain = ${chain} ORDER BY seq`
}
