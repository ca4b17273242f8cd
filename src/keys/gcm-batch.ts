// AES-256-GCM over many small blobs at once, in keyring.ts's format (nonce ‖ ciphertext ‖ tag):
// a boot opens two blobs per gallery row and an import seals seven per member, and node:crypto
// spends ~4 µs setting up each one. The native addon does a batch in one call
// (packages/matcher/napi/src/sealing.rs); without it the same calls loop over keyring.ts.
import { randomFillSync } from 'node:crypto'
import { loadNativeAddon, type NativeAddon } from '@palmvein/matcher/backend'
import { open, seal } from './keyring.js'

const KEY_BYTES = 32
const NONCE_BYTES = 12
/** Nonce and tag: what sealing adds to each item. */
export const GCM_OVERHEAD = 28

/** The keys and associated data of a batch's items. */
export interface GcmItems {
  /** 32-byte keys end to end. */
  keys: Uint8Array
  /** Which key each item uses (items sharing a key in a row expand it once). */
  keyOfItem: Uint32Array
  /** Each item's associated data, e.g. `template:<member>:<hand>:<kind>`. */
  aad: readonly string[]
}

export interface OpenedItems {
  /** The plaintexts end to end; item i ends at `plainEnds[i]`. */
  plain: Uint8Array
  plainEnds: Uint32Array
  /** 1 where the item opened; 0 where it is too short or its key, data or tag did not match (its bytes are zero). */
  opened: Uint8Array
  failures: number
}

export interface BatchCipher {
  readonly implementation: 'native' | 'node:crypto'
  open(items: GcmItems, sealed: Uint8Array, sealedEnds: Uint32Array): OpenedItems
  /** Sealed blobs end to end; item i ends at `plainEnds[i] + 28 (i + 1)`. */
  seal(items: GcmItems, plain: Uint8Array, plainEnds: Uint32Array): Uint8Array
}

const startOf = (ends: Uint32Array, index: number) => (index === 0 ? 0 : ends[index - 1])

/** Ends of consecutive items once each is sealed (28 bytes longer). */
export function sealedEndsOf(plainEnds: Uint32Array): Uint32Array {
  return plainEnds.map((end, index) => end + GCM_OVERHEAD * (index + 1))
}

/** Ends of the plaintexts of sealed items: 28 bytes shorter each (none for an item shorter than that). */
export function plainEndsOf(sealedEnds: Uint32Array): Uint32Array {
  const plainEnds = new Uint32Array(sealedEnds.length)
  let end = 0
  sealedEnds.forEach((sealedEnd, index) => {
    plainEnds[index] = end += Math.max(0, sealedEnd - startOf(sealedEnds, index) - GCM_OVERHEAD)
  })
  return plainEnds
}

/** The strings UTF-8 encoded end to end, with their ends. */
export function packStrings(strings: readonly string[]): { bytes: Buffer; ends: Uint32Array } {
  const bytes = Buffer.from(strings.join(''), 'utf8')
  const ends = new Uint32Array(strings.length)
  // Contexts are ASCII (ids, hands, kinds): then a character is a byte.
  const ascii = bytes.length === strings.reduce((sum, text) => sum + text.length, 0)
  let end = 0
  strings.forEach((text, index) => {
    ends[index] = end += ascii ? text.length : Buffer.byteLength(text)
  })
  return { bytes, ends }
}

function createNodeBatchCipher(): BatchCipher {
  const keyOf = (items: GcmItems, index: number) => items.keys.subarray(items.keyOfItem[index] * KEY_BYTES, (items.keyOfItem[index] + 1) * KEY_BYTES)
  return {
    implementation: 'node:crypto',
    open(items, sealed, sealedEnds) {
      const plainEnds = plainEndsOf(sealedEnds)
      const plain = new Uint8Array(plainEnds.at(-1) ?? 0)
      const opened = new Uint8Array(sealedEnds.length)
      let failures = 0
      for (let index = 0; index < sealedEnds.length; index++) {
        try {
          plain.set(open(keyOf(items, index), sealed.subarray(startOf(sealedEnds, index), sealedEnds[index]), items.aad[index]), startOf(plainEnds, index))
          opened[index] = 1
        } catch {
          failures += 1
        }
      }
      return { plain, plainEnds, opened, failures }
    },
    seal(items, plain, plainEnds) {
      const out = new Uint8Array((plainEnds.at(-1) ?? 0) + GCM_OVERHEAD * plainEnds.length)
      for (let index = 0; index < plainEnds.length; index++) {
        const start = startOf(plainEnds, index)
        out.set(seal(keyOf(items, index), plain.subarray(start, plainEnds[index]), items.aad[index]), start + GCM_OVERHEAD * index)
      }
      return out
    },
  }
}

function createNativeBatchCipher(addon: NativeAddon): BatchCipher {
  return {
    implementation: 'native',
    open(items, sealed, sealedEnds) {
      const aad = packStrings(items.aad)
      const plainEnds = plainEndsOf(sealedEnds)
      const plain = new Uint8Array(plainEnds.at(-1) ?? 0)
      const opened = new Uint8Array(sealedEnds.length)
      const failures = addon.gcmOpenBatch(items.keys, items.keyOfItem, sealed, sealedEnds, aad.bytes, aad.ends, plain, opened)
      return { plain, plainEnds, opened, failures }
    },
    seal(items, plain, plainEnds) {
      const aad = packStrings(items.aad)
      const nonces = randomFillSync(new Uint8Array(NONCE_BYTES * plainEnds.length))
      const out = new Uint8Array((plainEnds.at(-1) ?? 0) + GCM_OVERHEAD * plainEnds.length)
      addon.gcmSealBatch(items.keys, items.keyOfItem, plain, plainEnds, aad.bytes, aad.ends, nonces, out)
      return out
    },
  }
}

/** The native batch cipher when the addon loads, else node:crypto; `null` asks for node:crypto. */
export function createBatchCipher(addon: NativeAddon | null | undefined = undefined): BatchCipher {
  if (addon === undefined) {
    const loaded = loadNativeAddon()
    addon = loaded.ok ? loaded.value : null
  }
  return addon ? createNativeBatchCipher(addon) : createNodeBatchCipher()
}
