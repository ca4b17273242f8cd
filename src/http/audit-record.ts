// What the audit trail keeps of one request: the caller, the organization and project it was
// attributed to, the route template, the ids the path named, the status and the client. Never a
// body, a query string, a header other than the user agent, or a credential.
import type { Principal } from '../auth/principal.js'
import type { AuditRecord } from '../domain/audit/audit.js'
import type { ProjectRow } from '../store/projects.js'
import { routeTemplate, type Route } from './route.js'

/** Filled in while the request runs: how far it got. */
export interface AuditFacts {
  principal?: Principal
  project?: ProjectRow
  /** Access to what the path names was granted. */
  granted?: boolean
}

/** Health checks and the API description reach no tenant data and change nothing; node-to-node calls serve an audited request. */
export const isAudited = (route: Route): boolean => !route.internal && !(route.method === 'get' && route.auth.every((kind) => kind === 'none'))

const ID_LENGTH = 64
const USER_AGENT_LENGTH = 256

function actorOf(principal: Principal | undefined): Pick<AuditRecord, 'actor_kind' | 'actor_id'> {
  switch (principal?.kind) {
    case 'token':
      return { actor_kind: 'token', actor_id: principal.subject }
    case 'key':
      return { actor_kind: 'api_key', actor_id: principal.keyId }
    case 'device':
      return { actor_kind: 'device', actor_id: principal.deviceId }
    default:
      return { actor_kind: 'anonymous', actor_id: null }
  }
}

/**
 * The organization whose chain keeps the record: the API key's, else the one of the project or
 * organization the request was granted. A refused token request (its subject may administer none
 * of what it named) goes to the platform chain, so no organization sees another's callers.
 */
function organizationOf(route: Route, facts: AuditFacts, params: Record<string, string>): string | null {
  if (facts.principal?.kind === 'key') return facts.principal.orgId
  if (facts.project) return facts.project.org_id
  if (facts.granted && route.access === 'org-admin') return params.org_id
  return null
}

/** `POST /v1/projects/{project_id}/biometrics/identify`: made once per route, not per request. */
const actions = new WeakMap<Route, string>()
function actionOf(route: Route): string {
  let action = actions.get(route)
  if (action === undefined) {
    action = `${route.method.toUpperCase()} ${routeTemplate(route)}`
    actions.set(route, action)
  }
  return action
}

export function auditRecordOf(input: {
  route: Route
  facts: AuditFacts
  params: Record<string, string>
  requestId: string
  status: number
  clientAddress: string
  userAgent: string | undefined
  at: Date
}): AuditRecord {
  const { route, facts, params } = input
  const resourceIds = Object.fromEntries(
    Object.entries(params)
      .filter(([name]) => name.endsWith('_id'))
      .map(([name, value]) => [name, value.slice(0, ID_LENGTH)]),
  )
  const projectId = facts.project?.id ?? null
  return {
    org_id: organizationOf(route, facts, params),
    created_at: input.at,
    request_id: input.requestId,
    project_id: projectId,
    ...actorOf(facts.principal),
    action: actionOf(route),
    resource_ids: resourceIds,
    status: input.status,
    client_address: input.clientAddress || null,
    user_agent: input.userAgent?.slice(0, USER_AGENT_LENGTH) ?? null,
  }
}
