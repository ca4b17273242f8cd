// Access rules: a token user reaches only organizations it administers; an API key reaches only its
// organization's projects (all, or its scoped list); a foreign resource answers 404 like a missing one.
import type { RouteContext } from '../http/route.js'
import { ServiceError, notFound } from '../errors.js'
import { projectById, type ProjectRow } from '../store/projects.js'

type Caller = Pick<RouteContext, 'principal' | 'app'> & { responseHeaders?: Record<string, string> }

export async function requireOrgAdmin(context: Caller, orgId: string): Promise<void> {
  const { principal, app } = context
  if (principal.kind !== 'token') throw new ServiceError('forbidden', 'this operation needs an identity token of an organization admin')
  const [row] = await app.sql`SELECT 1 FROM organization_admins WHERE org_id = ${orgId} AND subject = ${principal.subject}`
  if (!row) throw notFound('organization')
}

/** May this caller reach the project? Throws 404 (foreign or missing) or 403 (key not scoped to it). */
export function checkProjectAccess(context: Caller, project: (ProjectRow & { caller_is_admin?: boolean }) | null): ProjectRow {
  const { principal } = context
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

/**
 * Load a project the caller may reach and count the request against its rate limits
 * (the RateLimit-* headers go on the response).
 */
export async function loadProject(context: Caller, projectId: string, options: { rateLimited?: boolean } = {}): Promise<ProjectRow> {
  const { principal } = context
  const subject = principal.kind === 'token' ? principal.subject : null
  const prefetched = principal.kind === 'key' && principal.prefetched?.projectId === projectId ? principal.prefetched : null
  const project = checkProjectAccess(context, prefetched ? prefetched.project : await projectById(context.app.sql, projectId, subject))
  if (options.rateLimited !== false) {
    const headers = await context.app.rateLimiter.charge(project)
    if (context.responseHeaders) Object.assign(context.responseHeaders, headers)
  }
  return project
}

/** Members, member listing and biometrics work only on an organization (tenant-managed) environment. */
export function requireTenantManaged(project: ProjectRow): void {
  if (!project.environment_id) {
    throw new ServiceError('environment_not_tenant_managed', `project ${project.id} has no environment`)
  }
  if (project.environment_owner_kind !== 'customer') {
    throw new ServiceError('environment_not_tenant_managed', `environment ${project.environment_id} is a global environment; use Device-Com terminals to identify against it`)
  }
  if (project.environment_owner_org_id !== project.org_id) {
    throw new ServiceError('environment_read_only', `project ${project.id} does not own environment ${project.environment_id}`)
  }
}
