// Refusals come back as PalmveinError with the problem's status, code, detail and errors[].path;
// paginate walks a list across pages. Everything through @palmvein/client against a booted service.
import { collectPages, createPalmveinClient, ok, paginate, PalmveinError, registerTerminal } from '@palmvein/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootService, type TestService } from '../../../test/support/service.js'
import { createClientTenant, type ClientTenant } from './support/tenant.js'

let svc: TestService
let tenant: ClientTenant
beforeAll(async () => {
  svc = await bootService()
  tenant = await createClientTenant(svc, 'problems@example.com')
}, 120_000)
afterAll(async () => {
  await svc?.close()
})

async function refusal(call: Promise<unknown>): Promise<PalmveinError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(PalmveinError)
  return error as PalmveinError
}

describe('problem answers as typed errors', () => {
  it('a 404 carries the not_found code, its detail and the request id', async () => {
    const error = await refusal(
      ok(
        tenant.keyed.GET('/v1/projects/{project_id}/members/{member_id}', {
          params: { path: { project_id: tenant.projectId, member_id: '00000000-0000-4000-8000-000000000000' } },
        }),
      ),
    )
    expect(error).toMatchObject({ status: 404, code: 'not_found', errors: [] })
    expect(error.detail).not.toBe('')
    expect(error.requestId).toMatch(/\S/)
  })

  it('a 422 names the refused field in errors[].path', async () => {
    const error = await refusal(
      ok(
        tenant.admin.POST('/v1/projects/{project_id}/device/android/complete_registration', {
          params: { path: { project_id: tenant.projectId } },
          body: { registration_code: 'ZZZZZZZZ', device_name: 'nobody', device_mode: 'enrollment' },
        }),
      ),
    )
    expect(error).toMatchObject({ status: 422, code: 'registration_code_invalid' })
    expect(error.errors.map((entry) => entry.path)).toEqual(['/registration_code'])
  })

  it('a schema violation (400) names each field, and the plain call returns the same problem as `error`', async () => {
    const call = () =>
      tenant.keyed.GET('/v1/projects/{project_id}/devices', { params: { path: { project_id: tenant.projectId }, query: { page: 0, per_page: 5 } } })
    const error = await refusal(ok(call()))
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' })
    expect(error.errors.map((entry) => entry.path).sort()).toEqual(['/page', '/per_page'])
    const { data, error: returned, response } = await call()
    expect(data).toBeUndefined()
    expect(response.status).toBe(400)
    expect(returned).toMatchObject({ status: 400, code: 'invalid_request', errors: expect.arrayContaining([expect.objectContaining({ path: '/per_page' })]) })
  })

  it('a 401 without a credential', async () => {
    const anonymous = createPalmveinClient({ baseUrl: svc.url })
    const error = await refusal(
      ok(
        anonymous.GET('/v1/projects/{project_id}/members', {
          params: { path: { project_id: tenant.projectId } },
        }),
      ),
    )
    expect(error).toMatchObject({ status: 401, code: 'unauthenticated' })
  })
})

describe('paginate', () => {
  it('walks every device of a project across pages, each once, in the order the pages give', async () => {
    const linked: string[] = []
    for (let index = 0; index < 23; index++) {
      const terminal = await registerTerminal({ baseUrl: svc.url, mode: 'access', hardwarePlatform: 'test' })
      await ok(
        tenant.admin.POST('/v1/projects/{project_id}/device/android/complete_registration', {
          params: { path: { project_id: tenant.projectId } },
          body: { registration_code: terminal.registrationCode, device_name: `door ${index}`, device_mode: 'access' },
        }),
      )
      linked.push(terminal.deviceId)
    }
    const pagesRead: number[] = []
    const devicesPage = async (query: { page: number; per_page: number }) => {
      pagesRead.push(query.page)
      const answer = await ok(tenant.keyed.GET('/v1/projects/{project_id}/devices', { params: { path: { project_id: tenant.projectId }, query } }))
      return answer.devices
    }
    const seen: string[] = []
    for await (const device of paginate(devicesPage, { perPage: 10 })) seen.push(device.id)
    // 23 devices at 10 a page: pages 1 and 2 are full, page 3 holds 3 and is the last asked for.
    expect(pagesRead).toEqual([1, 2, 3])
    expect(seen).toHaveLength(23)
    expect(new Set(seen)).toEqual(new Set(linked))
    // The same walk in one array; a page size that divides the count asks for the empty page after.
    pagesRead.length = 0
    expect((await collectPages(devicesPage, { perPage: 23 })).map((device) => device.id)).toEqual(seen)
    expect(pagesRead).toEqual([1, 2])
  })
})
