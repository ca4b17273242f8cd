// The enrollment session object as the spec shows it, shared by the device routes and Device-Com.
import type { SessionRow } from '../../store/enrollment-sessions.js'
import { Nullable, Text, Type } from '../schema.js'

export const EnrollmentSessionSchema = Type.Object(
  {
    enroll_id: Type.String({ format: 'uuid', description: 'the session id' }),
    state: Type.Union(
      ['pending', 'in_progress', 'completed', 'cancelled', 'expired'].map((state) => Type.Literal(state)),
      {
        description: 'pending → in_progress (a terminal picked it up) → completed, or cancelled, or expired',
      },
    ),
    nbf: Type.Integer({ description: 'not before, Unix seconds' }),
    iat: Type.Integer({ description: 'issued at, Unix seconds' }),
    exp: Type.Integer({ description: 'expires at, Unix seconds (iat + 300)' }),
    // Text: a client sends its copy of a session back (POST .../enroll/status).
    user_id: Text({ minLength: 1, description: "the member being enrolled (its uuid); for a self-enrollment, the person's identity-token subject" }),
    challenge: Text({
      description:
        'random string the terminal echoes when it completes the session; for a self-enrollment, the 6-digit code the kiosk shows and the person types in their app',
    }),
    mobile_challenge_response: Type.Boolean({
      description:
        'self-enrollment: true once the person typed the code in their app (POST /v1/self-enrollment/sessions/{enroll_id}/confirm); the kiosk may complete the session only then. Always false for a session an organization started',
    }),
    terminal_challenge_response: Type.Boolean({ description: 'true once the terminal completed the session echoing its challenge' }),
  },
  { $id: 'EnrollmentSession' },
)

/**
 * A self-enrollment session as the person's own token sees it: without the challenge, which only
 * the kiosk shows (so the person must stand at the kiosk and read it to confirm).
 */
export const PersonSessionSchema = Type.Omit(EnrollmentSessionSchema, ['challenge'], { $id: 'SelfEnrollmentSession' })

export const SessionEnvelopeSchema = Type.Object({ session: Nullable(EnrollmentSessionSchema) })

export function sessionResource(row: SessionRow) {
  return {
    enroll_id: row.id,
    state: row.state,
    nbf: row.nbf,
    iat: row.iat,
    exp: row.exp,
    user_id: row.owner_subject ?? row.member_id,
    challenge: row.challenge,
    mobile_challenge_response: row.mobile_challenge_response,
    terminal_challenge_response: row.terminal_challenge_response,
  }
}

export function personSessionResource(row: SessionRow) {
  const { challenge: _shownByTheKioskOnly, ...session } = sessionResource(row)
  return session
}
