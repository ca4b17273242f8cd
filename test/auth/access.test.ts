// The access rules as tables: who reaches which project (404 for foreign or missing, 403 for a key
// not scoped to it), which environments allow members and biometrics, and who is a terminal.
import { describe, expect, it } from 'vitest'
import { checkProjectAccess, requireTenantManaged } from '../../src/auth/access.js'
import { terminalOf } from '../../src/auth/device-access.js'
import type { Principal } from '../../src/auth/principal.js'
import { ServiceError } from '../../src/errors.js'
import type { ProjectRow } from '../../src/store/projects.js'

const project = (fields: Partial<ProjectRow> & { caller_is_admin?: boolean } = {}) =>
  ({
    id: 'p1',
    org_id: 'o1',
    environment_id: 'e1',
    environment_owner_kind: 'customer',
    environment_owner_org_id: 'o1',
    ...fields,
  }) as ProjectRow & { caller_is_admin?: boolean }

/** The error code a rule throws, or 'ok'. */
function outcome(rule: () => unknown): string {
  try {
    rule()
    return 'ok'
  } catch (error) {
    if (error instanceof ServiceError) return error.code
    throw error
  }
}

const token: Principal = { kind: 'token', subject: 'admin@example.com' }
const orgKey: Principal = { kind: 'key', keyId: 'k1', orgId: 'o1', projectIds: null }

describe('checkProjectAccess', () => {
  it.each([
    { name: 'a missing project', principal: orgKey, target: null, code: 'not_found' },
    { name: 'a token of an admin', principal: token, target: project({ caller_is_admin: true }), code: 'ok' },
    { name: 'a token of someone else', principal: token, target: project({ caller_is_admin: false }), code: 'not_found' },
    { name: 'an organization-wide key', principal: orgKey, target: project(), code: 'ok' },
    { name: "another organization's key", principal: { ...orgKey, orgId: 'o2' }, target: project(), code: 'not_found' },
    { name: 'a key scoped to the project', principal: { ...orgKey, projectIds: ['p1'] }, target: project(), code: 'ok' },
    { name: 'a key scoped to another project', principal: { ...orgKey, projectIds: ['p2'] }, target: project(), code: 'forbidden' },
    {
      name: 'the terminal of the project',
      principal: { kind: 'device', deviceId: 'd1', projectId: 'p1', mode: 'access', project: null },
      target: project(),
      code: 'ok',
    },
    {
      name: 'a terminal of another project',
      principal: { kind: 'device', deviceId: 'd1', projectId: 'p2', mode: 'access', project: null },
      target: project(),
      code: 'not_found',
    },
    { name: 'no credential', principal: { kind: 'none' }, target: project(), code: 'not_found' },
  ] as Array<{ name: string; principal: Principal; target: ReturnType<typeof project> | null; code: string }>)(
    '$name: $code',
    ({ principal, target, code }) => {
      expect(outcome(() => checkProjectAccess(principal, target))).toBe(code)
    },
  )
})

describe('requireTenantManaged', () => {
  it.each([
    { name: "the organization's own environment", fields: {}, code: 'ok' },
    { name: 'no environment', fields: { environment_id: null }, code: 'environment_not_tenant_managed' },
    { name: 'a global environment', fields: { environment_owner_kind: 'platform' }, code: 'environment_not_tenant_managed' },
    { name: "another organization's environment", fields: { environment_owner_org_id: 'o2' }, code: 'environment_read_only' },
  ] as Array<{ name: string; fields: Partial<ProjectRow>; code: string }>)('$name: $code', ({ fields, code }) => {
    expect(outcome(() => requireTenantManaged(project(fields)))).toBe(code)
  })
})

describe('terminalOf', () => {
  it.each([
    { name: 'a linked terminal', principal: { kind: 'device', deviceId: 'd1', projectId: 'p1', mode: 'demo', project: null }, code: 'ok' },
    { name: 'a terminal not linked yet', principal: { kind: 'device', deviceId: 'd1', projectId: null, mode: 'demo', project: null }, code: 'forbidden' },
    { name: 'an API key', principal: orgKey, code: 'forbidden' },
    { name: 'an identity token', principal: token, code: 'forbidden' },
  ] as Array<{ name: string; principal: Principal; code: string }>)('$name: $code', ({ principal, code }) => {
    expect(outcome(() => terminalOf(principal))).toBe(code)
  })

  it("answers the terminal's device, mode and project", () => {
    expect(terminalOf({ kind: 'device', deviceId: 'd1', projectId: 'p1', mode: 'demo', project: null })).toEqual({
      deviceId: 'd1',
      mode: 'demo',
      projectId: 'p1',
    })
  })
})
