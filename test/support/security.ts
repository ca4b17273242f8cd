// The shared security suite: fixtures of two tenants, and the checks every route of the route table
// must pass according to its `auth` list and declared `access` (401 without a credential, 403 for the wrong kind, 403/404
// for a key of another project, 404 across tenants, 401 right after a revocation). Request
// parameters and bodies are generated from the route's own schemas, so new routes are covered
// without touching this file.
import { expect } from 'vitest'
import { hashSecret, newSecret } from '../../src/auth/secrets.js'
import type { Route } from '../../src/http/route.js'
import { compile, type TSchema } from '../../src/http/schema.js'
import { newId } from '../../src/ids.js'
import type { PlanId } from '../../src/plans.js'
import { createProjectOnPlan } from './plans.js'
import { expectProblem, expectStatus, type Response, type TestService } from './service.js'

export interface Tenant {
  subject: string
  token: string
  orgId: string
  environmentId: string
  /** Two projects of the organization, enterprise plan (the suite sends many requests). */
  projectId: string
  secondProjectId: string
  /** Organization-wide key. */
  orgKey: string
  orgKeyId: string
  /** Key scoped to the second project only. */
  secondProjectKey: string
}

/** An organization with an environment (server lookup allowed), two projects and keys, built through the API. */
export async function createTenant(svc: TestService, subject: string, options: { plan?: PlanId } = {}): Promise<Tenant> {
  const token = await svc.token(subject)
  const post = async (path: string, body: unknown) => {
    const response = await svc.request('POST', path, { auth: token, body })
    expectStatus(response, 201)
    return response.body
  }
  const org = await post('/v1/organizations', { name: `${subject} org` })
  const environment = await post(`/v1/organization/${org.id}/environments`, { name: 'main', enables_server_lookup: true })
  const plan = options.plan ?? 'enterprise'
  // The admin creates them on the self-service plan; the platform operator sets the plan.
  const project = await createProjectOnPlan(svc, token, org.id, { name: 'first', environment_id: environment.id, plan })
  const second = await createProjectOnPlan(svc, token, org.id, { name: 'second', environment_id: environment.id, plan })
  const orgKey = await post(`/v1/organization/${org.id}/api-keys`, { name: 'org-wide', project_ids: null })
  const secondKey = await post(`/v1/organization/${org.id}/api-keys`, { name: 'second only', project_ids: [second.id] })
  return {
    subject,
    token,
    orgId: org.id,
    environmentId: environment.id,
    projectId: project.id,
    secondProjectId: second.id,
    orgKey: orgKey.key,
    orgKeyId: orgKey.id,
    secondProjectKey: secondKey.key,
  }
}

/** Real sub-resources of the tenant's first project, inserted directly (whatever routes exist yet). */
export interface SubResources {
  deviceId: string
  deviceToken: string
  memberId: string
  webhookId: string
  deliveryId: string
  sessionId: string
}

export async function createSubResources(svc: TestService, tenant: Tenant): Promise<SubResources> {
  const sql = svc.storage.db.sql
  const deviceId = newId()
  const deviceSecret = newSecret()
  const memberId = newId()
  const webhookId = newId()
  const deliveryId = newId()
  const sessionId = newId()
  const now = Math.floor(Date.now() / 1000)
  await sql`INSERT INTO devices (id, project_id, name, mode, hardware_platform, token_hash)
    VALUES (${deviceId}, ${tenant.projectId}, 'security suite', 'enrollment', 'android', ${hashSecret(deviceSecret)})`
  await sql`INSERT INTO members (id, project_id, environment_id, display_name)
    VALUES (${memberId}, ${tenant.projectId}, ${tenant.environmentId}, 'security suite')`
  await sql`INSERT INTO webhook_subscriptions (id, project_id, url, secret, event_types)
    VALUES (${webhookId}, ${tenant.projectId}, 'https://example.com/hook', 'whsec_c2VjdXJpdHk=', ${['enrollment.completed']})`
  await sql`INSERT INTO webhook_deliveries (id, subscription_id, project_id, event_id, event_type, payload)
    VALUES (${deliveryId}, ${webhookId}, ${tenant.projectId}, ${newId()}, 'enrollment.completed', ${sql.json({})})`
  await sql`INSERT INTO enrollment_sessions (id, device_id, project_id, member_id, state, nbf, iat, exp, challenge)
    VALUES (${sessionId}, ${deviceId}, ${tenant.projectId}, ${memberId}, 'pending', ${now}, ${now}, ${now + 300}, 'security-suite')`
  return { deviceId, deviceToken: `pvd_${deviceId}.${deviceSecret}`, memberId, webhookId, deliveryId, sessionId }
}

