// Projects as a caller sees them: the listing by credential, and the server-lookup switch.
import type { Principal } from '../../auth/principal.js'
import { ServiceError } from '../../errors.js'
import type { Sql } from '../../store/engine/database.js'
import { projectsAdministeredBy, projectsReachableByKey, setServerLookup, type ProjectRow } from '../../store/projects.js'

/** With a token, every project of the organizations the user administers; with a key, every project it reaches. */
export async function reachableProjects(sql: Sql, principal: Principal): Promise<ProjectRow[]> {
  if (principal.kind === 'token') return projectsAdministeredBy(sql, principal.subject)
  if (principal.kind === 'key') return projectsReachableByKey(sql, principal.orgId, principal.projectIds)
  return []
}

/** Enabling needs an environment that allows server lookup; disabling is always allowed. */
export async function switchServerLookup(sql: Sql, project: ProjectRow, enable: boolean): Promise<void> {
  if (enable && !project.environment_id) {
    throw new ServiceError('server_lookup_not_allowed', `project ${project.id} has no environment`)
  }
  if (enable && !project.environment_enables_server_lookup) {
    throw new ServiceError('server_lookup_not_allowed', `environment ${project.environment_id} does not allow server lookup`)
  }
  await setServerLookup(sql, project.id, enable)
}
