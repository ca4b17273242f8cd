// Schema vocabulary shared by every route. TypeBox objects are JSON Schema: Ajv compiles them once
// for validation and openapi.ts publishes the very same objects, so the two cannot drift.
import { Type, type TSchema, type Static, type TObject, type TProperties } from '@sinclair/typebox'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { ERROR_STATUS, ServiceError, type ErrorCode, type FieldError } from '../errors.js'

export { Type, type Static, type TSchema }

/** OpenAPI 3.0 nullable (Ajv understands the `nullable` keyword too). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })

export const Uuid = (description?: string) => Type.String({ format: 'uuid', description })
export const DateTime = (description?: string) => Type.String({ format: 'date-time', description })
export const Timestamp = (description = 'RFC 3339 UTC with milliseconds') => Nullable(Type.String({ format: 'date-time', description }))

/** A strict request body: unknown fields are rejected so typos surface. */
export const Body = <T extends TProperties>(properties: T, options: { description?: string } = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options })

/** Path parameters: every path id is a UUID. */
export const PathIds = <K extends string>(...names: K[]) =>
  Type.Object(Object.fromEntries(names.map((name) => [name, Uuid()])) as Record<K, ReturnType<typeof Uuid>>, { additionalProperties: false })

/** Page/per_page query pair with the route's own per_page range. */
export const Pagination = (maxPerPage: number) => ({
  page: Type.Integer({ minimum: 1, maximum: 4294967295, description: 'page number, from 1' }),
  per_page: Type.Integer({ minimum: 10, maximum: maxPerPage, description: `page size, 10 to ${maxPerPage}` }),
})

export const TimeWindow = {
  from: DateTime('window start (inclusive), RFC 3339'),
  to: DateTime('window end (inclusive), RFC 3339'),
}

export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  code: Type.Union((Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => Type.Literal(code)), { description: 'stable error code' }),
  detail: Type.String(),
  request_id: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
}, { $id: 'Problem' })

const bodyAjv = new Ajv({ allErrors: true, strict: false, coerceTypes: false })
const queryAjv = new Ajv({ allErrors: true, strict: false, coerceTypes: true })
addFormats.default(bodyAjv)
addFormats.default(queryAjv)

// Timestamps the database and the CSV export both hold: years 0001..9999 once the offset applies
// (an offset can move 0001-01-01T00:00:00+00:01 into year 0, which PostgreSQL refuses).
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z') // not Date.UTC(1, ...): it maps years 0..99 to 19xx
const LATEST = Date.parse('9999-12-31T23:59:59.999Z')
export const DATE_TIME_RANGE = 'an RFC 3339 date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'
for (const ajv of [bodyAjv, queryAjv]) {
  const rfc3339 = ajv.formats['date-time'] as { validate: (text: string) => boolean }
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (text: string) => {
      if (!rfc3339.validate(text)) return false
      const time = Date.parse(text)
      return time >= EARLIEST && time <= LATEST
    },
  })
}

export type Validator<T = unknown> = ((value: unknown) => value is T) & { errors?: FieldError[] }

function fieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).map((error) => {
    const params = error.params as Record<string, unknown>
    if (error.keyword === 'additionalProperties') {
      return { path: `${error.instancePath}/${String(params.additionalProperty)}`, message: 'unknown field' }
    }
    if (error.keyword === 'required') {
      return { path: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' }
    }
    if (error.keyword === 'format' && params.format === 'date-time') return { path: error.instancePath || '/', message: `must be ${DATE_TIME_RANGE}` }
    return { path: error.instancePath || '/', message: error.message ?? 'is invalid' }
  })
}

/** Compile once at route registration. Query/path validators coerce strings to numbers and booleans. */
export function compile<T extends TSchema>(schema: T, kind: 'body' | 'query'): Validator<Static<T>> {
  const validate: ValidateFunction = (kind === 'body' ? bodyAjv : queryAjv).compile(schema)
  const wrapped = ((value: unknown) => {
    const ok = validate(value)
    wrapped.errors = ok ? undefined : fieldErrors(validate.errors)
    return ok
  }) as Validator<Static<T>>
  return wrapped
}

export type ObjectSchema = TObject

/** A validated TimeWindow query as dates; from must not be after to. */
export function parseWindow(query: { from: string; to: string }): { from: Date; to: Date } {
  const from = new Date(query.from)
  const to = new Date(query.to)
  if (from.getTime() > to.getTime()) {
    throw new ServiceError('invalid_request', 'query: from must not be after to', { errors: [{ path: '/from', message: 'must not be after to' }] })
  }
  return { from, to }
}

/** checkInput of a route with a TimeWindow query. */
export function requireOrderedWindow({ query }: { query: { from: string; to: string } }): void {
  parseWindow(query)
}
