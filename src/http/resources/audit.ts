// Audit records on the wire: the list's items and the NDJSON export's lines are the same object.
import type { AuditRow } from '../../store/audit-log.js'
import { Nullable, Type } from '../schema.js'

export const AuditRecordSchema = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, description: 'position in the organization’s hash chain (ascending in time)' }),
    created_at: Type.String({ format: 'date-time' }),
    request_id: Type.String({ description: 'X-Request-Id of the request' }),
    org_id: Type.String({ format: 'uuid' }),
    project_id: Nullable(Type.String({ format: 'uuid' })),
    actor_kind: Type.Union([Type.Literal('token'), Type.Literal('api_key'), Type.Literal('device'), Type.Literal('anonymous')]),
    actor_id: Nullable(Type.String({ description: 'token subject, API key id or device id' })),
    action: Type.String({ description: 'method and route template, e.g. POST /v1/projects/{project_id}/biometrics/identify' }),
    resource_ids: Type.Record(Type.String(), Type.String(), { description: 'the ids the path named, by parameter name' }),
    status: Type.Integer({ description: 'HTTP status of the answer' }),
    client_address: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
    prev_hash: Type.String({ description: 'hex SHA-256 of the previous record of the chain' }),
    hash: Type.String({ description: 'hex SHA-256 of prev_hash and this record’s content' }),
  },
  { $id: 'AuditRecord' },
)

export function auditResource(row: AuditRow) {
  return {
    seq: row.seq,
    created_at: row.created_at.toISOString(),
    request_id: row.request_id,
    org_id: row.org_id!,
    project_id: row.project_id,
    actor_kind: row.actor_kind,
    actor_id: row.actor_id,
    action: row.action,
    resource_ids: row.resource_ids,
    status: row.status,
    client_address: row.client_address,
    user_agent: row.user_agent,
    prev_hash: row.prev_hash.toString('hex'),
    hash: row.hash.toString('hex'),
  }
}
