// The master key and, while a rotation runs, its partner. A blob wrapped by the master key is a
// key set: one AES-256-GCM wrapping per master key, each under the key's id, so processes started
// with the old key and with the new one both open it during a rolling restart. A blob from before
// key sets (a bare wrapping) is opened with whichever known key fits.
import { createHmac } from 'node:crypto'
import type { Queryable } from '../store/engine/database.js'
import { rotationRecord } from '../store/master-keys.js'

const MAGIC = Buffer.from('PVK1')
const ID_BYTES = 8

/** A master key's public id: 16 hex digits of an HMAC of the key (reveals nothing of it). */
export function masterKeyId(key: Uint8Array): string {
  return createHmac('sha256', key).update('palmvein master key id').digest().subarray(0, ID_BYTES).toString('hex')
}

/** The wrappings of a key set by key id; null for a bare wrapping (from before key sets). */
export function parseKeySet(blob: Uint8Array): Map<string, Buffer> | null {
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)
  if (bytes.length < MAGIC.length + 1 || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return null
  const entries = new Map<string, Buffer>()
  let at = MAGIC.length + 1
  for (let index = 0; index < bytes[MAGIC.length]; index++) {
    const id = bytes.subarray(at, at + ID_BYTES).toString('hex')
    const length = bytes.readUInt16BE(at + ID_BYTES)
    entries.set(id, bytes.subarray(at + ID_BYTES + 2, at + ID_BYTES + 2 + length))
    at += ID_BYTES + 2 + length
  }
  if (at !== bytes.length) throw new Error('damaged key set')
  return entries
}

export function encodeKeySet(entries: Map<string, Uint8Array>): Buffer {
  const parts: Buffer[] = [MAGIC, Buffer.from([entries.size])]
  for (const [id, sealed] of entries) {
    const head = Buffer.alloc(ID_BYTES + 2)
    Buffer.from(id, 'hex').copy(head)
    head.writeUInt16BE(sealed.length, ID_BYTES)
    parts.push(head, Buffer.from(sealed))
  }
  return Buffer.concat(parts)
}

type Seal = (key: Uint8Array, plaintext: Uint8Array, context: string) => Buffer
type Open = (key: Uint8Array, sealed: Uint8Array, context: string) => Buffer

export interface MasterKeys {
  /** The id of this process's master key. */
  readonly id: string
  /** Reads the rotation record: during a rotation that names this key, its partner is known too. */
  refresh(sql: Queryable): Promise<void>
  /** A key set with one wrapping per known master key. */
  wrap(plaintext: Uint8Array, context: string): Buffer
  /** Opens a key set (or a bare wrapping) with a known master key; throws when none fits. */
  open(blob: Uint8Array, context: string): Buffer
}

export function createMasterKeys(own: Buffer, crypto: { seal: Seal; open: Open }): MasterKeys {
  const id = masterKeyId(own)
  let known = new Map<string, Buffer>([[id, own]])
  return {
    id,
    async refresh(sql) {
      const rotation = await rotationRecord(sql)
      const next = new Map<string, Buffer>([[id, own]])
      if (rotation?.old_key_id === id) next.set(rotation.new_key_id, crypto.open(own, rotation.new_key_under_old, `master-key:${rotation.new_key_id}`))
      if (rotation?.new_key_id === id) next.set(rotation.old_key_id, crypto.open(own, rotation.old_key_under_new, `master-key:${rotation.old_key_id}`))
      known = next
    },
    wrap(plaintext, context) {
      return encodeKeySet(new Map([...known].map(([keyId, key]) => [keyId, crypto.seal(key, plaintext, context)])))
    },
    open(blob, context) {
      const entries = parseKeySet(blob)
      if (!entries) {
        for (const key of known.values()) {
          try {
            return crypto.open(key, blob, context)
          } catch {
            /* another known key may fit */
          }
        }
        throw new Error('no known master key opens this blob')
      }
      for (const [keyId, sealed] of entries) {
        const key = known.get(keyId)
        if (key) return crypto.open(key, sealed, context)
      }
      throw new Error(`this blob is wrapped by master key(s) ${[...entries.keys()].join(', ')}, not by this process's (${id})`)
    },
  }
}
