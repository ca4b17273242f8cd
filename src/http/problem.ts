// Every error leaves as application/problem+json (RFC 9457) with a stable `code`. A 500 reveals
// nothing to the client and is logged in full.
import type { Logger } from 'pino'
import { ERROR_TITLE, ServiceError } from '../errors.js'
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnreachable } from '../store/engine/availability.js'
import { Reply } from './route.js'

export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8'
const TYPE_BASE = 'https://docs.palmvein.dev/errors/'

export const databaseUnavailable = () =>
  new ServiceError('database_unavailable', 'the database cannot be reached; retry shortly', { retryAfter: DATABASE_RETRY_AFTER_SECONDS })

function asServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error
  // A connection refused, cut or timed out is the database's outage, not a fault of this request.
  if (isDatabaseUnreachable(error)) return databaseUnavailable()
  return new ServiceError('internal', 'an internal error occurred; quote the request id when reporting it')
}

/** `log` gives the request's logger when something is to be logged (most answers log nothing). */
export function problemReply(error: unknown, requestId: string, log: () => Logger): Reply {
  const known = asServiceError(error)
  // An outage is logged once by the database's availability watch, not once per request.
  if (known.code === 'database_unavailable') log().debug({ err: error }, known.code)
  else if (!(error instanceof ServiceError)) log().error({ err: error }, 'unhandled error')
  else if (known.status >= 500) log().error({ err: error }, known.code)
  const headers: Record<string, string> = { ...known.headers }
  if (known.retryAfter !== undefined) headers['Retry-After'] = String(known.retryAfter)
  if (known.status === 401) headers['WWW-Authenticate'] ??= 'Bearer realm="palmvein"'
  const body = {
    type: TYPE_BASE + known.code,
    title: ERROR_TITLE[known.code],
    status: known.status,
    code: known.code,
    detail: known.detail,
    request_id: requestId,
    ...(known.errors ? { errors: known.errors } : {}),
  }
  return new Reply(known.status, JSON.stringify(body), PROBLEM_TYPE, headers)
}
