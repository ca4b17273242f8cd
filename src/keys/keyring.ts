// The key hierarchy for data at rest: master key (configuration, or generated into the data
// directory) → one key per environment → one data key per member. Keys below the master are stored
// wrapped (AES-256-GCM). Destroying a member's wrapped key makes its ciphertexts unreadable.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { LRUCache } from 'lru-cache'
import { parseMasterKey, type Config } from '../config.js'
import type { Queryable } from '../store/engine/database.js'
import { createMasterKeys } from './master-keys.js'

const NONCE_BYTES = 12
const TAG_BYTES = 16
const MASTER_KEY_FILE = 'master.key'

// Nonces are drawn from a pool filled 4 KiB at a time: one randomBytes call per nonce cost 8 µs,
// seven per imported member. Only nonces (public, stored beside each ciphertext) share a pool;
// keys keep buffers of their own.
const NONCE_POOL_BYTES = 4096
let noncePool = Buffer.alloc(0)
let noncePoolAt = 0

function freshNonce(): Buffer {
  if (noncePoolAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES)
    noncePoolAt = 0
  }
  noncePoolAt += NONCE_BYTES
  return noncePool.subarray(noncePoolAt - NONCE_BYTES, noncePoolAt)
}

/** AES-256-GCM: nonce ‖ ciphertext ‖ tag. `context` is authenticated data binding the blob to its owner. */
export function seal(key: Uint8Array, plaintext: Uint8Array, context = ''): Buffer {
  const nonce = freshNonce()
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(Buffer.from(context))
  return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
}

export function open(key: Uint8Array, sealed: Uint8Array, context = ''): Buffer {
  const blob = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength)
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, NONCE_BYTES))
  decipher.setAAD(Buffer.from(context))
  decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES))
  const plain = decipher.update(blob.subarray(NONCE_BYTES, blob.length - TAG_BYTES))
  // GCM's final() verifies the tag and returns nothing more: no copy of a large plaintext to join it.
  const rest = decipher.final()
  return rest.length === 0 ? plain : Buffer.concat([plain, rest])
}

export interface Keyring {
  /** A fresh random key and its wrapped form under `wrappingKey` (the master key when omitted). */
  newKey(wrappingKey?: Uint8Array, context?: string): { key: Buffer; wrapped: Buffer }
  unwrap(wrapped: Uint8Array, wrappingKey?: Uint8Array, context?: string): Buffer
  /** Seals a small secret under `wrappingKey` (the master key when omitted); `unwrap` opens it. */
  seal(plaintext: Uint8Array, wrappingKey?: Uint8Array, context?: string): Buffer
  /** The environment's key, unwrapped from its stored form (cached: environments are few). */
  environmentKey(environmentId: string, wrapped: Uint8Array): Buffer
  /** The master key's id (master-keys.ts). */
  readonly masterKeyId: string
  /**
   * Learns whether a master key rotation is under way (then new blobs are wrapped under both keys).
   * Call at start and before wrapping anything under the master key.
   */
  refreshMasterKeys(sql: Queryable): Promise<void>
}

export async function loadMasterKey(config: Pick<Config, 'masterKey' | 'dataDir'>): Promise<{ key: Buffer; source: string }> {
  if (config.masterKey) return { key: config.masterKey, source: 'PALMVEIN_MASTER_KEY' }
  const file = path.join(config.dataDir, MASTER_KEY_FILE)
  await fs.mkdir(config.dataDir, { recursive: true, mode: 0o700 })
  try {
    await fs.writeFile(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return { key: parseMasterKey(await fs.readFile(file, 'utf8'), file), source: file }
}

export function createKeyring(masterKey: Buffer): Keyring {
  const environmentKeys = new LRUCache<string, Buffer>({ max: 1024 })
  // Under the master key a blob is a key set (one wrapping per master key during a rotation).
  const master = createMasterKeys(masterKey, { seal, open })
  const sealUnder = (wrappingKey: Uint8Array | undefined, plaintext: Uint8Array, context: string) =>
    wrappingKey ? seal(wrappingKey, plaintext, context) : master.wrap(plaintext, context)
  return {
    masterKeyId: master.id,
    refreshMasterKeys: (sql) => master.refresh(sql),
    newKey(wrappingKey, context = '') {
      const key = randomBytes(32)
      return { key, wrapped: sealUnder(wrappingKey, key, context) }
    },
    unwrap(wrapped, wrappingKey, context = '') {
      return wrappingKey ? open(wrappingKey, wrapped, context) : master.open(wrapped, context)
    },
    seal: (plaintext, wrappingKey, context = '') => sealUnder(wrappingKey, plaintext, context),
    environmentKey(environmentId, wrapped) {
      let key = environmentKeys.get(environmentId)
      if (!key) {
        key = master.open(wrapped, `environment:${environmentId}`)
        environmentKeys.set(environmentId, key)
      }
      return key
    },
  }
}
