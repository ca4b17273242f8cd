// The request discipline, whichever transport serves: route lookup, authentication before anything
// else, strict validation, access, the handler, and every error as problem+json. The transport's
// exchange is read before the first await; answers are written only while the client is there.
import type { AppContext } from '../app-context.js'
import { authenticate } from '../auth/authenticate.js'
import { NO_PRINCIPAL } from '../auth/principal.js'
import { ServiceError } from '../errors.js'
import { newId } from '../ids.js'
import { grantAccess } from './access.js'
import { auditRecordOf, isAudited, type AuditFacts } from './audit-record.js'
import { parseJsonBody } from './body.js'
import { BODY_METHODS, type Exchange } from './exchange.js'
import { databaseUnavailable, problemReply } from './problem.js'
import { parseQuery } from './query.js'
import { Reply, StreamReply, routeTemplate, type Route, type RouteContext } from './route.js'
import { createRouter } from './router.js'
import type { ProjectRow } from '../store/projects.js'
import { compile, type Validator } from './schema.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const JSON_TYPE = 'application/json; charset=utf-8'
/** The routes whose latency the operator API's identify charts show (metrics/traffic-window.ts). */
const IDENTIFY_OPERATIONS = new Set(['identifyPalm', 'identifyOnTerminal'])

interface CompiledRoute {
  route: Route
  validateParams?: Validator
  validateQuery?: Validator
  validateBody?: Validator
  defaultStatus: number
  /** The route's name in the metrics. */
  template: string
}

function compileRoute(route: Route): CompiledRoute {
  return {
    route,
    validateParams: route.params ? compile(route.params, 'query') : undefined,
    validateQuery: route.query ? compile(route.query, 'query') : undefined,
    validateBody: route.body ? compile(route.body, 'body') : undefined,
    defaultStatus: route.responses.find((response) => response.status < 300)?.status ?? 200,
    template: routeTemplate(route),
  }
}

function invalid(where: string, validator: Validator): ServiceError {
  const errors = validator.errors ?? []
  const first = errors[0]
  return new ServiceError(validator.errorCode ?? 'invalid_request', first ? `${where}: ${first.path} ${first.message}` : `${where} is invalid`, { errors })
}

/** The peer, or behind a trusted reverse proxy the client it names first in X-Forwarded-For. */
function clientAddressOf(exchange: Exchange, trustProxy: boolean): string {
  const forwarded = trustProxy ? exchange.headers['x-forwarded-for']?.split(',')[0]?.trim() : undefined
  return forwarded || exchange.remoteAddress
}

/** The query and the body, parsed and checked against the route's schemas and its own input check. */
async function checkedInput(compiled: CompiledRoute, exchange: Exchange): Promise<{ query: Record<string, unknown>; body: unknown }> {
  const query: Record<string, unknown> = parseQuery(exchange.query)
  if (compiled.validateQuery && !compiled.validateQuery(query)) throw invalid('query', compiled.validateQuery)
  let body: unknown
  if (BODY_METHODS.has(exchange.method)) {
    const raw = await exchange.body
    if (compiled.validateBody) {
      body = parseJsonBody(raw, exchange.headers['content-type'] ?? '')
      if (!compiled.validateBody(body)) throw invalid('body', compiled.validateBody)
    } else body = {}
  }
  compiled.route.checkInput?.({ query, body })
  return { query, body }
}

