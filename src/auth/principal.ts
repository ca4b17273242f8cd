// Who is calling. Resolved once per request from the Authorization header.
import type { ProjectRow } from '../store/projects.js'

export type Principal =
  | { kind: 'none' }
  /** An identity token (JWT) user; organization admin rights are looked up in the database. */
  | { kind: 'token'; subject: string }
  /**
   * An API key: organization-wide when projectIds is null. `prefetched` is the project the request's
   * path names, read in the same query as the key (loadProject uses it instead of reading again).
   */
  | { kind: 'key'; keyId: string; orgId: string; projectIds: string[] | null; prefetched?: { projectId: string; project: ProjectRow | null } }
  /**
   * A terminal authenticated by its device token (Device-Com). `project` is its project, read in the
   * same query as the device (null while the device is not linked to one).
   */
  | { kind: 'device'; deviceId: string; projectId: string | null; mode: string; project: ProjectRow | null }

export const NO_PRINCIPAL: Principal = { kind: 'none' }

/** caller_type of scan results. */
export function callerType(principal: Principal): 'api_key' | 'token' | 'device' {
  if (principal.kind === 'key') return 'api_key'
  if (principal.kind === 'device') return 'device'
  return 'token'
}
