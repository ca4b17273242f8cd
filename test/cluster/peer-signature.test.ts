// The signature on node-to-node requests: what it binds (method, path, body, time, nonce) and what
// a receiver refuses (unsigned, another key, anything changed, stale, replayed).
import { describe, expect, it } from 'vitest'
import { createPeerVerifier, peerSigningKey, signPeerRequest, PEER_NONCE_HEADER, PEER_TIMESTAMP_HEADER } from '../../src/cluster/peer-signature.js'

const SECRET = 'peer-signature-test-secret-0123456789'
const WINDOW_MS = 10_000
const request = { method: 'POST', target: '/internal/cluster/search', body: '{"k":1}' }

describe('peer request signatures', () => {
  const key = peerSigningKey(SECRET)

  it('accepts a request signed with the cluster key once, and refuses it replayed', () => {
    const verifier = createPeerVerifier(key, WINDOW_MS)
    const headers = signPeerRequest(key, request)
    expect(verifier.check(request, headers)).toBeNull()
    expect(verifier.check(request, headers)).toBe('replayed')
    // Another request signed the same way is new.
    expect(verifier.check(request, signPeerRequest(key, request))).toBeNull()
  })

  it('refuses an unsigned request, another key, and any change to method, path, body, time or nonce', () => {
    const verifier = createPeerVerifier(key, WINDOW_MS)
    const headers = signPeerRequest(key, request)
    expect(verifier.check(request, {})).toBe('unsigned')
    expect(verifier.check(request, signPeerRequest(peerSigningKey(`${SECRET}x`), request))).toBe('bad_signature')
    expect(verifier.check({ ...request, method: 'PUT' }, headers)).toBe('bad_signature')
    expect(verifier.check({ ...request, target: '/internal/cluster/search?x=1' }, headers)).toBe('bad_signature')
    expect(verifier.check({ ...request, body: '{"k":2}' }, headers)).toBe('bad_signature')
    expect(verifier.check(request, { ...headers, [PEER_TIMESTAMP_HEADER]: String(Number(headers[PEER_TIMESTAMP_HEADER]) + 1) })).toBe('bad_signature')
    expect(verifier.check(request, { ...headers, [PEER_NONCE_HEADER]: 'A'.repeat(22) })).toBe('bad_signature')
    // None of those attempts used up the genuine request.
    expect(verifier.check(request, headers)).toBeNull()
  })

  it('refuses a timestamp outside the replay window either way, and forgets nonces once they could only be stale', () => {
    const verifier = createPeerVerifier(key, WINDOW_MS)
    const now = 1_800_000_000_000
    expect(verifier.check(request, signPeerRequest(key, request, now - WINDOW_MS - 1), now)).toBe('stale')
    expect(verifier.check(request, signPeerRequest(key, request, now + WINDOW_MS + 1), now)).toBe('stale')
    const headers = signPeerRequest(key, request, now - WINDOW_MS + 10)
    expect(verifier.check(request, headers, now)).toBeNull()
    expect(verifier.check(request, headers, now + 5)).toBe('replayed')
    expect(verifier.check(request, headers, now + 20)).toBe('stale')
  })
})
