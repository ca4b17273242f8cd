// Public self-enrollment into a global environment (spec "What the service does", item 6), confirmed
// on the person's phone. A person (an identity token whose subject administers no organization)
// starts a session on an enrollment kiosk of a project on a global environment; the kiosk gets it
// through its Device-Com long poll and shows the session's short code; the person types the code
// in their app (proving they stand at that kiosk), which sets mobile_challenge_response; only then
// may the kiosk complete the session with the palms. The person owns one member per environment (a
// later self-enrollment replaces its palms), lists what they own and erases it (crypto-shredding).
import { randomInt } from 'node:crypto'
import type { DomainResources } from '../resources.js'
import { sameText } from '../../auth/secrets.js'
import { ServiceError, notFound } from '../../errors.js'
import { newId } from '../../ids.js'
import { deviceById, type DeviceRow } from '../../store/devices.js'
import { ACTIVE_STATES, insertSession, type SessionRow } from '../../store/enrollment-sessions.js'
import { environmentById } from '../../store/organizations.js'
import { projectById, type ProjectRow } from '../../store/projects.js'
import {
  claimOnKiosk,
  confirmSession,
  countWrongChallenge,
  ensureOwnedMember,
  enrollmentsOf,
  ownedMember,
  ownedMemberId,
  ownedSession,
} from '../../store/self-enrollment.js'
import { SESSION_TTL_SECONDS, nowSeconds } from './enrollment-sessions.js'
import { removeMember } from '../members/members.js'
import { chargeKiosk, tighterLimit } from '../../auth/self-enrollment-limits.js'
import { newMemberKey } from '../../keys/template-crypto.js'

/** Wrong codes a session survives; the fifth cancels it (a 6-digit code: 5 in a million to guess). */
export const CONFIRMATION_ATTEMPTS = 5
const CODE_DIGITS = 6
/**
 * How long a person's claim on a kiosk holds it against another person's start, counted from their
 * first unfinished session on that kiosk within CLAIM_WINDOW_SECONDS: restarting does not renew it.
 */
export const KIOSK_CLAIM_SECONDS = 60
const CLAIM_WINDOW_SECONDS = 15 * 60
/** Sessions a person may start on one kiosk within the window without finishing one (the first and three restarts). */
export const SESSIONS_PER_CLAIM = 4

/** The short code the kiosk shows and the person types: digits, easy on any keypad. */
const confirmationCode = (): string => String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0')

/**
 * The one refusal for every device a person cannot use as a kiosk: missing, unlinked, another
 * organization's, not in enrollment mode, disabled, or on an environment its project does not own.
 * The same status, code and detail for all, so no answer tells whether a device id exists.
 */
const KIOSK_UNAVAILABLE = "this device is not a kiosk open for self-enrollment (an enabled enrollment-mode terminal of the global environment owner's project)"
const unavailable = () =>
  new ServiceError('self_enrollment_unavailable', KIOSK_UNAVAILABLE, {
    errors: [{ path: '/device_id', message: 'not a kiosk open for self-enrollment' }],
  })

/** Is the device a kiosk: enabled, in enrollment mode, of a project of the platform organization that owns its global environment? */
function isOpenKiosk(device: DeviceRow, project: ProjectRow): boolean {
  return (
    device.enabled &&
    device.mode === 'enrollment' &&
    project.environment_id !== null &&
    project.environment_owner_kind === 'platform' &&
    project.environment_owner_org_id === project.org_id
  )
}

/** The kiosk's project, or the one refusal. */
async function kioskProject(app: Pick<DomainResources, 'sql'>, deviceId: string): Promise<ProjectRow> {
  const device = await deviceById(app.sql, deviceId)
  const project = device?.project_id ? await projectById(app.sql, device.project_id, null) : null
  if (!device || !project || !isOpenKiosk(device, project)) throw unavailable()
  return project
}

/**
 * A person starts a session on a kiosk. The kiosk's start budget is charged once the kiosk is known
 * to be open (refused starts count too); `responseHeaders` then shows the tighter of the person's
 * budget (already there) and the kiosk's.
 */
