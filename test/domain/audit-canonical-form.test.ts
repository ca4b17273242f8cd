// What an audit record's MAC covers must not depend on the machine that computes it: a chain
// written on one host is verified on another (palmvein audit verify, a restored backup).
import { describe, expect, it } from 'vitest'
import { recordFields } from '../../src/domain/audit/audit-keys.js'
import type { AuditInsert } from '../../src/store/audit-log.js'

const record: AuditInsert = {
  org_id: '01a22526-f1a9-767f-82a9-303cd0b9b794',
  created_at: new Date('2026-11-29T03:00:00.000Z'),
  request_id: 'r-1',
  project_id: null,
  actor_kind: 'api_key',
  actor_id: 'k-1',
  action: 'DELETE /v1/projects/{project_id}/members/{member_id}',
  resource_ids: { project_id: 'p', member_id: 'm', Z_id: 'z', environment_id: 'e' },
  status: 204,
  client_address: null,
  user_agent: null,
}

describe('the audit record canonical form', () => {
  it('orders resource ids by code unit, not by the locale (which puts Z_id last)', () => {
    const ids = recordFields(record)[7] as Array<[string, string]>
    expect(ids.map(([name]) => name)).toEqual(['Z_id', 'environment_id', 'member_id', 'project_id'])
  })

  it('orders every resource id a route names as the locale-ordered form did, so existing chains still verify', () => {
    const names = ['delivery_id', 'device_id', 'enroll_id', 'environment_id', 'key_id', 'member_id', 'org_id', 'project_id', 'session_id', 'webhook_id']
    const reversed = Object.fromEntries([...names].reverse().map((name) => [name, name]))
    const ids = recordFields({ ...record, resource_ids: reversed })[7] as Array<[string, string]>
    expect(ids.map(([name]) => name)).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')))
  })
})