/** Runs one route: authenticate, validate, grant access, handle. Errors come back as problem replies. */
async function answer(
  app: AppContext,
  compiled: CompiledRoute,
  exchange: Exchange,
  rawParams: Record<string, string>,
  requestId: string,
  clientAddress: string,
  log: () => AppContext['log'],
  responseHeaders: Record<string, string>,
  facts: AuditFacts,
): Promise<Reply> {
  const { route } = compiled
  try {
    if (route.verifyRequest) {
      route.verifyRequest({
        method: exchange.method,
        target: exchange.query ? `${exchange.path}?${exchange.query}` : exchange.path,
        headers: exchange.headers,
        body: await exchange.body,
        app,
        requestId,
        clientAddress,
      })
    }
    // While the database cannot be reached, answer at once rather than queue behind it.
    if (route.usesDatabase !== false && !app.db.available) throw databaseUnavailable()
    // Authenticate first, so a caller without a valid credential learns nothing about the route's
    // rules; a path id is only used for the key's project read once it is a valid UUID.
    const params = { ...rawParams }
    const paramsValid = !compiled.validateParams || compiled.validateParams(params)
    // Validators are shared by concurrent requests: keep this one's errors before any await.
    const paramErrors = paramsValid ? [] : (compiled.validateParams!.errors ?? [])
    const principal =
      route.auth.length === 1 && route.auth[0] === 'none'
        ? NO_PRINCIPAL
        : await authenticate(app, exchange.headers.authorization ?? '', route.auth, paramsValid ? (params.project_id ?? null) : null)
    facts.principal = principal
    if (!paramsValid) {
      throw new ServiceError('invalid_request', `path: ${paramErrors[0]?.path.slice(1)} must be a UUID`, { errors: paramErrors })
    }
    const { query, body } = await checkedInput(compiled, exchange)
    const granted = await grantAccess(app, route, principal, params, responseHeaders)
    facts.granted = true
    facts.project = granted.project
    const context = {
      params,
      query,
      body,
      principal,
      requestId,
      clientAddress,
      headers: exchange.headers,
      app,
      aborted: exchange.aborted,
      responseHeaders,
      get log() {
        return log()
      },
      attribute: (project: ProjectRow) => {
        facts.project = project
      },
      ...granted,
    } as RouteContext
    // A client gone before its request runs gets nothing done: on uWS an async-pipelined request
    // closes the connection (its C++ layer refuses a second request while one is pending), and a
    // write nobody can be told about must not happen.
    if (exchange.isAborted()) throw new ServiceError('invalid_request', 'the client closed the connection before the request ran')
    const result = await route.handler(context)
    if (result instanceof Reply) return result
    if (result === undefined || compiled.defaultStatus === 204) return new Reply(compiled.defaultStatus, null)
    return new Reply(compiled.defaultStatus, JSON.stringify(result), JSON_TYPE)
  } catch (error) {
    return problemReply(error, requestId, log)
  }
}

export function createDispatcher(app: AppContext, routes: Route[]) {
  const router = createRouter(routes.map((route) => ({ route, target: compileRoute(route) })))

  return async function dispatch(exchange: Exchange): Promise<void> {
    const started = performance.now()
    const suppliedId = exchange.headers['x-request-id'] ?? ''
    const requestId = SANE_REQUEST_ID.test(suppliedId) ? suppliedId : newId()
    // A child logger costs a pass of the redaction over its bindings: made only when a line is written.
    let requestLog: AppContext['log'] | undefined
    const log = () => (requestLog ??= app.log.child({ request_id: requestId }))
    // Awaited after authentication; until then a rejection (413) must not count as unhandled.
    exchange.body.catch(() => {})
    const found = router.lookup(exchange.method, exchange.path)
    const responseHeaders: Record<string, string> = {}
    let reply: Reply
    const facts: AuditFacts = {}
    const clientAddress = clientAddressOf(exchange, app.config.trustProxy)
    if (found.kind === 'route') reply = await answer(app, found.target, exchange, found.params, requestId, clientAddress, log, responseHeaders, facts)
    else if (found.kind === 'method_not_allowed') {
      reply = problemReply(
        new ServiceError('method_not_allowed', `${exchange.method} is not allowed on ${exchange.path}`, { headers: { Allow: found.allow.join(', ') } }),
        requestId,
        log,
      )
    } else reply = problemReply(new ServiceError('not_found', `no route for ${exchange.method} ${exchange.path}`), requestId, log)
    for (const [name, value] of Object.entries(responseHeaders)) reply.headers[name] ??= value
    const head = {
      status: reply.status,
      headers: { 'X-Request-Id': requestId, ...(reply.contentType ? { 'Content-Type': reply.contentType } : {}), ...reply.headers },
    }
    if (reply instanceof StreamReply) {
      try {
        await exchange.stream(head, reply.chunks)
      } catch (error) {
        log().error({ err: error }, 'streamed response failed')
      }
    } else if (!exchange.isAborted()) exchange.send(head, reply.body)
    if (found.kind === 'route' && isAudited(found.target.route)) {
      app.audit.record(
        auditRecordOf({
          route: found.target.route,
          facts,
          params: found.params,
          requestId,
          status: reply.status,
          clientAddress,
          userAgent: exchange.headers['user-agent'],
          at: new Date(),
        }),
      )
    }
    const ms = performance.now() - started
    app.traffic.record(found.kind === 'route' && IDENTIFY_OPERATIONS.has(found.target.route.operationId), reply.status, ms)
    app.metrics.request(
      exchange.method,
      found.kind === 'route' ? found.target.template : found.kind === 'method_not_allowed' ? 'method_not_allowed' : 'unmatched',
      reply.status,
      ms / 1000,
    )
    app.log.info(
      {
        request_id: requestId,
        method: exchange.method,
        url: exchange.path,
        route: found.kind === 'route' ? found.target.route.path : undefined,
        status: reply.status,
        ms: Math.round(ms * 10) / 10,
        aborted: exchange.isAborted() || undefined,
      },
      'request',
    )
  }
}
