// Schema vocabulary shared by every route. TypeBox objects are JSON Schema: Ajv compiles them once
// for validation and openapi.ts publishes the very same objects, so the two cannot drift.
import { Type, type TSchema, type Static, type TObject, type TProperties, type ObjectOptions, type StringOptions } from '@sinclair/typebox'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { ERROR_STATUS, ServiceError, type ErrorCode, type FieldError } from '../errors.js'

export { Type, type Static, type TSchema }

/** OpenAPI 3.0 nullable (Ajv understands the `nullable` keyword too). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })

// What a pattern means, for the error a client reads instead of the regular expression.
const PATTERN_MEANINGS = new Map<string, string>()

/** A pattern with the words a refusal gives for it. */
export function pattern(regex: string, meaning: string): string {
  PATTERN_MEANINGS.set(regex, meaning)
  return regex
}

/**
 * Text as the service takes it: json-text.ts and query.ts refuse NUL in every request string, and
 * this pattern says so in the document (one character class with `*`: linear in the length). Lone
 * UTF-16 surrogates, refused too, are said in words (the document's description): a pattern can
 * name them for Ajv (`u` flag) but not for Rust's regex, which schemathesis and other generators
 * compile, and which would drop the whole pattern.
 */
export const TEXT_PATTERN = pattern('^[^\\u0000]*$', 'must not contain NUL (U+0000) characters')

/** A free-text request string (no NUL). */
export const Text = (options: StringOptions = {}) => Type.String({ pattern: TEXT_PATTERN, ...options })

export const Uuid = (description?: string) => Type.String({ format: 'uuid', description })
export const DateTime = (description?: string) => Type.String({ format: 'date-time', description })
export const Timestamp = (description = 'RFC 3339 UTC with milliseconds') => Nullable(Type.String({ format: 'date-time', description }))

/** A strict request body: unknown fields are rejected so typos surface. */
export const Body = <T extends TProperties>(properties: T, options: ObjectOptions = {}) => Type.Object(properties, { additionalProperties: false, ...options })

/** Path parameters: every path id is a UUID. */
export const PathIds = <K extends string>(...names: K[]) =>
  Type.Object(Object.fromEntries(names.map((name) => [name, Uuid()])) as Record<K, ReturnType<typeof Uuid>>, { additionalProperties: false })

/** Page/per_page query pair with the route's own per_page range. */
export const Pagination = (maxPerPage: number) => ({
  page: Type.Integer({ minimum: 1, maximum: 4294967295, description: 'page number, from 1' }),
  per_page: Type.Integer({ minimum: 10, maximum: maxPerPage, description: `page size, 10 to ${maxPerPage}` }),
})

// from ≤ to is a rule JSON Schema cannot state across two parameters: the descriptions say it, and
// requireOrderedWindow checks it (400 invalid_request).
export const TimeWindow = {
  from: DateTime('window start (inclusive), RFC 3339; must not be after `to` (else 400 invalid_request)'),
  to: DateTime('window end (inclusive), RFC 3339; must not be before `from` (else 400 invalid_request)'),
}

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.Union(
      (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => Type.Literal(code)),
      { description: 'stable error code' },
    ),
    detail: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem' },
)

// verbose: an error carries its schema, so a schema's `errorCode` can name the code it answers with.
const bodyAjv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, verbose: true })
const queryAjv = new Ajv({ allErrors: true, strict: false, coerceTypes: true, verbose: true })
for (const ajv of [bodyAjv, queryAjv]) {
  addFormats.default(ajv)
  // Annotation only: the code a violation of this schema answers with (see withErrorCode).
  ajv.addKeyword({ keyword: 'errorCode', schemaType: 'string' })
}

/**
 * The schema, answering a violation with `code` rather than invalid_request: where the schema now
 * says a rule a handler checked before, the client still gets the code that rule always had (a
 * capture's alphabet is capture_invalid, an event type outside the allowlist event_type_not_allowed).
 */
export const withErrorCode = <T extends TSchema>(code: ErrorCode, schema: T): T => ({ ...schema, errorCode: code })

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

export type Validator<T = unknown> = ((value: unknown) => value is T) & { errors?: FieldError[]; errorCode?: ErrorCode }

/** The code of the first error's schema (withErrorCode), if it names one. */
function errorCodeOf(errors: ErrorObject[] | null | undefined): ErrorCode | undefined {
  const schema = errors?.[0]?.parentSchema as { errorCode?: ErrorCode } | undefined
  return schema?.errorCode
}

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
    const meaning = error.keyword === 'pattern' ? PATTERN_MEANINGS.get(String(params.pattern)) : undefined
    if (meaning) return { path: error.instancePath || '/', message: meaning }
    if (error.keyword === 'enum') return { path: error.instancePath || '/', message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}` }
    return { path: error.instancePath || '/', message: error.message ?? 'is invalid' }
  })
}

/** Compile once at route registration. Query/path validators coerce strings to numbers and booleans. */
export function compile<T extends TSchema>(schema: T, kind: 'body' | 'query'): Validator<Static<T>> {
  const validate: ValidateFunction = (kind === 'body' ? bodyAjv : queryAjv).compile(schema)
  const wrapped = ((value: unknown) => {
    const ok = validate(value)
    wrapped.errors = ok ? undefined : fieldErrors(validate.errors)
    wrapped.errorCode = ok ? undefined : errorCodeOf(validate.errors)
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
