// A boot-load thread (piscina task): opens a slice of an environment's reference rows with the
// environment key, the same checks as the main thread's decrypt (galleries.ts), and returns the
// vectors packed in one buffer, so a restart uses every core for AES-GCM.
import { openMemberKey, openTemplate } from './template-crypto.js'

export interface DecryptRow {
  member_id: string
  hand: 'left' | 'right'
  wrapped_key: Uint8Array | null
  ciphertext: Uint8Array
}

export interface DecryptTask {
  environmentKey: Uint8Array
  dimension: number
  rows: DecryptRow[]
}

export interface DecryptResult {
  /** rows.length x dimension int8 components; a failed row's slice is zero. */
  vectors: Int8Array
  /** Rows that could not be read, with why (the main thread logs and skips them). */
  failures: Array<{ index: number; reason: string }>
}

export default function decryptReferences({ environmentKey, dimension, rows }: DecryptTask): DecryptResult {
  const vectors = new Int8Array(rows.length * dimension)
  const failures: DecryptResult['failures'] = []
  let lastMember = ''
  let lastKey: Buffer | null = null
  rows.forEach((row, index) => {
    try {
      if (!row.wrapped_key) throw new Error('the member has no data key')
      // Rows come in id order: a member's two hands are usually neighbours.
      if (row.member_id !== lastMember || !lastKey) {
        lastKey = openMemberKey(environmentKey, row.member_id, row.wrapped_key)
        lastMember = row.member_id
      }
      const plain = openTemplate(lastKey, row.member_id, row.hand, 'reference', row.ciphertext)
      if (plain.length !== dimension) throw new Error(`reference has ${plain.length} components, expected ${dimension}`)
      vectors.set(new Int8Array(plain.buffer, plain.byteOffset, plain.length), index * dimension)
    } catch (error) {
      failures.push({ index, reason: (error as Error).message })
    }
  })
  return { vectors, failures }
}
