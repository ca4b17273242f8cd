// The baseline of bench:http: the very same route (its handler, authentication, access check and
// rate limiter, from dist/) served by node:http instead of uWebSockets.js, against the same
// database. Only the HTTP layer differs. Started by bench/http.mjs as a child process:
//   PALMVEIN_DATA_DIR=... [DATABASE_URL=...] BENCH_PORT=... [BENCH_MAX_LEASE=1] node bench/http-baseline.mjs
// BENCH_MAX_LEASE=1 turns the rate limiter's leased fast path off (one database write per request).
import http from 'node:http'
import { pino } from 'pino'

const dist = new URL('../dist/', import.meta.url)
const load = (file) => import(new URL(file, dist).href)
const [
  { loadConfig },
  { openDatabase },
  { loadIdentityTokens },
  { createApiKeyLookup },
  { createApiKeyUsage, createDeviceAuthUsage },
  { createDeviceTokenLookup },
  { createRateLimiter },
  { authenticate },
  { routeTable },
  { compile },
  { problemReply },
  { newId },
  { grantAccess },
] = await Promise.all([
  load('config.js'),
  load('store/engine/database.js'),
  load('auth/identity-tokens.js'),
  load('auth/api-key-lookup.js'),
  load('auth/usage-touch.js'),
  load('auth/device-token-lookup.js'),
  load('auth/rate-limit.js'),
  load('auth/authenticate.js'),
  load('http/routes/index.js'),
  load('http/schema.js'),
  load('http/problem.js'),
  load('ids.js'),
  load('http/access.js'),
])

const config = loadConfig({ logLevel: 'silent' })
const log = pino({ level: 'silent' })
const db = await openDatabase(config)
const maxLease = process.env.BENCH_MAX_LEASE ? Number(process.env.BENCH_MAX_LEASE) : undefined
const app = {
  config,
  db,
  sql: db.sql,
  log,
  tokens: await loadIdentityTokens(config),
  // Joined to the service's embedded database over loopback, so its keys are read every time (the
  // service, which serves that database, caches them).
  apiKeys: createApiKeyLookup(db),
  apiKeyUsage: createApiKeyUsage(db.sql, () => {}),
  deviceTokens: createDeviceTokenLookup(db),
  deviceAuthUsage: createDeviceAuthUsage(db.sql, () => {}),
  rateLimiter: createRateLimiter(db.sql, { maxLease }),
  health: [],
  shuttingDown: false,
}
const route = routeTable('bench').find((candidate) => candidate.method === 'get' && candidate.path === '/v1/projects/:project_id')
const validateParams = compile(route.params, 'query')
const PATH = /^\/v1\/projects?\/([^/?]+)\/?(?:\?.*)?$/

const server = http.createServer(async (req, res) => {
  const requestId = newId()
  const match = req.method === 'GET' ? PATH.exec(req.url ?? '') : null
  let status = 200
  let body
  let contentType = 'application/json; charset=utf-8'
  let headers = {}
  const responseHeaders = {}
  try {
    if (!match) throw Object.assign(new Error('no route'), { status: 404 })
    const params = { project_id: match[1] }
    if (!validateParams(params)) throw new Error('bad project id')
    const principal = await authenticate(app, req.headers.authorization ?? '', route.auth, params.project_id)
    // The route's access rule and rate limit, as the service's dispatcher applies them.
    const granted = await grantAccess(app, route, principal, params, responseHeaders)
    const result = await route.handler({
      params,
      query: {},
      body: undefined,
      principal,
      requestId,
      headers: {},
      app,
      log,
      aborted: new Promise(() => {}),
      responseHeaders,
      ...granted,
    })
    body = JSON.stringify(result)
  } catch (error) {
    const reply = problemReply(error, requestId, log)
    status = reply.status
    body = reply.body
    contentType = reply.contentType
    headers = reply.headers
  }
  res.writeHead(status, { 'X-Request-Id': requestId, 'Content-Type': contentType, ...responseHeaders, ...headers })
  res.end(body)
})
server.keepAliveTimeout = 30_000

const port = Number(process.env.BENCH_PORT ?? 0)
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`BASELINE_LISTENING ${server.address().port}\n`)
})
const stop = async () => {
  server.close()
  server.closeAllConnections?.()
  await app.rateLimiter.release()
  await db.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
