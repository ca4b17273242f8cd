// Sealing a member's palm rows (template-crypto.ts's contexts, gcm-batch.ts's batches): each hand's
// enroll and identify captures, its reference and its silhouette under the member's data key, in
// one batch for a whole import task; new members' data keys wrapped under the environment key in
// another. Enrollment seals one member through the same code.
import { randomBytes } from 'node:crypto'
import { newId } from '../ids.js'
import type { PalmPosition } from '../store/scans.js'
import type { Hand, TemplateInsert } from '../store/templates.js'
import { createBatchCipher, GCM_OVERHEAD, type BatchCipher } from './gcm-batch.js'
import { memberContext, silhouetteContext, templateContext } from './template-crypto.js'

const KEY_BYTES = 32

/** What sealing reads of one checked hand (enrollment's prepared hand is one). */
export interface HandToSeal {
  hand: Hand
  input: { silhouette?: string | null; palm_position?: PalmPosition | null }
  enroll: { bytes: Uint8Array }
  identify: { bytes: Uint8Array }
  reference: Int8Array
}

export interface MemberToSeal {
  id: string
  hands: readonly HandToSeal[]
}

export interface SealedMember {
  /** The member's data key wrapped under the environment key (members.wrapped_key). */
  wrapped: Buffer
  templates: TemplateInsert[]
}

let threadCipher: BatchCipher | undefined
const cipher = () => (threadCipher ??= createBatchCipher())

/** Plaintexts with their contexts and keys, laid end to end as the batch cipher takes them. */
class SealBatch {
  private readonly parts: Uint8Array[] = []
  private readonly aad: string[] = []
  private readonly keyOf: number[] = []

  add(key: number, context: string, plain: Uint8Array): number {
    this.parts.push(plain)
    this.aad.push(context)
    this.keyOf.push(key)
    return this.parts.length - 1
  }

  /** The sealed blobs in the order added (views into one buffer). */
  seal(keys: Uint8Array): Buffer[] {
    const plainEnds = new Uint32Array(this.parts.length)
    this.parts.reduce((end, part, index) => (plainEnds[index] = end + part.length), 0)
    const plain = Buffer.concat(this.parts)
    const sealed = cipher().seal({ keys, keyOfItem: Uint32Array.from(this.keyOf), aad: this.aad }, plain, plainEnds)
    return Array.from(plainEnds, (end, index) => {
      const start = (index === 0 ? 0 : plainEnds[index - 1]) + GCM_OVERHEAD * index
      return Buffer.from(sealed.buffer, sealed.byteOffset + start, end + GCM_OVERHEAD * (index + 1) - start)
    })
  }
}

/** Every hand's rows of the members, member i sealed under key i of `memberKeys` (32 bytes each). */
function sealHandRows(memberKeys: Uint8Array, environmentId: string, members: readonly MemberToSeal[]): TemplateInsert[][] {
  const batch = new SealBatch()
  const planned = members.map(({ id, hands }, key) =>
    hands.map(({ hand, input, enroll, identify, reference }) => ({
      hand,
      input,
      silhouette: input.silhouette ? batch.add(key, silhouetteContext(id, hand), Buffer.from(input.silhouette, 'utf8')) : null,
      enroll: batch.add(key, templateContext(id, hand, 'enroll'), enroll.bytes),
      identify: batch.add(key, templateContext(id, hand, 'identify'), identify.bytes),
      reference: batch.add(key, templateContext(id, hand, 'reference'), new Uint8Array(reference.buffer, reference.byteOffset, reference.length)),
    })),
  )
  const sealed = batch.seal(memberKeys)
  // Plain loops and literals: flatMap with spread rows cost 14 µs a member here.
  return planned.map((hands, index) => {
    const rows: TemplateInsert[] = []
    const memberId = members[index].id
    for (const { hand, input, silhouette, enroll, identify, reference } of hands) {
      const sealedSilhouette = silhouette === null ? null : sealed[silhouette].toString('base64')
      const palmPosition = (input.palm_position ?? null) as Record<string, number> | null
      rows.push(
        {
          id: newId(),
          member_id: memberId,
          environment_id: environmentId,
          hand,
          kind: 'enroll',
          ciphertext: sealed[enroll],
          silhouette: sealedSilhouette,
          palm_position: palmPosition,
        },
        {
          id: newId(),
          member_id: memberId,
          environment_id: environmentId,
          hand,
          kind: 'identify',
          ciphertext: sealed[identify],
          silhouette: sealedSilhouette,
          palm_position: palmPosition,
        },
        {
          id: newId(),
          member_id: memberId,
          environment_id: environmentId,
          hand,
          kind: 'reference',
          ciphertext: sealed[reference],
          silhouette: null,
          palm_position: null,
        },
      )
    }
    return rows
  })
}

/** One member's hands sealed under its data key (enrollment). */
export function sealMemberHands(memberKey: Uint8Array, memberId: string, environmentId: string, hands: readonly HandToSeal[]): TemplateInsert[] {
  return sealHandRows(memberKey, environmentId, [{ id: memberId, hands }])[0]
}

/** New members: a fresh data key each, wrapped under the environment key, and their hands sealed under it (import). */
export function sealNewMembers(environmentKey: Uint8Array, environmentId: string, members: readonly MemberToSeal[]): SealedMember[] {
  const memberKeys = randomBytes(KEY_BYTES * members.length)
  const wrapping = new SealBatch()
  members.forEach(({ id }, index) => wrapping.add(0, memberContext(id), memberKeys.subarray(KEY_BYTES * index, KEY_BYTES * (index + 1))))
  const wrapped = wrapping.seal(environmentKey)
  const templates = sealHandRows(memberKeys, environmentId, members)
  return members.map((_, index) => ({ wrapped: wrapped[index], templates: templates[index] }))
}
