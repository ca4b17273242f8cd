// Cluster mode with real `palmvein serve` processes on one PostgreSQL: an environment of 4 shards,
// two replicas each, searched from any node (scatter-gather); a node killed mid-traffic, a
// shard with no live replica, a node restarted after missing changes. Node A has a memory budget
// it is already past, so it holds no shards and every search it makes goes to its peers.
// On the embedded database, cluster mode is refused.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLocalIssuer } from '../../src/auth/identity-tokens.js'
import { peerSigningKey, signPeerRequest } from '../../src/cluster/peer-signature.js'
import { shardOf } from '../../src/domain/galleries/shard-of.js'
import { openConsoleBrowser } from '../console/browser.js'
import { createTestStorage, usingPostgres, type TestStorage } from '../support/database.js'
import { enroll, enrollBody, createMember, createPalmTenant, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { freePort, runCli, startServeProcess } from '../support/process.js'
import { expectProblem, expectStatus, request, type TestService } from '../support/service.js'

const SECRET = 'cluster-secret-for-tests-0123456789abcdef'
const LEASE_MS = 2_000
const SHARDS = 4
const IDENTITIES = 10

interface Node {
  name: string
  url: string
  child: ChildProcess
  exited: Promise<number | null>
  port: number
}

describe(`cluster mode (${usingPostgres ? 'PostgreSQL, 3 processes' : 'PGlite'})`, () => {
  let storage: TestStorage
  const running: Node[] = []
  beforeAll(async () => {
    storage = await createTestStorage()
    await storage.handOver()
  })
  afterAll(async () => {
    for (const node of running) node.child.kill('SIGKILL')
    await Promise.all(running.map((node) => node.exited))
    await storage.cleanup()
  })

  const baseEnv = () => ({
    PALMVEIN_DATA_DIR: storage.dataDir,
    DATABASE_URL: storage.databaseUrl ?? undefined,
    HOST: '127.0.0.1',
    PALMVEIN_MATCHER_THREADS: '1',
  })

  it('refuses cluster mode without PostgreSQL or without a secret', async () => {
    const url = 'http://127.0.0.1:9'
    const noSecret = await runCli(['serve'], { ...baseEnv(), PORT: '0', PALMVEIN_NODE_URL: url, DATABASE_URL: 'postgres://u:p@127.0.0.1:9/x' })
    expect(noSecret.code).toBe(2)
    expect(noSecret.stderr).toContain('cluster mode needs PALMVEIN_CLUSTER_SECRET, at least 32 characters')
    const embedded = await runCli(['serve'], { ...baseEnv(), DATABASE_URL: undefined, PORT: '0', PALMVEIN_NODE_URL: url, PALMVEIN_CLUSTER_SECRET: SECRET })
    expect(embedded.code).toBe(2)
    expect(embedded.stderr).toContain('cluster mode (PALMVEIN_NODE_URL) needs PostgreSQL (DATABASE_URL)')
  }, 60_000)

  if (!usingPostgres) return

  const palms = population({ identities: IDENTITIES + 2 })
  let tenant: PalmTenant
  const members: string[] = []
  const nodes: Record<string, Node> = {}

  async function startNode(name: string, port: number, extra: Record<string, string> = {}): Promise<Node> {
    const url = `http://127.0.0.1:${port}`
    const started = await startServeProcess({
      ...baseEnv(),
      PORT: String(port),
      PALMVEIN_NODE_URL: url,
      PALMVEIN_CLUSTER_SECRET: SECRET,
      PALMVEIN_NODE_LEASE_MS: String(LEASE_MS),
      PALMVEIN_SHARD_REPLICAS: '2',
      ...extra,
    })
    const node = { name, url: started.url, child: started.child, exited: started.exited, port }
    running.push(node)
    nodes[name] = node
    return node
  }

  /** The subset of TestService the palm fixtures use, against one node. */
  async function via(node: Node): Promise<TestService> {
    const issuer = await loadLocalIssuer({ dataDir: storage.dataDir, jwtIssuer: 'palmvein-local', jwtAudience: 'palmvein' })
    return {
      request: (method, path, options) => request(node.url, method, path, options),
      token: (subject: string) => issuer.sign(subject, 3600),
      storage,
    } as TestService
  }

  const identifyOn = (node: Node, identity: number) =>
    request(node.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.key,
      body: identifyBody(palms, identity, identity % 2 ? 'left' : 'right'),
    })

  async function clusterStatus() {
    const result = await runCli(['cluster', 'status'], { ...baseEnv(), PALMVEIN_NODE_LEASE_MS: String(LEASE_MS), PALMVEIN_SHARD_REPLICAS: '2' })
    return { code: result.code, status: JSON.parse(result.stdout), stderr: result.stderr }
  }

  async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const value = await probe()
      if (value !== null) return value
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    throw new Error(`${what}: not within ${timeoutMs} ms`)
  }

  /** Every shard ready on exactly these nodes. */
  const shardsHeldBy = (names: string[]) =>
    until(`every shard on ${names.join(' + ')}`, async () => {
      const { status } = await clusterStatus()
      const urls = new Map(status.nodes.map((node: { node_id: string; url: string }) => [node.node_id, node.url]))
      const environment = status.environments.find((candidate: { environment_id: string }) => candidate.environment_id === tenant.environmentId)
      const want = names.map((name) => nodes[name].url).sort()
      const ok = environment?.shard_replicas.every(
        (shard: { ready: string[] }) => JSON.stringify(shard.ready.map((id) => urls.get(id)).sort()) === JSON.stringify(want),
      )
      return ok ? status : null
    })

  it('spreads an environment over the nodes; any node identifies every member and refuses a duplicate palm', async () => {
    const [portA, portB, portC] = [await freePort(), await freePort(), await freePort()]
    // A first (it creates the data directory's keys), then B and C together.
    await startNode('A', portA, { PALMVEIN_NODE_MEMORY_BYTES: String(1 << 20) })
    await Promise.all([startNode('B', portB), startNode('C', portC)])
    const serviceA = await via(nodes.A)
    tenant = await createPalmTenant(serviceA, 'cluster@example.com', { shards: SHARDS, search_mode: 'exact' })
    const order = ['A', 'B', 'C']
    for (let identity = 0; identity < IDENTITIES; identity++) {
      const service = await via(nodes[order[identity % 3]])
      const memberId = await createMember(service, tenant, `Member ${identity}`)
      // The environment's shards are taken on the nodes' next heartbeat: until then, 503.
      const response = await until(`enroll ${identity}`, async () => {
        const answer = await enroll(service, tenant, enrollBody(palms, identity, memberId))
        return answer.status === 503 ? null : answer
      })
      expectStatus(response, 200, `enroll ${identity}`)
      members.push(memberId)
    }
    // Two replicas of every shard, on B and C: A is past its memory budget and takes none.
    const status = await shardsHeldBy(['B', 'C'])
    expect(status.environments.find((environment: { environment_id: string }) => environment.environment_id === tenant.environmentId)).toMatchObject({
      shards: SHARDS,
      replicas_wanted: 2,
    })
    expect(status.nodes.find((node: { url: string }) => node.url === nodes.A.url)).toMatchObject({ full: true, shards_held: 0 })
    for (const node of [nodes.A, nodes.B, nodes.C]) {
      for (let identity = 0; identity < IDENTITIES; identity++) {
        const response = await identifyOn(node, identity)
        expectStatus(response, 200, `identify ${identity} on ${node.name}`)
        expect(response.body, `identify ${identity} on ${node.name}`).toMatchObject({ status: 'Found', member_id: members[identity] })
      }
    }
    // Enrolled on B, found through A; the same palm again as a new member, through C: refused.
    const newcomer = await createMember(await via(nodes.C), tenant, 'Copycat')
    expectProblem(await enroll(await via(nodes.C), tenant, enrollBody(palms, 3, newcomer)), 409, 'duplicate_palm')
    const health = await (await fetch(`${nodes.A.url}/healthz`)).text()
    expect(health).toMatch(/^cluster: node \S+ at http:\/\/127\.0\.0\.1:\d+; 3 live node\(s\); serves 0 shard\(s\)/m)
  }, 180_000)

  it('refuses node-to-node calls not signed with the cluster key, and keeps them out of the API description', async () => {
    // A shard that has members (members[0]'s): 10 members may leave one of 4 shards empty.
    const shard = shardOf(members[0], SHARDS)
    const body = { environment_id: tenant.environmentId, shards: [shard], min_seq: 0, probe: Buffer.alloc(256).toString('base64'), k: 1 }
    const key = peerSigningKey(SECRET)
    /** The headers of a signed call with this body; `signingKey` another key for a forged one. */
    const signedFor = (sent: unknown, signingKey = key) => ({
      'content-type': 'application/json',
      ...signPeerRequest(signingKey, { method: 'POST', target: '/internal/cluster/search', body: JSON.stringify(sent) }),
    })
    for (const headers of [{} as Record<string, string>, { 'x-palmvein-cluster-secret': SECRET }, signedFor(body, peerSigningKey(`${SECRET}x`))]) {
      expectProblem(await request(nodes.B.url, 'POST', '/internal/cluster/search', { body, headers }), 401, 'unauthenticated')
    }
    expectProblem(await request(nodes.B.url, 'POST', '/internal/cluster/search', { body, headers: signedFor(body) }), 400, 'invalid_request')
    const probe = Buffer.from(Int8Array.from({ length: 256 }, (_, index) => (index % 7) - 3).buffer).toString('base64')
    const answered = await request(nodes.B.url, 'POST', '/internal/cluster/search', { body: { ...body, probe }, headers: signedFor({ ...body, probe }) })
    expectStatus(answered, 200)
    expect(answered.body.hits).toHaveLength(1)
    // B holds every shard; asked for one it reads that shard's rows only, and names hands.
    const ofShard = members.filter((memberId) => shardOf(memberId, SHARDS) === shard)
    const all = await request(nodes.B.url, 'POST', '/internal/cluster/search', {
      body: { ...body, shards: [shard], probe, k: 100 },
      headers: signedFor({ ...body, shards: [shard], probe, k: 100 }),
    })
    expect(all.body.hits).toHaveLength(ofShard.length * 2)
    for (const hit of all.body.hits) {
      expect(ofShard).toContain(hit.id)
      expect(['left', 'right']).toContain(hit.partition)
    }
    const leftBody = { ...body, shards: [shard], probe, k: 100, partition: 'left' }
    const leftOnly = await request(nodes.B.url, 'POST', '/internal/cluster/search', { body: leftBody, headers: signedFor(leftBody) })
    expect(leftOnly.body.hits.map((hit: { partition: string }) => hit.partition)).toEqual(ofShard.map(() => 'left'))
    const document = await request(nodes.B.url, 'GET', '/v1/openapi.json')
    expect(Object.keys(document.body.paths).filter((path) => path.includes('internal'))).toEqual([])
  }, 30_000)

  it("a platform operator's view in Chromium: the 3 nodes, each shard's replicas, every node's traffic", async () => {
    // The node-to-node call behind it answers a signed request only.
    const target = '/internal/cluster/traffic?seconds=60'
    expectProblem(await request(nodes.B.url, 'GET', target), 401, 'unauthenticated')
    const signed = await request(nodes.B.url, 'GET', target, { headers: signPeerRequest(peerSigningKey(SECRET), { method: 'GET', target, body: '' }) })
    expectStatus(signed, 200)
    expect(signed.body).toMatchObject({ slot_seconds: 10, points: expect.any(Array) })
    // As an operator does it: a platform organization and a sign-in link from the CLI, then node A's console.
    const env = { ...baseEnv(), PALMVEIN_NODE_LEASE_MS: String(LEASE_MS), PALMVEIN_SHARD_REPLICAS: '2' }
    const created = await runCli(['org', 'create', '--name', 'Platform', '--admin', 'cluster@example.com', '--platform'], env)
    expect(created.code, created.stderr).toBe(0)
    const link = await runCli(['console', '--sub', 'cluster@example.com', '--url', nodes.A.url], env)
    expect(link.code, link.stderr).toBe(0)
    const chromium = await openConsoleBrowser(nodes.A.url)
    try {
      const { page } = chromium
      await page.goto(link.stdout.trim())
      await page.getByRole('heading', { name: 'Organizations' }).waitFor()
      await page.getByRole('link', { name: 'Operations' }).click()
      await page.getByRole('heading', { name: 'Operations' }).waitFor()
      await expect.poll(() => page.getByTestId('cluster-node').count()).toBe(3)
      expect(await page.getByTestId('cluster-mode').textContent()).toMatch(/^3 live nodes/)
      const nodeA = page.getByTestId('cluster-node').filter({ hasText: nodes.A.url })
      expect(await nodeA.textContent()).toContain('memory full')
      // Each of the environment's shards is ready on B and C (A is past its memory budget).
      const shards = page.getByTestId('shard-table').filter({ hasText: `${SHARDS} shards, 2 replicas wanted` })
      expect(await shards.getByTestId('shard-row').count()).toBe(SHARDS)
      for (const ready of await shards.getByTestId('shard-ready').allTextContents()) expect(ready.split(', ')).toHaveLength(2)
      // Node A gathers its peers' traffic: all three answered, and each served identifies above.
      await expect.poll(() => page.getByTestId('traffic-node').count()).toBe(3)
      for (const line of await page.getByTestId('traffic-node').allTextContents()) expect(line).toMatch(/identify p50 [\d.]+ ms, p95 [\d.]+ ms/)
      await page.locator('[data-testid="latency-chart"] canvas').waitFor()
      await chromium.scan('operations-cluster')
      expect(chromium.errors).toEqual([])
    } finally {
      await chromium.close()
    }
  }, 60_000)

  it('a node killed mid-traffic: its replicas answer at once, and its shards settle on the survivors after the lease', async () => {
    nodes.B.child.kill('SIGKILL')
    await nodes.B.exited
    const deadline = Date.now() + LEASE_MS * 2
    const answers = { found: 0, wrong: 0, unavailable: 0 }
    // While B's lease runs A still sends it searches: each fails over to C, the other replica.
    while (Date.now() < deadline) {
      for (let identity = 0; identity < IDENTITIES; identity++) {
        const response = await identifyOn(nodes.A, identity)
        if (response.status === 503) answers.unavailable += 1
        else if (response.body.member_id === members[identity]) answers.found += 1
        else answers.wrong += 1
      }
    }
    expect(answers.found).toBeGreaterThan(0)
    expect(answers).toMatchObject({ wrong: 0, unavailable: 0 })
    // After the lease B's holds lapse: C alone holds every shard (only one node can).
    await shardsHeldBy(['C'])
    for (let identity = 0; identity < IDENTITIES; identity++) expect((await identifyOn(nodes.A, identity)).body.member_id).toBe(members[identity])
  }, 60_000)

  it('a shard with no live replica answers 503 shard_unavailable; a node restarted after missing changes serves them', async () => {
    // Enrolled while B is down: B never hears of it.
    const late = await createMember(await via(nodes.C), tenant, 'Late')
    expectStatus(await enroll(await via(nodes.C), tenant, enrollBody(palms, IDENTITIES, late)), 200)
    nodes.C.child.kill('SIGKILL')
    await nodes.C.exited
    const response = await identifyOn(nodes.A, 0)
    expectProblem(response, 503, 'shard_unavailable')
    expect(response.body.detail).toMatch(/^shard \d of environment [0-9a-f-]{36} has no live replica/)
    expect(response.headers.get('retry-after')).toBe('5')
    // B again, at its old address: it loads every shard from the database, the late member included.
    await startNode('B', nodes.B.port)
    await shardsHeldBy(['B'])
    const answer = await request(nodes.A.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.key,
      body: identifyBody(palms, IDENTITIES, 'left'),
    })
    expect(answer.body).toMatchObject({ status: 'Found', member_id: late })
    const { code, status } = await clusterStatus()
    expect(code).toBe(0)
    expect(status.warnings).toEqual([])
    expect(status.nodes).toHaveLength(2)
  }, 90_000)

  it('a node joining takes its share: every shard gets its second replica back', async () => {
    await startNode('C', nodes.C.port)
    await shardsHeldBy(['B', 'C'])
    for (const node of [nodes.A, nodes.C]) {
      for (let identity = 0; identity < IDENTITIES; identity++) expect((await identifyOn(node, identity)).body.member_id).toBe(members[identity])
    }
  }, 60_000)
})
