// Webhook signatures: secrets, and the two signature headers a receiver can check (ours and
// Standard Webhooks').
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { generateSecret, signatureHeaders } from '../../src/webhooks/signer.js'

describe('signer', () => {
  it('makes secrets of 32 random bytes after whsec_', () => {
    const secret = generateSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect(generateSecret()).not.toBe(secret)
  })

  it('signs the raw body both ways, and Standard Webhooks verifies it', () => {
    const secret = generateSecret()
    const body = JSON.stringify({ event_id: 'e1', data: { ü: 'ünïcode' } })
    const timestampSeconds = Math.floor(Date.now() / 1000)
    const headers = signatureHeaders({ secret, eventId: 'e1', timestampSeconds, body })
    expect(headers['x-webhook-signature']).toBe('sha256=' + createHmac('sha256', secret).update(body).digest('hex'))
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow()
  })
})
