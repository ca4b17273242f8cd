// The uWS adapter: serves the route table with the discipline uWS requires. The HttpRequest is read
// synchronously (it dies after the callback); onAborted is attached before the first await; every
// write after an await checks `aborted` and happens inside res.cork().
import { STATUS_CODES } from 'node:http'
import type { Logger } from 'pino'
import type { AppContext } from '../app-context.js'
import { authenticate } from '../auth/authenticate.js'
import { NO_PRINCIPAL } from '../auth/principal.js'
import { ServiceError } from '../errors.js'
import { newId } from '../ids.js'
import { grantAccess } from './access.js'
import { readJsonBody } from './body.js'
import { problemReply } from './problem.js'
import { parseQuery } from './query.js'
import { Reply, StreamReply, type Route, type RouteContext } from './route.js'
import { compile, type Validator } from './schema.js'
import { App, closeListenSocket, listenSocketPort, type HttpRequest, type HttpResponse, type us_listen_socket } from './uws.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const UWS_METHOD = { get: 'get', post: 'post', put: 'put', patch: 'patch', delete: 'del' } as const
const JSON_TYPE = 'application/json; charset=utf-8'

interface CompiledRoute {
  route: Route
  paramNames: string[]
  validateParams?: Validator
  validateQuery?: Validator
  validateBody?: Validator
  defaultStatus: number
}

/** Paths under /v1/projects/ are also answered under the singular /v1/project/ (the guides use it). */
export function servedPaths(path: string): string[] {
  return path.startsWith('/v1/projects/') ? [path, path.replace('/v1/projects/', '/v1/project/')] : [path]
}

function compileRoute(route: Route): CompiledRoute {
  return {
    route,
    paramNames: [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]),
    validateParams: route.params ? compile(route.params, 'query') : undefined,
    validateQuery: route.query ? compile(route.query, 'query') : undefined,
    validateBody: route.body ? compile(route.body, 'body') : undefined,
    defaultStatus: route.responses.find((response) => response.status < 300)?.status ?? 200,
  }
}

function invalid(where: string, validator: Validator): ServiceError {
  const errors = validator.errors ?? []
  const first = errors[0]
  return new ServiceError('invalid_request', first ? `${where}: ${first.path} ${first.message}` : `${where} is invalid`, { errors })
}

function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
}

export interface HttpServer {
  listen(host: string, port: number): Promise<number>
  /** Stop accepting connections, then wait for requests in flight to be answered. */
  close(timeoutMs?: number): Promise<void>
}

