// Device-Com: the terminal-side API the spec announces (our extension). A terminal registers
// without credentials and gets a device token; once a sandbox project links it
// (complete_registration) it long-polls for enrollment sessions, completes them with captures,
// identifies palms against its project's environment (a global one included) and records
// transactions. Every call of a linked terminal counts toward its project's rate limit.
import { chargeRegistration, registerDevice } from '../../domain/devices/devices.js'
import { MAX_POLL_WAIT_SECONDS, pollEnrollment } from '../../domain/enrollment/enrollment-poll.js'
import { recordTransaction } from '../../domain/devices/transactions.js'
import { DeviceModeSchema } from '../resources/devices.js'
import { EnrollmentSessionSchema, sessionResource } from '../resources/enrollment-sessions.js'
import { TransactionInputSchema, transactionResource, TransactionSchema } from '../resources/transactions.js'
import { defineRoute, Reply, type Route } from '../route.js'
import { Body, Text, Type } from '../schema.js'
import { deviceComEnrollmentRoutes } from './device-com-enrollment.js'

const tags = ['Device-Com (extension)']

export const deviceComRoutes: Route[] = [
  defineRoute({
    operationId: 'registerTerminal',
    method: 'post',
    path: '/v1/device-com/registration',
    auth: ['none'],
    access: 'none',
    tags,
    extension: true,
    summary:
      'Register a terminal (no credential; each client address may register PALMVEIN_REGISTRATION_RATE terminals a minute, default 30, else 429). Answers its device token (shown once; send it as "Authorization: Bearer pvd_…" on every Device-Com call) and a registration code (8 characters, single use, valid 15 minutes) that a sandbox project passes to complete_registration',
    body: Body({
      hardware_platform: Text({ minLength: 1, maxLength: 64, description: 'free text, e.g. android, linux, usb-sensor' }),
      mode: DeviceModeSchema,
    }),
    responses: [
      {
        status: 201,
        description: 'the registered, not yet linked terminal',
        schema: Type.Object({
          device_id: Type.String({ format: 'uuid' }),
          registration_code: Type.String({ minLength: 8, maxLength: 8 }),
          device_token: Type.String({ description: 'pvd_{device_id}.{secret}; only its hash is stored' }),
        }),
      },
      {
        status: 429,
        description:
          'rate_limited or daily_limit_reached: this client address registered its PALMVEIN_REGISTRATION_RATE terminals this minute, or its daily share (Retry-After)',
      },
    ],
    async handler({ app, body, clientAddress, responseHeaders }) {
      Object.assign(responseHeaders, await chargeRegistration(app, clientAddress))
      return registerDevice(app, body)
    },
  }),
  defineRoute({
    operationId: 'pollTerminalEnrollment',
    method: 'get',
    path: '/v1/device-com/enrollment',
    auth: ['device'],
    access: 'terminal',
    tags,
    extension: true,
    rateLimited: true,
    summary: `Long-poll for this terminal's active enrollment session. Answers 200 with it at once when there is one (picking it up: pending → in_progress), or as soon as one is started within the wait; 204 when the wait (0 to ${MAX_POLL_WAIT_SECONDS} s, default 0) ends with none`,
    query: Type.Object(
      {
        wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_POLL_WAIT_SECONDS, description: 'seconds to wait for a session' })),
      },
      { additionalProperties: false },
    ),
    responses: [
      { status: 200, description: 'the active session', schema: Type.Object({ session: EnrollmentSessionSchema }) },
      { status: 204, description: 'no active session within the wait' },
    ],
    async handler(context) {
      const session = await pollEnrollment(context.app, context.terminal.deviceId, context.query.wait ?? 0, context.aborted)
      return session ? { session: sessionResource(session) } : new Reply(204, null)
    },
  }),
  ...deviceComEnrollmentRoutes,
  defineRoute({
    operationId: 'recordTerminalTransaction',
    method: 'post',
    path: '/v1/device-com/transactions',
    auth: ['device'],
    access: 'terminal',
    tags,
    extension: true,
    rateLimited: true,
    summary: 'Record a transaction taken at this terminal for its project',
    body: Body(TransactionInputSchema),
    responses: [{ status: 201, description: 'the recorded transaction', schema: TransactionSchema }],
    async handler(context) {
      const { deviceId, project } = context.terminal
      return transactionResource(await recordTransaction(context.app, project.id, deviceId, context.body))
    },
  }),
]
