// Node-to-node calls through a real node: signed requests only, checked before the body's schema,
// refusals counted and audited, on their own listener (PALMVEIN_PEER_PORT), and over TLS.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CLUSTER_SEARCH_PATH, createPeerClient } from '../../src/cluster/peer-client.js'
import { peerSigningKey, signPeerRequest } from '../../src/cluster/peer-signature.js'
import type { ClusterConfig } from '../../src/config.js'
import { auditPage } from '../../src/store/audit-log.js'
import { usingPostgres } from '../support/database.js'
import { scrape, valueOf } from '../support/metrics.js'
import { createMember, createPalmTenant, enroll, enrollBody, identify, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { start } from '../../src/server.js'
import { bootService, expectProblem, expectStatus, request, serviceConfig, type TestService } from '../support/service.js'
import { createSelfSignedCertificate } from '../webhooks/receivers.js'

const SECRET = 'peer-auth-test-secret-0123456789abcdef'
const WINDOW_MS = 5_000
const key = peerSigningKey(SECRET)

const clusterConfig = (nodeUrl: string): ClusterConfig => ({
  nodeUrl,
  secret: SECRET,
  leaseMs: 1_000,
  replicas: 1,
  memoryBytes: null,
  hedgeMs: 100,
  peerListener: { host: '127.0.0.1', port: 0 },
  replayWindowMs: WINDOW_MS,
  peerCaFile: null,
})

/** A probe the matcher takes (not all zeros). */
const probe = Buffer.from(Int8Array.from({ length: 256 }, (_, index) => (index % 7) - 3).buffer).toString('base64')
const searchBody = (environmentId: string) => JSON.stringify({ environment_id: environmentId, shards: [0], min_seq: 0, probe, k: 1 })

function peerCall(baseUrl: string, body: string, headers: Record<string, string>) {
  return request(baseUrl, 'POST', CLUSTER_SEARCH_PATH, { rawBody: body, headers: { 'content-type': 'application/json', ...headers } })
}
const signed = (body: string, now?: number) => signPeerRequest(key, { method: 'POST', target: CLUSTER_SEARCH_PATH, body }, now)

describe(`node-to-node authentication (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it("outside cluster mode there is no node-to-node route and no peer listener; a peer CA file that cannot be read stops a node's boot", async () => {
    const single = await bootService()
    try {
      const body = searchBody('0190c8a4-1c3e-7c1b-8d2e-123456789abc')
      expectProblem(await peerCall(single.url, body, signed(body)), 404, 'not_found')
      expect(single.service.peerUrl).toBeNull()
      await single.stop()
      await expect(
        start({ config: serviceConfig(single.storage, { cluster: { ...clusterConfig('https://127.0.0.1:9497'), peerCaFile: '/nonexistent/ca.pem' } }) }),
      ).rejects.toThrow(/PALMVEIN_PEER_CA_FILE: cannot read \/nonexistent\/ca\.pem/)
    } finally {
      await single.storage.cleanup()
    }
  }, 120_000)

  if (!usingPostgres) return

  let svc: TestService
  let tenant: PalmTenant
  beforeAll(async () => {
    svc = await bootService({ config: { cluster: clusterConfig('http://127.0.0.1:9499') } })
    tenant = await createPalmTenant(svc, 'peer-auth@example.com')
    // The node takes the new environment's shards on its next heartbeat.
    await vi.waitFor(
      async () => expectStatus(await peerCall(svc.service.peerUrl!, searchBody(tenant.environmentId), signed(searchBody(tenant.environmentId))), 200),
      { timeout: 20_000, interval: 200 },
    )
  }, 120_000)
  afterAll(async () => {
    await svc?.close()
  })

  it('refuses unsigned, wrongly signed, stale and replayed calls before the body is read for its schema; counts and audits each', async () => {
    const peerUrl = svc.service.peerUrl!
    const before = await scrape(svc)
    const since = new Date()
    const body = searchBody(tenant.environmentId)
    const badBody = JSON.stringify({ environment_id: 'nope', shards: 'all' })
    const refusals: Array<[string, Promise<Awaited<ReturnType<typeof peerCall>>>]> = [
      ['unsigned', peerCall(peerUrl, badBody, {})],
      [
        'bad_signature',
        peerCall(peerUrl, badBody, signPeerRequest(peerSigningKey(`${SECRET}x`), { method: 'POST', target: CLUSTER_SEARCH_PATH, body: badBody })),
      ],
      // Signed for one body, sent with another.
      ['bad_signature', peerCall(peerUrl, badBody, signed(body))],
      ['stale', peerCall(peerUrl, body, signed(body, Date.now() - WINDOW_MS - 1_000))],
    ]
    for (const [reason, call] of refusals) {
      const answer = await call
      expectProblem(answer, 401, 'unauthenticated', reason)
      expect(answer.body.errors, reason).toBeUndefined()
      expect(answer.text, reason).not.toMatch(/environment_id|shards|schema/)
    }
    // A correct one is answered; the same bytes again are a replay.
    const headers = signed(body)
    const answered = await peerCall(peerUrl, body, headers)
    expectStatus(answered, 200)
    expect(Array.isArray(answered.body.hits)).toBe(true)
    expectProblem(await peerCall(peerUrl, body, headers), 401, 'unauthenticated', 'replayed')
    // Only a signed call learns what the body should be.
    expectProblem(await peerCall(peerUrl, badBody, signed(badBody)), 400, 'invalid_request')

    const after = await scrape(svc)
    const added = (reason: string) =>
      valueOf(after, 'palmvein_peer_calls_refused_total', { reason }) - valueOf(before, 'palmvein_peer_calls_refused_total', { reason })
    expect({ unsigned: added('unsigned'), bad_signature: added('bad_signature'), stale: added('stale'), replayed: added('replayed') }).toEqual({
      unsigned: 1,
      bad_signature: 2,
      stale: 1,
      replayed: 1,
    })
    await svc.service.app.audit.flush()
    const audited = await auditPage(svc.service.app.sql, { orgId: 'platform', from: since, to: new Date(), action: `POST ${CLUSTER_SEARCH_PATH}` }, 1, 100)
    expect(audited.items.map((row) => row.resource_ids.peer_refusal).sort()).toEqual(['bad_signature', 'bad_signature', 'replayed', 'stale', 'unsigned'])
    for (const row of audited.items) expect(row).toMatchObject({ status: 401, actor_kind: 'anonymous', client_address: '127.0.0.1' })
  })

  it('with PALMVEIN_PEER_PORT, serves node-to-node calls there only, and nothing else there', async () => {
    const body = searchBody(tenant.environmentId)
    expectProblem(await peerCall(svc.url, body, signed(body)), 404, 'not_found')
    expectProblem(await request(svc.service.peerUrl!, 'GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.key }), 404, 'not_found')
    expectStatus(await svc.request('GET', `/v1/projects/${tenant.projectId}`, { auth: tenant.key }), 200)
  })

  it("over TLS: two nodes search each other's shards on https peer listeners whose certificate PALMVEIN_PEER_CA_FILE names; nothing else gets in", async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'palmvein-peer-tls-'))
    const certificate = createSelfSignedCertificate(directory)
    const tls = { certFile: certificate.certFile, keyFile: certificate.keyFile, passphrase: null, minVersion: 'TLSv1.3' as const }
    // Fixed peer ports (this suite's range): each node's URL must name its peer listener before it boots.
    const node = (peerPort: number) => ({
      tls,
      cluster: { ...clusterConfig(`https://127.0.0.1:${peerPort}`), peerListener: { host: '127.0.0.1', port: peerPort }, peerCaFile: certificate.certFile },
    })
    // The test's own calls to the public ports trust the certificate too.
    const dispatcher = getGlobalDispatcher()
    setGlobalDispatcher(new Agent({ connect: { ca: certificate.cert } }))
    const a = await bootService({ config: node(9410) })
    const b = await bootService({ storage: a.storage, config: node(9411) })
    const untrusting = createPeerClient({ secret: SECRET })
    try {
      const palms = population({ identities: 4 })
      const shared = await createPalmTenant(a, 'peer-tls@example.com', { shards: 16, search_mode: 'exact' })
      const members: string[] = []
      for (let identity = 0; identity < 4; identity++) {
        const memberId = await createMember(a, shared, `TLS ${identity}`)
        // The new environment's shards are taken on the nodes' next heartbeats: until then, 503.
        await vi.waitFor(async () => expectStatus(await enroll(a, shared, enrollBody(palms, identity, memberId)), 200), { timeout: 30_000, interval: 250 })
        members.push(memberId)
      }
      const searchedOnB = async () => valueOf(await scrape(b), 'palmvein_http_requests_total', { route: CLUSTER_SEARCH_PATH, status: '200' })
      const before = await searchedOnB()
      for (let identity = 0; identity < 4; identity++) {
        expect(await identify(a, shared, identifyBody(palms, identity, 'left')), `identify ${identity}`).toMatchObject({
          status: 'Found',
          member_id: members[identity],
        })
      }
      // B's shards were searched through its TLS peer listener, signed by A.
      expect(await searchedOnB()).toBeGreaterThan(before)
      const search = { environmentId: shared.environmentId, shards: [0], minSeq: 0, probe: new Int8Array(Buffer.from(probe, 'base64')), options: { k: 1 } }
      await expect(untrusting.search(b.service.peerUrl!, search)).rejects.toThrow(/self[- ]signed|certificate/i)
      // Plain HTTP is not served on a TLS peer listener.
      await expect(fetch(`http://127.0.0.1:9411${CLUSTER_SEARCH_PATH}`, { method: 'POST', body: '{}' })).rejects.toThrow()
    } finally {
      await untrusting.close()
      await b.close()
      await a.close()
      setGlobalDispatcher(dispatcher)
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }, 180_000)
})
