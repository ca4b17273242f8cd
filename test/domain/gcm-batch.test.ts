// The batch cipher (gcm-batch.ts): the native addon's AES-256-GCM and the node:crypto loop give the
// same answers, and both read and write keyring.ts's blobs, so a boot or an import may use either.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createBatchCipher, GCM_OVERHEAD, sealedEndsOf, type BatchCipher, type GcmItems } from '../../src/keys/gcm-batch.js'
import { open, seal } from '../../src/keys/keyring.js'
import { loadNativeAddon } from '@palmvein/matcher/backend'

const addon = loadNativeAddon()
const ciphers: BatchCipher[] = [createBatchCipher(null), ...(addon.ok ? [createBatchCipher(addon.value)] : [])]

/** n items of varied lengths (0 to 300 bytes) under three keys, with their contexts. */
function sample(n: number) {
  const keys = randomBytes(32 * 3)
  const keyOfItem = Uint32Array.from({ length: n }, (_, index) => Math.floor(index / 2) % 3)
  const plains = Array.from({ length: n }, (_, index) => randomBytes((index * 37) % 301))
  const plainEnds = new Uint32Array(n)
  plains.reduce((end, plain, index) => (plainEnds[index] = end + plain.length), 0)
  const aad = plains.map((_, index) => `template:${index}:left:${index % 2 ? 'é' : 'reference'}`)
  const items: GcmItems = { keys, keyOfItem, aad }
  const keyOf = (index: number) => keys.subarray(32 * keyOfItem[index], 32 * keyOfItem[index] + 32)
  return { items, plains, plain: Buffer.concat(plains), plainEnds, keyOf }
}

const split = (bytes: Uint8Array, ends: Uint32Array) => Array.from(ends, (end, index) => Buffer.from(bytes.subarray(index === 0 ? 0 : ends[index - 1], end)))

