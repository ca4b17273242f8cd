import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, type Terminal } from '../support/terminals.js'

const UNKNOWN_ID = '0190a000-0000-7000-8000-000000000001'

describe('enrollment sessions: start, status, supersede, cancel, expiry', () => {
  let svc: TestService
  let tenant: Tenant
  let terminal: Terminal
  let memberId: string
  beforeAll(async () => {
    svc = await bootService()
    tenant = await createTenant(svc, 'sessions-admin@example.com', { plan: 'sandbox' })
    await liftRateLimits(svc, tenant.projectId)
    await liftRateLimits(svc, tenant.secondProjectId)
    terminal = await linkTerminal(svc, tenant.token, tenant.projectId)
    const member = await svc.request('POST', `/v1/projects/${tenant.projectId}/members`, { auth: tenant.orgKey, body: { display_name: 'Ada', metadata: null } })
    expectStatus(member, 201)
    memberId = member.body.member_id
  })
  afterAll(async () => {
    await svc.close()
  })

  const start = (deviceId = terminal.deviceId, body: unknown = { member_id: memberId }, auth = tenant.token) =>
    svc.request('POST', `/v1/devices/${deviceId}/enroll/member/start`, { auth, body })
  const getStatus = (query = '') => svc.request('GET', `/v1/devices/${terminal.deviceId}/enroll/status${query}`, { auth: tenant.orgKey })
  const postStatus = (session: unknown) => svc.request('POST', `/v1/devices/${terminal.deviceId}/enroll/status`, { auth: tenant.orgKey, body: { session } })
  const cancel = (sessionId: string) => svc.request('DELETE', `/v1/devices/${terminal.deviceId}/enroll/cancel?session_id=${sessionId}`, { auth: tenant.token })

  it('starts a pending session for a member; GET and POST status show it', async () => {
    const before = Math.floor(Date.now() / 1000)
    const started = await start()
    expectStatus(started, 200)
    const { session } = started.body
    expect(started.body.device_id).toBe(terminal.deviceId)
    expect(session).toEqual({
      enroll_id: expect.any(String),
      state: 'pending',
      nbf: session.iat,
      iat: expect.any(Number),
      exp: session.iat + 300,
      user_id: memberId,
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      mobile_challenge_response: false,
      terminal_challenge_response: false,
    })
    expect(session.iat).toBeGreaterThanOrEqual(before)
    expect(session.iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))

    expect((await getStatus()).body).toEqual({ session })
    expect((await getStatus(`?session_id=${session.enroll_id}`)).body).toEqual({ session })
    expect((await getStatus(`?session_id=${UNKNOWN_ID}`)).body).toEqual({ session: null })
    const posted = await postStatus(session)
    expectStatus(posted, 200)
    expect(posted.body).toEqual({ session })
    // Only enroll_id is needed from the client's copy.
    expect((await postStatus({ enroll_id: session.enroll_id })).body).toEqual({ session })
  })

  it('a new start supersedes the active session: its POST status answers null', async () => {
    const first = (await start()).body.session
    const second = (await start()).body.session
    expect(second.enroll_id).not.toBe(first.enroll_id)
    expect((await getStatus()).body.session.enroll_id).toBe(second.enroll_id)
    expect((await postStatus(first)).body).toEqual({ session: null })
    expect((await postStatus(second)).body.session).toMatchObject({ enroll_id: second.enroll_id, state: 'pending' })
    // Not this device's session (or none at all): null as well.
    expect((await postStatus({ enroll_id: UNKNOWN_ID })).body).toEqual({ session: null })
  })

  it('cancels only the named session: a wrong session_id is 404 and changes nothing', async () => {
    const active = (await start()).body.session
    const wrong = await cancel(UNKNOWN_ID)
    expectStatus(wrong, 404)
    expect(wrong.body.code).toBe('not_found')
    expect((await getStatus()).body.session).toMatchObject({ enroll_id: active.enroll_id, state: 'pending' })

    const cancelled = await cancel(active.enroll_id)
    expectStatus(cancelled, 200)
    expect(cancelled.body).toEqual({ ...active, state: 'cancelled' })
    expect((await getStatus()).body).toEqual({ session: null })
    expect((await postStatus(active)).body.session).toMatchObject({ state: 'cancelled' })
    // A retried cancel answers the same cancelled session.
    const again = await cancel(active.enroll_id)
    expectStatus(again, 200)
    expect(again.body.state).toBe('cancelled')
    const missingQuery = await svc.request('DELETE', `/v1/devices/${terminal.deviceId}/enroll/cancel`, { auth: tenant.token })
    expectStatus(missingQuery, 400)
  })

  it('expires a session 300 s after iat: no longer active, POST status shows expired, cancel is 409', async () => {
    const session = (await start()).body.session
    await svc.storage.db.sql`UPDATE enrollment_sessions SET iat = iat - 301, nbf = nbf - 301, exp = exp - 301 WHERE id = ${session.enroll_id}`
    expect((await getStatus()).body).toEqual({ session: null })
    expect((await postStatus(session)).body.session).toMatchObject({ enroll_id: session.enroll_id, state: 'expired' })
    const refused = await cancel(session.enroll_id)
    expectStatus(refused, 409)
    expect(refused.body.code).toBe('conflict')
  })

  it('refuses a member of another project (422), a disabled device (409), a stranger (404)', async () => {
    const other = await svc.request('POST', `/v1/projects/${tenant.secondProjectId}/members`, {
      auth: tenant.orgKey,
      body: { display_name: 'Elsewhere', metadata: null },
    })
    expectStatus(other, 201)
    const foreignMember = await start(terminal.deviceId, { member_id: other.body.member_id })
    expectStatus(foreignMember, 422)
    expect(foreignMember.body).toMatchObject({ code: 'invalid_reference', errors: [{ path: '/member_id' }] })

    const stranger = await createTenant(svc, 'sessions-stranger@example.com')
    expectStatus(await start(terminal.deviceId, { member_id: memberId }, stranger.orgKey), 404)

    const disabled = await linkTerminal(svc, tenant.token, tenant.projectId)
    expectStatus(await svc.request('PATCH', `/v1/device/${disabled.deviceId}`, { auth: tenant.token, body: { enabled: false } }), 200)
    const refused = await start(disabled.deviceId)
    expectStatus(refused, 409)
    const [row] = await svc.storage.db.sql`SELECT count(*)::int AS n FROM enrollment_sessions WHERE device_id = ${disabled.deviceId}`
    expect(row.n).toBe(0)
  })
})
