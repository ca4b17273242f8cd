// Resolving a route's declared access for one request: the one place where a caller is checked
// against the organization, project or device a route addresses and, on a rate-limited route, its
// project (or, on a person's own routes, the person) charged. Handlers receive what it loaded.
import type { LimitedProject } from './rate-limit.js'
import { chargePerson } from './self-enrollment-limits.js'
import type { Sql } from '../store/engine/database.js'
import type { ProjectRow } from '../store/projects.js'
import { reachableProject, requireEndUser, requireOperator, requireOrgAdmin, requireTenantManaged } from './access.js'
import type { Access } from './credentials.js'
import { linkedDevice, terminalOf, type LinkedDevice } from './device-access.js'
import type { Principal } from './principal.js'
import { ServiceError, notFound } from '../errors.js'

export interface AccessDeps {
  sql: Sql
  rateLimiter: { charge(project: LimitedProject): Promise<Record<string, string>> }
}

/** A Device-Com caller: the terminal and the project it is linked to. */
export interface Terminal {
  deviceId: string
  mode: string
  project: ProjectRow
}

/** What a handler receives for each access. */
export type Granted<A extends Access> = A extends 'project' | 'tenant-project'
  ? { project: ProjectRow }
  : A extends 'device' | 'tenant-device'
    ? { project: ProjectRow; device: LinkedDevice }
    : A extends 'terminal'
      ? { project: ProjectRow; terminal: Terminal }
      : Record<never, never>

export interface AccessRequest {
  access: Access
  rateLimited: boolean
  principal: Principal
  /** The validated path parameters (org_id, project_id, device_id). */
  params: Record<string, string>
  /** Receives the charged project's RateLimit-* headers (kept on the response whatever it is). */
  responseHeaders: Record<string, string>
}

export type Resolution = Partial<{ project: ProjectRow; device: LinkedDevice; terminal: Terminal }>

/** Checks the caller against what the route addresses; throws the 403/404/429 the caller gets. */
export async function resolveAccess(deps: AccessDeps, request: AccessRequest): Promise<Resolution> {
  const { access, principal, params } = request
  const charged = async (project: ProjectRow) => {
    if (request.rateLimited) Object.assign(request.responseHeaders, await deps.rateLimiter.charge(project))
    return project
  }
  switch (access) {
    case 'none':
    case 'caller':
      return {}
    case 'org-admin':
      await requireOrgAdmin(deps.sql, principal, params.org_id)
      return {}
    case 'operator':
      await requireOperator(deps.sql, principal)
      return {}
    case 'end-user':
      await requireEndUser(deps.sql, principal)
      // No project to charge: the person's own budget (a token is all an end-user route accepts).
      if (request.rateLimited) Object.assign(request.responseHeaders, await chargePerson(deps, (principal as { subject: string }).subject))
      return {}
    case 'project':
    case 'tenant-project': {
      const project = await charged(await reachableProject(deps.sql, principal, params.project_id))
      if (access === 'tenant-project') requireTenantManaged(project)
      return { project }
    }
    case 'device':
    case 'tenant-device': {
      const device = await linkedDevice(deps.sql, params.device_id)
      let project: ProjectRow
      try {
        project = await charged(await reachableProject(deps.sql, principal, device.project_id))
      } catch (error) {
        // The project's 404 must not reveal that the device exists in another tenant.
        if (error instanceof ServiceError && error.code === 'not_found') throw notFound('device')
        throw error
      }
      if (access === 'tenant-device') requireTenantManaged(project)
      return { project, device }
    }
    case 'terminal': {
      const { deviceId, mode, projectId } = terminalOf(principal)
      const project = await charged(await reachableProject(deps.sql, principal, projectId))
      return { project, terminal: { deviceId, mode, project } }
    }
  }
}
