// Public self-enrollment into a global environment, end to end through HTTP and Device-Com: a person
// starts a session on a platform kiosk, confirms the code the kiosk shows on their phone, the kiosk
// completes it with the palms, another organization's terminal identifies the person, the person
// lists and erases what they enrolled; and every refusal on the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTemplate, unwrapMemberKey } from '../../src/keys/template-crypto.js'
import { newId } from '../../src/ids.js'
import { environmentById, insertOrganization } from '../../src/store/organizations.js'
import { enrollBody, identifyBody, population, waitUntilReady } from '../support/palms.js'
import { createTenant, type Tenant } from '../support/security.js'
import { bootService, expectProblem, expectStatus, type TestService } from '../support/service.js'
import { liftRateLimits, linkTerminal, registerTerminal, type Terminal } from '../support/terminals.js'
import { awaitFreshMinute } from '../support/fresh-minute.js'

const palms = population({ identities: 6 })
const PERSON = 'alice@people.example'

/** The kiosk's completion body: the person's palms (identity `identity`) and the code it shows. */
function palmsOf(identity: number, challenge: string, hands: Array<'left' | 'right'> = ['left', 'right']) {
  const { member_id: _, ...body } = enrollBody(palms, identity, 'unused', hands)
  return { ...body, challenge }
}

