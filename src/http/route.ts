// What a route is: method, path, credential kinds, schemas and the handler. The route table in
// routes/index.ts lists every one; server.ts serves them and openapi.ts documents them.
import type { TSchema, Static } from '@sinclair/typebox'
import type { Logger } from 'pino'
import type { Principal } from '../auth/principal.js'
import type { AppContext } from '../app-context.js'

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'

/**
 * Credential kinds a route accepts: 'token' (T), 'key' (K), 'device' (a terminal's device token),
 * 'none'. A project route (path with :project_id) is rate-limited per project.
 */
export type CredentialKind = 'token' | 'key' | 'device' | 'none'

export interface RouteContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  params: P
  query: Q
  body: B
  principal: Principal
  requestId: string
  /** Lower-case request headers that handlers may read (content-type, if-none-match, ...). */
  headers: Record<string, string>
  app: AppContext
  log: Logger
  /** Resolves when the client has gone away (long polls stop waiting). */
  aborted: Promise<void>
  /** Headers added to the response whatever it is (RateLimit-*). */
  responseHeaders: Record<string, string>
}

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

export interface Route<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: Method
  /** uWS pattern with :params, e.g. /v1/projects/:project_id/members */
  path: string
  auth: CredentialKind[]
  summary: string
  tags: string[]
  /** Our additions to the spec (admin routes, Device-Com): marked so in OpenAPI. */
  extension?: boolean
  /** Rate-limited per project (project routes, device routes, Device-Com). */
  rateLimited?: boolean
  params?: P
  query?: Q
  body?: B
  responses: ResponseSpec[]
  handler(context: RouteContext<Static<P>, Static<Q>, Static<B>>): Promise<unknown>
}

/** Identity function that keeps each route's types tied to its schemas. */
export function defineRoute<P extends TSchema, Q extends TSchema, B extends TSchema>(route: Route<P, Q, B>): Route {
  return route as unknown as Route
}
