// Signatures of a delivery. Two schemes over the same raw body, so receivers can use either:
// - `X-Webhook-Signature: sha256=<hex>`: HMAC-SHA256 of the body keyed with the secret string
//   exactly as returned at creation (the spec's scheme);
// - Standard Webhooks: `webhook-signature: v1,<base64>` of "{id}.{timestamp}.{body}", keyed
//   with the base64-decoded part of the secret after `whsec_`.
import { createHmac, randomBytes } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'

/** `whsec_` + 32 random bytes in standard base64. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64')
}

export function specSignature(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
}

export function standardSignature(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
  return 'v1,' + createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64')
}

/** Every signature header of one attempt. */
export function signatureHeaders(input: { secret: string; eventId: string; timestampSeconds: number; body: string }): Record<string, string> {
  return {
    'x-webhook-signature': specSignature(input.secret, input.body),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': standardSignature(input.secret, input.eventId, input.timestampSeconds, input.body),
  }
}
