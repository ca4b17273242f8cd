// The link of records written before the trail was keyed (migration 0035): SHA-256(prev ‖ content),
// which anyone can recompute. Kept to verify those records; nothing new is linked with it.
import { createHash } from 'node:crypto'
import type { AuditInsert } from '../../store/audit-log.js'
import { recordFields } from './audit-keys.js'

function content(record: AuditInsert): string {
  return JSON.stringify(recordFields(record))
}

export function chainHash(prev: Buffer, record: AuditInsert): Buffer {
  return createHash('sha256').update(prev).update(content(record)).digest()
}
