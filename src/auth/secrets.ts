// Bearer secrets (API keys, device tokens): 32 random bytes in base64url; only SHA-256 is stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export const newSecret = (): string => randomBytes(32).toString('base64url')

export const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret).digest()

export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const candidate = hashSecret(secret)
  return storedHash.length === candidate.length && timingSafeEqual(candidate, storedHash)
}

/** `{uuid}.{43 base64url chars}`: the shape of API keys (and, after `pvd_`, of device tokens). */
export const BEARER_SECRET_SHAPE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/

/** Two texts compared in constant time (a challenge typed or echoed against the one issued). */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
