// The shared security suite's trust checks (issue #48): what a person, a kiosk and a project that only
// reads a global environment may learn or write. Like security.ts they pick the routes they apply to
// from each route's declared access, credential kinds and schemas, so new routes inherit them:
// - a person's own answers never carry a kiosk's code;
// - a terminal of a project that does not own its environment writes nothing into it;
// - a person's routes are rate limited (RateLimit-* on every answer, then 429);
// - every device that is not an open kiosk gets one and the same refusal;
// - identify answers to a caller that does not own the environment: no candidate below the
//   threshold, no exact NotFound score.
import { expect } from 'vitest'
import { createMember } from '../../src/domain/members/members.js'
import { enrollMember, type EnrollHand } from '../../src/domain/enrollment/enrollment.js'
import { PERSON_REQUESTS_PER_MINUTE } from '../../src/auth/self-enrollment-limits.js'
import type { Route } from '../../src/http/route.js'
import { newId } from '../../src/ids.js'
import { insertOrganization } from '../../src/store/organizations.js'
import { projectById } from '../../src/store/projects.js'
import { enrollBody, identifyBody, population } from './palms.js'
import { accepts, requestFor, type SubResources, type Tenant } from './security.js'
import { expectStatus, type Response, type TestService } from './service.js'
import { liftRateLimits, linkTerminal, type Terminal } from './terminals.js'
import { awaitFreshMinute } from './fresh-minute.js'

const palms = population({ identities: 8 })
const ENROLLED = [1, 2, 3]
const NEVER_ENROLLED = 6

export interface TrustFixtures {
  svc: TestService
  environmentId: string
  threshold: number
  /** An open kiosk of the platform project that owns the global environment. */
  kiosk: Terminal
  /** A customer project on the global environment (it only reads it), with server lookup on. */
  readOnlyProjectId: string
  readOnlyKey: string
  readOnlyKiosk: Terminal
  readOnlyLookup: Terminal
  /** Devices a person cannot use as a kiosk, by what they are. */
  unusable: Record<string, string>
}

/** A platform organization with a global environment (three people enrolled) and a kiosk; the stranger's project reading it. */
export async function createTrustFixtures(svc: TestService, stranger: Tenant, strangerSub: SubResources): Promise<TrustFixtures> {
  const sql = svc.storage.db.sql
  const operator = 'trust-operator@platform.example'
  const platform = await insertOrganization(sql, { id: newId(), name: 'Trust platform', kind: 'platform' }, operator)
  const operatorToken = await svc.token(operator)
  const post = async (auth: string, path: string, body: unknown) => {
    const response = await svc.request('POST', path, { auth, body })
    expectStatus(response, 201, path)
    return response.body
  }
  const environment = await post(operatorToken, `/v1/organization/${platform.id}/environments`, { name: 'nation', enables_server_lookup: true })
  const kioskProject = await post(operatorToken, `/v1/organization/${platform.id}/projects`, {
    name: 'kiosks',
    environment_id: environment.id,
    plan: 'sandbox',
  })
  await liftRateLimits(svc, kioskProject.id)
  const kiosk = await linkTerminal(svc, operatorToken, kioskProject.id, { mode: 'enrollment', name: 'Open kiosk' })
  const payment = await linkTerminal(svc, operatorToken, kioskProject.id, { mode: 'payment', name: 'Till' })
  const disabled = await linkTerminal(svc, operatorToken, kioskProject.id, { mode: 'enrollment', name: 'Closed kiosk' })
  expectStatus(await svc.request('PATCH', `/v1/device/${disabled.deviceId}`, { auth: operatorToken, body: { enabled: false } }), 200)
  const owned = (await projectById(sql, kioskProject.id))!
  for (const identity of ENROLLED) {
    const member = await createMember(svc.service.app, owned, { display_name: `Citizen ${identity}` })
    const { left_hand, right_hand } = enrollBody(palms, identity, member.id)
    await enrollMember(
      svc.service.app,
      owned,
      { member_id: member.id, left_hand: left_hand as EnrollHand, right_hand: right_hand as EnrollHand },
      { callerType: 'token' },
    )
  }

  const readOnly = await post(stranger.token, `/v1/organization/${stranger.orgId}/projects`, {
    name: 'reads the nation',
    environment_id: environment.id,
    plan: 'sandbox',
  })
  await liftRateLimits(svc, readOnly.id)
  expectStatus(await svc.request('PUT', `/v1/projects/${readOnly.id}/server-lookup`, { auth: stranger.token, body: { enable_server_lookup: true } }), 204)
  const readOnlyKiosk = await linkTerminal(svc, stranger.token, readOnly.id, { mode: 'enrollment', name: "Customer's kiosk" })
  const readOnlyLookup = await linkTerminal(svc, stranger.token, readOnly.id, { mode: 'access', name: "Customer's gate" })
  const readOnlyKey = await post(stranger.token, `/v1/organization/${stranger.orgId}/api-keys`, { name: 'reads the nation', project_ids: [readOnly.id] })
  return {
    svc,
    environmentId: environment.id,
    threshold: environment.match_threshold,
    kiosk,
    readOnlyProjectId: readOnly.id,
    readOnlyKey: readOnlyKey.key,
    readOnlyKiosk,
    readOnlyLookup,
    unusable: {
      'no such device': newId(),
      "another organization's terminal": strangerSub.deviceId,
      'a payment terminal': payment.deviceId,
      'a disabled kiosk': disabled.deviceId,
      'a kiosk of a project that only reads the environment': readOnlyKiosk.deviceId,
    },
  }
}

