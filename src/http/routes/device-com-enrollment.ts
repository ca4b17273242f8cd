// Device-Com, the terminal's palm work: complete its enrollment session with the member's captures,
// and identify a palm against its project's environment (a global environment included; demo
// terminals emit demo.scan.success when they find a member).
import { completeEnrollmentSession, identifyAtTerminal } from '../../domain/devices/device-com.js'
import { EnrollmentSessionSchema, sessionResource } from '../resources/enrollment-sessions.js'
import { AT_LEAST_ONE_HAND, CandidatesQuery, EnrollHand, IdentifyPalmSchema, IdentifyResultSchema } from '../resources/palms.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Nullable, PathIds, Text, Type } from '../schema.js'

const tags = ['Device-Com (extension)']

export const deviceComEnrollmentRoutes: Route[] = [
  defineRoute({
    operationId: 'completeTerminalEnrollment',
    method: 'post',
    path: '/v1/device-com/enrollment/:session_id/complete',
    auth: ['device'],
    access: 'terminal',
    tags,
    extension: true,
    rateLimited: true,
    summary:
      "Complete this terminal's active enrollment session with the member's captures: enrolls exactly like POST /biometrics/enroll (duplicate check, all or nothing) and completes the session in the same transaction; emits enrollment.completed with session_id, member_id, device_id, completed_at. Send the session's challenge back as `challenge` to prove the captures belong to this session (sets terminal_challenge_response)",
    params: PathIds('session_id'),
    body: Body(
      {
        left_hand: Type.Optional(Nullable(EnrollHand)),
        right_hand: Type.Optional(Nullable(EnrollHand)),
        challenge: Type.Optional(Text({ minLength: 1, maxLength: 256, description: "the session's challenge, as the terminal received it" })),
      },
      AT_LEAST_ONE_HAND,
    ),
    responses: [
      {
        status: 200,
        description: 'enrolled; the session is completed',
        schema: Type.Object({ member_id: Type.String({ format: 'uuid' }), session: EnrollmentSessionSchema }),
      },
      { status: 400, description: 'capture_invalid: a capture is not PVT1 in base64 or does not fit the environment' },
      {
        status: 403,
        description:
          "environment_read_only: the terminal's project does not own its environment (a customer project on a global one), so it enrolls nobody there; forbidden: the challenge does not match",
      },
      {
        status: 409,
        description:
          'conflict: the session is no longer active (completed, cancelled, superseded or expired); duplicate_palm: a palm belongs to another member',
      },
    ],
    async handler(context) {
      const { member_id, session } = await completeEnrollmentSession(context.app, context.terminal, context.params.session_id, context.body)
      return { member_id, session: sessionResource(session) }
    },
  }),
  defineRoute({
    operationId: 'identifyOnTerminal',
    method: 'post',
    path: '/v1/device-com/identify',
    auth: ['device'],
    access: 'terminal',
    tags,
    extension: true,
    rateLimited: true,
    summary:
      "Server lookup: identify a palm 1:N against the terminal's project environment, global environments included, when the project enabled server lookup and its environment allows it (else 403 server_lookup_disabled). A terminal in demo mode that finds a member emits demo.scan.success (member_id, device_id, scanned_at)",
    query: CandidatesQuery,
    body: Body({ palm: IdentifyPalmSchema }),
    responses: [
      { status: 200, description: 'the decision, as POST /biometrics/identify answers it', schema: IdentifyResultSchema },
      { status: 400, description: 'capture_invalid: the capture is not PVT1 in base64 or does not fit the environment' },
      {
        status: 403,
        description:
          'server_lookup_disabled: the project has not enabled server lookup, or its environment does not allow it; forbidden: the device is disabled',
      },
      { status: 503, description: "unavailable: the environment's gallery is still loading after a restart (Retry-After)" },
    ],
    async handler(context) {
      return identifyAtTerminal(context.app, context.terminal, context.body.palm, context.query.k)
    },
  }),
]
