// Queries of enrollment sessions. At most one session per device is active (pending or
// in_progress); a unique partial index holds that even when two starts race. Expiry is applied
// lazily: every read of a device's sessions first marks its overdue active sessions expired.
import type { Queryable, Sql } from './engine/database.js'

export type SessionState = 'pending' | 'in_progress' | 'completed' | 'cancelled' | 'expired'
export const ACTIVE_STATES: readonly SessionState[] = ['pending', 'in_progress']

export interface SessionRow {
  id: string
  device_id: string
  project_id: string
  member_id: string
  state: SessionState
  nbf: number
  iat: number
  exp: number
  challenge: string
  mobile_challenge_response: boolean
  terminal_challenge_response: boolean
  superseded_by: string | null
  /** Self-enrollment: the person (identity-token subject) enrolling themselves, and the name they chose. */
  owner_subject: string | null
  display_name: string | null
  /** Self-enrollment: wrong confirmation codes typed so far. */
  challenge_failures: number
  created_at: Date
  updated_at: Date
}

export async function expireOverdue(sql: Queryable, deviceId: string, nowSeconds: number): Promise<void> {
  await sql`
    UPDATE enrollment_sessions SET state = 'expired', updated_at = now()
    WHERE device_id = ${deviceId} AND state IN ('pending', 'in_progress') AND exp <= ${nowSeconds}`
}

/**
 * Start a session: the device's active session (if any) is cancelled and marked superseded by the
 * new one, then the new one is inserted, all in one short transaction. `keep` sees the active
 * session first (row-locked) and may refuse by throwing: the new session is then not started.
 */
type SessionInsert = Omit<
  SessionRow,
  | 'superseded_by'
  | 'created_at'
  | 'updated_at'
  | 'mobile_challenge_response'
  | 'terminal_challenge_response'
  | 'owner_subject'
  | 'display_name'
  | 'challenge_failures'
> &
  Partial<Pick<SessionRow, 'owner_subject' | 'display_name'>>

export async function insertSession(sql: Sql, session: SessionInsert, keep?: (active: SessionRow, tx: Queryable) => Promise<void> | void): Promise<SessionRow> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sql.begin(async (tx) => {
        await expireOverdue(tx, session.device_id, session.iat)
        if (keep) {
          const [active] = await tx<SessionRow[]>`
            SELECT * FROM enrollment_sessions WHERE device_id = ${session.device_id} AND state IN ('pending', 'in_progress') FOR UPDATE`
          if (active) await keep(active, tx)
        }
        await tx`
          UPDATE enrollment_sessions SET state = 'cancelled', superseded_by = ${session.id}, updated_at = now()
          WHERE device_id = ${session.device_id} AND state IN ('pending', 'in_progress')`
        const [row] = await tx<SessionRow[]>`INSERT INTO enrollment_sessions ${tx(session)} RETURNING *`
        return row
      })
    } catch (error) {
      // Two starts raced and the other inserted first: run again, superseding it.
      if (attempt < 3 && (error as { code?: string }).code === '23505') continue
      throw error
    }
  }
}

export async function activeSession(sql: Queryable, deviceId: string, nowSeconds: number): Promise<SessionRow | null> {
  await expireOverdue(sql, deviceId, nowSeconds)
  const [row] = await sql<SessionRow[]>`
    SELECT * FROM enrollment_sessions WHERE device_id = ${deviceId} AND state IN ('pending', 'in_progress')`
  return row ?? null
}

export async function sessionOfDevice(sql: Queryable, deviceId: string, sessionId: string, nowSeconds: number): Promise<SessionRow | null> {
  await expireOverdue(sql, deviceId, nowSeconds)
  const [row] = await sql<SessionRow[]>`
    SELECT * FROM enrollment_sessions WHERE id = ${sessionId} AND device_id = ${deviceId}`
  return row ?? null
}

/** The terminal picked the active session up: pending → in_progress. Returns the session as it now is. */
export async function pickUpActiveSession(sql: Sql, deviceId: string, nowSeconds: number): Promise<SessionRow | null> {
  await expireOverdue(sql, deviceId, nowSeconds)
  const [row] = await sql<SessionRow[]>`
    UPDATE enrollment_sessions
    SET state = CASE WHEN state = 'pending' THEN 'in_progress' ELSE state END,
        updated_at = CASE WHEN state = 'pending' THEN now() ELSE updated_at END
    WHERE device_id = ${deviceId} AND state IN ('pending', 'in_progress')
    RETURNING *`
  return row ?? null
}

/**
 * The member's active sessions → cancelled (it is being deleted): a kiosk completing one later would
 * create a member under the erased id, which the erasure ledger would erase again at every start.
 */
export async function cancelSessionsOfMember(sql: Queryable, memberId: string): Promise<void> {
  await sql`
    UPDATE enrollment_sessions SET state = 'cancelled', updated_at = now()
    WHERE member_id = ${memberId} AND state IN ('pending', 'in_progress')`
}

/** Active and unexpired → cancelled. Returns null otherwise (nothing changes then). */
export async function cancelActiveSession(sql: Sql, deviceId: string, sessionId: string, nowSeconds: number): Promise<SessionRow | null> {
  const [row] = await sql<SessionRow[]>`
    UPDATE enrollment_sessions SET state = 'cancelled', updated_at = now()
    WHERE id = ${sessionId} AND device_id = ${deviceId} AND state IN ('pending', 'in_progress') AND exp > ${nowSeconds}
    RETURNING *`
  return row ?? null
}

/**
 * Active and unexpired → completed, inside the enrollment's transaction. Returns null when the
 * session is no longer active (cancelled, superseded, expired or completed meanwhile).
 */
export async function completeActiveSession(
  tx: Queryable,
  input: {
    deviceId: string
    sessionId: string
    nowSeconds: number
    terminalChallengeResponse: boolean
  },
): Promise<SessionRow | null> {
  const [row] = await tx<SessionRow[]>`
    UPDATE enrollment_sessions
    SET state = 'completed', terminal_challenge_response = ${input.terminalChallengeResponse}, updated_at = now()
    WHERE id = ${input.sessionId} AND device_id = ${input.deviceId}
      AND state IN ('pending', 'in_progress') AND exp > ${input.nowSeconds}
    RETURNING *`
  return row ?? null
}

/** Sessions enroll members of the device's own project only. */
export async function memberInProject(sql: Sql, memberId: string, projectId: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM members WHERE id = ${memberId} AND project_id = ${projectId}`
  return rows.length > 0
}
