// One error taxonomy. Domain code throws ServiceError with a stable code; the HTTP layer turns it
// into application/problem+json with the status this table gives. Anything else is a 500 that
// reveals nothing to the client and is logged in full.

export const ERROR_STATUS = {
  invalid_request: 400,
  capture_invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  environment_not_tenant_managed: 403,
  environment_read_only: 403,
  sandbox_required: 403,
  server_lookup_disabled: 403,
  challenge_mismatch: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  duplicate_palm: 409,
  confirmation_required: 409,
  webhook_disabled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  header_fields_too_large: 431,
  server_lookup_not_allowed: 422,
  webhook_url_rejected: 422,
  webhook_limit_reached: 422,
  event_type_not_allowed: 422,
  invalid_reference: 422,
  registration_code_invalid: 422,
  headcount_reached: 422,
  self_enrollment_unavailable: 422,
  rate_limited: 429,
  daily_limit_reached: 429,
  internal: 500,
  audit_trail_broken: 500,
  not_implemented: 501,
  unavailable: 503,
  database_unavailable: 503,
  shard_unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export const ERROR_TITLE: Record<ErrorCode, string> = {
  invalid_request: 'The request is invalid',
  capture_invalid: 'The palm capture is invalid',
  unauthenticated: 'Authentication required',
  forbidden: 'Not allowed',
  environment_not_tenant_managed: 'Environment is not tenant-managed',
  environment_read_only: 'Environment is read-only for this project',
  sandbox_required: 'Only sandbox projects may do this',
  server_lookup_disabled: 'Server lookup is not enabled for this project',
  challenge_mismatch: 'The confirmation code does not match',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  duplicate_palm: 'This palm is already enrolled for another member',
  confirmation_required: 'The person has not confirmed the session yet',
  webhook_disabled: 'The webhook subscription is disabled',
  payload_too_large: 'Request body too large',
  unsupported_media_type: 'Unsupported media type',
  header_fields_too_large: 'Request header fields too large',
  server_lookup_not_allowed: 'The environment does not allow server lookup',
  webhook_url_rejected: 'Webhook URL rejected',
  webhook_limit_reached: 'Webhook subscription limit reached',
  event_type_not_allowed: 'Event type not allowed',
  invalid_reference: 'The request names an unknown resource',
  registration_code_invalid: 'Registration code is unknown, used or expired',
  headcount_reached: 'The plan headcount is reached',
  self_enrollment_unavailable: 'Self-enrollment is not offered on this device',
  rate_limited: 'Rate limit exceeded',
  daily_limit_reached: 'Daily request limit reached',
  internal: 'Internal error',
  audit_trail_broken: 'The audit trail fails verification',
  not_implemented: 'Not implemented',
  unavailable: 'Service unavailable',
  database_unavailable: 'The database is unavailable',
  shard_unavailable: 'A shard of the environment has no live replica',
}

export interface FieldError {
  /** JSON pointer into the request (`/per_page`, `/left_hand/enroll_capture`). */
  path: string
  message: string
}

export class ServiceError extends Error {
  override name = 'ServiceError'
  readonly code: ErrorCode
  readonly detail: string
  readonly errors?: FieldError[]
  /** Seconds, for 429 answers. */
  readonly retryAfter?: number
  /** Extra response headers (RateLimit-*, WWW-Authenticate). */
  readonly headers?: Record<string, string>

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: FieldError[]; retryAfter?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(`${code}: ${detail}`, { cause: options.cause })
    this.code = code
    this.detail = detail
    this.errors = options.errors
    this.retryAfter = options.retryAfter
    this.headers = options.headers
  }

  get status(): number {
    return ERROR_STATUS[this.code]
  }
}

export const notFound = (what: string): ServiceError => new ServiceError('not_found', `${what} not found`)
