import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember as createMemberInProject } from '../../src/domain/members/members.js'
import { enrollMember, type EnrollHand } from '../../src/domain/enrollment/enrollment.js'
import { newId } from '../../src/ids.js'
import { insertOrganization } from '../../src/store/organizations.js'
import { projectById } from '../../src/store/projects.js'
import { usingPostgres } from '../support/database.js'
import { enrollBody, identifyBody, population, waitUntilReady } from '../support/palms.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, type Terminal } from '../support/terminals.js'

const palms = population({ identities: 8 })
const hands = (identity: number) => {
  const { left_hand, right_hand } = enrollBody(palms, identity, '')
  return { left_hand, right_hand } as { left_hand: EnrollHand; right_hand: EnrollHand }
}

describe(`Device-Com: the terminal side of enrollment and identification (${usingPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let svc: TestService
  let tenant: Tenant
  let terminal: Terminal
  beforeAll(async () => {
    svc = await bootService()
    await waitUntilReady(svc.url)
    tenant = await createTenant(svc, 'device-com@example.com', { plan: 'sandbox' })
    await liftRateLimits(svc, tenant.projectId)
    expectStatus(await svc.request('PUT', `/v1/projects/${tenant.projectId}/server-lookup`, { auth: tenant.token, body: { enable_server_lookup: true } }), 204)
    terminal = await linkTerminal(svc, tenant.token, tenant.projectId)
  })
  afterAll(async () => {
    await svc.close()
  })

  const createMember = async (name: string) => {
    const response = await svc.request('POST', `/v1/projects/${tenant.projectId}/members`, { auth: tenant.orgKey, body: { display_name: name } })
    expectStatus(response, 201)
    return response.body.member_id as string
  }
  const startSession = async (memberId: string, deviceId = terminal.deviceId) => {
    const response = await svc.request('POST', `/v1/devices/${deviceId}/enroll/member/start`, { auth: tenant.token, body: { member_id: memberId } })
    expectStatus(response, 200)
    return response.body.session
  }
  const poll = (wait: number, token = terminal.deviceToken) => svc.request('GET', `/v1/device-com/enrollment?wait=${wait}`, { auth: token })
  const complete = (sessionId: string, body: unknown, token = terminal.deviceToken) =>
    svc.request('POST', `/v1/device-com/enrollment/${sessionId}/complete`, { auth: token, body })

  it('end to end: start → the long-polling terminal gets it at once → complete with captures → completed → identifiable', async () => {
    const memberId = await createMember('Grace')
    // The terminal is already waiting when the session starts.
    const began = Date.now()
    const waiting = poll(20)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const session = await startSession(memberId)
    const delivered = await waiting
    expectStatus(delivered, 200)
    expect(Date.now() - began).toBeLessThan(5_000)
    expect(delivered.body).toEqual({ session: { ...session, state: 'in_progress' } })

    const completed = await complete(session.enroll_id, { ...hands(0), challenge: delivered.body.session.challenge })
    expectStatus(completed, 200)
    expect(completed.body).toEqual({ member_id: memberId, session: { ...session, state: 'completed', terminal_challenge_response: true } })

    const status = await svc.request('POST', `/v1/devices/${terminal.deviceId}/enroll/status`, { auth: tenant.orgKey, body: { session } })
    expect(status.body.session).toMatchObject({ enroll_id: session.enroll_id, state: 'completed' })
    expect((await svc.request('GET', `/v1/devices/${terminal.deviceId}/enroll/status`, { auth: tenant.orgKey })).body).toEqual({ session: null })

    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.orgKey })
    expect(member.body.palm_templates_enrolled).toBe(4)
    for (const hand of ['left', 'right'] as const) {
      const found = await svc.request('POST', '/v1/device-com/identify', { auth: terminal.deviceToken, body: identifyBody(palms, 0, hand) })
      expectStatus(found, 200)
      expect(found.body).toMatchObject({ status: 'Found', member_id: memberId, hand })
    }
    const byKey = await svc.request('POST', `/v1/projects/${tenant.projectId}/biometrics/identify`, {
      auth: tenant.orgKey,
      body: identifyBody(palms, 0, 'left'),
    })
    expect(byKey.body).toMatchObject({ status: 'Found', member_id: memberId })

    const [event] = await svc.storage.db.sql`SELECT data FROM event_outbox WHERE project_id = ${tenant.projectId} AND event_type = 'enrollment.completed'`
    expect(event.data).toEqual({ session_id: session.enroll_id, member_id: memberId, device_id: terminal.deviceId, completed_at: expect.any(String) })
    const [device] = await svc.storage.db.sql`SELECT last_activity_at FROM devices WHERE id = ${terminal.deviceId}`
    expect(device.last_activity_at).not.toBeNull()
    // Completed: it cannot be completed again.
    const again = await complete(session.enroll_id, hands(0))
    expectStatus(again, 409)
  })

  it('a poll ends with 204 when no session starts within the wait', async () => {
    const began = Date.now()
    const response = await poll(1)
    expectStatus(response, 204)
    expect(response.text).toBe('')
    expect(Date.now() - began).toBeGreaterThanOrEqual(900)
  })

  it("refuses a wrong challenge (403), a cancelled session (409), another terminal's session (404); nothing is enrolled", async () => {
    const memberId = await createMember('Linus')
    const session = await startSession(memberId)
    const wrong = await complete(session.enroll_id, { ...hands(1), challenge: 'not-the-challenge' })
    expectStatus(wrong, 403)

    const other = await linkTerminal(svc, tenant.token, tenant.projectId)
    const foreign = await complete(session.enroll_id, hands(1), other.deviceToken)
    expectStatus(foreign, 404)

    expectStatus(await svc.request('DELETE', `/v1/devices/${terminal.deviceId}/enroll/cancel?session_id=${session.enroll_id}`, { auth: tenant.token }), 200)
    const cancelled = await complete(session.enroll_id, hands(1))
    expectStatus(cancelled, 409)
    expect(cancelled.body.code).toBe('conflict')

    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.orgKey })
    expect(member.body.palm_templates_enrolled).toBe(0)
    const identified = await svc.request('POST', '/v1/device-com/identify', { auth: terminal.deviceToken, body: identifyBody(palms, 1, 'left') })
    expect(identified.body.status).toBe('NotFound')
  })

  it('a session superseded while the terminal enrolls is not completed, and the enrollment rolls back', async () => {
    const memberId = await createMember('Barbara')
    const first = await startSession(memberId)
    await startSession(memberId)
    const refused = await complete(first.enroll_id, hands(2))
    expectStatus(refused, 409)
    const member = await svc.request('GET', `/v1/projects/${tenant.projectId}/members/${memberId}`, { auth: tenant.orgKey })
    expect(member.body.palm_templates_enrolled).toBe(0)
  })

  it('wakes a terminal polling another service on the same database (LISTEN/NOTIFY on PostgreSQL, the shared bus on PGlite)', async () => {
    const other = await bootService({ storage: svc.storage })
    try {
      const memberId = await createMember('Edsger')
      const fresh = await linkTerminal(svc, tenant.token, tenant.projectId)
      const began = Date.now()
      const waiting = svc.request('GET', '/v1/device-com/enrollment?wait=20', { auth: fresh.deviceToken })
      await new Promise((resolve) => setTimeout(resolve, 300))
      const started = await other.request('POST', `/v1/devices/${fresh.deviceId}/enroll/member/start`, { auth: tenant.token, body: { member_id: memberId } })
      expectStatus(started, 200)
      const delivered = await waiting
      expectStatus(delivered, 200)
      expect(delivered.body.session.enroll_id).toBe(started.body.session.enroll_id)
      // Well before the poll's own 10 s re-check.
      expect(Date.now() - began).toBeLessThan(5_000)
    } finally {
      await other.stop()
    }
  })
})

describe('Device-Com on a global environment', () => {
  let svc: TestService
  beforeAll(async () => {
    svc = await bootService()
    await waitUntilReady(svc.url)
  })
  afterAll(async () => {
    await svc.close()
  })

  it('a customer terminal identifies against the global environment; in demo mode a match emits demo.scan.success', async () => {
    // The platform organization and its global environment, with a self-enrolled member.
    const platformAdmin = 'platform-admin@example.com'
    const platformOrg = await insertOrganization(svc.storage.db.sql, { id: newId(), name: 'Platform EU', kind: 'platform' }, platformAdmin)
    const platformToken = await svc.token(platformAdmin)
    const environment = await svc.request('POST', `/v1/organization/${platformOrg.id}/environments`, {
      auth: platformToken,
      body: { name: 'EU', enables_server_lookup: true },
    })
    expectStatus(environment, 201)
    expect(environment.body.kind).toBe('global')
    const platformProject = await svc.request('POST', `/v1/organization/${platformOrg.id}/projects`, {
      auth: platformToken,
      body: { name: 'self-enrollment', environment_id: environment.body.id, plan: 'enterprise' },
    })
    expectStatus(platformProject, 201)
    // Enrolled in-process here (test/http/self-enrollment.test.ts drives the public self-enrollment routes).
    const app = svc.service.app
    const selfEnrollProject = (await projectById(app.sql, platformProject.body.id))!
    const member = await createMemberInProject(app, selfEnrollProject, { display_name: 'Traveller' })
    await enrollMember(app, selfEnrollProject, { member_id: member.id, ...hands(3) }, { callerType: 'token' })

    // A customer's sandbox project on the global environment, with a demo terminal.
    const customer = await createTenant(svc, 'global-customer@example.com', { plan: 'sandbox' })
    const project = await svc.request('POST', `/v1/organization/${customer.orgId}/projects`, {
      auth: customer.token,
      body: { name: 'on global', environment_id: environment.body.id, plan: 'sandbox' },
    })
    expectStatus(project, 201)
    await liftRateLimits(svc, project.body.id)
    const terminal = await linkTerminal(svc, customer.token, project.body.id, { mode: 'demo' })

    // Server lookup is off until the project turns it on (its environment allows it).
    const refused = await svc.request('POST', '/v1/device-com/identify', { auth: terminal.deviceToken, body: identifyBody(palms, 3, 'right') })
    expectProblem(refused, 403, 'server_lookup_disabled')
    expectStatus(await svc.request('PUT', `/v1/projects/${project.body.id}/server-lookup`, { auth: customer.token, body: { enable_server_lookup: true } }), 204)

    const found = await svc.request('POST', '/v1/device-com/identify', { auth: terminal.deviceToken, body: identifyBody(palms, 3, 'right') })
    expectStatus(found, 200)
    expect(found.body).toMatchObject({ status: 'Found', member_id: member.id, hand: 'right' })
    // Another organization's terminal: no candidate below the threshold, no exact score (score-disclosure test below).
    const notFound = await svc.request('POST', '/v1/device-com/identify?k=2', { auth: terminal.deviceToken, body: identifyBody(palms, 5, 'left') })
    expect(notFound.body).toMatchObject({ status: 'NotFound', member_id: null, candidates: [] })

    const events = await svc.storage.db.sql`SELECT data FROM event_outbox WHERE project_id = ${project.body.id} AND event_type = 'demo.scan.success'`
    expect(events.map((event) => event.data)).toEqual([{ member_id: member.id, device_id: terminal.deviceId, scanned_at: expect.any(String) }])
    const [scan] = await svc.storage.db.sql`SELECT caller_type, device_id FROM scan_results WHERE project_id = ${project.body.id} AND success`
    // Scan results are written in batches; when present, they name the terminal.
    if (scan) expect(scan).toEqual({ caller_type: 'device', device_id: terminal.deviceId })

    // The project is read-only on the global environment: the REST biometrics and enrollment sessions refuse.
    const byKey = await svc.request('POST', `/v1/projects/${project.body.id}/biometrics/identify`, {
      auth: customer.orgKey,
      body: identifyBody(palms, 3, 'right'),
    })
    expectStatus(byKey, 403)
    expect(byKey.body.code).toBe('environment_not_tenant_managed')
    const start = await svc.request('POST', `/v1/devices/${terminal.deviceId}/enroll/member/start`, { auth: customer.token, body: { member_id: member.id } })
    expectStatus(start, 403)
    expect(start.body.code).toBe('environment_not_tenant_managed')
  })

  it("refuses server lookup to terminals where the environment's owner does not allow it, and once the project turns it off", async () => {
    const platformAdmin = 'closed-platform@example.com'
    const platformOrg = await insertOrganization(svc.storage.db.sql, { id: newId(), name: 'Platform closed', kind: 'platform' }, platformAdmin)
    const closed = await svc.request('POST', `/v1/organization/${platformOrg.id}/environments`, {
      auth: await svc.token(platformAdmin),
      body: { name: 'closed' },
    })
    expectStatus(closed, 201)
    const customer = await createTenant(svc, 'closed-customer@example.com', { plan: 'sandbox' })
    const project = await svc.request('POST', `/v1/organization/${customer.orgId}/projects`, {
      auth: customer.token,
      body: { name: 'on closed', environment_id: closed.body.id, plan: 'sandbox' },
    })
    await liftRateLimits(svc, project.body.id)
    const terminal = await linkTerminal(svc, customer.token, project.body.id)
    const identify = () => svc.request('POST', '/v1/device-com/identify', { auth: terminal.deviceToken, body: identifyBody(palms, 1, 'left') })
    expectProblem(await identify(), 403, 'server_lookup_disabled')
    const enable = (on: boolean, projectId = project.body.id) =>
      svc.request('PUT', `/v1/projects/${projectId}/server-lookup`, { auth: customer.token, body: { enable_server_lookup: on } })
    expectProblem(await enable(true), 422, 'server_lookup_not_allowed')
    expectProblem(await identify(), 403, 'server_lookup_disabled')

    // The customer's own environment allows it (createTenant): on, identify answers; off again, refused.
    const own = await linkTerminal(svc, customer.token, customer.projectId)
    await liftRateLimits(svc, customer.projectId)
    const identifyOwn = () => svc.request('POST', '/v1/device-com/identify', { auth: own.deviceToken, body: identifyBody(palms, 1, 'left') })
    expectProblem(await identifyOwn(), 403, 'server_lookup_disabled')
    expectStatus(await enable(true, customer.projectId), 204)
    expectStatus(await identifyOwn(), 200)
    expectStatus(await enable(false, customer.projectId), 204)
    expectProblem(await identifyOwn(), 403, 'server_lookup_disabled')
  })

  it("answers another organization's terminal candidates at or above the threshold only and a NotFound score rounded down; the owner's terminal gets everything", async () => {
    const platformAdmin = 'scores-platform@example.com'
    const platformOrg = await insertOrganization(svc.storage.db.sql, { id: newId(), name: 'Platform scores', kind: 'platform' }, platformAdmin)
    const platformToken = await svc.token(platformAdmin)
    const environment = await svc.request('POST', `/v1/organization/${platformOrg.id}/environments`, {
      auth: platformToken,
      body: { name: 'scores', enables_server_lookup: true },
    })
    expectStatus(environment, 201)
    const threshold = environment.body.match_threshold
    const lookupOn = async (token: string, orgId: string, mode: string) => {
      const created = await svc.request('POST', `/v1/organization/${orgId}/projects`, {
        auth: token,
        body: { name: 'lookup', environment_id: environment.body.id, plan: 'sandbox' },
      })
      expectStatus(created, 201)
      await liftRateLimits(svc, created.body.id)
      expectStatus(await svc.request('PUT', `/v1/projects/${created.body.id}/server-lookup`, { auth: token, body: { enable_server_lookup: true } }), 204)
      return { projectId: created.body.id as string, terminal: await linkTerminal(svc, token, created.body.id, { mode }) }
    }
    const owner = await lookupOn(platformToken, platformOrg.id, 'access')
    const app = svc.service.app
    const ownerProject = (await projectById(app.sql, owner.projectId))!
    const enrolled: string[] = []
    for (const identity of [1, 2, 3]) {
      const member = await createMemberInProject(app, ownerProject, { display_name: `Person ${identity}` })
      await enrollMember(app, ownerProject, { member_id: member.id, ...hands(identity) }, { callerType: 'token' })
      enrolled.push(member.id)
    }
    const customer = await createTenant(svc, 'scores-customer@example.com', { plan: 'sandbox' })
    const stranger = await lookupOn(customer.token, customer.orgId, 'access')
    const identify = (terminal: Terminal, identity: number) =>
      svc.request('POST', '/v1/device-com/identify?k=10', { auth: terminal.deviceToken, body: identifyBody(palms, identity, 'left') })

    // A palm never enrolled.
    const full = await identify(owner.terminal, 6)
    const coarse = await identify(stranger.terminal, 6)
    expectStatus(coarse, 200)
    expect(full.body.status).toBe('NotFound')
    expect(full.body.candidates).toHaveLength(3)
    expect(full.body.candidates.every((candidate: { match_score: number }) => candidate.match_score < threshold)).toBe(true)
    expect(coarse.body).toEqual({ status: 'NotFound', member_id: null, match_score: Math.floor(full.body.match_score * 10) / 10, hand: null, candidates: [] })
    expect(full.body.match_score).not.toBe(coarse.body.match_score)

    // An enrolled palm: the stranger sees the member found, and no one below the threshold beside it.
    const ownerFound = await identify(owner.terminal, 2)
    const strangerFound = await identify(stranger.terminal, 2)
    expect(ownerFound.body).toMatchObject({ status: 'Found', member_id: enrolled[1] })
    expect(ownerFound.body.candidates).toHaveLength(3)
    expect(strangerFound.body).toEqual({ ...ownerFound.body, candidates: [ownerFound.body.candidates[0]] })
  })
})
