// Identifiers the service creates: UUID version 7 (time-ordered, so indexes stay append-mostly).
import { v7 as uuidv7, validate, version } from 'uuid'

export const newId = (): string => uuidv7()

/** Any RFC 4122/9562 UUID in canonical form (path ids may come from other systems' versions). */
export function isUuid(value: string): boolean {
  return validate(value) && version(value) >= 1
}

/** RFC 3339 UTC with milliseconds, or null for an absent time. */
export function timestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  return (value instanceof Date ? value : new Date(value)).toISOString()
}