const describeRoute = (route: Route) => `${route.method.toUpperCase()} ${route.path}`
const personRoute = (route: Route) => route.access === 'end-user'
let people = 0
/** A person no check has used yet (each has their own rate budget). */
const freshPerson = (fixtures: TrustFixtures) => fixtures.svc.token(`person-${++people}@people.example`)

const call = (fixtures: TrustFixtures, route: Route, auth: string, ids: Record<string, string>, values: Record<string, unknown> = {}): Promise<Response> => {
  const request = requestFor(route, ids, values)
  return fixtures.svc.request(route.method.toUpperCase(), request.path + request.query, { auth, body: request.body })
}

/** Every key anywhere in a JSON value. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)])
  return []
}

export const appliesPersonChecks = personRoute

/** With a session of the person on the kiosk, the route's answer to the person's token carries no challenge. */
export async function checkPersonNeverSeesChallenge(fixtures: TrustFixtures, route: Route) {
  const { svc, kiosk } = fixtures
  // The kiosk is free for this person (another check's session would hold it).
  await svc.storage.db.sql`UPDATE enrollment_sessions SET state = 'cancelled' WHERE device_id = ${kiosk.deviceId} AND state IN ('pending', 'in_progress')`
  const person = await freshPerson(fixtures)
  const started = await svc.request('POST', '/v1/self-enrollment/sessions', { auth: person, body: { device_id: kiosk.deviceId, display_name: 'Checked' } })
  expectStatus(started, 201, describeRoute(route))
  const shown = await svc.request('GET', '/v1/device-com/enrollment?wait=0', { auth: kiosk.deviceToken })
  const code: string = shown.body.session.challenge
  const response = await call(fixtures, route, person, {
    device_id: kiosk.deviceId,
    enroll_id: started.body.session.enroll_id,
    session_id: started.body.session.enroll_id,
  })
  for (const answer of [started, response]) {
    expect(keysOf(answer.body), describeRoute(route)).not.toContain('challenge')
    expect(answer.text, describeRoute(route)).not.toContain(code)
  }
}

/** Each request of the person answers RateLimit-*; past the budget, 429 rate_limited with Retry-After. */
export async function checkPersonRateLimited(fixtures: TrustFixtures, route: Route) {
  const person = await freshPerson(fixtures)
  // A device that is no kiosk: only the person's budget is charged.
  const ids = { device_id: fixtures.unusable['no such device'], enroll_id: newId(), member_id: newId() }
  await awaitFreshMinute(20)
  for (let index = 0; index < PERSON_REQUESTS_PER_MINUTE; index++) {
    const response = await call(fixtures, route, person, ids)
    expect(response.status, describeRoute(route)).not.toBe(429)
    expect(response.headers.get('ratelimit-limit'), describeRoute(route)).toBe(String(PERSON_REQUESTS_PER_MINUTE))
    expect(response.headers.get('ratelimit-remaining'), describeRoute(route)).toBe(String(PERSON_REQUESTS_PER_MINUTE - 1 - index))
    expect(Number(response.headers.get('ratelimit-reset')), describeRoute(route)).toBeGreaterThan(0)
  }
  const refused = await call(fixtures, route, person, ids)
  expect(refused.status, describeRoute(route)).toBe(429)
  expect(refused.body.code).toBe('rate_limited')
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
}

/** Routes whose body names a device a person picks. */
export const namesKiosk = (route: Route) => personRoute(route) && JSON.stringify(route.body ?? {}).includes('"device_id"')

