// Queries of public self-enrollment: the member a person owns in an environment, their sessions,
// and the confirmation typed on their phone. A person reaches only rows carrying their subject.
import type { Queryable, Sql } from './engine/database.js'
import { expireOverdue, type SessionRow } from './enrollment-sessions.js'

export interface SelfEnrollmentRow {
  member_id: string
  project_id: string
  environment_id: string
  environment_name: string
  display_name: string
  palm_templates_enrolled: number
  created_at: Date
  last_enrolled_at: Date | null
}

/** The member the person owns in the environment, if any. */
export async function ownedMemberId(sql: Queryable, environmentId: string, subject: string): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`SELECT id FROM members WHERE environment_id = ${environmentId} AND owner_subject = ${subject}`
  return row?.id ?? null
}

/**
 * The person's member in the environment, created with the given id when they have none yet.
 * Another process creating it at the same time is answered with the row it created.
 */
export async function ensureOwnedMember(
  sql: Sql,
  member: {
    id: string
    project_id: string
    environment_id: string
    display_name: string
    owner_subject: string
    wrapped_key: Buffer
  },
): Promise<string> {
  await sql`
    INSERT INTO members ${sql(member)}
    ON CONFLICT (environment_id, owner_subject) WHERE owner_subject IS NOT NULL DO NOTHING`
  return (await ownedMemberId(sql, member.environment_id, member.owner_subject))!
}

/** The person's session (a session of anyone else is invisible: null, like a missing one). */
export async function ownedSession(sql: Queryable, subject: string, sessionId: string, nowSeconds: number): Promise<SessionRow | null> {
  const [found] = await sql<{ device_id: string }[]>`
    SELECT device_id FROM enrollment_sessions WHERE id = ${sessionId} AND owner_subject = ${subject}`
  if (!found) return null
  await expireOverdue(sql, found.device_id, nowSeconds)
  const [row] = await sql<SessionRow[]>`SELECT * FROM enrollment_sessions WHERE id = ${sessionId}`
  return row ?? null
}

/**
 * The person's claim on a kiosk: their sessions there since `sinceSeconds` that did not complete
 * (restarts, superseded, expired or cancelled ones), and the first one's iat.
 */
export async function claimOnKiosk(
  sql: Queryable,
  deviceId: string,
  subject: string,
  sinceSeconds: number,
): Promise<{ sessions: number; first_iat: number | null }> {
  const [row] = await sql<{ sessions: number; first_iat: number | null }[]>`
    SELECT count(*)::int AS sessions, min(iat)::float8 AS first_iat FROM enrollment_sessions
    WHERE device_id = ${deviceId} AND owner_subject = ${subject} AND iat > ${sinceSeconds} AND state <> 'completed'`
  return row
}

/** The right code, typed while the session is active: confirmed. Null when it is no longer active. */
export async function confirmSession(sql: Sql, sessionId: string, nowSeconds: number): Promise<SessionRow | null> {
  const [row] = await sql<SessionRow[]>`
    UPDATE enrollment_sessions SET mobile_challenge_response = true, updated_at = now()
    WHERE id = ${sessionId} AND state IN ('pending', 'in_progress') AND exp > ${nowSeconds}
    RETURNING *`
  return row ?? null
}

/** A wrong code: counted, and the session cancelled at `limit` wrong codes. */
export async function countWrongChallenge(sql: Sql, sessionId: string, limit: number): Promise<SessionRow | null> {
  const [row] = await sql<SessionRow[]>`
    UPDATE enrollment_sessions
    SET challenge_failures = challenge_failures + 1,
        state = CASE WHEN challenge_failures + 1 >= ${limit} THEN 'cancelled' ELSE state END,
        updated_at = now()
    WHERE id = ${sessionId} AND state IN ('pending', 'in_progress')
    RETURNING *`
  return row ?? null
}

/** Every member the person owns, newest first. */
export function enrollmentsOf(sql: Sql, subject: string) {
  return sql<SelfEnrollmentRow[]>`
    SELECT m.id AS member_id, m.project_id, m.environment_id, e.name AS environment_name, m.display_name,
           m.palm_templates_enrolled, m.created_at, m.last_enrolled_at
    FROM members m JOIN environments e ON e.id = m.environment_id
    WHERE m.owner_subject = ${subject}
    ORDER BY m.created_at DESC, m.id`
}

/** The member the person owns, with the project it lives in; null for anyone else's. */
export async function ownedMember(sql: Sql, subject: string, memberId: string): Promise<{ project_id: string; environment_id: string } | null> {
  const [row] = await sql<{ project_id: string; environment_id: string }[]>`
    SELECT project_id, environment_id FROM members WHERE id = ${memberId} AND owner_subject = ${subject}`
  return row ?? null
}
