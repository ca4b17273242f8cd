// Opening reference rows as a boot does (reference-decrypt-worker.ts), with each batch cipher: the
// readable rows come back as vectors, and each unreadable one is named with why, never mixed up.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createBatchCipher, type BatchCipher } from '../../src/keys/gcm-batch.js'
import { decryptReferences, packRows, type DecryptRow } from '../../src/domain/galleries/reference-decrypt-worker.js'
import { seal } from '../../src/keys/keyring.js'
import { memberContext, sealTemplate } from '../../src/keys/template-crypto.js'
import { newId } from '../../src/ids.js'
import { loadNativeAddon } from '@palmvein/matcher/backend'

const addon = loadNativeAddon()
const ciphers: BatchCipher[] = [createBatchCipher(null), ...(addon.ok ? [createBatchCipher(addon.value)] : [])]
const dimension = 16

function newMemberKeyUnder(environmentKey: Uint8Array, memberId: string) {
  const key = randomBytes(32)
  return { key, wrapped: seal(environmentKey, key, memberContext(memberId)) }
}

describe.each(ciphers.map((cipher) => [cipher.implementation, cipher] as const))('boot decryption with %s', (_, cipher) => {
  it('opens every readable row and names each unreadable one', () => {
    const environmentKey = randomBytes(32)
    const rows: DecryptRow[] = []
    const vectors: Int8Array[] = []
    for (let member = 0; member < 6; member++) {
      const id = newId()
      const { key, wrapped } = newMemberKeyUnder(environmentKey, id)
      for (const hand of ['left', 'right'] as const) {
        const vector = Int8Array.from({ length: dimension }, (_, index) => ((member * 31 + index * 7 + (hand === 'left' ? 0 : 3)) % 255) - 127)
        vectors.push(vector)
        rows.push({ member_id: id, hand, wrapped_key: wrapped, ciphertext: sealTemplate(key, id, hand, 'reference', new Uint8Array(vector.buffer)) })
      }
    }
    // Row 2: its member's key is gone. Rows 4 and 5: the member key was wrapped under another environment.
    // Row 7: a reference moved from the left hand (row 6). Row 8: a member whose reference is too short.
    // Row 9: sealed under another member's key.
    rows[2] = { ...rows[2], wrapped_key: null }
    const stranger = newMemberKeyUnder(randomBytes(32), rows[4].member_id).wrapped
    rows[4] = { ...rows[4], wrapped_key: stranger }
    rows[5] = { ...rows[5], wrapped_key: stranger }
    rows[7] = { ...rows[7], ciphertext: rows[6].ciphertext }
    const shortId = newId()
    const shortKey = newMemberKeyUnder(environmentKey, shortId)
    rows[8] = {
      member_id: shortId,
      hand: 'left',
      wrapped_key: shortKey.wrapped,
      ciphertext: sealTemplate(shortKey.key, shortId, 'left', 'reference', new Uint8Array(dimension - 1)),
    }
    rows[9] = { ...rows[9], ciphertext: sealTemplate(shortKey.key, rows[9].member_id, 'right', 'reference', new Uint8Array(vectors[9].buffer)) }

    const result = decryptReferences(packRows(environmentKey, dimension, rows), cipher)
    expect(result.failures).toEqual([
      { index: 2, reason: 'the member has no data key' },
      { index: 4, reason: expect.stringMatching(/member key did not open/) },
      { index: 5, reason: expect.stringMatching(/member key did not open/) },
      { index: 7, reason: expect.stringMatching(/reference did not open/) },
      { index: 8, reason: `reference has ${dimension - 1} components, expected ${dimension}` },
      { index: 9, reason: expect.stringMatching(/reference did not open/) },
    ])
    const failed = new Set(result.failures.map((failure) => failure.index))
    rows.forEach((_, index) => {
      const got = result.vectors.subarray(index * dimension, (index + 1) * dimension)
      expect(Array.from(got)).toEqual(failed.has(index) ? new Array(dimension).fill(0) : Array.from(vectors[index]))
    })
  })
})
