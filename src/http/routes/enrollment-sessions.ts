// Enrollment sessions (spec "Devices and enrollment sessions"): start one on a terminal, follow it,
// cancel it. The terminal side (long poll, completion) is in device-com.ts.
import { activeSessionOf, cancelSession, sessionStatus, startSession } from '../../domain/enrollment/enrollment-sessions.js'
import { EnrollmentSessionSchema, SessionEnvelopeSchema, sessionResource } from '../resources/enrollment-sessions.js'
import { defineRoute, type Route } from '../route.js'
import { Body, PathIds, Type, Uuid } from '../schema.js'

const tags = ['Devices']
const DeviceParams = PathIds('device_id')

// The client's copy of a session: only enroll_id decides; the other fields may come along as
// they were received (so a client can send back exactly what it got).
const ClientSession = Type.Object(
  {
    ...Object.fromEntries(Object.entries(EnrollmentSessionSchema.properties).map(([name, schema]) => [name, Type.Optional(schema)])),
    enroll_id: EnrollmentSessionSchema.properties.enroll_id,
  },
  { additionalProperties: false },
)

export const enrollmentSessionRoutes: Route[] = [
  defineRoute({
    operationId: 'startEnrollmentSession',
    method: 'post',
    path: '/v1/devices/:device_id/enroll/member/start',
    auth: ['token', 'key'],
    access: 'tenant-device',
    tags,
    rateLimited: true,
    summary:
      "Start an enrollment session for a member of the device's project. The terminal long-polling Device-Com gets it at once; a session already active on the device is superseded (cancelled). Expires 300 s after iat",
    params: DeviceParams,
    body: Body({ member_id: Uuid('the member to enroll (user_id of the session)') }),
    responses: [
      { status: 200, description: 'the new session', schema: Type.Object({ device_id: Type.String({ format: 'uuid' }), session: EnrollmentSessionSchema }) },
      { status: 409, description: 'conflict: the device is disabled' },
      { status: 422, description: 'invalid_reference: no such member in the project' },
    ],
    async handler(context) {
      const { device } = context
      const session = await startSession(context.app, device, context.body.member_id)
      return { device_id: device.id, session: sessionResource(session) }
    },
  }),
  defineRoute({
    operationId: 'getEnrollmentSession',
    method: 'get',
    path: '/v1/devices/:device_id/enroll/status',
    auth: ['token', 'key'],
    access: 'device',
    tags,
    rateLimited: true,
    summary: "The device's active (pending or in-progress) session, or session: null when there is none or session_id names another",
    params: DeviceParams,
    query: Type.Object({ session_id: Type.Optional(Uuid('answer null unless the active session is this one')) }, { additionalProperties: false }),
    responses: [{ status: 200, description: 'the active session or null', schema: SessionEnvelopeSchema }],
    async handler(context) {
      const { device } = context
      const session = await activeSessionOf(context.app, device.id, context.query.session_id)
      return { session: session && sessionResource(session) }
    },
  }),
  defineRoute({
    operationId: 'refreshEnrollmentSession',
    method: 'post',
    path: '/v1/devices/:device_id/enroll/status',
    auth: ['token', 'key'],
    access: 'device',
    tags,
    rateLimited: true,
    summary:
      "The current state of the client's copy of a session (completed, cancelled and expired included), or session: null when a newer session superseded it or it does not exist on this device",
    params: DeviceParams,
    body: Body({ session: ClientSession }),
    responses: [{ status: 200, description: 'the session as it is now, or null', schema: SessionEnvelopeSchema }],
    async handler(context) {
      const { device } = context
      const session = await sessionStatus(context.app, device.id, context.body.session.enroll_id as string)
      return { session: session && sessionResource(session) }
    },
  }),
  defineRoute({
    operationId: 'cancelEnrollmentSession',
    method: 'delete',
    path: '/v1/devices/:device_id/enroll/cancel',
    auth: ['token', 'key'],
    access: 'device',
    tags,
    rateLimited: true,
    summary:
      "Cancel exactly the named session. An unknown session_id (or another device's) is 404 and changes nothing; an already cancelled one is answered as is; a completed or expired one is 409",
    params: DeviceParams,
    query: Type.Object({ session_id: Uuid('the session to cancel') }, { additionalProperties: false }),
    responses: [
      { status: 200, description: 'the cancelled session', schema: EnrollmentSessionSchema },
      { status: 409, description: 'conflict: the session is already completed or expired' },
    ],
    async handler(context) {
      const { device } = context
      return sessionResource(await cancelSession(context.app, device.id, context.query.session_id))
    },
  }),
]