/** Every device that cannot be used as a kiosk: one status, code and detail (request ids aside). */
export async function checkOneKioskRefusal(fixtures: TrustFixtures, route: Route) {
  const person = await freshPerson(fixtures)
  const answers = []
  for (const [what, deviceId] of Object.entries(fixtures.unusable)) {
    const response = await call(fixtures, route, person, { device_id: deviceId })
    expect(response.status, `${describeRoute(route)}: ${what}`).toBeGreaterThanOrEqual(400)
    const { request_id: _, ...problem } = response.body
    answers.push({ status: response.status, problem })
  }
  for (const answer of answers) expect(answer, describeRoute(route)).toEqual(answers[0])
}

/** Routes a terminal calls to change something. */
export const terminalWrites = (route: Route) => accepts(route, 'device') && route.method !== 'get'

/**
 * A terminal of the project that only reads the global environment, holding a confirmed
 * self-enrollment session (as one could start before kiosks were checked): whatever it sends, the
 * environment's members and templates stay as they were.
 */
export async function checkReadOnlyTerminalWritesNothing(fixtures: TrustFixtures, route: Route) {
  const { svc, readOnlyKiosk } = fixtures
  const sql = svc.storage.db.sql
  const sessionId = newId()
  const now = Math.floor(Date.now() / 1000)
  await sql`UPDATE enrollment_sessions SET state = 'cancelled' WHERE device_id = ${readOnlyKiosk.deviceId} AND state IN ('pending', 'in_progress')`
  await sql`INSERT INTO enrollment_sessions (id, device_id, project_id, member_id, state, nbf, iat, exp, challenge, owner_subject, display_name, mobile_challenge_response)
    VALUES (${sessionId}, ${readOnlyKiosk.deviceId}, ${fixtures.readOnlyProjectId}, ${newId()}, 'in_progress', ${now}, ${now}, ${now + 300}, '424242', ${`planted-${sessionId}`}, 'Planted', true)`
  const count = async () =>
    (
      await sql`
    SELECT (SELECT count(*)::int FROM members WHERE environment_id = ${fixtures.environmentId}) AS members,
           (SELECT count(*)::int FROM palm_templates t JOIN members m ON m.id = t.member_id WHERE m.environment_id = ${fixtures.environmentId}) AS templates`
    )[0]
  const before = await count()
  // A palm never enrolled, as the left hand, so only the terminal's right to write stands in the way.
  const { left_hand } = enrollBody(palms, 7, '', ['left'])
  const hand = left_hand as EnrollHand
  const response = await call(
    fixtures,
    route,
    readOnlyKiosk.deviceToken,
    { session_id: sessionId, enroll_id: sessionId },
    {
      enroll_capture: hand.enroll_capture,
      identify_capture: hand.identify_capture,
      right_hand: null,
      challenge: '424242',
    },
  )
  expect(await count(), `${describeRoute(route)} answered ${response.status}`).toEqual(before)
}

/** Routes that answer an identify decision. */
export const answersIdentify = (route: Route) => route.responses.some((response) => (response.schema as { $id?: string } | undefined)?.$id === 'IdentifyResult')

/**
 * The project that only reads the global environment asks for ten candidates for a palm never
 * enrolled there, through every credential the route accepts: a refusal, or candidates at or above
 * the threshold only and a NotFound score rounded down to one decimal.
 */
export async function checkScoresForNonOwners(fixtures: TrustFixtures, route: Route) {
  const credentials = [...(accepts(route, 'device') ? [fixtures.readOnlyLookup.deviceToken] : []), ...(accepts(route, 'key') ? [fixtures.readOnlyKey] : [])]
  expect(credentials.length, describeRoute(route)).toBeGreaterThan(0)
  const { palm } = identifyBody(palms, NEVER_ENROLLED, 'left')
  for (const auth of credentials) {
    const response = await call(fixtures, route, auth, { project_id: fixtures.readOnlyProjectId }, { k: 10, identify_capture: palm.identify_capture })
    if (response.status !== 200) {
      expect(response.status, describeRoute(route)).toBeGreaterThanOrEqual(400)
      continue
    }
    for (const candidate of response.body.candidates ?? []) expect(candidate.match_score, describeRoute(route)).toBeGreaterThanOrEqual(fixtures.threshold)
    expect(response.body.status, describeRoute(route)).toBe('NotFound')
    expect(response.body.match_score, describeRoute(route)).toBe(Math.floor(response.body.match_score * 10) / 10)
  }
}