describe('public self-enrollment into a global environment', () => {
  let svc: TestService
  let platformToken: string
  let platformOrgId: string
  let environmentId: string
  let platformProjectId: string
  let kiosk: Terminal
  let customer: Tenant
  let lookupTerminal: Terminal
  /** The customer's enrollment terminal on the global environment (its project only reads it). */
  let readOnlyKiosk: Terminal
  let readOnlyProjectId: string
  let person: string

  const start = (auth: string, deviceId: string, displayName = 'Alice') =>
    svc.request('POST', '/v1/self-enrollment/sessions', { auth, body: { device_id: deviceId, display_name: displayName } })
  const confirm = (auth: string, sessionId: string, challenge: string) =>
    svc.request('POST', `/v1/self-enrollment/sessions/${sessionId}/confirm`, { auth, body: { challenge } })
  const poll = (terminal: Terminal) => svc.request('GET', '/v1/device-com/enrollment?wait=0', { auth: terminal.deviceToken })
  /** The code the kiosk shows: only its own Device-Com poll carries it. */
  const kioskCode = async (terminal: Terminal = kiosk): Promise<string> => (await poll(terminal)).body.session.challenge
  const complete = (sessionId: string, body: unknown) =>
    svc.request('POST', `/v1/device-com/enrollment/${sessionId}/complete`, { auth: kiosk.deviceToken, body })
  const identifyAt = (terminal: Terminal, identity: number, hand: 'left' | 'right') =>
    svc.request('POST', '/v1/device-com/identify', { auth: terminal.deviceToken, body: identifyBody(palms, identity, hand) })

  beforeAll(async () => {
    svc = await bootService()
    await waitUntilReady(svc.url)
    const platformAdmin = 'operator@platform.example'
    platformOrgId = (await insertOrganization(svc.storage.db.sql, { id: newId(), name: 'National ID', kind: 'platform' }, platformAdmin)).id
    platformToken = await svc.token(platformAdmin)
    const environment = await svc.request('POST', `/v1/organization/${platformOrgId}/environments`, {
      auth: platformToken,
      body: { name: 'Nation', enables_server_lookup: true },
    })
    expectStatus(environment, 201)
    environmentId = environment.body.id
    const project = await svc.request('POST', `/v1/organization/${platformOrgId}/projects`, {
      auth: platformToken,
      body: { name: 'kiosks', environment_id: environmentId, plan: 'sandbox' },
    })
    expectStatus(project, 201)
    platformProjectId = project.body.id
    await liftRateLimits(svc, platformProjectId)
    kiosk = await linkTerminal(svc, platformToken, platformProjectId, { mode: 'enrollment', name: 'Town hall kiosk' })

    // A customer (another organization) whose project on the global environment looks people up.
    customer = await createTenant(svc, 'shop@customer.example', { plan: 'sandbox' })
    await liftRateLimits(svc, customer.projectId)
    const onGlobal = await svc.request('POST', `/v1/organization/${customer.orgId}/projects`, {
      auth: customer.token,
      body: { name: 'tills', environment_id: environmentId, plan: 'sandbox' },
    })
    expectStatus(onGlobal, 201)
    await liftRateLimits(svc, onGlobal.body.id)
    expectStatus(
      await svc.request('PUT', `/v1/projects/${onGlobal.body.id}/server-lookup`, { auth: customer.token, body: { enable_server_lookup: true } }),
      204,
    )
    lookupTerminal = await linkTerminal(svc, customer.token, onGlobal.body.id, { mode: 'access' })
    readOnlyProjectId = onGlobal.body.id
    readOnlyKiosk = await linkTerminal(svc, customer.token, onGlobal.body.id, { mode: 'enrollment', name: "Customer's kiosk" })
    person = await svc.token(PERSON)
  }, 120_000)
  afterAll(async () => {
    await svc.close()
  })

  it('start, a wrong code, confirm, complete, identify elsewhere, list, enroll again, erase', async () => {
    const started = await start(person, kiosk.deviceId)
    expectStatus(started, 201)
    const session = started.body.session
    expect(started.body.device_id).toBe(kiosk.deviceId)
    expect(session).toMatchObject({ state: 'pending', user_id: PERSON, mobile_challenge_response: false, terminal_challenge_response: false })
    // The person's answer never carries the code: they learn it by reading the kiosk.
    expect(session).not.toHaveProperty('challenge')
    expect(started.headers.get('ratelimit-limit')).toBe('10')
    expect(session.exp - session.iat).toBe(300)

    // The kiosk's long poll gets it and shows the code.
    const polled = await poll(kiosk)
    expectStatus(polled, 200)
    expect(polled.body.session).toMatchObject({
      enroll_id: session.enroll_id,
      state: 'in_progress',
      user_id: PERSON,
      challenge: expect.stringMatching(/^\d{6}$/),
    })
    session.challenge = polled.body.session.challenge

    // The kiosk cannot complete before the person confirmed.
    expectProblem(await complete(session.enroll_id, palmsOf(1, session.challenge)), 409, 'confirmation_required')
    // A wrong code is counted; someone else cannot confirm (or see) the session.
    const wrong = await confirm(person, session.enroll_id, session.challenge === '000000' ? '000001' : '000000')
    expectProblem(wrong, 403, 'challenge_mismatch')
    expect(wrong.body.detail).toMatch(/4 attempts left/)
    expectProblem(await confirm(await svc.token('mallory@people.example'), session.enroll_id, session.challenge), 404, 'not_found')

    const confirmed = await confirm(person, session.enroll_id, session.challenge)
    expectStatus(confirmed, 200)
    expect(confirmed.body).toMatchObject({ enroll_id: session.enroll_id, mobile_challenge_response: true, state: 'in_progress' })
    expect(confirmed.body).not.toHaveProperty('challenge')
    expect((await poll(kiosk)).body.session.mobile_challenge_response).toBe(true)

    const completed = await complete(session.enroll_id, palmsOf(1, session.challenge))
    expectStatus(completed, 200)
    const memberId = completed.body.member_id
    expect(completed.body.session).toMatchObject({ state: 'completed', mobile_challenge_response: true, terminal_challenge_response: true })

    // Another organization's terminal on the global environment finds the person.
    const found = await identifyAt(lookupTerminal, 1, 'right')
    expectStatus(found, 200)
    expect(found.body).toMatchObject({ status: 'Found', member_id: memberId })
    // Neither that organization nor the platform reaches the member through the REST member routes.
    const onGlobalProject = (await svc.storage.db.sql`SELECT project_id FROM devices WHERE id = ${lookupTerminal.deviceId}`)[0].project_id
    expectProblem(
      await svc.request('GET', `/v1/projects/${onGlobalProject}/members/${memberId}`, { auth: customer.token }),
      403,
      'environment_not_tenant_managed',
    )
    expectProblem(
      await svc.request('DELETE', `/v1/projects/${platformProjectId}/members/${memberId}`, { auth: platformToken }),
      403,
      'environment_not_tenant_managed',
    )

    const mine = await svc.request('GET', '/v1/self-enrollment/me', { auth: person })
    expectStatus(mine, 200)
    expect(mine.body.items).toEqual([
      expect.objectContaining({
        member_id: memberId,
        environment_id: environmentId,
        environment_name: 'Nation',
        display_name: 'Alice',
        palm_templates_enrolled: 4,
        created_at: expect.any(String),
        last_enrolled_at: expect.any(String),
      }),
    ])
    expect((await svc.request('GET', '/v1/self-enrollment/me', { auth: await svc.token('bob@people.example') })).body.items).toEqual([])

    // Enrolling again replaces the palms: the same member, now with the left hand only.
    const again = (await start(person, kiosk.deviceId, 'Alice B.')).body.session
    again.challenge = await kioskCode()
    expectStatus(await confirm(person, again.enroll_id, again.challenge), 200)
    const replaced = await complete(again.enroll_id, palmsOf(1, again.challenge, ['left']))
    expectStatus(replaced, 200)
    expect(replaced.body.member_id).toBe(memberId)
    expect((await identifyAt(lookupTerminal, 1, 'left')).body).toMatchObject({ status: 'Found', member_id: memberId })
    expect((await identifyAt(lookupTerminal, 1, 'right')).body.status).toBe('NotFound')
    expect((await svc.request('GET', '/v1/self-enrollment/me', { auth: person })).body.items).toEqual([
      expect.objectContaining({ member_id: memberId, palm_templates_enrolled: 2 }),
    ])

    // Erasure: another person cannot; the person can, and nothing of them can be read afterwards.
    const sql = svc.storage.db.sql
    const environment = (await environmentById(sql, environmentId))!
    const [{ wrapped_key: wrappedKey }] = await sql`SELECT wrapped_key FROM members WHERE id = ${memberId}`
    const saved = await sql<{ hand: 'left' | 'right'; kind: 'enroll' | 'identify' | 'reference'; ciphertext: Buffer }[]>`
      SELECT hand, kind, ciphertext FROM palm_templates WHERE member_id = ${memberId}`
    expect(saved.length).toBe(3)
    const key = unwrapMemberKey(svc.service.app.keyring, environment, memberId, wrappedKey)
    expect(() => openTemplate(key, memberId, saved[0].hand, saved[0].kind, saved[0].ciphertext)).not.toThrow()
    expectProblem(await svc.request('DELETE', `/v1/self-enrollment/me/${memberId}`, { auth: await svc.token('mallory@people.example') }), 404, 'not_found')

    expectStatus(await svc.request('DELETE', `/v1/self-enrollment/me/${memberId}`, { auth: person }), 204)
    expect((await identifyAt(lookupTerminal, 1, 'left')).body.status).toBe('NotFound')
    expect(await sql`SELECT 1 FROM members WHERE id = ${memberId}`).toHaveLength(0)
    expect(await sql`SELECT 1 FROM palm_templates WHERE member_id = ${memberId}`).toHaveLength(0)
    // The member's key is gone with its row; no key stored anywhere opens the saved ciphertexts.
    const remaining = await sql<{ id: string; wrapped_key: Buffer }[]>`
      SELECT id, wrapped_key FROM members WHERE environment_id = ${environmentId} AND wrapped_key IS NOT NULL`
    for (const { hand, kind, ciphertext } of saved) {
      for (const candidate of remaining) {
        const other = unwrapMemberKey(svc.service.app.keyring, environment, candidate.id, candidate.wrapped_key)
        expect(() => openTemplate(other, memberId, hand, kind, ciphertext)).toThrow()
      }
    }
    expect((await svc.request('GET', '/v1/self-enrollment/me', { auth: person })).body.items).toEqual([])

    // The erasure is in the platform's audit trail, under the person.
    await svc.service.app.audit.flush()
    const trail = await svc.request(
      'GET',
      `/v1/organization/${platformOrgId}/audit-log?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&page=1&per_page=50&action=${encodeURIComponent('DELETE /v1/self-enrollment/me/{member_id}')}`,
      { auth: platformToken },
    )
    expectStatus(trail, 200)
    expect(trail.body.items).toEqual([expect.objectContaining({ actor_kind: 'token', actor_id: PERSON, status: 204, project_id: platformProjectId })])
  })

  it('five wrong codes cancel the session', async () => {
    const session = (await start(await svc.token('carol@people.example'), kiosk.deviceId)).body.session
    session.challenge = await kioskCode()
    const carol = await svc.token('carol@people.example')
    const wrongCode = session.challenge === '123456' ? '654321' : '123456'
    for (let attempt = 1; attempt <= 4; attempt++) expectProblem(await confirm(carol, session.enroll_id, wrongCode), 403, 'challenge_mismatch')
    const fifth = await confirm(carol, session.enroll_id, wrongCode)
    expectProblem(fifth, 403, 'challenge_mismatch')
    expect(fifth.body.detail).toMatch(/cancelled/)
    expectProblem(await confirm(carol, session.enroll_id, session.challenge), 409, 'conflict')
    expectProblem(await complete(session.enroll_id, palmsOf(2, session.challenge)), 409, 'conflict')
    expectStatus(await poll(kiosk), 204)
  })

  it('a kiosk enrolling one person is not taken by another, who may start once it is free', async () => {
    const booth = await linkTerminal(svc, platformToken, platformProjectId, { mode: 'enrollment', name: 'Booth' })
    const erin = await svc.token('erin@people.example')
    const frank = await svc.token('frank@people.example')
    const first = await start(erin, booth.deviceId)
    expectStatus(first, 201)
    expectProblem(await start(frank, booth.deviceId), 409, 'conflict')
    // Erin may restart her own session (it supersedes the first).
    const restarted = await start(erin, booth.deviceId)
    expectStatus(restarted, 201)
    expect((await poll(booth)).body.session.enroll_id).toBe(restarted.body.session.enroll_id)
    // Once her session is no longer active (cancelled here), the kiosk is free for Frank.
    expectStatus(
      await svc.request('DELETE', `/v1/devices/${booth.deviceId}/enroll/cancel?session_id=${restarted.body.session.enroll_id}`, { auth: platformToken }),
      200,
    )
    expectStatus(await start(frank, booth.deviceId), 201)
  })

  it('refuses every device that is not an open kiosk with one and the same answer, admin tokens and keys with 403', async () => {
    const dave = await svc.token('dave@people.example')
    const closed = await linkTerminal(svc, platformToken, platformProjectId, { mode: 'enrollment' })
    expectStatus(await svc.request('PATCH', `/v1/device/${closed.deviceId}`, { auth: platformToken, body: { enabled: false } }), 200)
    const unusable = {
      'no such device': newId(),
      "another tenant's kiosk on its own environment": (await linkTerminal(svc, customer.token, customer.projectId, { mode: 'enrollment' })).deviceId,
      "the platform's payment terminal": (await linkTerminal(svc, platformToken, platformProjectId, { mode: 'payment' })).deviceId,
      "the platform's access terminal": (await linkTerminal(svc, platformToken, platformProjectId, { mode: 'access' })).deviceId,
      'a disabled kiosk': closed.deviceId,
      "a customer's kiosk on the global environment": readOnlyKiosk.deviceId,
      'an unlinked terminal': (await registerTerminal(svc, { mode: 'enrollment' })).device_id,
    }
    const answers = await Promise.all(
      Object.entries(unusable).map(async ([what, deviceId]) => {
        const response = await start(dave, deviceId)
        expectProblem(response, 422, 'self_enrollment_unavailable', what)
        const { request_id: _, ...problem } = response.body
        return problem
      }),
    )
    for (const answer of answers) expect(answer).toEqual(answers[0])
    expect(answers[0].detail).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/)
    // An organization administrator's token, and an API key, are not a person's own identity.
    expectProblem(await start(platformToken, kiosk.deviceId), 403, 'forbidden')
    expectProblem(await start(customer.token, kiosk.deviceId), 403, 'forbidden')
    expect((await start(customer.orgKey, kiosk.deviceId)).status).toBe(403)
    expectProblem(await svc.request('GET', '/v1/self-enrollment/me', { auth: platformToken }), 403, 'forbidden')
    // Nothing was started by any refusal.
    expect(await svc.storage.db.sql`SELECT 1 FROM enrollment_sessions WHERE owner_subject = 'dave@people.example'`).toHaveLength(0)
  })

  it("a customer's terminal on the global environment writes nothing there, even with a confirmed session", async () => {
    const sql = svc.storage.db.sql
    const members = async () => (await sql`SELECT count(*)::int AS n FROM members WHERE environment_id = ${environmentId}`)[0].n
    const before = await members()
    // A confirmed self-enrollment session on the customer's kiosk, as the old code let one start.
    const sessionId = newId()
    const now = Math.floor(Date.now() / 1000)
    await sql`INSERT INTO enrollment_sessions (id, device_id, project_id, member_id, state, nbf, iat, exp, challenge, owner_subject, display_name, mobile_challenge_response)
      VALUES (${sessionId}, ${readOnlyKiosk.deviceId}, ${readOnlyProjectId}, ${newId()}, 'in_progress', ${now}, ${now}, ${now + 300}, '123456', 'planted@people.example', 'Planted', true)`
    const refused = await svc.request('POST', `/v1/device-com/enrollment/${sessionId}/complete`, {
      auth: readOnlyKiosk.deviceToken,
      body: palmsOf(3, '123456'),
    })
    expectProblem(refused, 403, 'environment_read_only')
    expect(await members()).toBe(before)
    expect(await sql`SELECT 1 FROM members WHERE owner_subject = 'planted@people.example'`).toHaveLength(0)
    expect((await sql`SELECT state FROM enrollment_sessions WHERE id = ${sessionId}`)[0].state).toBe('in_progress')
  })

  it("counts a person's claim on a kiosk from their first session there, caps restarts, and rate-limits starts per kiosk and requests per person", async () => {
    const booth = await linkTerminal(svc, platformToken, platformProjectId, { mode: 'enrollment', name: 'Hostage booth' })
    const holder = await svc.token('holder@people.example')
    const other = await svc.token('other@people.example')
    const first = await start(holder, booth.deviceId)
    expectStatus(first, 201)
    // The first session is 61 s old: a restart now does not renew the claim, so another person may take the kiosk.
    await svc.storage.db.sql`UPDATE enrollment_sessions SET iat = iat - 61, nbf = nbf - 61 WHERE id = ${first.body.session.enroll_id}`
    expectStatus(await start(holder, booth.deviceId), 201)
    expectStatus(await start(other, booth.deviceId), 201)

    // Four sessions without finishing one; the fifth start is refused.
    const restarter = await svc.token('restarter@people.example')
    const lane = await linkTerminal(svc, platformToken, platformProjectId, { mode: 'enrollment', name: 'Restart lane' })
    for (let attempt = 1; attempt <= 4; attempt++) expectStatus(await start(restarter, lane.deviceId), 201)
    const capped = await start(restarter, lane.deviceId)
    expectProblem(capped, 409, 'conflict')
    expect(capped.body.detail).toMatch(/4 sessions on this kiosk without finishing one/)

    // Ten starts a minute on one kiosk, whoever starts them (refused ones count); then 429.
    await awaitFreshMinute(20)
    const busy = await linkTerminal(svc, platformToken, platformProjectId, { mode: 'enrollment', name: 'Busy kiosk' })
    for (let index = 0; index < 10; index++) {
      const response = await start(await svc.token(`crowd${index}@people.example`), busy.deviceId)
      expect([201, 409]).toContain(response.status)
      expect(response.headers.get('ratelimit-remaining')).toBe(String(9 - index))
    }
    const flooded = await start(await svc.token('crowd10@people.example'), busy.deviceId)
    expectProblem(flooded, 429, 'rate_limited')
    expect(flooded.body.detail).toMatch(/this kiosk's self-enrollment limit of 10 requests per minute/)
    expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThan(0)

    // Twenty self-enrollment requests a minute per person, whatever they are; then 429 with RateLimit-*.
    await awaitFreshMinute(20)
    const chatty = await svc.token('chatty@people.example')
    for (let index = 0; index < 20; index++) {
      const listed = await svc.request('GET', '/v1/self-enrollment/me', { auth: chatty })
      expectStatus(listed, 200)
      expect(listed.headers.get('ratelimit-limit')).toBe('20')
      expect(listed.headers.get('ratelimit-remaining')).toBe(String(19 - index))
    }
    const limited = await svc.request('GET', '/v1/self-enrollment/me', { auth: chatty })
    expectProblem(limited, 429, 'rate_limited')
    expect(limited.body.detail).toMatch(/your self-enrollment limit of 20 requests per minute/)
    expectProblem(await start(chatty, kiosk.deviceId), 429, 'rate_limited')
  })
})