// ---- request generation from the route's schemas ----------------------------------------------

type Schema = Record<string, any>

/** Values for ids that name a sub-resource, by property or parameter name. */
export function idValues(tenant: Tenant, sub: SubResources): Record<string, string> {
  return {
    org_id: tenant.orgId,
    organization_id: tenant.orgId,
    project_id: tenant.projectId,
    environment_id: tenant.environmentId,
    key_id: tenant.orgKeyId,
    device_id: sub.deviceId,
    member_id: sub.memberId,
    webhook_id: sub.webhookId,
    subscription_id: sub.webhookId,
    delivery_id: sub.deliveryId,
    session_id: sub.sessionId,
    enroll_id: sub.sessionId,
  }
}

/**
 * A value that satisfies the schema: every property, each at its smallest valid value. `values`
 * gives chosen values by property name (a real capture, a null hand, k=10).
 */
export function example(schema: Schema, ids: Record<string, string>, name = '', values: Record<string, unknown> = {}): unknown {
  if (Object.hasOwn(values, name)) return values[name]
  if (schema.nullable) return null
  if ('const' in schema) return schema.const
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf && !schema.type) return example(schema.anyOf.find((variant: Schema) => variant.type !== 'null') ?? schema.anyOf[0], ids, name, values)
  if (schema.oneOf) return example(schema.oneOf[0], ids, name, values)
  switch (schema.type) {
    // Optional properties too: handlers may insist on "at least one of" them beyond the schema.
    // A property an anyOf branch of the object requires (at least one hand) gets a value, not null.
    case 'object': {
      const needed = new Set(((schema.anyOf ?? []) as Schema[]).flatMap((branch) => branch.required ?? []))
      return Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([key, property]) => [
          key,
          example(needed.has(key) ? { ...property, nullable: false } : property, ids, key, values),
        ]),
      )
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => example(schema.items ?? {}, ids, name, values))
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (schema.type === 'integer' ? 1 : 0.5) : 1)
      return schema.maximum !== undefined ? Math.min(low, schema.maximum) : low
    }
    case 'boolean':
      return true
    case 'string': {
      if (schema.format === 'uuid') return ids[name] ?? newId()
      if (schema.format === 'date-time') return new Date().toISOString()
      if (schema.format === 'uri' || schema.format === 'url' || /url/.test(name)) return 'https://example.com/hook'
      if (schema.format === 'email') return 'someone@example.com'
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1))
    }
    case 'null':
      return null
    default:
      return 'x'
  }
}

export interface RouteRequest {
  path: string
  query: string
  body: unknown
}

const plainSchema = (schema: TSchema | undefined): Schema => JSON.parse(JSON.stringify(schema ?? { type: 'object' }))

/** A request that passes the route's own validation, with the given path ids (and chosen values, by name). */
export function requestFor(route: Route, ids: Record<string, string>, values: Record<string, unknown> = {}): RouteRequest {
  const path = route.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => ids[name] ?? newId())
  let query = ''
  if (route.query) {
    const parameters = example(plainSchema(route.query), ids, '', values) as Record<string, unknown>
    if (parameters.from !== undefined && parameters.to !== undefined) parameters.from = new Date(Date.now() - 3_600_000).toISOString()
    const strings = Object.fromEntries(Object.entries(parameters).map(([key, value]) => [key, String(value)]))
    const validate = compile(route.query, 'query')
    expect(validate({ ...strings }), `generated query for ${route.method} ${route.path}: ${JSON.stringify(validate.errors)}`).toBe(true)
    query = `?${new URLSearchParams(strings)}`
  }
  let body: unknown
  if (route.body) {
    body = example(plainSchema(route.body), ids, '', values)
    const validate = compile(route.body, 'body')
    expect(validate(body), `generated body for ${route.method} ${route.path}: ${JSON.stringify(validate.errors)}`).toBe(true)
  } else if (['post', 'put', 'patch'].includes(route.method)) {
    body = {}
  }
  return { path, query, body }
}

// ---- the checks ---------------------------------------------------------------------------------

export interface SecurityFixtures {
  svc: TestService
  /** The tenant whose resources are addressed. */
  owner: Tenant
  sub: SubResources
  /** Another organization. */
  stranger: Tenant
}

export const send = (fixtures: SecurityFixtures, route: Route, request: RouteRequest, auth?: string, path = request.path): Promise<Response> =>
  fixtures.svc.request(route.method.toUpperCase(), path + request.query, { auth, body: request.body })

