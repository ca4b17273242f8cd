// The link of records written before the trail was keyed (migration 0035): SHA-256(prev ‖ content),
// which anyone can recompute. Kept to verify those records; nothing new is linked with it.
import { createHash } from 'node:crypto'
import type { AuditInsert } from '../../store/audit-log.js'

function content(record: AuditInsert): string {
  return JSON.stringify([
    record.created_at.toISOString(),
    record.request_id,
    record.org_id,
    record.project_id,
    record.actor_kind,
    record.actor_id,
    record.action,
    Object.entries(record.resource_ids).sort(([a], [b]) => a.localeCompare(b)),
    record.status,
    record.client_address,
    record.user_agent,
  ])
}

export function chainHash(prev: Buffer, record: AuditInsert): Buffer {
  return createHash('sha256').update(prev).update(content(record)).digest()
}
