// Opening an environment's reference rows (galleries.ts has no other decrypt): the member keys
// unwrapped with the environment key, the references opened and their lengths checked, each step
// one batch (gcm-batch.ts), the vectors packed in one buffer. It runs on the main thread for small
// reads, and as the piscina task of a boot load's threads (decrypt-pool.ts).
import type { PackedReferencePage } from '../../store/reference-pages.js'
import { createBatchCipher, type BatchCipher, type OpenedItems } from '../../keys/gcm-batch.js'

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
    environmentKey,
    dimension,
    keys,
    keyEnds,
    ciphertexts,
    cipherEnds,
    memberIds: rows.map((row) => row.member_id).join(''),
    hands: rows.map((row) => (row.hand === 'left' ? 'l' : 'r')).join(''),
  }
}

/** A packed page (store/templates.ts) as a task: its columns are already laid out this way. */
export function taskOfPage(environmentKey: Uint8Array, dimension: number, page: PackedReferencePage): DecryptTask {
  const ends = (lengths: number[]) => {
    const out = new Uint32Array(lengths.length)
    lengths.reduce((end, length, index) => (out[index] = end + length), 0)
    return out
  }
  return {
    environmentKey,
    dimension,
    memberIds: page.member_ids,
    hands: page.hands,
    keys: page.keys,
    keyEnds: ends(page.key_lengths),
    ciphertexts: page.ciphertexts,
    cipherEnds: ends(page.cipher_lengths),
  }
}

/** Rows [start, end) of a task, as a task of their own (a thread's share). */
export function sliceTask(task: DecryptTask, start: number, end: number): DecryptTask {
  const cut = (bytes: Uint8Array, ends: Uint32Array) => {
    const from = start === 0 ? 0 : ends[start - 1]
    return { bytes: bytes.subarray(from, end === 0 ? 0 : ends[end - 1]), ends: ends.subarray(start, end).map((at) => at - from) }
  }
  const keys = cut(task.keys, task.keyEnds)
  const ciphertexts = cut(task.ciphertexts, task.cipherEnds)
  return {
    environmentKey: task.environmentKey,
    dimension: task.dimension,
    memberIds: task.memberIds.slice(36 * start, 36 * end),
    hands: task.hands.slice(start, end),
    keys: keys.bytes,
    keyEnds: keys.ends,
    ciphertexts: ciphertexts.bytes,
    cipherEnds: ciphertexts.ends,
  }
}

export interface DecryptResult {
  /** rows.length x dimension int8 components; a failed row's slice is zero. */
  vectors: Int8Array
  /** Rows that could not be read, with why (the main thread logs and skips them). */
  failures: Array<{ index: number; reason: string }>
}

/** The items at `indexes` of a flat buffer (`ends` as in DecryptTask), end to end. */
function gather(bytes: Uint8Array, ends: Uint32Array, indexes: readonly number[]): { bytes: Uint8Array; ends: Uint32Array } {
  const startOf = (index: number) => (index === 0 ? 0 : ends[index - 1])
  const outEnds = new Uint32Array(indexes.length)
  let total = 0
  indexes.forEach((index, at) => {
    outEnds[at] = total += ends[index] - startOf(index)
  })
  const out = new Uint8Array(total)
  indexes.forEach((index, at) => out.set(bytes.subarray(startOf(index), ends[index]), at === 0 ? 0 : outEnds[at - 1]))
  return { bytes: out, ends: outEnds }
}

const MEMBER_KEY_BYTES = 32

function repackKeys(opened: OpenedItems): Uint8Array {
  const table = new Uint8Array(MEMBER_KEY_BYTES * opened.plainEnds.length)
  opened.plainEnds.forEach((end, key) => {
    const start = key === 0 ? 0 : opened.plainEnds[key - 1]
    if (end - start === MEMBER_KEY_BYTES) table.set(opened.plain.subarray(start, end), MEMBER_KEY_BYTES * key)
  })
  return table
}

export function decryptReferences(task: DecryptTask, cipher: BatchCipher): DecryptResult {
  const { environmentKey, dimension, keys, keyEnds, ciphertexts, cipherEnds } = task
  const count = keyEnds.length
  const failures: DecryptResult['failures'] = []
  const memberId = (index: number) => task.memberIds.slice(index * 36, index * 36 + 36)
  const hand = (index: number) => (task.hands[index] === 'l' ? 'left' : 'right')

  // Each member's data key is opened once: rows come in id order, so a member's hands are neighbours.
  const keyRows: number[] = []
  const keyOfRow = new Int32Array(count).fill(-1)
  for (let index = 0, last = ''; index < count; index++) {
    if (keyEnds[index] === (index === 0 ? 0 : keyEnds[index - 1])) {
      failures.push({ index, reason: 'the member has no data key' })
      continue
    }
    const id = memberId(index)
    if (id !== last) keyRows.push(index)
    last = id
    keyOfRow[index] = keyRows.length - 1
  }
  const wrapped = gather(keys, keyEnds, keyRows)
  const memberKeys = cipher.open(
    { keys: environmentKey, keyOfItem: new Uint32Array(keyRows.length), aad: keyRows.map((index) => `member:${memberId(index)}`) },
    wrapped.bytes,
    wrapped.ends,
  )
  const keyOpened = (key: number) =>
    memberKeys.opened[key] === 1 && memberKeys.plainEnds[key] - (key === 0 ? 0 : memberKeys.plainEnds[key - 1]) === MEMBER_KEY_BYTES
  // Key j at 32 j, as the batch cipher takes keys (a wrapped key of another length, refused above, would shift them).
  const keyTable = memberKeys.plainEnds.every((end, key) => end === MEMBER_KEY_BYTES * (key + 1)) ? memberKeys.plain : repackKeys(memberKeys)

  // Then every reference under its member's key.
  const rows: number[] = []
  for (let index = 0; index < count; index++) {
    const key = keyOfRow[index]
    if (key < 0) continue
    if (keyOpened(key)) rows.push(index)
    else failures.push({ index, reason: 'the member key did not open (another environment key, or a moved or altered row)' })
  }
  const sealed = rows.length === count ? { bytes: ciphertexts, ends: cipherEnds } : gather(ciphertexts, cipherEnds, rows)
  const keyOfItem = Uint32Array.from(rows, (index) => keyOfRow[index])
  const references = cipher.open(
    {
      keys: keyTable,
      keyOfItem,
      aad: rows.map((index) => `template:${memberId(index)}:${hand(index)}:reference`),
    },
    sealed.bytes,
    sealed.ends,
  )
  const vectors = new Int8Array(count * dimension)
  rows.forEach((index, at) => {
    const start = at === 0 ? 0 : references.plainEnds[at - 1]
    const length = references.plainEnds[at] - start
    if (!references.opened[at]) failures.push({ index, reason: 'the reference did not open (another member key, or a moved or altered row)' })
    else if (length !== dimension) failures.push({ index, reason: `reference has ${length} components, expected ${dimension}` })
    else vectors.set(new Int8Array(references.plain.buffer, references.plain.byteOffset + start, length), index * dimension)
  })
  failures.sort((a, b) => a.index - b.index)
  return { vectors, failures }
}

// The piscina task: a load starts threads only where node:crypto does its AES-GCM (reference-reader.ts).
const nodeCipher = createBatchCipher(null)
export default (task: DecryptTask) => decryptReferences(task, nodeCipher)
