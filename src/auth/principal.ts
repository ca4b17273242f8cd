// Who is calling. Resolved once per request from the Authorization header.
export type Principal =
  | { kind: 'none' }
  /** An identity token (JWT) user; organization admin rights are looked up in the database. */
  | { kind: 'token'; subject: string }
  /** An API key: organization-wide when projectIds is null. */
  | { kind: 'key'; keyId: string; orgId: string; projectIds: string[] | null }
  /** A terminal authenticated by its device token (Device-Com). */
  | { kind: 'device'; deviceId: string; projectId: string | null; mode: string }

export const NO_PRINCIPAL: Principal = { kind: 'none' }

/** caller_type of scan results. */
export function callerType(principal: Principal): 'api_key' | 'token' | 'device' {
  if (principal.kind === 'key') return 'api_key'
  if (principal.kind === 'device') return 'device'
  return 'token'
}
