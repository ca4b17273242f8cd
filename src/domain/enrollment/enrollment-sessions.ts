// Enrollment sessions (DECISIONS.md "Values the spec leaves open"): pending → in_progress when the
// terminal picks the session up → completed, or cancelled, or expired (exp = iat + 300). One
// active session per device: a new start supersedes the old one (cancelled, superseded_by set).
//
// The challenge: a random string issued with the session. The terminal receives it with the
// session and echoes it when it completes the enrollment; a match proves the captures were taken
// for this very session (not a stale or replayed one) and sets terminal_challenge_response. A
// session an organization starts has no mobile step (mobile_challenge_response stays false); a
// self-enrollment (domain/enrollment/self-enrollment.ts) is confirmed by the person typing the code.
import type { DomainResources } from '../resources.js'
import { newSecret } from '../../auth/secrets.js'
import { ServiceError, notFound } from '../../errors.js'
import { newId } from '../../ids.js'
import { activeSession, cancelActiveSession, insertSession, memberInProject, sessionOfDevice, type SessionRow } from '../../store/enrollment-sessions.js'

export const SESSION_TTL_SECONDS = 300

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

export async function startSession(
  app: Pick<DomainResources, 'enrollmentSignals' | 'sql'>,
  device: { id: string; project_id: string; enabled: boolean },
  memberId: string,
) {
  if (!device.enabled) throw new ServiceError('conflict', `device ${device.id} is disabled; enable it before starting an enrollment`)
  if (!(await memberInProject(app.sql, memberId, device.project_id))) {
    throw new ServiceError('invalid_reference', `member ${memberId} does not exist in this project`, {
      errors: [{ path: '/member_id', message: 'unknown member' }],
    })
  }
  const iat = nowSeconds()
  const row = await insertSession(app.sql, {
    id: newId(),
    device_id: device.id,
    project_id: device.project_id,
    member_id: memberId,
    state: 'pending',
    nbf: iat,
    iat,
    exp: iat + SESSION_TTL_SECONDS,
    challenge: newSecret(),
  })
  await app.enrollmentSignals.announce(device.id)
  return row
}

/** GET .../enroll/status: the active session, or null (none, or session_id names another). */
export async function activeSessionOf(app: Pick<DomainResources, 'sql'>, deviceId: string, sessionId?: string): Promise<SessionRow | null> {
  const row = await activeSession(app.sql, deviceId, nowSeconds())
  if (!row || (sessionId !== undefined && row.id !== sessionId)) return null
  return row
}

/** POST .../enroll/status: that session's current state, or null when superseded or unknown. */
export async function sessionStatus(app: Pick<DomainResources, 'sql'>, deviceId: string, sessionId: string): Promise<SessionRow | null> {
  const row = await sessionOfDevice(app.sql, deviceId, sessionId, nowSeconds())
  if (!row || row.superseded_by) return null
  return row
}

/**
 * Cancel exactly the named session. Unknown (or another device's) → 404, nothing changes;
 * already cancelled → answered as is (a retried cancel succeeds); completed or expired → 409.
 */
export async function cancelSession(app: Pick<DomainResources, 'enrollmentSignals' | 'sql'>, deviceId: string, sessionId: string): Promise<SessionRow> {
  const cancelled = await cancelActiveSession(app.sql, deviceId, sessionId, nowSeconds())
  if (cancelled) {
    await app.enrollmentSignals.announce(deviceId)
    return cancelled
  }
  const row = await sessionOfDevice(app.sql, deviceId, sessionId, nowSeconds())
  if (!row) throw notFound('enrollment session')
  if (row.state === 'cancelled') return row
  throw new ServiceError('conflict', `enrollment session ${sessionId} is already ${row.state} and cannot be cancelled`)
}
