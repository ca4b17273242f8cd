// Gallery notifications lost while the LISTEN connection is down are caught up when it is back.
// Service A reaches PostgreSQL through a TCP proxy; its listening backend is terminated
// (pg_terminate_backend) while the proxy refuses new connections, so A cannot subscribe again.
// Service B, connected directly, enrolls a member meanwhile: its NOTIFY reaches no one in A. Once
// the proxy lets A connect, A subscribes again, reads the change log and identifies the member.
// And a member B deletes while A cannot listen is never named by A once the DELETE has answered:
// an answer that names a member first checks the change log (galleries.fresh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Service } from '../../src/server.js'
import { createClient, type Sql } from '../../src/store/engine/database.js'
import type { TestStorage } from '../support/database.js'
import { createMember, createPalmTenant, enrollBody, identifyBody, population, type PalmTenant } from '../support/palms.js'
import { startProxiedService, type ProxiedService } from '../support/proxied-service.js'
import { bootService, expectStatus, request, type TestService } from '../support/service.js'
import type { TcpProxy } from '../support/tcp-proxy.js'

const palms = population({ seed: 11, identities: 8 })

describe('missed gallery notifications (PostgreSQL, the LISTEN connection terminated)', () => {
  let proxied: ProxiedService
  let storage: TestStorage
  let proxy: TcpProxy
  let a: Service
  let b: TestService
  let admin: Sql
  let tenant: PalmTenant
  let logLines: string[]

  beforeAll(async () => {
    proxied = await startProxiedService()
    ;({ storage, proxy, service: a, logLines } = proxied)
    b = await bootService({ storage })
    admin = createClient({ url: storage.databaseUrl!, max: 1 })
    tenant = await createPalmTenant(b, 'missed@example.com')
  }, 120_000)
  afterAll(async () => {
    await admin?.end({ timeout: 1 })
    await b?.close()
    await proxied?.close()
  })

  const identifyAtA = async (identity: number, query = '') => {
    const answer = await request(a.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/identify${query}`, {
      auth: tenant.key,
      body: identifyBody(palms, identity, 'left'),
    })
    expectStatus(answer, 200)
    return answer.body as { status: string; member_id: string | null; candidates?: Array<{ member_id: string }> }
  }
  const enrollThroughB = async (identity: number) => {
    const member = await createMember(b, tenant, `member ${identity}`)
    expectStatus(
      await request(b.url, 'POST', `/v1/projects/${tenant.projectId}/biometrics/enroll`, { auth: tenant.key, body: enrollBody(palms, identity, member) }),
      200,
    )
    return member
  }
  /** A's listening backend goes, and A cannot connect again until the proxy opens. */
  const cutListening = async () => {
    await proxy.set('refuse-new')
    const terminated = await admin<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'listen%' AND client_port = ANY(${proxy.upstreamPorts()}::int[])
        AND pg_terminate_backend(pid, 5000)`
    expect(terminated).toHaveLength(1)
  }
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs: number): Promise<{ value: T; ms: number }> => {
    const started = performance.now()
    for (;;) {
      const value = await read()
      if (done(value) || performance.now() - started > limitMs) return { value, ms: performance.now() - started }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('a member enrolled while A could not listen is identified by A once it listens again, and the log says so', async () => {
    // A has the environment's gallery loaded and hears B's changes.
    const first = await enrollThroughB(0)
    expect(
      (
        await until(
          () => identifyAtA(0),
          (answer) => answer.member_id === first,
          5_000,
        )
      ).value.member_id,
    ).toBe(first)

    await cutListening()

    const missed = await enrollThroughB(1)
    // The notification went to no one in A, and A cannot reconnect yet: A still does not know the member.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await identifyAtA(1)).toEqual(expect.objectContaining({ status: 'NotFound', member_id: null }))

    await proxy.set('open')
    const caughtUp = await until(
      () => identifyAtA(1),
      (answer) => answer.member_id === missed,
      5_000,
    )
    console.log(`[missed notifications] A identified the member enrolled during the drop ${caughtUp.ms.toFixed(0)} ms after the proxy opened`)
    expect(caughtUp.value).toEqual(expect.objectContaining({ status: 'Found', member_id: missed }))

    const messages = logLines.map((line) => (JSON.parse(line) as { msg: string }).msg)
    expect(messages.some((message) => /notification connection dropped/.test(message))).toBe(true)
    expect(messages.some((message) => /caught up 1 change\(s\) in 1 environment\(s\)/.test(message))).toBe(true)

    // And A hears B live again.
    const after = await enrollThroughB(2)
    expect(
      (
        await until(
          () => identifyAtA(2),
          (answer) => answer.member_id === after,
          2_000,
        )
      ).value.member_id,
    ).toBe(after)
  }, 60_000)

  it('a member B deleted while A could not listen is not found by A, at once', async () => {
    const kept = await enrollThroughB(3)
    const erased = await enrollThroughB(4)
    expect(
      (
        await until(
          () => identifyAtA(4),
          (answer) => answer.member_id === erased,
          5_000,
        )
      ).value.member_id,
    ).toBe(erased)

    await cutListening()
    expectStatus(await request(b.url, 'DELETE', `/v1/projects/${tenant.projectId}/members/${erased}`, { auth: tenant.key }), 204)
    // A heard nothing and cannot subscribe again; neither its answer nor its candidates name the member.
    const after = await identifyAtA(4, '?k=3')
    expect(after).toMatchObject({ status: 'NotFound', member_id: null })
    expect(after.candidates!.map((candidate) => candidate.member_id)).not.toContain(erased)
    expect(await identifyAtA(3)).toMatchObject({ status: 'Found', member_id: kept })
    await proxy.set('open')
  }, 60_000)
})
