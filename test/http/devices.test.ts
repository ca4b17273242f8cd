import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, registerTerminal } from '../support/terminals.js'

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe('devices: registration, linking, list, update', () => {
  let svc: TestService
  let tenant: Tenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'devices-admin@example.com', { plan: 'sandbox' })
    await liftRateLimits(svc, tenant.projectId)
    await liftRateLimits(svc, tenant.secondProjectId)
  })
  afterAll(async () => {
    await svc.close()
  })

  it('registers a terminal without credentials: device id, an 8-character code, a device token', async () => {
    const registered = await registerTerminal(svc, { mode: 'payment', hardware_platform: 'linux' })
    expect(registered).toEqual({
      device_id: expect.any(String),
      registration_code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{8}$/),
      device_token: expect.any(String),
    })
    expect(registered.device_token).toMatch(new RegExp(`^pvd_${registered.device_id}\\.[A-Za-z0-9_-]{43}$`))
    // The token is stored hashed only.
    const [row] = await svc.storage.db.sql`SELECT token_hash FROM devices WHERE id = ${registered.device_id}`
    expect(Buffer.from(row.token_hash).toString('base64url')).not.toBe(registered.device_token.split('.')[1])
    // Not linked yet: the token authenticates, but the terminal cannot work for any project.
    const unlinked = await svc.request('GET', '/v1/device-com/enrollment', { auth: registered.device_token })
    expectStatus(unlinked, 403)
    expect(unlinked.body.code).toBe('forbidden')
  })

  it('links a terminal with its code (case-insensitive), then lists it with every Device field', async () => {
    const registered = await registerTerminal(svc, { mode: 'enrollment', hardware_platform: 'android' })
    const linked = await svc.request('POST', `/v1/projects/${tenant.projectId}/device/android/complete_registration`, {
      auth: tenant.orgKey,
      body: { registration_code: ` ${registered.registration_code.toLowerCase()} `, device_name: 'Lobby kiosk', device_mode: 'demo' },
    })
    expectStatus(linked, 200)
    expect(linked.body).toEqual({})
    // The terminal's first call after linking: last_auth_at is set from now on.
    expectStatus(await svc.request('GET', '/v1/device-com/enrollment', { auth: registered.device_token }), 204)

    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/devices?page=1&per_page=10`, { auth: tenant.token })
    expectStatus(listed, 200)
    expect(listed.body.total).toBe(1)
    expect(listed.body.devices).toEqual([
      {
        id: registered.device_id,
        name: 'Lobby kiosk',
        address_city: null,
        address_state: null,
        address_country: null,
        last_auth_at: expect.stringMatching(TIMESTAMP),
        last_activity_at: null,
        mode: 'demo',
        hardware_platform: 'android',
        enabled: true,
      },
    ])

    // The code was single use.
    const again = await svc.request('POST', `/v1/projects/${tenant.projectId}/device/android/complete_registration`, {
      auth: tenant.orgKey,
      body: { registration_code: registered.registration_code, device_name: 'x', device_mode: 'demo' },
    })
    expectStatus(again, 422)
    expect(again.body.code).toBe('registration_code_invalid')
  })

  it('pages the list oldest first and counts the total', async () => {
    for (let index = 0; index < 11; index++) await linkTerminal(svc, tenant.token, tenant.secondProjectId, { name: `T${index}` })
    const first = await svc.request('GET', `/v1/projects/${tenant.secondProjectId}/devices?page=1&per_page=10`, { auth: tenant.orgKey })
    expectStatus(first, 200)
    expect(first.body.total).toBe(11)
    expect(first.body.devices.map((device: { name: string }) => device.name)).toEqual(Array.from({ length: 10 }, (_, index) => `T${index}`))
    const second = await svc.request('GET', `/v1/projects/${tenant.secondProjectId}/devices?page=2&per_page=10`, { auth: tenant.orgKey })
    expect(second.body).toMatchObject({ total: 11, devices: [{ name: 'T10' }] })
    const beyond = await svc.request('GET', `/v1/projects/${tenant.secondProjectId}/devices?page=3&per_page=10`, { auth: tenant.orgKey })
    expect(beyond.body).toEqual({ devices: [], total: 11 })
  })

  it('renames and disables a device; a disabled terminal is refused at once, and works again when enabled', async () => {
    const terminal = await linkTerminal(svc, tenant.token, tenant.projectId)
    const renamed = await svc.request('PATCH', `/v1/device/${terminal.deviceId}`, { auth: tenant.orgKey, body: { name: 'Till 2' } })
    expectStatus(renamed, 200)
    expect(renamed.body).toMatchObject({ id: terminal.deviceId, name: 'Till 2', enabled: true })

    const disabled = await svc.request('PATCH', `/v1/device/${terminal.deviceId}`, { auth: tenant.token, body: { enabled: false } })
    expectStatus(disabled, 200)
    expect(disabled.body).toMatchObject({ name: 'Till 2', enabled: false })
    const refused = await svc.request('GET', '/v1/device-com/enrollment', { auth: terminal.deviceToken })
    expectStatus(refused, 403)

    expectStatus(await svc.request('PATCH', `/v1/device/${terminal.deviceId}`, { auth: tenant.token, body: { enabled: true } }), 200)
    expectStatus(await svc.request('GET', '/v1/device-com/enrollment', { auth: terminal.deviceToken }), 204)
  })

  it('counts device routes and Device-Com calls toward the project rate limit (sandbox: 5 a minute)', async () => {
    const created = await svc.request('POST', `/v1/organization/${tenant.orgId}/projects`, {
      auth: tenant.token,
      body: { name: 'limited', environment_id: tenant.environmentId, plan: 'sandbox' },
    })
    expectStatus(created, 201)
    const projectId = created.body.id
    const terminal = await linkTerminal(svc, tenant.token, projectId) // 1: complete_registration
    const patched = await svc.request('PATCH', `/v1/device/${terminal.deviceId}`, { auth: tenant.token, body: { name: 'a' } })
    expectStatus(patched, 200)
    expect(patched.headers.get('ratelimit-remaining')).toBe('3')
    const poll = await svc.request('GET', '/v1/device-com/enrollment', { auth: terminal.deviceToken })
    expectStatus(poll, 204)
    expect(poll.headers.get('ratelimit-remaining')).toBe('2')
    for (let index = 0; index < 2; index++) expectStatus(await svc.request('GET', '/v1/device-com/enrollment', { auth: terminal.deviceToken }), 204)
    const limited = await svc.request('GET', '/v1/device-com/enrollment', { auth: terminal.deviceToken })
    expectStatus(limited, 429)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    // Registration is not a project's request: it is never limited.
    await registerTerminal(svc)
  })
})
