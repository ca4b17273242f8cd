// The audit key: what makes the trail something its own database cannot rewrite. Each master key
// derives one (HKDF-SHA256), and from it an HMAC-SHA256 key that links the chains' records and
// MACs the retention anchors, and an Ed25519 key that signs checkpoints. The database holds only
// its public half and its secret wrapped by the master key (audit_keys): master key rotation
// rewraps that secret like every other master-wrapped blob, so a process on the new master key
// still opens the old audit key and verifies the records written under it, and writes new records
// under the audit key of its own master key.
import { createHmac, createPrivateKey, createPublicKey, createSecretKey, hkdfSync, sign, verify, type KeyObject } from 'node:crypto'
import type { Keyring } from '../../keys/keyring.js'
import type { Queryable } from '../../store/engine/database.js'
import { auditKeyRows, insertAuditKey } from '../../store/audit-keys.js'
import { chainOf, type AuditInsert } from '../../store/audit-log.js'
import { compareCodeUnits } from '../../runtime/code-unit-order.js'

const SALT = 'palmvein audit trail'
/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

const derive = (secret: Uint8Array, info: string) => Buffer.from(hkdfSync('sha256', secret, SALT, info, 32))

/** A record's fields in their fixed order: what both the keyed MAC and the legacy hash cover. */
export function recordFields(record: AuditInsert): unknown[] {
  return [
    record.created_at.toISOString(),
    record.request_id,
    record.org_id,
    record.project_id,
    record.actor_kind,
    record.actor_id,
    record.action,
    Object.entries(record.resource_ids).sort(([a], [b]) => compareCodeUnits(a, b)),
    record.status,
    record.client_address,
    record.user_agent,
  ]
}

/** The record's content in a fixed order, with its chain and position: what its MAC covers. */
export function keyedContent(record: AuditInsert, seq: number): string {
  return JSON.stringify([chainOf(record.org_id), seq, ...recordFields(record)])
}

export interface AuditKey {
  /** Public: 16 hex digits of a MAC under the key (reveals nothing of it). */
  readonly id: string
  readonly publicKey: KeyObject
  /** The record's hash at position `seq` after `prev`: HMAC-SHA256(prev ‖ content). */
  link(prev: Buffer, record: AuditInsert, seq: number): Buffer
  /** HMAC-SHA256 of a statement (anchors). */
  mac(statement: string): Buffer
  sign(statement: string): Buffer
}

/** The audit key derived from a master key. */
export const auditSecretOf = (masterKey: Uint8Array): Buffer => derive(masterKey, 'palmvein audit key v1')

export function auditKeyOf(secret: Uint8Array): AuditKey {
  const macKey = createSecretKey(derive(secret, 'chain mac'))
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, derive(secret, 'checkpoint ed25519')]), format: 'der', type: 'pkcs8' })
  const mac = (parts: Array<Buffer | string>) => {
    const hmac = createHmac('sha256', macKey)
    for (const part of parts) hmac.update(part)
    return hmac.digest()
  }
  return {
    id: mac(['palmvein audit key id']).subarray(0, 8).toString('hex'),
    publicKey: createPublicKey(privateKey),
    link: (prev, record, seq) => mac([prev, keyedContent(record, seq)]),
    mac: (statement) => mac([statement]),
    sign: (statement) => sign(null, Buffer.from(statement), privateKey),
  }
}

export function signatureHolds(publicKey: KeyObject, statement: string, signature: Buffer): boolean {
  try {
    return verify(null, Buffer.from(statement), publicKey, signature)
  } catch {
    return false
  }
}

export interface AuditKeys {
  /** The audit key of this process's master key: it writes with it. */
  readonly current: AuditKey
  /** A key by id: the current one, or one of earlier master keys (opened from audit_keys). */
  get(id: string): AuditKey | undefined
}

const contextOf = (id: string) => `audit-key:${id}`

/**
 * This process's audit key and every earlier one the master key opens. `register` records the
 * current key (its secret wrapped by the master key) so processes on a later master key open it:
 * every writer registers; `palmvein audit verify` only reads.
 */
export async function loadAuditKeys(
  sql: Queryable,
  keyring: Pick<Keyring, 'seal' | 'unwrap'>,
  masterKey: Uint8Array,
  options: { register: boolean },
): Promise<AuditKeys> {
  const secret = auditSecretOf(masterKey)
  const current = auditKeyOf(secret)
  if (options.register) {
    await insertAuditKey(sql, {
      key_id: current.id,
      public_key: current.publicKey.export({ format: 'der', type: 'spki' }),
      secret_sealed: keyring.seal(secret, undefined, contextOf(current.id)),
    })
  }
  const keys = new Map([[current.id, current]])
  for (const row of await auditKeyRows(sql)) {
    if (keys.has(row.key_id)) continue
    try {
      const key = auditKeyOf(keyring.unwrap(row.secret_sealed, undefined, contextOf(row.key_id)))
      if (key.id === row.key_id) keys.set(key.id, key)
    } catch {
      /* wrapped by master keys this process does not know: its records fail as keyed by an unknown key */
    }
  }
  return { current, get: (id) => keys.get(id) }
}
