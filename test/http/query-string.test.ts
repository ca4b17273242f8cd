import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { usingPostgres } from '../support/database.js'
import { createPalmTenant, type PalmTenant } from '../support/palms.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'

describe(`query strings are decoded strictly (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: PalmTenant
  const transactions = (query: string) => svc.request('GET', `/v1/projects/${tenant.projectId}/transactions?${query}`, { auth: tenant.key })
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createPalmTenant(svc, 'query@example.com')
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('decodes percent-encoding (an encoded + in a time offset)', async () => {
    const answer = await transactions('from=2026-01-01T00:00:00%2B00:00&to=2026-01-02T00:00:00Z')
    expectStatus(answer, 200)
  })

  it.each([
    ['invalid UTF-8', 'from=2026-01-01T00:00:00Z%FF&to=2026-01-02T00:00:00Z', /invalid UTF-8/],
    ['a truncated escape', 'from=2026-01-01T00:00:00Z%E&to=2026-01-02T00:00:00Z', /percent-encoding/],
    ['a NUL character', 'from=2026-01-01T00:00:00Z%00&to=2026-01-02T00:00:00Z', /NUL/],
    ['a NUL in a parameter name', 'fr%00om=x&to=2026-01-02T00:00:00Z', /NUL/],
  ])('answers 400 for %s instead of passing a mangled value on', async (_, query, detail) => {
    const answer = await transactions(query)
    expectProblem(answer, 400, 'invalid_request')
    expect(answer.body.detail).toMatch(detail)
  })

  it('answers 400 on an open route too', async () => {
    expectProblem(await svc.request('GET', '/healthz?probe=%C3'), 400, 'invalid_request')
    expectStatus(await svc.request('GET', '/healthz?probe=%C3%A9'), 200)
  })

  it.each(['transactions', 'transactions/export', 'scans/results'])('keeps %s time windows to years 0001..9999, whatever the offset', async (resource) => {
    const path = (query: string) => `/v1/projects/${tenant.projectId}/${resource}?${query}${resource === 'scans/results' ? '&page=1&per_page=10' : ''}`
    const get = (query: string) => svc.request('GET', path(query), { auth: tenant.key })
    for (const from of ['0001-01-01T00:00:00%2B00:01', '0000-12-31T23:59:59Z']) {
      const answer = await get(`from=${from}&to=2026-01-01T00:00:00Z`)
      expectProblem(answer, 400, 'invalid_request')
      expect(answer.body.errors[0]).toEqual({ path: '/from', message: 'must be an RFC 3339 date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z' })
    }
    expectProblem(await get('from=2026-01-01T00:00:00Z&to=9999-12-31T23:59:59-00:01'), 400, 'invalid_request')
    expectStatus(await get('from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59.999Z'), 200)
  })
})
