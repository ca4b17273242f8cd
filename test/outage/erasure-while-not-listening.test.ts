// Once a member DELETE has answered on one process, no other process answers Found for the member,
// even one whose LISTEN connection is down. Service A reaches PostgreSQL through a TCP proxy; its
// listening backend is terminated while the proxy refuses new connections, so A hears no
// notification. Service B deletes the member: A's next identify still does not find it, because an
// answer that names a member first checks the change log (galleries.fresh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Service } from '../../src/server.js'
import { createClient, type Sql } from '../../src/store/database.js'
import type { TestStorage } from '../support/database.js'
import { createMember, createPalmTenant, enrollBody, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { startProxiedService, type ProxiedService } from '../support/proxied-service.js'
import { bootService, expectStatus, request, type TestService } from '../support/service.js'
import type { TcpProxy } from '../support/tcp-proxy.js'

const palms = population({ seed: 12, identities: 4 })

describe('an erasure on another process while the LISTEN connection is down (PostgreSQL)', () => {
  let proxied: ProxiedService
  let storage: TestStorage
  let proxy: TcpProxy
  let a: Service
  let b: TestService
  let admin: Sql
  let tenant: PalmTenant

  beforeAll(async () => {
    proxied = await startProxiedService()
    ;({ storage, proxy, service: a } = proxied)
    b = await bootService({ storage })
    admin = createClient({ url: storage.databaseUrl!, max: 1 })
    tenant = await createPalmTenant(b, 'deaf@example.com')
  }, 120_000)
  afterAll(async () => {
    await admin?.end({ timeout: 1 })
    await b?.close()
    await proxied?.close()
  })

  const identifyAtA = async (identity: number, query = '') => {
    const answer = await request(a.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify${query}`, { auth: tenant.key, body: identifyBody(palms, identity, 'left') })
    expectStatus(answer, 200)
    return answer.body as { status: string; member_id: string | null; candidates?: Array<{ member_id: string }> }
  }

  it('A does not find the member B erased, with no notification heard', async () => {
    const kept = await createMember(b, tenant, 'kept')
    const erased = await createMember(b, tenant, 'erased')
    expectStatus(await request(b.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, { auth: tenant.key, body: enrollBody(palms, 0, kept) }), 200)
    expectStatus(await request(b.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, { auth: tenant.key, body: enrollBody(palms, 1, erased) }), 200)
    // A has both in its gallery (it heard B's enrollments).
    await expect.poll(async () => (await identifyAtA(1)).member_id, { timeout: 5_000, interval: 50 }).toBe(erased)

    await proxy.set('refuse-new')
    const terminated = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'listen%' AND client_port = ANY(${proxy.upstreamPorts()}::int[])
        AND pg_terminate_backend(pid, 5000)`
    expect(terminated).toHaveLength(1)

    expectStatus(await request(b.url, 'DELETE', `/v1/projects/${tenant.projectId}/members/${erased}`, { auth: tenant.key }), 204)
    // At once, with A still unable to listen: neither the answer nor its candidates name the member.
    const after = await identifyAtA(1, '?k=3')
    expect(after).toMatchObject({ status: 'NotFound', member_id: null })
    expect(after.candidates!.map((candidate) => candidate.member_id)).not.toContain(erased)
    expect(await identifyAtA(0)).toMatchObject({ status: 'Found', member_id: kept })
    await proxy.set('open')
  }, 60_000)
})
