// Encryption at rest of palm data (DECISIONS "Palm captures and matching"): AES-256-GCM under a
// per-member data key, wrapped by the environment key, itself wrapped by the master key. The
// authenticated context binds each blob to its member, hand and kind, so a ciphertext copied into
// another row does not decrypt. Deleting the member row destroys its only wrapped key.
import type { Keyring } from './keyring.js'
import { open, seal } from './keyring.js'

export type TemplateKind = 'enroll' | 'identify' | 'reference'

/** The environment's stored key, as far as this module needs it. */
export interface WrappedEnvironmentKey {
  id: string
  wrapped_key: Uint8Array
}

export const memberContext = (memberId: string) => `member:${memberId}`
export const templateContext = (memberId: string, hand: string, kind: TemplateKind) => `template:${memberId}:${hand}:${kind}`
export const silhouetteContext = (memberId: string, hand: string) => `silhouette:${memberId}:${hand}`

/** A fresh data key for a new member and its wrapped form (stored in members.wrapped_key). */
export function newMemberKey(keyring: Keyring, environment: WrappedEnvironmentKey, memberId: string): { key: Buffer; wrapped: Buffer } {
  return keyring.newKey(keyring.environmentKey(environment.id, environment.wrapped_key), memberContext(memberId))
}

export function unwrapMemberKey(keyring: Keyring, environment: WrappedEnvironmentKey, memberId: string, wrapped: Uint8Array): Buffer {
  return openMemberKey(keyring.environmentKey(environment.id, environment.wrapped_key), memberId, wrapped)
}

/** unwrapMemberKey with the environment key already unwrapped (the boot's decrypt threads). */
export function openMemberKey(environmentKey: Uint8Array, memberId: string, wrapped: Uint8Array): Buffer {
  return open(environmentKey, wrapped, memberContext(memberId))
}

export function sealTemplate(memberKey: Uint8Array, memberId: string, hand: string, kind: TemplateKind, bytes: Uint8Array): Buffer {
  return seal(memberKey, bytes, templateContext(memberId, hand, kind))
}

/** Throws when the key is wrong or the blob was tampered with or moved to another row. */
export function openTemplate(memberKey: Uint8Array, memberId: string, hand: string, kind: TemplateKind, sealed: Uint8Array): Buffer {
  return open(memberKey, sealed, templateContext(memberId, hand, kind))
}

/** The silhouette is an outline of the hand: kept encrypted like the templates (base64 text column; member-sealing.ts seals it). */
export function openSilhouette(memberKey: Uint8Array, memberId: string, hand: string, sealed: string): string {
  return open(memberKey, Buffer.from(sealed, 'base64'), silhouetteContext(memberId, hand)).toString('utf8')
}
