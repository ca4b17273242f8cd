// Access rules: a token user reaches only organizations it administers; an API key reaches only its
// organization's projects (all, or its scoped list); a terminal reaches only its own project; a
// foreign resource answers 404 like a missing one.
import { ServiceError, notFound } from '../errors.js'
import type { Sql } from '../store/engine/database.js'
import { administersAny, administersPlatform, isOrganizationAdmin } from '../store/organizations.js'
import { projectById, type ProjectRow } from '../store/projects.js'
import type { Principal } from './principal.js'

export async function requireOrgAdmin(sql: Sql, principal: Principal, orgId: string): Promise<void> {
  if (principal.kind !== 'token') throw new ServiceError('forbidden', 'this operation needs an identity token of an organization admin')
  if (!(await isOrganizationAdmin(sql, orgId, principal.subject))) throw notFound('organization')
}

/** A platform operator (DECISIONS.md, "Tenancy and control"): an admin of a platform organization. */
export async function requireOperator(sql: Sql, principal: Principal): Promise<void> {
  if (principal.kind !== 'token') throw new ServiceError('forbidden', 'this operation needs the identity token of a platform operator')
  if (!(await administersPlatform(sql, principal.subject))) {
    throw new ServiceError('forbidden', 'this operation is for platform operators (admins of a platform organization)')
  }
}

/**
 * A person acting for themselves: an identity token whose subject administers no organization.
 * An administrator's identity is an organization's, and is not enrolled as a member of the public.
 */
export async function requireEndUser(sql: Sql, principal: Principal): Promise<void> {
  if (principal.kind !== 'token') throw new ServiceError('forbidden', "this operation needs the person's own identity token")
  if (await administersAny(sql, principal.subject)) {
    throw new ServiceError('forbidden', 'an organization administrator cannot self-enroll; use a personal identity')
  }
}

/** May this caller reach the project? Throws 404 (foreign or missing) or 403 (key not scoped to it). */
export function checkProjectAccess(principal: Principal, project: (ProjectRow & { caller_is_admin?: boolean }) | null): ProjectRow {
  if (!project) throw notFound('project')
  if (principal.kind === 'token') {
    if (!project.caller_is_admin) throw notFound('project')
  } else if (principal.kind === 'key') {
    if (project.org_id !== principal.orgId) throw notFound('project')
    if (principal.projectIds && !principal.projectIds.includes(project.id)) {
      throw new ServiceError('forbidden', 'this API key is not scoped to the project')
    }
  } else if (principal.kind === 'device') {
    if (principal.projectId !== project.id) throw notFound('project')
  } else {
    throw notFound('project')
  }
  return project
}

/** The project `principal`'s authentication already read, when it is `projectId`. */
function prefetchedProject(principal: Principal, projectId: string): { project: ProjectRow | null } | null {
  if (principal.kind === 'key') return principal.prefetched?.projectId === projectId ? principal.prefetched : null
  if (principal.kind === 'device') return principal.projectId === projectId ? principal : null
  return null
}

/** A project the caller may reach (a key's or a terminal's project comes from the query that read the credential). */
export async function reachableProject(sql: Sql, principal: Principal, projectId: string): Promise<ProjectRow> {
  const subject = principal.kind === 'token' ? principal.subject : null
  const prefetched = prefetchedProject(principal, projectId)
  return checkProjectAccess(principal, prefetched ? prefetched.project : await projectById(sql, projectId, subject))
}

/**
 * Every write into an environment (enrollment, Device-Com completion, self-enrollment, import) comes
 * from a project of the environment's owner organization: a project reading another organization's
 * environment (a customer project on a global one) writes nothing there, by any path.
 */
export function requireEnvironmentOwner(project: ProjectRow): asserts project is ProjectRow & { environment_id: string } {
  if (!project.environment_id) throw new ServiceError('environment_not_tenant_managed', `project ${project.id} has no environment`)
  if (project.environment_owner_org_id !== project.org_id) {
    throw new ServiceError(
      'environment_read_only',
      `project ${project.id} does not own environment ${project.environment_id}; it may identify there, never enroll`,
    )
  }
}

/** Members, member listing and biometrics work only on an organization (tenant-managed) environment. */
export function requireTenantManaged(project: ProjectRow): void {
  if (!project.environment_id) {
    throw new ServiceError('environment_not_tenant_managed', `project ${project.id} has no environment`)
  }
  if (project.environment_owner_kind !== 'customer') {
    throw new ServiceError(
      'environment_not_tenant_managed',
      `environment ${project.environment_id} is a global environment; use Device-Com terminals to identify against it`,
    )
  }
  if (project.environment_owner_org_id !== project.org_id) {
    throw new ServiceError('environment_read_only', `project ${project.id} does not own environment ${project.environment_id}`)
  }
}
