// Abuse limits of the terminal side: registration (no credential) is limited per client address,
// and a terminal's requests do not each write its last_auth_at.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal } from '../support/terminals.js'

const register = (svc: TestService, headers: Record<string, string> = {}) =>
  svc.request('POST', '/v1/device-com/registration', { body: { hardware_platform: 'android', mode: 'enrollment' }, headers })

describe(`terminal abuse limits (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: Tenant
  beforeAll(async () => {
    svc = await bootService({ config: { registrationsPerMinute: 3, trustProxy: true } })
    tenant = await createTenant(svc, 'abuse@example.com', { plan: 'sandbox' })
    await liftRateLimits(svc, tenant.projectId)
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('limits registrations per client address (X-Forwarded-For behind a trusted proxy), with Retry-After', async () => {
    const from = (address: string) => ({ 'x-forwarded-for': `${address}, 10.0.0.1` })
    for (let index = 0; index < 3; index++) {
      const accepted = await register(svc, from('203.0.113.7'))
      expectStatus(accepted, 201)
      expect(accepted.headers.get('ratelimit-remaining')).toBe(String(2 - index))
    }
    const refused = await register(svc, from('203.0.113.7'))
    expectProblem(refused, 429, 'rate_limited')
    expect(refused.body.detail).toBe("client address 203.0.113.7's registration limit of 3 requests per minute is reached")
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expectStatus(await register(svc, from('203.0.113.8')), 201)
  })

  it("writes a terminal's last_auth_at at most once a minute", async () => {
    // linkTerminal registers from this test's own address (127.0.0.1), a budget of its own.
    const terminal = await linkTerminal(svc, tenant.token, tenant.projectId)
    const lastAuth = async () =>
      (await svc.storage.db.sql<{ last_auth_at: Date | null }[]>`SELECT last_auth_at FROM devices WHERE id = ${terminal.deviceId}`)[0].last_auth_at
    const poll = () => svc.request('GET', '/v1/device-com/enrollment', { auth: terminal.deviceToken })
    const settle = async (until: (value: Date | null) => boolean) => {
      for (let waited = 0; waited < 3_000; waited += 50) {
        const value = await lastAuth()
        if (until(value)) return value
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      return lastAuth()
    }
    expectStatus(await poll(), 204)
    const first = await settle((value) => value !== null)
    expect(first).not.toBeNull()
    for (let index = 0; index < 3; index++) expectStatus(await poll(), 204)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await lastAuth())!.getTime()).toBe(first!.getTime())
    // A minute later (the row moved back by hand, this process's clock forward: the service
    // remembers when it last wrote, since its cached device row does not move), the next request
    // records it again.
    await svc.storage.db.sql`UPDATE devices SET last_auth_at = now() - interval '2 minutes' WHERE id = ${terminal.deviceId}`
    const old = (await lastAuth())!.getTime()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 120_000 })
    try {
      expectStatus(await poll(), 204)
    } finally {
      vi.useRealTimers()
    }
    expect((await settle((value) => value !== null && value.getTime() > old))!.getTime()).toBeGreaterThan(old)
  })
})