export async function startSelfEnrollment(
  app: Pick<DomainResources, 'enrollmentSignals' | 'rateLimiter' | 'sql'>,
  subject: string,
  input: { device_id: string; display_name: string },
  responseHeaders: Record<string, string>,
): Promise<{ project: ProjectRow; session: SessionRow }> {
  const project = await kioskProject(app, input.device_id)
  // A 429 carries the kiosk's own RateLimit-*, which take precedence over these.
  Object.assign(responseHeaders, tighterLimit(responseHeaders, await chargeKiosk(app, input.device_id)))
  const existing = await ownedMemberId(app.sql, project.environment_id!, subject)
  const iat = nowSeconds()
  const session = await insertSession(
    app.sql,
    {
      id: newId(),
      device_id: input.device_id,
      project_id: project.id,
      // The member is created when the kiosk completes the session, under this id unless it exists by then.
      member_id: existing ?? newId(),
      state: 'pending',
      nbf: iat,
      iat,
      exp: iat + SESSION_TTL_SECONDS,
      challenge: confirmationCode(),
      owner_subject: subject,
      display_name: input.display_name,
    },
    async (active, tx) => {
      // Anyone with an identity can start a session on any kiosk: the person standing at it must not
      // be pushed aside, and nobody may hold it by restarting their own session (the claim runs from
      // their first unfinished session there, and restarts are capped).
      if (active.owner_subject === subject) {
        const claim = await claimOnKiosk(tx, input.device_id, subject, iat - CLAIM_WINDOW_SECONDS)
        if (claim.sessions >= SESSIONS_PER_CLAIM) {
          throw new ServiceError(
            'conflict',
            `you started ${claim.sessions} sessions on this kiosk without finishing one; finish the current one or wait until it expires (at most ${SESSION_TTL_SECONDS} s)`,
          )
        }
        return
      }
      const holder = active.owner_subject === null ? null : await claimOnKiosk(tx, input.device_id, active.owner_subject, iat - CLAIM_WINDOW_SECONDS)
      const claimedSince = holder?.first_iat ?? active.iat
      if (active.mobile_challenge_response || iat - claimedSince < KIOSK_CLAIM_SECONDS) {
        throw new ServiceError('conflict', `the kiosk is enrolling someone else; try again once it is free (at most ${SESSION_TTL_SECONDS} s)`)
      }
    },
  )
  await app.enrollmentSignals.announce(input.device_id)
  return { project, session }
}

/** The person types the code the kiosk shows. Wrong: 403 challenge_mismatch, and the fifth cancels. */
export async function confirmSelfEnrollment(
  app: Pick<DomainResources, 'enrollmentSignals' | 'sql'>,
  subject: string,
  sessionId: string,
  challenge: string,
): Promise<{ session: SessionRow; project: ProjectRow | null }> {
  const session = await ownedSession(app.sql, subject, sessionId, nowSeconds())
  if (!session) throw notFound('enrollment session')
  if (!ACTIVE_STATES.includes(session.state)) throw new ServiceError('conflict', `enrollment session ${sessionId} is ${session.state}; start a new one`)
  if (!sameText(challenge, session.challenge)) {
    const counted = await countWrongChallenge(app.sql, sessionId, CONFIRMATION_ATTEMPTS)
    if (!counted || counted.state === 'cancelled') {
      await app.enrollmentSignals.announce(session.device_id)
      throw new ServiceError(
        'challenge_mismatch',
        `the code does not match; after ${CONFIRMATION_ATTEMPTS} wrong codes enrollment session ${sessionId} is cancelled: start a new one`,
      )
    }
    const left = CONFIRMATION_ATTEMPTS - counted.challenge_failures
    throw new ServiceError('challenge_mismatch', `the code does not match the one the kiosk shows; ${left} attempt${left === 1 ? '' : 's'} left`)
  }
  const confirmed = await confirmSession(app.sql, sessionId, nowSeconds())
  if (!confirmed) throw new ServiceError('conflict', `enrollment session ${sessionId} ended before the confirmation`)
  await app.enrollmentSignals.announce(session.device_id)
  return { session: confirmed, project: await projectById(app.sql, confirmed.project_id, null) }
}

/**
 * For the kiosk's completion of a self-enrollment session: refused until the person confirmed,
 * then the person's member (created now if they have none) and the project it lives in.
 */
export async function selfEnrolledMember(
  app: Pick<DomainResources, 'keyring' | 'sql'>,
  session: SessionRow,
): Promise<{ memberId: string; project: ProjectRow }> {
  if (!session.mobile_challenge_response) {
    throw new ServiceError('confirmation_required', `enrollment session ${session.id} waits for the person to type its code in their app`)
  }
  const kiosk = await projectById(app.sql, session.project_id, null)
  const environment = kiosk?.environment_id ? await environmentById(app.sql, kiosk.environment_id) : null
  if (!kiosk || !environment) throw notFound('environment')
  const { wrapped } = newMemberKey(app.keyring, environment, session.member_id)
  const memberId = await ensureOwnedMember(app.sql, {
    id: session.member_id,
    project_id: kiosk.id,
    environment_id: environment.id,
    display_name: session.display_name ?? 'Self-enrolled',
    owner_subject: session.owner_subject!,
    wrapped_key: wrapped,
  })
  // A member made at another kiosk of the environment lives in that kiosk's project.
  const owned = await ownedMember(app.sql, session.owner_subject!, memberId)
  const project = owned && owned.project_id !== kiosk.id ? await projectById(app.sql, owned.project_id, null) : kiosk
  return { memberId, project: project ?? kiosk }
}

export function selfEnrollments(app: Pick<DomainResources, 'sql'>, subject: string) {
  return enrollmentsOf(app.sql, subject)
}

/** The right to erasure: the member, its key and its templates go; the galleries forget it. */
export async function eraseSelfEnrollment(
  app: Pick<DomainResources, 'config' | 'galleries' | 'log' | 'sql'>,
  subject: string,
  memberId: string,
): Promise<ProjectRow> {
  const owned = await ownedMember(app.sql, subject, memberId)
  const project = owned && (await projectById(app.sql, owned.project_id, null))
  if (!project) throw notFound('member')
  await removeMember(app, project, memberId)
  return project
}
