// The OpenAPI 3.0 document, generated from the route table: the same schema objects that validate
// requests describe them here.
import type { TSchema } from '@sinclair/typebox'
import { ERROR_STATUS, type ErrorCode } from '../errors.js'
import { SchemaComponents } from './openapi-schema.js'
import { PROBLEM_TYPE } from './problem.js'
import { routeTemplate, type Route } from './route.js'
import { MAX_JSON_DEPTH } from './json-text.js'
import { Problem } from './schema.js'

const SECURITY = { token: { FirebaseAuth: [] }, key: { ApiKeyAuth: [] }, device: { DeviceAuth: [] } } as const

function parameters(route: Route, plain: (schema: TSchema) => Record<string, unknown>) {
  const list: Record<string, unknown>[] = []
  const add = (where: 'path' | 'query', schema: TSchema | undefined) => {
    const properties = (schema?.properties ?? {}) as Record<string, TSchema>
    const required = new Set((schema?.required ?? []) as string[])
    for (const [name, property] of Object.entries(properties)) {
      const { description, ...rest } = plain(property)
      list.push({ name, in: where, required: where === 'path' || required.has(name), description, schema: rest })
    }
  }
  add('path', route.params)
  add('query', route.query)
  return list
}

// Response headers, declared once and referred to by each response that carries them.
const HEADERS = {
  'X-Request-Id': {
    description: "the request id: the caller's X-Request-Id if it was sane, otherwise a new UUID; quote it when reporting a problem",
    schema: { type: 'string' },
  },
  'RateLimit-Limit': { description: 'requests allowed per minute for the charged project', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'requests left in the current minute', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'seconds until the minute window resets', schema: { type: 'integer' } },
  'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } },
  'WWW-Authenticate': { description: 'the Bearer challenge', schema: { type: 'string' } },
} as const
type HeaderName = keyof typeof HEADERS
const RATE_LIMIT_HEADERS: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']

const headerRefs = (names: HeaderName[]) =>
  Object.fromEntries(['X-Request-Id' as HeaderName, ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }]))

/** The headers a response of this status carries on a route (rate-limited or not). */
function responseHeaders(status: number, rateLimited: boolean) {
  const names: HeaderName[] = []
  // RateLimit-* go out on every answer once the project was charged (401s come before that).
  if (rateLimited && status !== 401) names.push(...RATE_LIMIT_HEADERS)
  if (status === 429 || status === 503) names.push('Retry-After')
  if (status === 401) names.push('WWW-Authenticate')
  return headerRefs(names)
}

const errorResponse = (description: string) => ({
  description,
  content: { [PROBLEM_TYPE.split(';')[0]]: { schema: { $ref: '#/components/schemas/Problem' } } },
})

export function buildOpenApi(routes: Route[], version: string) {
  const components = new SchemaComponents()
  const plain = (schema: TSchema) => components.convert(schema)
  plain(Problem) // registers the Problem component every error response refers to
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    const path = routeTemplate(route)
    const responses: Record<string, unknown> = {}
    for (const response of route.responses) {
      const contentType = response.contentType ?? 'application/json'
      responses[String(response.status)] =
        response.status >= 400 && !response.schema && !response.contentType
          ? errorResponse(response.description)
          : response.schema || response.contentType
            ? {
                description: response.description,
                content: { [contentType.split(';')[0]]: { schema: response.schema ? plain(response.schema) : { type: 'string' } } },
              }
            : { description: response.description }
    }
    // What the HTTP layer resolves before the handler (route.access) decides the error answers.
    const authenticated = route.access !== 'none'
    // Every route parses its query string: a malformed one (bad percent-encoding, NUL) is a 400 anywhere.
    responses['400'] ??= errorResponse(
      route.params || route.query || route.body ? 'invalid request (invalid_request, capture_invalid)' : 'malformed query string (invalid_request)',
    )
    if (authenticated) {
      responses['401'] ??= errorResponse('missing, invalid, expired or revoked credential')
      responses['403'] ??= errorResponse('credential not allowed for this operation or resource')
      responses['404'] ??= errorResponse('not found, or owned by another tenant')
    }
    if (route.rateLimited) responses['429'] ??= errorResponse('rate or daily limit exceeded (Retry-After)')
    if (route.body) {
      responses['413'] ??= errorResponse('request body larger than 1 MiB')
      responses['415'] ??= errorResponse('request body is not application/json')
    }
    if (route.usesDatabase !== false) responses['503'] ??= errorResponse('database_unavailable: the database cannot be reached (Retry-After)')
    responses['500'] ??= errorResponse('internal error')
    for (const [status, response] of Object.entries(responses)) {
      ;(response as { headers?: unknown }).headers = responseHeaders(Number(status), Boolean(route.rateLimited))
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      parameters: parameters(route, plain),
      responses,
      security: authenticated ? route.auth.filter((kind) => kind !== 'none').map((kind) => SECURITY[kind as keyof typeof SECURITY]) : [],
    }
    operation['x-palmvein-access'] = route.access
    if (route.extension) operation['x-palmvein-extension'] = true
    if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: plain(route.body) } } }
    paths[path] ??= {}
    paths[path][route.method] = operation
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'palmvein',
      version,
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      description:
        'Palm vein identity service. Operations marked x-palmvein-extension are additions to the published interface. ' +
        `Request bodies are UTF-8 JSON of at most 1 MiB, with no NUL characters or lone surrogates in any string or field name and at most ${MAX_JSON_DEPTH} levels of nesting; ` +
        `date-times are RFC 3339 from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. A method a path does not take is 405 with Allow; one HTTP does not define, 501. Error codes: ` +
        (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => `${code} (${ERROR_STATUS[code]})`).join(', '),
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: components.schemas,
      headers: HEADERS,
      securitySchemes: {
        FirebaseAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Identity token of an organization administrator (T)' },
        ApiKeyAuth: { type: 'http', scheme: 'bearer', description: 'API key "{key_id}.{api_key}" (K)' },
        DeviceAuth: { type: 'http', scheme: 'bearer', description: 'Device token "pvd_{device_id}.{secret}" of a registered terminal (extension)' },
      },
    },
  }
}