export function createHttpServer(app: AppContext, routes: Route[]): HttpServer {
  const uws = App()
  let listenSocket: us_listen_socket | null = null
  let inFlight = 0
  let drained: (() => void) | null = null

  const finish = () => {
    inFlight -= 1
    if (inFlight === 0 && drained) drained()
  }

  function send(res: HttpResponse, state: { aborted: boolean }, requestId: string, reply: Reply) {
    if (state.aborted) return
    res.cork(() => {
      res.writeStatus(statusLine(reply.status))
      res.writeHeader('X-Request-Id', requestId)
      if (reply.contentType) res.writeHeader('Content-Type', reply.contentType)
      for (const [name, value] of Object.entries(reply.headers)) res.writeHeader(name, value)
      if (reply.body === null) res.endWithoutBody(0)
      else res.end(reply.body)
    })
  }

  // Chunked body with backpressure: a write uWS could not flush yet waits for onWritable. A
  // failure after the status line went out closes the connection, so the client sees a cut body.
  async function sendStream(res: HttpResponse, state: { aborted: boolean }, aborted: Promise<void>, requestId: string, reply: StreamReply, log: Logger) {
    if (state.aborted) return
    res.cork(() => {
      res.writeStatus(statusLine(reply.status))
      res.writeHeader('X-Request-Id', requestId)
      if (reply.contentType) res.writeHeader('Content-Type', reply.contentType)
      for (const [name, value] of Object.entries(reply.headers)) res.writeHeader(name, value)
    })
    try {
      for await (const chunk of reply.chunks) {
        if (state.aborted) return
        let flushed = true
        res.cork(() => { flushed = res.write(chunk) })
        if (!flushed) {
          await Promise.race([aborted, new Promise<void>((resolve) => { res.onWritable(() => { resolve(); return true }) })])
          if (state.aborted) return
        }
      }
      if (!state.aborted) res.cork(() => { res.end() })
    } catch (error) {
      log.error({ err: error }, 'streamed response failed')
      if (!state.aborted) res.close()
    }
  }

  async function serve(compiled: CompiledRoute, res: HttpResponse, req: HttpRequest) {
    const started = performance.now()
    const state = { aborted: false }
    let onAbort!: () => void
    const aborted = new Promise<void>((resolve) => { onAbort = resolve })
    res.onAborted(() => { state.aborted = true; onAbort() })
    inFlight += 1

    // Everything from the request, now: it is invalid after the first await.
    const { route } = compiled
    const method = req.getMethod()
    const url = req.getUrl()
    const rawQuery = req.getQuery() ?? ''
    const authorization = req.getHeader('authorization')
    const contentType = req.getHeader('content-type')
    const suppliedId = req.getHeader('x-request-id')
    const headers: Record<string, string> = {}
    req.forEach((name, value) => { if (name !== 'authorization') headers[name] = value })
    const rawParams: Record<string, string> = {}
    compiled.paramNames.forEach((name, index) => { rawParams[name] = req.getParameter(index) ?? '' })
    const requestId = SANE_REQUEST_ID.test(suppliedId) ? suppliedId : newId()
    const log = app.log.child({ request_id: requestId })
    const hasBody = method === 'post' || method === 'put' || method === 'patch'
    const bodyPromise = hasBody ? readJsonBody(res, contentType, Boolean(compiled.validateBody)) : null
    // Awaited after authentication; until then a rejection (413, 415) must not count as unhandled.
    bodyPromise?.catch(() => {})

    let reply: Reply
    const responseHeaders: Record<string, string> = {}
    try {
      // Authenticate first, so a caller without a valid credential learns nothing about the
      // route's rules; a path id is only used for the key's project read once it is a valid UUID.
      const params = { ...rawParams }
      const paramsValid = !compiled.validateParams || compiled.validateParams(params)
      // Validators are shared by concurrent requests: keep this one's errors before any await.
      const paramErrors = paramsValid ? [] : compiled.validateParams!.errors ?? []
      const principal = route.auth.length === 1 && route.auth[0] === 'none'
        ? NO_PRINCIPAL
        : await authenticate(app, authorization, route.auth, paramsValid ? params.project_id ?? null : null)
      if (!paramsValid) {
        throw new ServiceError('invalid_request', `path: ${paramErrors[0]?.path.slice(1)} must be a UUID`, { errors: paramErrors })
      }
      const query: Record<string, unknown> = parseQuery(rawQuery)
      if (compiled.validateQuery && !compiled.validateQuery(query)) throw invalid('query', compiled.validateQuery)
      let body: unknown = undefined
      if (bodyPromise) {
        body = await bodyPromise
        if (compiled.validateBody && !compiled.validateBody(body)) throw invalid('body', compiled.validateBody)
      }
      route.checkInput?.({ query, body })
      const granted = await grantAccess(app, route, principal, params, responseHeaders)
      const context = {
        params, query, body, principal, requestId, headers, app, log, aborted, responseHeaders, ...granted,
      } as RouteContext
      const result = await route.handler(context)
      if (result instanceof Reply) reply = result
      else if (result === undefined || compiled.defaultStatus === 204) reply = new Reply(compiled.defaultStatus, null)
      else reply = new Reply(compiled.defaultStatus, JSON.stringify(result), JSON_TYPE)
    } catch (error) {
      reply = problemReply(error, requestId, log)
    }
    for (const [name, value] of Object.entries(responseHeaders)) reply.headers[name] ??= value
    if (reply instanceof StreamReply) await sendStream(res, state, aborted, requestId, reply, log)
    else send(res, state, requestId, reply)
    log.info({ method, url, route: route.path, status: reply.status, ms: Math.round((performance.now() - started) * 10) / 10, aborted: state.aborted || undefined }, 'request')
    finish()
  }

  const patterns: Array<{ regex: RegExp; methods: string[] }> = []
  for (const route of routes) {
    const compiled = compileRoute(route)
    for (const path of servedPaths(route.path)) {
      uws[UWS_METHOD[route.method]](path, (res, req) => { void serve(compiled, res, req) })
      const regex = new RegExp(`^${path.replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`)
      const known = patterns.find((pattern) => pattern.regex.source === regex.source)
      if (known) known.methods.push(route.method.toUpperCase())
      else patterns.push({ regex, methods: [route.method.toUpperCase()] })
    }
  }

  // Anything else: 405 for a known path with another method, otherwise 404; both as problem+json.
  uws.any('/*', (res, req) => {
    const state = { aborted: false }
    res.onAborted(() => { state.aborted = true })
    const url = req.getUrl()
    const method = req.getMethod().toUpperCase()
    const suppliedId = req.getHeader('x-request-id')
    const requestId = SANE_REQUEST_ID.test(suppliedId) ? suppliedId : newId()
    const allowed = patterns.find((pattern) => pattern.regex.test(url))
    const error = allowed
      ? new ServiceError('method_not_allowed', `${method} is not allowed on ${url}`, { headers: { Allow: allowed.methods.join(', ') } })
      : new ServiceError('not_found', `no route for ${method} ${url}`)
    send(res, state, requestId, problemReply(error, requestId, app.log))
  })

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        uws.listen(host, port, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`))
          listenSocket = socket
          resolve(listenSocketPort(socket as never))
        })
      })
    },
    async close(timeoutMs = 10_000) {
      if (listenSocket) closeListenSocket(listenSocket)
      listenSocket = null
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => { drained = resolve }),
          new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
        ])
      }
      // Not in the bundled typings, but present since uWS v20.16: closes every remaining socket.
      ;(uws as unknown as { close(): void }).close()
    },
  }
}
