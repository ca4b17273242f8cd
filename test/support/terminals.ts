// Terminals for tests: register one through Device-Com and link it to a project with its code,
// exactly as a customer would.
import { expect } from 'vitest'
import { newId } from '../../src/ids.js'
import { expectStatus, type TestService } from './service.js'

export interface Terminal {
  deviceId: string
  deviceToken: string
}

/** Sandbox projects allow 5 requests a minute: tests that are not about limits lift them. */
export async function liftRateLimits(svc: TestService, projectId: string): Promise<void> {
  await svc.storage.db.sql`UPDATE projects SET requests_per_minute = 100000, daily_request_limit = 1000000 WHERE id = ${projectId}`
}

export async function registerTerminal(svc: TestService, options: { mode?: string; hardware_platform?: string } = {}) {
  const response = await svc.request('POST', '/v1/device-com/registration', {
    body: { hardware_platform: options.hardware_platform ?? 'android', mode: options.mode ?? 'enrollment' },
  })
  expectStatus(response, 201)
  return response.body as { device_id: string; registration_code: string; device_token: string }
}

/** Register a terminal and link it to the (sandbox) project. */
export async function linkTerminal(svc: TestService, auth: string, projectId: string, options: { mode?: string; name?: string } = {}): Promise<Terminal> {
  const registered = await registerTerminal(svc, { mode: options.mode })
  const linked = await svc.request('POST', `/v1/projects/${projectId}/device/android/complete_registration`, {
    auth,
    body: { registration_code: registered.registration_code, device_name: options.name ?? 'Front desk', device_mode: options.mode ?? 'enrollment' },
  })
  expectStatus(linked, 200)
  expect(linked.body).toEqual({})
  return { deviceId: registered.device_id, deviceToken: registered.device_token }
}

/** A member row of the project (for session tests that do not need captures). */
export async function insertMember(svc: TestService, projectId: string, environmentId: string): Promise<string> {
  const id = newId()
  await svc.storage.db.sql`INSERT INTO members (id, project_id, environment_id, display_name) VALUES (${id}, ${projectId}, ${environmentId}, 'Test member')`
  return id
}