const describeRoute = (route: Route) => `${route.method.toUpperCase()} ${route.path}`

const SUB_RESOURCE_PARAMS = ['device_id', 'member_id', 'webhook_id', 'delivery_id', 'session_id', 'enroll_id']
/** Does the route's declared access address a project, or a device of one (so tenancy and key scope apply)? */
export const addressesProject = (route: Route) => ['project', 'tenant-project', 'device', 'tenant-device'].includes(route.access)
/** Does the route's declared access address a project named in its path (not through a device)? */
export const addressesProjectByPath = (route: Route) => route.access === 'project' || route.access === 'tenant-project'
export const addressesOrganization = (route: Route) => route.access === 'org-admin'
export const hasSubResource = (route: Route) => SUB_RESOURCE_PARAMS.some((name) => route.path.includes(`:${name}`))

export const accepts = (route: Route, kind: 'token' | 'key' | 'device' | 'none') => route.auth.includes(kind)

/** No credential: 401, problem+json, WWW-Authenticate: Bearer. */
export async function checkNoCredential(fixtures: SecurityFixtures, route: Route, request: RouteRequest) {
  const response = await send(fixtures, route, request)
  expectProblem(response, 401, 'unauthenticated', describeRoute(route))
  expect(response.headers.get('www-authenticate'), describeRoute(route)).toMatch(/^Bearer/)
  const garbage = await send(fixtures, route, request, 'not-a-credential')
  expectProblem(garbage, 401, 'unauthenticated', describeRoute(route))
}

/** Each credential kind the route does not accept: 403 forbidden. */
export async function checkWrongKinds(fixtures: SecurityFixtures, route: Route, request: RouteRequest) {
  const credentials = { token: fixtures.owner.token, key: fixtures.owner.orgKey, device: fixtures.sub.deviceToken }
  const refused = (Object.keys(credentials) as Array<keyof typeof credentials>).filter((kind) => !accepts(route, kind))
  for (const kind of refused) {
    expectProblem(await send(fixtures, route, request, credentials[kind]), 403, 'forbidden', describeRoute(route))
  }
}

/** A key scoped to the tenant's other project: 403 or 404, never success. */
export async function checkKeyOfAnotherProject(fixtures: SecurityFixtures, route: Route, request: RouteRequest) {
  const response = await send(fixtures, route, request, fixtures.owner.secondProjectKey)
  if (response.status !== 403 && response.status !== 404) {
    throw new Error(`${describeRoute(route)}: a key scoped to another project got ${response.status}: ${response.text.slice(0, 600)}`)
  }
  expect(['forbidden', 'not_found'], describeRoute(route)).toContain(response.body.code)
}

/** Another organization's token and key on the tenant's resources: 404. */
export async function checkStranger(fixtures: SecurityFixtures, route: Route, request: RouteRequest) {
  if (accepts(route, 'token')) expectProblem(await send(fixtures, route, request, fixtures.stranger.token), 404, 'not_found', describeRoute(route))
  if (accepts(route, 'key')) expectProblem(await send(fixtures, route, request, fixtures.stranger.orgKey), 404, 'not_found', describeRoute(route))
}

/** A sub-resource of the first project, addressed through the second project of the same organization: 404. */
export async function checkOtherProjectsSubResource(fixtures: SecurityFixtures, route: Route, request: RouteRequest) {
  const path = request.path.replace(fixtures.owner.projectId, fixtures.owner.secondProjectId)
  const auth = accepts(route, 'token') ? fixtures.owner.token : fixtures.owner.orgKey
  expectProblem(await send(fixtures, route, request, auth, path), 404, 'not_found', describeRoute(route))
}

/** A key that worked a moment ago is refused with 401 on the very next request after DELETE. */
export async function checkRevokedKey(fixtures: SecurityFixtures, route: Route, request: RouteRequest) {
  const { svc, owner } = fixtures
  const created = await svc.request('POST', `/v1/organization/${owner.orgId}/api-keys`, { auth: owner.token, body: { name: 'to revoke', project_ids: null } })
  expectStatus(created, 201)
  expectStatus(await svc.request('GET', '/v1/projects', { auth: created.body.key }), 200)
  expectStatus(await svc.request('DELETE', `/v1/organization/${owner.orgId}/api-keys/${created.body.id}`, { auth: owner.token }), 204)
  const response = await send(fixtures, route, request, created.body.key)
  expectProblem(response, 401, 'unauthenticated', describeRoute(route))
  expect(response.headers.get('www-authenticate'), describeRoute(route)).toMatch(/^Bearer/)
}
