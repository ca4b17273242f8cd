// Verifies a webhook delivery with the rules the service signs by (src/webhooks/signer.ts):
// - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`
//   keyed with the base64 part of the `whsec_` secret, the timestamp within a tolerance of now
//   (5 minutes either way, as the Standard Webhooks libraries do);
// - the spec's `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body>` keyed with the secret
//   string as returned at creation, checked too when present.
import { createHmac, timingSafeEqual } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60

export type WebhookFailure = 'missing_header' | 'bad_timestamp' | 'timestamp_out_of_tolerance' | 'bad_signature' | 'bad_body'

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message)
  }
}

/** Header names are matched case-insensitively; a Fetch `Headers` or Node's `IncomingHttpHeaders` both work. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyWebhookOptions {
  /** The subscription's secret (`whsec_…`), as answered when it was created. */
  secret: string
  /** The raw request body, exactly as received (not re-serialised JSON). */
  body: string | Uint8Array
  headers: WebhookHeaders
  /** Default 300. */
  toleranceSeconds?: number
  /** The receiver's clock (default now). */
  now?: Date
}

/** The delivered event, as the service sends it. */
export interface WebhookEvent {
  /** Deliveries can repeat: deduplicate on it. */
  event_id: string
  event_type: string
  timestamp: string
  project_id: string
  data: Record<string, unknown>
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]
  return Array.isArray(entry) ? entry[0] : entry
}

function required(headers: WebhookHeaders, name: string): string {
  const value = header(headers, name)
  if (!value) throw new WebhookVerificationError('missing_header', `the ${name} header is missing`)
  return value
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Checks a delivery's signatures and timestamp; answers the parsed event or throws WebhookVerificationError. */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent {
  const body = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : Buffer.from(options.body)
  const id = required(options.headers, 'webhook-id')
  const timestampText = required(options.headers, 'webhook-timestamp')
  const signatures = required(options.headers, 'webhook-signature')
  if (!/^\d{1,15}$/.test(timestampText))
    throw new WebhookVerificationError('bad_timestamp', `webhook-timestamp ${JSON.stringify(timestampText)} is not Unix seconds`)
  const timestamp = Number(timestampText)
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000)
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `webhook-timestamp is ${now - timestamp} s from now, beyond the ${tolerance} s tolerance`)
  }
  const key = Buffer.from(options.secret.startsWith(SECRET_PREFIX) ? options.secret.slice(SECRET_PREFIX.length) : options.secret, 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest()
  // The header may carry several space-separated signatures (during a secret rotation).
  const matched = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2)
    return version === 'v1' && signature !== undefined && sameBytes(Buffer.from(signature, 'base64'), expected)
  })
  if (!matched) throw new WebhookVerificationError('bad_signature', 'no webhook-signature matches the body with this secret')
  const specSignature = header(options.headers, 'x-webhook-signature')
  if (specSignature !== undefined) {
    const spec = Buffer.from('sha256=' + createHmac('sha256', options.secret).update(body).digest('hex'))
    if (!sameBytes(Buffer.from(specSignature), spec))
      throw new WebhookVerificationError('bad_signature', 'X-Webhook-Signature does not match the body with this secret')
  }
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent
  } catch {
    throw new WebhookVerificationError('bad_body', 'the signed body is not JSON')
  }
}
