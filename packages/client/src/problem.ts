// Problem answers (RFC 9457, application/problem+json) as one typed error: every refusal of the
// service carries a stable `code`, and validation refusals name each field in `errors[].path`.
import type { components } from './generated/openapi.js'

export type Problem = components['schemas']['Problem']
export type ProblemCode = Problem['code']

/**
 * A refused request. `code` is the service's stable error code; for an answer that is not
 * problem+json (a proxy's 502 page, say) it is `unexpected_response` and `detail` holds the start
 * of the body.
 */
export class PalmveinError extends Error {
  override readonly name = 'PalmveinError'
  readonly status: number
  readonly code: ProblemCode | 'unexpected_response'
  readonly detail: string
  readonly errors: { path: string; message: string }[]
  readonly requestId: string | null
  /** Seconds the service asked to wait (429, 503), from Retry-After. */
  readonly retryAfter: number | null

  constructor(status: number, problem: Partial<Problem> | null, response?: Response, text = '') {
    const detail = problem?.detail ?? text.slice(0, 200)
    super(`${status} ${problem?.code ?? 'unexpected_response'}: ${detail}`)
    this.status = status
    this.code = problem?.code ?? 'unexpected_response'
    this.detail = detail
    this.errors = problem?.errors ?? []
    this.requestId = problem?.request_id ?? response?.headers.get('x-request-id') ?? null
    const retryAfter = Number(response?.headers.get('retry-after') ?? Number.NaN)
    this.retryAfter = Number.isFinite(retryAfter) ? retryAfter : null
  }
}

/** A problem object: what openapi-fetch returns as `error` for a problem+json answer. */
export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && typeof (value as Problem).code === 'string' && typeof (value as Problem).status === 'number'
}

/** The result shape of every openapi-fetch call. */
export interface CallResult<Data> {
  data?: Data
  error?: unknown
  response: Response
}

/**
 * The data of a successful call, or a PalmveinError for a refused one:
 * `const member = await ok(pv.POST('/v1/projects/{project_id}/members', { ... }))`.
 */
export async function ok<Data>(call: Promise<CallResult<Data>>): Promise<Exclude<Data, undefined>> {
  const { data, error, response } = await call
  if (!response.ok) {
    throw new PalmveinError(response.status, isProblem(error) ? error : null, response, typeof error === 'string' ? error : '')
  }
  return data as Exclude<Data, undefined>
}
