// Signed checkpoints of the audit trail, after AWS CloudTrail's signed digest files: a statement
// that record `seq` of a chain has hash `hash`, signed (Ed25519) by the audit key. Since each
// record's hash covers the one before it, a checkpoint pins the whole chain up to there. The
// service signs one per chain it appended to every 15 minutes and at shutdown (never per request);
// `palmvein audit checkpoints --out <file>` exports a fresh one per chain for an operator to keep
// elsewhere, and `palmvein audit verify --checkpoints <file>` checks the database against it.
import type { AuditKey, AuditKeys } from './audit-keys.js'
import { signatureHolds } from './audit-keys.js'
import type { CheckpointRow } from '../../store/audit-keys.js'

export const CHECKPOINT_FILE_FORMAT = 'palmvein-audit-checkpoints/1'

/** The exact text a checkpoint's signature covers. */
export function checkpointStatement(checkpoint: Omit<CheckpointRow, 'signature'>): string {
  return JSON.stringify({
    type: 'palmvein-audit-checkpoint',
    chain: checkpoint.chain,
    seq: Number(checkpoint.seq),
    hash: checkpoint.hash.toString('hex'),
    signed_at: checkpoint.signed_at.toISOString(),
    key_id: checkpoint.key_id,
  })
}

export function signCheckpoint(key: AuditKey, chain: string, seq: number, hash: Buffer, signedAt = new Date()): CheckpointRow {
  const unsigned = { chain, seq, hash, signed_at: signedAt, key_id: key.id }
  return { ...unsigned, signature: key.sign(checkpointStatement(unsigned)) }
}

/** Why the checkpoint's signature does not hold, or null. */
export function checkpointSignatureProblem(keys: AuditKeys, checkpoint: CheckpointRow): string | null {
  const key = keys.get(checkpoint.key_id)
  if (!key) return `it is signed by audit key ${checkpoint.key_id}, which this master key does not open`
  return signatureHolds(key.publicKey, checkpointStatement(checkpoint), checkpoint.signature)
    ? null
    : 'its signature does not hold (the checkpoint was edited or forged)'
}

interface FileEntry {
  statement: string
  signature: string
}

/** The export: each checkpoint as the statement its signature covers, and the public keys that check them. */
export function checkpointFile(keys: AuditKeys, checkpoints: CheckpointRow[], exportedAt = new Date()): string {
  const publicKeys: Record<string, string> = {}
  for (const checkpoint of checkpoints) {
    publicKeys[checkpoint.key_id] ??= keys.get(checkpoint.key_id)!.publicKey.export({ format: 'pem', type: 'spki' }).toString()
  }
  const entries: FileEntry[] = checkpoints.map((checkpoint) => ({
    statement: checkpointStatement(checkpoint),
    signature: checkpoint.signature.toString('base64'),
  }))
  return (
    JSON.stringify({ format: CHECKPOINT_FILE_FORMAT, exported_at: exportedAt.toISOString(), public_keys: publicKeys, checkpoints: entries }, null, 2) + '\n'
  )
}

/** The checkpoints of an exported file; throws an Error naming what is wrong with it. */
export function parseCheckpointFile(text: string): CheckpointRow[] {
  let document: { format?: unknown; checkpoints?: unknown }
  try {
    document = JSON.parse(text)
  } catch {
    throw new Error('it is not JSON')
  }
  if (document?.format !== CHECKPOINT_FILE_FORMAT || !Array.isArray(document.checkpoints)) throw new Error(`it is not a ${CHECKPOINT_FILE_FORMAT} file`)
  return document.checkpoints.map((entry: FileEntry, index: number) => {
    try {
      const statement = JSON.parse(entry.statement)
      const row: CheckpointRow = {
        chain: String(statement.chain),
        seq: Number(statement.seq),
        hash: Buffer.from(String(statement.hash), 'hex'),
        signed_at: new Date(statement.signed_at),
        key_id: String(statement.key_id),
        signature: Buffer.from(String(entry.signature), 'base64'),
      }
      // Re-encoded, the statement must be the very text that was signed.
      if (checkpointStatement(row) !== entry.statement) throw new Error('not in the canonical form')
      return row
    } catch (error) {
      throw new Error(`checkpoint ${index + 1} cannot be read (${(error as Error).message})`)
    }
  })
}
