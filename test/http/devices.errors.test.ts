import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProjectOnPlan } from '../support/plans.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, registerTerminal } from '../support/terminals.js'

describe('devices: refusals', () => {
  let svc: TestService
  let tenant: Tenant
  let stranger: Tenant
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'devices-errors@example.com', { plan: 'sandbox' })
    stranger = await createTenant(svc, 'devices-stranger@example.com', { plan: 'sandbox' })
    for (const projectId of [tenant.projectId, tenant.secondProjectId, stranger.projectId]) await liftRateLimits(svc, projectId)
  })
  afterAll(async () => {
    await svc.close()
  })

  const complete = (projectId: string, body: unknown, auth = tenant.token) =>
    svc.request('POST', `/v1/projects/${projectId}/device/android/complete_registration`, { auth, body })

  it('refuses an unknown or expired registration code with 422 registration_code_invalid', async () => {
    const unknown = await complete(tenant.projectId, { registration_code: 'ZZZZZZZZ', device_name: 'x', device_mode: 'access' })
    expectStatus(unknown, 422)
    expect(unknown.body).toMatchObject({ code: 'registration_code_invalid', errors: [{ path: '/registration_code' }] })

    const registered = await registerTerminal(svc)
    await svc.storage.db.sql`UPDATE registration_codes SET expires_at = now() - interval '1 second' WHERE device_id = ${registered.device_id}`
    const expired = await complete(tenant.projectId, { registration_code: registered.registration_code, device_name: 'x', device_mode: 'access' })
    expectStatus(expired, 422)
    expect(expired.body.code).toBe('registration_code_invalid')
    const [device] = await svc.storage.db.sql`SELECT project_id FROM devices WHERE id = ${registered.device_id}`
    expect(device.project_id).toBeNull()
  })

  it('refuses a non-sandbox project with 403 sandbox_required and leaves the code usable', async () => {
    const business = await createProjectOnPlan(svc, tenant.token, tenant.orgId, { name: 'prod', environment_id: tenant.environmentId, plan: 'business' })
    const registered = await registerTerminal(svc)
    const body = { registration_code: registered.registration_code, device_name: 'x', device_mode: 'payment' }
    const refused = await complete(business.id, body)
    expectStatus(refused, 403)
    expect(refused.body.code).toBe('sandbox_required')
    expectStatus(await complete(tenant.projectId, body), 200)
  })

  it('validates bodies and queries strictly', async () => {
    const cases: Array<[string, string, unknown]> = [
      ['POST', '/v1/device-com/registration', { hardware_platform: 'android', mode: 'kiosk' }],
      ['POST', '/v1/device-com/registration', { hardware_platform: 'x'.repeat(65), mode: 'access' }],
      ['POST', '/v1/device-com/registration', { mode: 'access' }],
      ['POST', '/v1/device-com/registration', { hardware_platform: 'android', mode: 'access', extra: 1 }],
      [
        'POST',
        `/v1/projects/${tenant.projectId}/device/android/complete_registration`,
        { registration_code: 'ABCDEFGH', device_name: 'x', device_mode: 'kiosk' },
      ],
      ['POST', `/v1/projects/${tenant.projectId}/device/android/complete_registration`, { registration_code: 'ABCDEFGH', device_mode: 'access' }],
    ]
    for (const [method, path, body] of cases) {
      const response = await svc.request(method, path, { auth: path.includes('/projects/') ? tenant.token : undefined, body })
      expectStatus(response, 400)
      expect(response.body.code).toBe('invalid_request')
    }
    for (const query of ['page=1&per_page=9', 'page=1&per_page=101', 'page=0&per_page=10', 'per_page=10', 'page=1']) {
      const response = await svc.request('GET', `/v1/projects/${tenant.projectId}/devices?${query}`, { auth: tenant.token })
      expectStatus(response, 400)
    }
  })

  it("answers 404 for a missing device, an unlinked one, and another tenant's (token, key)", async () => {
    const mine = await linkTerminal(svc, tenant.token, tenant.projectId)
    const unlinked = await registerTerminal(svc)
    for (const deviceId of ['0190a000-0000-7000-8000-000000000000', unlinked.device_id]) {
      const response = await svc.request('PATCH', `/v1/device/${deviceId}`, { auth: tenant.token, body: { name: 'x' } })
      expectStatus(response, 404)
      expect(response.body.code).toBe('not_found')
    }
    for (const auth of [stranger.token, stranger.orgKey]) {
      const response = await svc.request('PATCH', `/v1/device/${mine.deviceId}`, { auth, body: { enabled: false } })
      expectStatus(response, 404)
      expect(response.body.detail).toBe('device not found')
    }
    // A key scoped to the other project of the same organization: 403, and nothing changed.
    const scoped = await svc.request('PATCH', `/v1/device/${mine.deviceId}`, { auth: tenant.secondProjectKey, body: { enabled: false } })
    expectStatus(scoped, 403)
    const listed = await svc.request('GET', `/v1/projects/${tenant.projectId}/devices?page=1&per_page=100`, { auth: tenant.token })
    expect(listed.body.devices.find((device: { id: string }) => device.id === mine.deviceId).enabled).toBe(true)
  })

  it('sweeps terminals that were never linked once their code is long expired', async () => {
    const stale = await registerTerminal(svc)
    await svc.storage.db.sql`UPDATE devices SET created_at = now() - interval '2 hours' WHERE id = ${stale.device_id}`
    await registerTerminal(svc)
    const rows = await svc.storage.db.sql`SELECT 1 FROM devices WHERE id = ${stale.device_id}`
    expect(rows).toHaveLength(0)
    const refused = await svc.request('GET', '/v1/device-com/enrollment', { auth: stale.device_token })
    expectStatus(refused, 401)
  })
})
