// Identifiers the service creates: UUID version 7 (time-ordered, so indexes stay append-mostly).
import { randomFillSync } from 'node:crypto'
import { v7 as uuidv7, validate, version } from 'uuid'

// The uuid package draws each id's 16 random bytes with its own getRandomValues call (4 µs, a
// tenth of an import's time); ids are public, so they are cut from a pool filled 4 KiB at a time.
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let poolAt = POOL_BYTES

function randomForId(): Uint8Array {
  if (poolAt + 16 > POOL_BYTES) {
    randomFillSync(pool)
    poolAt = 0
  }
  poolAt += 16
  return pool.subarray(poolAt - 16, poolAt)
}

// Given its random bytes, the package no longer keeps ids of one millisecond in order: the state
// below does what its own does (a random 31-bit counter per millisecond, incremented within it).
const order = { msecs: -Infinity, seq: 0 }

export function newId(): string {
  const random = randomForId()
  const now = Date.now()
  if (now > order.msecs) {
    order.msecs = now
    order.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9]
  } else {
    order.seq = (order.seq + 1) | 0
    if (order.seq === 0) order.msecs += 1
  }
  return uuidv7({ random, msecs: order.msecs, seq: order.seq })
}

/** Any RFC 4122/9562 UUID in canonical form (path ids may come from other systems' versions). */
export function isUuid(value: string): boolean {
  return validate(value) && version(value) >= 1
}

/** RFC 3339 UTC with milliseconds, or null for an absent time. */
export function timestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  return (value instanceof Date ? value : new Date(value)).toISOString()
}

/** The canonical (lowercase) text of the 16-byte UUID at `at` of `bytes`. */
export function uuidText(bytes: Uint8Array, at = 0): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset + at, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
