// Opening an environment's reference rows (galleries.ts has no other decrypt): the member key
// unwrapped with the environment key, the reference opened and its length checked, the vectors
// packed in one buffer. It runs on the main thread for small reads, and as the piscina task of a
// boot load's threads (decrypt-pool.ts), so a restart uses every core for AES-GCM.
import { openMemberKey, openTemplate } from './template-crypto.js'

export interface DecryptRow {
  member_id: string
  hand: 'left' | 'right'
  wrapped_key: Uint8Array | null
  ciphertext: Uint8Array
}

/**
 * Rows packed into a few flat arrays: cloning a thousand row objects into the thread cost the main
 * thread more than the copies here (3 s of a 2M-row boot).
 */
export interface DecryptTask {
  environmentKey: Uint8Array
  dimension: number
  /** The rows' member ids, 36 characters each, concatenated. */
  memberIds: string
  /** 'l' or 'r' per row. */
  hands: string
  /** Wrapped member keys, concatenated; keyEnds[i] is where row i's ends (an empty one: no key). */
  keys: Uint8Array
  keyEnds: Uint32Array
  ciphertexts: Uint8Array
  cipherEnds: Uint32Array
}

export function packRows(environmentKey: Uint8Array, dimension: number, rows: readonly DecryptRow[]): DecryptTask {
  const keyEnds = new Uint32Array(rows.length)
  const cipherEnds = new Uint32Array(rows.length)
  let keyBytes = 0
  let cipherBytes = 0
  rows.forEach((row, index) => {
    keyEnds[index] = keyBytes += row.wrapped_key?.length ?? 0
    cipherEnds[index] = cipherBytes += row.ciphertext.length
  })
  const keys = new Uint8Array(keyBytes)
  const ciphertexts = new Uint8Array(cipherBytes)
  rows.forEach((row, index) => {
    if (row.wrapped_key) keys.set(row.wrapped_key, keyEnds[index] - row.wrapped_key.length)
    ciphertexts.set(row.ciphertext, cipherEnds[index] - row.ciphertext.length)
  })
  return {
    environmentKey, dimension, keys, keyEnds, ciphertexts, cipherEnds,
    memberIds: rows.map((row) => row.member_id).join(''),
    hands: rows.map((row) => (row.hand === 'left' ? 'l' : 'r')).join(''),
  }
}

export interface DecryptResult {
  /** rows.length x dimension int8 components; a failed row's slice is zero. */
  vectors: Int8Array
  /** Rows that could not be read, with why (the main thread logs and skips them). */
  failures: Array<{ index: number; reason: string }>
}

export function decryptReferences(task: DecryptTask): DecryptResult {
  const { environmentKey, dimension, keys, keyEnds, ciphertexts, cipherEnds } = task
  const count = keyEnds.length
  const vectors = new Int8Array(count * dimension)
  const failures: DecryptResult['failures'] = []
  let lastMember = ''
  let lastKey: Buffer | null = null
  for (let index = 0; index < count; index++) {
    const memberId = task.memberIds.slice(index * 36, index * 36 + 36)
    const hand = task.hands[index] === 'l' ? 'left' : 'right'
    const keyStart = index === 0 ? 0 : keyEnds[index - 1]
    try {
      if (keyEnds[index] === keyStart) throw new Error('the member has no data key')
      // Rows come in id order: a member's two hands are usually neighbours.
      if (memberId !== lastMember || !lastKey) {
        lastKey = openMemberKey(environmentKey, memberId, keys.subarray(keyStart, keyEnds[index]))
        lastMember = memberId
      }
      const plain = openTemplate(lastKey, memberId, hand, 'reference', ciphertexts.subarray(index === 0 ? 0 : cipherEnds[index - 1], cipherEnds[index]))
      if (plain.length !== dimension) throw new Error(`reference has ${plain.length} components, expected ${dimension}`)
      vectors.set(new Int8Array(plain.buffer, plain.byteOffset, plain.length), index * dimension)
    } catch (error) {
      failures.push({ index, reason: (error as Error).message })
    }
  }
  return { vectors, failures }
}

// The piscina task.
export default decryptReferences
