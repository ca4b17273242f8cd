// Master key rotation without re-encrypting a template (envelope encryption): only the blobs the
// master key wraps directly change (audit keys among them: the trail written under the old master
// key still verifies under the new one). rotate-master adds a wrapping under the new key to each (one
// transaction) and records the rotation; retire-master, run with the new key once every process
// uses it, drops the old wrappings and the record, after which the old key opens nothing.
import type { Sql } from '../store/engine/database.js'
import {
  deleteRotationRecord,
  lockMasterWrapped,
  replaceMasterWrapped,
  rotationRecord,
  saveRotationRecord,
  type MasterWrappedBlob,
} from '../store/master-keys.js'
import { open, seal } from './keyring.js'
import { encodeKeySet, masterKeyId, parseKeySet } from './master-keys.js'

/** The rotation cannot be done as asked; nothing changed. */
export class RotationRefused extends Error {}

export interface RotationCounts {
  environments: number
  webhook_secrets: number
}

const CONTEXT_PREFIX = { environment: 'environment', webhook_secret: 'webhook-secret', audit_key: 'audit-key' } as const
const NOUN = { environment: 'environment', webhook_secret: 'webhook subscription', audit_key: 'audit key' } as const
const contextOf = (blob: MasterWrappedBlob) => `${CONTEXT_PREFIX[blob.kind]}:${blob.id}`
const describe = (blob: MasterWrappedBlob) => `${NOUN[blob.kind]} ${blob.id}`

function count(blobs: MasterWrappedBlob[]): RotationCounts {
  return {
    environments: blobs.filter((blob) => blob.kind === 'environment').length,
    webhook_secrets: blobs.filter((blob) => blob.kind === 'webhook_secret').length,
  }
}

/** The blob's wrappings by key id; a bare wrapping (from before key sets) counts as `bareKeyId`'s. */
function wrappingsOf(blob: MasterWrappedBlob, bareKeyId: string): Map<string, Buffer> {
  return parseKeySet(blob.blob) ?? new Map([[bareKeyId, blob.blob]])
}

/** Opens the blob with `key` (its wrapping under it), or refuses naming the blob. */
function openWith(blob: MasterWrappedBlob, wrappings: Map<string, Buffer>, key: Buffer, keyId: string): Buffer {
  const sealed = wrappings.get(keyId)
  try {
    if (!sealed) throw new Error('no wrapping under this key')
    return open(key, sealed, contextOf(blob))
  } catch {
    throw new RotationRefused(`PALMVEIN_MASTER_KEY (key ${keyId}) does not open ${describe(blob)}: is it the key this database was encrypted with?`)
  }
}

/** Adds a wrapping under `next` to every master-wrapped blob and records the rotation. Idempotent. */
export async function rotateMasterKey(sql: Sql, current: Buffer, next: Buffer): Promise<RotationCounts & { old_key_id: string; new_key_id: string }> {
  const currentId = masterKeyId(current)
  const nextId = masterKeyId(next)
  if (currentId === nextId) throw new RotationRefused('PALMVEIN_NEW_MASTER_KEY is the current master key')
  return sql.begin(async (tx) => {
    const rotation = await rotationRecord(tx, { lock: true })
    if (rotation && (rotation.old_key_id !== currentId || rotation.new_key_id !== nextId)) {
      throw new RotationRefused(
        `a rotation from key ${rotation.old_key_id} to key ${rotation.new_key_id} is under way: finish it first (palmvein keys retire-master with PALMVEIN_MASTER_KEY set to the new key)`,
      )
    }
    const blobs = await lockMasterWrapped(tx)
    for (const blob of blobs) {
      const wrappings = wrappingsOf(blob, currentId)
      const plaintext = openWith(blob, wrappings, current, currentId)
      const rewrapped = encodeKeySet(
        new Map([
          [currentId, wrappings.get(currentId)!],
          [nextId, seal(next, plaintext, contextOf(blob))],
        ]),
      )
      await replaceMasterWrapped(tx, { ...blob, blob: rewrapped })
    }
    await saveRotationRecord(tx, {
      old_key_id: currentId,
      new_key_id: nextId,
      new_key_under_old: seal(current, next, `master-key:${nextId}`),
      old_key_under_new: seal(next, current, `master-key:${currentId}`),
    })
    return { ...count(blobs), old_key_id: currentId, new_key_id: nextId }
  })
}

/** Ends the rotation: run with the new key; drops every wrapping under the old one. */
export async function retireMasterKey(sql: Sql, current: Buffer): Promise<RotationCounts & { retired_key_id: string }> {
  const currentId = masterKeyId(current)
  return sql.begin(async (tx) => {
    const rotation = await rotationRecord(tx, { lock: true })
    if (!rotation) throw new RotationRefused('no master key rotation is under way (palmvein keys rotate-master starts one)')
    if (rotation.new_key_id !== currentId) {
      throw new RotationRefused(
        `run it with the new master key: PALMVEIN_MASTER_KEY is key ${currentId}, the rotation goes from key ${rotation.old_key_id} to key ${rotation.new_key_id}`,
      )
    }
    const blobs = await lockMasterWrapped(tx)
    for (const blob of blobs) {
      const wrappings = wrappingsOf(blob, rotation.old_key_id)
      if (!wrappings.has(currentId)) {
        throw new RotationRefused(
          `${describe(blob)} has no wrapping under the new key yet: run palmvein keys rotate-master again (PALMVEIN_MASTER_KEY the old key, PALMVEIN_NEW_MASTER_KEY the new), then retire`,
        )
      }
      openWith(blob, wrappings, current, currentId)
      await replaceMasterWrapped(tx, { ...blob, blob: encodeKeySet(new Map([[currentId, wrappings.get(currentId)!]])) })
    }
    await deleteRotationRecord(tx)
    return { ...count(blobs), retired_key_id: rotation.old_key_id }
  })
}
