// What a route is: method, path, credential kinds, access, schemas and the handler. The route table
// in routes/index.ts lists every one; server.ts serves them and openapi.ts documents them.
import type { TSchema, Static } from '@sinclair/typebox'
import type { Logger } from 'pino'
import type { Access, CredentialKind } from '../auth/credentials.js'
import type { Principal } from '../auth/principal.js'
import type { Granted } from '../auth/route-access.js'
import type { AppContext } from '../app-context.js'
import type { ProjectRow } from '../store/projects.js'

export type { Access, CredentialKind }
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'

export interface RequestContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  params: P
  query: Q
  body: B
  principal: Principal
  requestId: string
  /** The client's IP address: the peer's, or with PALMVEIN_TRUST_PROXY the first X-Forwarded-For entry. */
  clientAddress: string
  /** Lower-case request headers that handlers may read (content-type, if-none-match, ...). */
  headers: Record<string, string>
  app: AppContext
  log: Logger
  /** Resolves when the client has gone away (long polls stop waiting). */
  aborted: Promise<void>
  /** Headers added to the response whatever it is (RateLimit-*). */
  responseHeaders: Record<string, string>
  /** The audit trail keeps this request in the chain of this project's organization (for a handler that finds the project itself). */
  attribute(project: ProjectRow): void
}

/** The request, and what the route's access loaded (its project, device or terminal). */
export type RouteContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown, A extends Access = Access> = RequestContext<P, Q, B> & Granted<A>

/** A reply that is not plain JSON with the route's default status (CSV, 204 on a long poll, ...). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: string | Buffer | null,
    readonly contentType: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {}

  static json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
    return new Reply(status, JSON.stringify(value), 'application/json; charset=utf-8', headers)
  }
}

/**
 * A reply whose body is produced while it is sent (large CSV exports): chunked transfer encoding,
 * with backpressure. Fetch the first chunk in the handler, so errors before it still answer as
 * problem+json; an error after the status line went out can only cut the connection.
 */
export class StreamReply extends Reply {
  constructor(
    status: number,
    readonly chunks: AsyncIterable<string | Buffer>,
    contentType: string,
    headers: Record<string, string> = {},
  ) {
    super(status, null, contentType, headers)
  }
}

export interface ResponseSpec {
  status: number
  description: string
  schema?: TSchema
  contentType?: string
}

/** What verifyRequest sees: the request as received, and the app to count and audit a refusal. */
export interface VerifiableRequest {
  method: string
  /** Path and query as received. */
  target: string
  headers: Readonly<Record<string, string>>
  body: Buffer
  app: AppContext
  requestId: string
  clientAddress: string
}

export interface Route<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema, A extends Access = Access> {
  /** The OpenAPI operationId: the name a generated client gives the call (identifyPalm, listMembers). */
  operationId: string
  method: Method
  /** uWS pattern with :params, e.g. /v1/projects/:project_id/members */
  path: string
  auth: CredentialKind[]
  /** What the caller must be allowed to reach; resolved by the HTTP layer before the handler. */
  access: A
  summary: string
  tags: string[]
  /** Our additions to the spec (admin routes, Device-Com): marked so in OpenAPI. */
  extension?: boolean
  /** Node-to-node (cluster mode): not in OpenAPI, not audited (the request that caused it is). */
  internal?: boolean
  /** False for the few routes that never touch the database (liveness, readiness, the OpenAPI document). */
  usesDatabase?: boolean
  /** Each request is charged to the project its access resolves (project routes, device routes, Device-Com), or on end-user routes to the person. */
  rateLimited?: boolean
  params?: P
  query?: Q
  body?: B
  /**
   * Checked before anything else (the database, authentication, the body's schema) on the request
   * as received: node-to-node signatures. Throws a ServiceError to refuse.
   */
  verifyRequest?(request: VerifiableRequest): void
  /** Rules across validated fields that a schema cannot say (from <= to); checked before access. */
  checkInput?(input: { query: Static<Q>; body: Static<B> }): void
  responses: ResponseSpec[]
  handler(context: RouteContext<Static<P>, Static<Q>, Static<B>, A>): Promise<unknown>
}

/** Identity function that keeps each route's types tied to its schemas and access. */
/** The path as the OpenAPI document writes it (`/v1/projects/{project_id}`): also the route's name in audit records and metrics. */
export const routeTemplate = (route: Pick<Route, 'path'>): string => route.path.replace(/:([A-Za-z_]+)/g, '{$1}')

export function defineRoute<P extends TSchema, Q extends TSchema, B extends TSchema, A extends Access>(route: Route<P, Q, B, A>): Route {
  return route as unknown as Route
}
