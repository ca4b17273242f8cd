// What a terminal does through Device-Com besides polling: complete its enrollment session with
// captures (the same enrollment as the biometrics route, the session completed in the very same
// transaction) and identify palms against its project's environment, a global one included.
import type { DomainResources } from '../resources.js'
import { requireEnvironmentOwner } from '../../auth/access.js'
import { sameText } from '../../auth/secrets.js'
import { ServiceError, notFound } from '../../errors.js'
import { timestamp } from '../../ids.js'
import type { Sql } from '../../store/engine/database.js'
import { touchDeviceActivity } from '../../store/devices.js'
import { ACTIVE_STATES, completeActiveSession, sessionOfDevice, type SessionRow } from '../../store/enrollment-sessions.js'
import type { ProjectRow } from '../../store/projects.js'
import { enqueueEvent, wakeDispatcher } from '../../webhooks/outbox.js'
import { enrollMember, type EnrollHand } from '../enrollment/enrollment.js'
import { nowSeconds } from '../enrollment/enrollment-sessions.js'
import { identifyPalm, type IdentifyPalm } from '../identification/identification.js'
import { selfEnrolledMember } from '../enrollment/self-enrollment.js'

export interface Terminal {
  deviceId: string
  mode: string
  project: ProjectRow
}

export async function completeEnrollmentSession(
  app: Pick<DomainResources, 'db' | 'galleries' | 'keyring' | 'log' | 'scans' | 'sql'>,
  terminal: Terminal,
  sessionId: string,
  input: { left_hand?: EnrollHand | null; right_hand?: EnrollHand | null; challenge?: string },
): Promise<{ member_id: string; session: SessionRow }> {
  const session = await sessionOfDevice(app.sql, terminal.deviceId, sessionId, nowSeconds())
  if (!session) throw notFound('enrollment session')
  // Before anything is written (a self-enrollment creates the person's member first): a terminal of
  // a project that only reads its environment enrolls nobody there.
  requireEnvironmentOwner(terminal.project)
  if (!ACTIVE_STATES.includes(session.state)) {
    throw new ServiceError('conflict', `enrollment session ${sessionId} is ${session.state}; start a new one`)
  }
  if (input.challenge !== undefined && !sameText(input.challenge, session.challenge)) {
    throw new ServiceError('forbidden', `the challenge does not match enrollment session ${sessionId}`)
  }
  // A self-enrollment waits for the person's confirmation; their member may live in another kiosk's project.
  const target = session.owner_subject !== null ? await selfEnrolledMember(app, session) : { memberId: session.member_id, project: terminal.project }
  let completed = null as SessionRow | null
  const enrolled = await enrollMember(
    app,
    target.project,
    {
      member_id: target.memberId,
      left_hand: input.left_hand,
      right_hand: input.right_hand,
    },
    {
      callerType: 'device',
      deviceId: terminal.deviceId,
      sessionId,
      replaceAllHands: session.owner_subject !== null,
      // In the enrollment's transaction: a session cancelled or superseded meanwhile rolls it back.
      inTransaction: async (tx: Sql) => {
        completed = await completeActiveSession(tx, {
          deviceId: terminal.deviceId,
          sessionId,
          nowSeconds: nowSeconds(),
          terminalChallengeResponse: input.challenge !== undefined,
        })
        if (!completed) throw new ServiceError('conflict', `enrollment session ${sessionId} was cancelled, superseded or expired during the enrollment`)
      },
    },
  )
  await touchDeviceActivity(app.sql, terminal.deviceId)
  return { member_id: enrolled.member_id, session: completed! }
}

/**
 * Server lookup is 1:N identification done by the service for a project's terminals: the project
 * turned it on, and its environment (whose owner decides whether other organizations' terminals
 * may look people up in it) allows it. Turned off either way, terminals match locally only.
 */
function requireServerLookup(project: ProjectRow): void {
  if (!project.enable_server_lookup) {
    throw new ServiceError('server_lookup_disabled', `project ${project.id} has not enabled server lookup (PUT /v1/projects/${project.id}/server-lookup)`)
  }
  if (!project.environment_enables_server_lookup) {
    throw new ServiceError('server_lookup_disabled', `environment ${project.environment_id} does not allow server lookup`)
  }
}

export async function identifyAtTerminal(
  app: Pick<DomainResources, 'db' | 'galleries' | 'log' | 'metrics' | 'scans' | 'sql'>,
  terminal: Terminal,
  palm: IdentifyPalm,
  k: number | undefined,
) {
  requireServerLookup(terminal.project)
  const result = await identifyPalm(app, terminal.project, palm, { k, callerType: 'device', deviceId: terminal.deviceId })
  if (terminal.mode === 'demo' && result.status === 'Found') {
    // Nothing else is written by an identify, so the event is the only row of its transaction.
    await enqueueEvent(app.sql, {
      projectId: terminal.project.id,
      eventType: 'demo.scan.success',
      data: { member_id: result.member_id, device_id: terminal.deviceId, scanned_at: timestamp(new Date()) },
    })
    await wakeDispatcher(app.db).catch((error) => app.log.warn({ err: error }, 'demo scan: webhook dispatcher wake-up failed'))
  }
  // Off the identify hot path: activity is bookkeeping, never worth a slower answer.
  void touchDeviceActivity(app.sql, terminal.deviceId).catch((error) => app.log.warn({ err: error }, 'device activity update failed'))
  return result
}
