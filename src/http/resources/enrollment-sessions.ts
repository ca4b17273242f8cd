// The enrollment session object as the spec shows it, shared by the device routes and Device-Com.
import type { SessionRow } from '../../store/enrollment-sessions.js'
import { Nullable, Type } from '../schema.js'

export const EnrollmentSessionSchema = Type.Object({
  enroll_id: Type.String({ format: 'uuid', description: 'the session id' }),
  state: Type.Union(['pending', 'in_progress', 'completed', 'cancelled', 'expired'].map((state) => Type.Literal(state)), {
    description: 'pending → in_progress (a terminal picked it up) → completed, or cancelled, or expired',
  }),
  nbf: Type.Integer({ description: 'not before, Unix seconds' }),
  iat: Type.Integer({ description: 'issued at, Unix seconds' }),
  exp: Type.Integer({ description: 'expires at, Unix seconds (iat + 300)' }),
  user_id: Type.String({ format: 'uuid', description: 'the member being enrolled' }),
  challenge: Type.String({ description: 'random string the terminal echoes when it completes the session' }),
  mobile_challenge_response: Type.Boolean({ description: 'always false: this service has no mobile confirmation step' }),
  terminal_challenge_response: Type.Boolean({ description: 'true once the terminal completed the session echoing its challenge' }),
}, { $id: 'EnrollmentSession' })

export const SessionEnvelopeSchema = Type.Object({ session: Nullable(EnrollmentSessionSchema) })

export function sessionResource(row: SessionRow) {
  return {
    enroll_id: row.id,
    state: row.state,
    nbf: row.nbf,
    iat: row.iat,
    exp: row.exp,
    user_id: row.member_id,
    challenge: row.challenge,
    mobile_challenge_response: row.mobile_challenge_response,
    terminal_challenge_response: row.terminal_challenge_response,
  }
}