describe('batch AES-256-GCM', () => {
  it('the native addon provides it where it loads', () => {
    if (addon.ok) expect(createBatchCipher().implementation).toBe('native')
    expect(createBatchCipher(null).implementation).toBe('node:crypto')
  })

  for (const cipher of ciphers) {
    describe(cipher.implementation, () => {
      it('seals blobs keyring.ts opens, and opens blobs keyring.ts sealed', () => {
        const { items, plains, plain, plainEnds, keyOf } = sample(40)
        const sealed = cipher.seal(items, plain, plainEnds)
        const sealedEnds = sealedEndsOf(plainEnds)
        const blobs = split(sealed, sealedEnds)
        blobs.forEach((blob, index) => expect(open(keyOf(index), blob, items.aad[index]).equals(plains[index])).toBe(true))
        // Fresh nonces: sealing twice gives other blobs.
        expect(Buffer.from(cipher.seal(items, plain, plainEnds)).equals(Buffer.from(sealed))).toBe(false)

        const theirs = Buffer.concat(plains.map((bytes, index) => seal(keyOf(index), bytes, items.aad[index])))
        const opened = cipher.open(items, theirs, sealedEnds)
        expect(opened.failures).toBe(0)
        expect([...opened.opened]).toEqual(plains.map(() => 1))
        expect(Array.from(opened.plainEnds)).toEqual(Array.from(plainEnds))
        expect(Buffer.from(opened.plain).equals(plain)).toBe(true)
      })

      it('refuses an item whose tag, data or key does not match (zero bytes), and opens the others', () => {
        const { items, plain, plainEnds } = sample(9)
        const sealed = cipher.seal(items, plain, plainEnds)
        const sealedEnds = sealedEndsOf(plainEnds)
        sealed[sealedEnds[2] - 1] ^= 1 // item 2's tag
        sealed[sealedEnds[4] - GCM_OVERHEAD + 12 - 1] ^= 0x80 // item 5's ciphertext starts 12 bytes into it; item 4 is empty: its nonce
        const aad = [...items.aad]
        aad[6] = 'template:6:right:reference' // moved to another row
        const keyOfItem = items.keyOfItem.slice()
        keyOfItem[8] = (keyOfItem[8] + 1) % 3
        const opened = cipher.open({ keys: items.keys, keyOfItem, aad }, sealed, sealedEnds)
        expect([...opened.opened]).toEqual([1, 1, 0, 1, 0, 1, 0, 1, 0])
        expect(opened.failures).toBe(4)
        const plains = split(opened.plain, opened.plainEnds)
        for (const index of [2, 4, 6, 8]) expect(plains[index].every((byte) => byte === 0)).toBe(true)
        const expected = split(plain, plainEnds)
        for (const index of [0, 1, 3, 5, 7]) expect(plains[index].equals(expected[index])).toBe(true)
      })

      it('refuses an item shorter than nonce and tag (the boot skips such a row) and opens its neighbours', () => {
        const key = randomBytes(32)
        const first = seal(key, Buffer.from('first'), 'a')
        const last = seal(key, Buffer.from('last'), 'c')
        const junk = Buffer.from([1, 2, 3])
        const sealed = Buffer.concat([first, junk, last])
        const ends = Uint32Array.of(first.length, first.length + 3, sealed.length)
        const opened = cipher.open({ keys: key, keyOfItem: new Uint32Array(3), aad: ['a', 'b', 'c'] }, sealed, ends)
        expect([...opened.opened]).toEqual([1, 0, 1])
        expect(opened.failures).toBe(1)
        expect(split(opened.plain, opened.plainEnds).map(String)).toEqual(['first', '', 'last'])
      })

      it('an empty batch is empty', () => {
        const items: GcmItems = { keys: randomBytes(32), keyOfItem: new Uint32Array(0), aad: [] }
        expect(cipher.seal(items, new Uint8Array(0), new Uint32Array(0)).length).toBe(0)
        expect(cipher.open(items, new Uint8Array(0), new Uint32Array(0))).toMatchObject({ failures: 0, plain: new Uint8Array(0) })
      })
    })
  }

  it.runIf(addon.ok)('the addon refuses malformed batches with errors naming the argument', () => {
    if (!addon.ok) return
    const { gcmOpenBatch, gcmSealBatch } = addon.value
    const key = randomBytes(32)
    const aad = new Uint8Array(0)
    const one = Uint32Array.of(0)
    const sealBad = (keys: Uint8Array, keyOfItem: Uint32Array, plainEnds: Uint32Array, nonces: Uint8Array, out: Uint8Array) => () =>
      gcmSealBatch(keys, keyOfItem, new Uint8Array(8), plainEnds, aad, one, nonces, out)
    expect(sealBad(key.subarray(0, 31), new Uint32Array(1), Uint32Array.of(8), new Uint8Array(12), new Uint8Array(36))).toThrow(/keys must hold 32-byte keys/)
    expect(sealBad(key, Uint32Array.of(1), Uint32Array.of(8), new Uint8Array(12), new Uint8Array(36))).toThrow(/keyOfItem\[0\] = 1 but keys holds 1 keys/)
    expect(sealBad(key, new Uint32Array(1), Uint32Array.of(9), new Uint8Array(12), new Uint8Array(37))).toThrow(
      /plainEnds\[0\] = 9 is out of order or past the buffer/,
    )
    expect(sealBad(key, new Uint32Array(1), Uint32Array.of(8), new Uint8Array(11), new Uint8Array(36))).toThrow(/nonces/)
    expect(sealBad(key, new Uint32Array(1), Uint32Array.of(8), new Uint8Array(12), new Uint8Array(35))).toThrow(
      /out must be plain bytes \+ 28 per item = 36 bytes, got 35/,
    )
    const sealed = new Uint8Array(40)
    expect(() => gcmOpenBatch(key, new Uint32Array(1), sealed, Uint32Array.of(40), aad, one, new Uint8Array(11), new Uint8Array(1))).toThrow(
      /out must hold the plaintexts \(each item's bytes - 28\) = 12 bytes, got 11/,
    )
    expect(() =>
      gcmOpenBatch(key, new Uint32Array(2), sealed, Uint32Array.of(30, 20), aad, Uint32Array.of(0, 0), new Uint8Array(2), new Uint8Array(2)),
    ).toThrow(/sealedEnds\[1\] = 20 is out of order/)
    // An output over an input would be written while read.
    expect(() => gcmOpenBatch(key, new Uint32Array(1), sealed, Uint32Array.of(40), aad, one, sealed.subarray(0, 12), new Uint8Array(1))).toThrow(
      /out overlaps sealed in memory/,
    )
    expect(() => gcmOpenBatch(key, new Uint32Array(1), sealed, Uint32Array.of(40), aad, one, new Uint8Array(12), new Uint8Array(2))).toThrow(
      /opened need 1 entries/,
    )
  })
})
