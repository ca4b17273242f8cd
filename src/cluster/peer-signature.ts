// Node-to-node requests are signed, never sent with the shared secret itself: an HMAC-SHA256 over
// the method, the path, a timestamp, a one-time nonce and the body's SHA-256, with a key derived
// from PALMVEIN_CLUSTER_SECRET. A receiver accepts a signature once, within the replay window of
// its timestamp: a recorded request replayed later is stale, replayed sooner its nonce was seen.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'

export const PEER_TIMESTAMP_HEADER = 'x-palmvein-peer-timestamp'
export const PEER_NONCE_HEADER = 'x-palmvein-peer-nonce'
export const PEER_SIGNATURE_HEADER = 'x-palmvein-peer-signature'

/** Why a peer request was refused: the label of the metric and of the audit record. */
export type PeerRefusal = 'unsigned' | 'bad_signature' | 'stale' | 'replayed'

export interface PeerRequest {
  method: string
  /** Path and query as sent (`/internal/cluster/search`). */
  target: string
  body: Buffer | string
}

/** The signing key: HKDF of the cluster secret, so the secret itself is never an HMAC key on the wire's behalf. */
export function peerSigningKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'palmvein cluster', 'peer request signature v1', 32))
}

function signatureOf(key: Buffer, request: PeerRequest, timestamp: string, nonce: string): Buffer {
  const bodyHash = createHash('sha256').update(request.body).digest('hex')
  return createHmac('sha256', key).update(`v1\n${request.method.toUpperCase()}\n${request.target}\n${timestamp}\n${nonce}\n${bodyHash}`).digest()
}

/** The headers that sign `request` now. */
export function signPeerRequest(key: Buffer, request: PeerRequest, now = Date.now()): Record<string, string> {
  const timestamp = String(now)
  const nonce = randomBytes(16).toString('base64url')
  return {
    [PEER_TIMESTAMP_HEADER]: timestamp,
    [PEER_NONCE_HEADER]: nonce,
    [PEER_SIGNATURE_HEADER]: signatureOf(key, request, timestamp, nonce).toString('base64url'),
  }
}

export interface PeerVerifier {
  /** null when the request is signed with the cluster key, fresh, and seen for the first time. */
  check(request: PeerRequest, headers: Readonly<Record<string, string | undefined>>, now?: number): PeerRefusal | null
}

const NONCE = /^[A-Za-z0-9_-]{16,64}$/

export function createPeerVerifier(key: Buffer, windowMs: number): PeerVerifier {
  // Nonces of accepted requests, until their timestamp leaves the window (then "stale" refuses them).
  const seen = new Map<string, number>()
  let nextSweep = 0
  const sweep = (now: number) => {
    if (now < nextSweep) return
    for (const [nonce, expires] of seen) if (expires < now) seen.delete(nonce)
    nextSweep = now + windowMs
  }
  return {
    check(request, headers, now = Date.now()) {
      const timestamp = headers[PEER_TIMESTAMP_HEADER]
      const nonce = headers[PEER_NONCE_HEADER]
      const signature = headers[PEER_SIGNATURE_HEADER]
      if (!timestamp || !nonce || !signature) return 'unsigned'
      if (!/^\d{1,16}$/.test(timestamp) || !NONCE.test(nonce)) return 'bad_signature'
      const sent = Buffer.from(signature, 'base64url')
      const expected = signatureOf(key, request, timestamp, nonce)
      if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return 'bad_signature'
      // Checked after the signature: an unsigned caller learns nothing about the window.
      if (Math.abs(now - Number(timestamp)) > windowMs) return 'stale'
      sweep(now)
      if (seen.has(nonce)) return 'replayed'
      seen.set(nonce, Number(timestamp) + windowMs)
      return null
    },
  }
}
