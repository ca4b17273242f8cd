// Public self-enrollment into a global environment (extension; spec "What the service does", item 6):
// a person with their own identity token starts a session on a kiosk, confirms it with the code the
// kiosk shows, and later lists or erases what they enrolled. The kiosk's side is Device-Com.
import { confirmSelfEnrollment, eraseSelfEnrollment, selfEnrollments, startSelfEnrollment } from '../../domain/enrollment/self-enrollment.js'
import { timestamp } from '../../ids.js'
import { DisplayName } from '../resources/members.js'
import { PersonSessionSchema, personSessionResource } from '../resources/enrollment-sessions.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Nullable, PathIds, Text, Type, Uuid } from '../schema.js'

const tags = ['Self-enrollment (extension)']
const endUserOnly = {
  status: 403,
  description: "forbidden: not an identity token, or its subject administers an organization (self-enrollment is for a person's own identity)",
}
// Every route here is rate limited per person (route-access.ts: end-user access charges the subject).

const SelfEnrollmentSchema = Type.Object(
  {
    member_id: Type.String({ format: 'uuid' }),
    environment_id: Type.String({ format: 'uuid' }),
    environment_name: Type.String(),
    display_name: Type.String(),
    palm_templates_enrolled: Type.Integer({ minimum: 0, description: 'captures stored (0 until a kiosk completed a session)' }),
    created_at: Type.String({ format: 'date-time' }),
    last_enrolled_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'SelfEnrollment' },
)

export const selfEnrollmentRoutes: Route[] = [
  defineRoute({
    operationId: 'startSelfEnrollment',
    method: 'post',
    path: '/v1/self-enrollment/sessions',
    auth: ['token'],
    access: 'end-user',
    tags,
    extension: true,
    rateLimited: true,
    summary:
      "Start enrolling yourself on a kiosk: the device must be an enabled enrollment-mode terminal of a project of the platform organization that owns the global environment. The kiosk gets the session through its Device-Com long poll and shows its 6-digit code; the answer does not carry it: read it on the kiosk's screen and type it in POST .../{enroll_id}/confirm. One member per person and environment: enrolling again replaces your palms. Expires 300 s after iat. Rate limited per person (every self-enrollment request) and per kiosk (sessions started); RateLimit-* show the tighter",
    body: Body({ device_id: Uuid('the kiosk you stand at'), display_name: DisplayName }),
    responses: [
      {
        status: 201,
        description: 'the session (user_id is your subject; no challenge: the kiosk alone shows it)',
        schema: Type.Object({ device_id: Type.String({ format: 'uuid' }), session: PersonSessionSchema }),
      },
      endUserOnly,
      {
        status: 409,
        description:
          'conflict: the kiosk is enrolling someone else (their session is confirmed, or their claim, counted from their first session there, is under 60 s old), or you started 4 sessions there without finishing one',
      },
      {
        status: 422,
        description:
          "self_enrollment_unavailable: the one refusal, with one detail, for every device that is not a kiosk open for self-enrollment (missing, unlinked, disabled, another mode, another organization's, or a project that does not own its global environment)",
      },
      { status: 429, description: 'rate_limited: your self-enrollment requests, or the sessions started on this kiosk, exceed their rate (Retry-After)' },
    ],
    async handler(context) {
      const subject = (context.principal as { subject: string }).subject
      const { project, session } = await startSelfEnrollment(context.app, subject, context.body, context.responseHeaders)
      context.attribute(project)
      return { device_id: session.device_id, session: personSessionResource(session) }
    },
  }),
  defineRoute({
    operationId: 'confirmSelfEnrollment',
    method: 'post',
    path: '/v1/self-enrollment/sessions/:enroll_id/confirm',
    auth: ['token'],
    access: 'end-user',
    tags,
    extension: true,
    rateLimited: true,
    summary:
      'Confirm your session with the code the kiosk shows (sets mobile_challenge_response; the kiosk may then complete it). A wrong code is 403 challenge_mismatch; the fifth cancels the session',
    params: PathIds('enroll_id'),
    body: Body({ challenge: Text({ minLength: 1, maxLength: 64, description: 'the code the kiosk shows' }) }),
    responses: [
      { status: 200, description: 'the confirmed session (without its challenge)', schema: PersonSessionSchema },
      { status: 403, description: "challenge_mismatch: not the kiosk's code (five cancel the session); forbidden: not a person's own identity token" },
      { status: 409, description: 'conflict: the session is no longer active (completed, cancelled, superseded or expired)' },
    ],
    async handler(context) {
      const subject = (context.principal as { subject: string }).subject
      const { session, project } = await confirmSelfEnrollment(context.app, subject, context.params.enroll_id, context.body.challenge)
      if (project) context.attribute(project)
      return personSessionResource(session)
    },
  }),
  defineRoute({
    operationId: 'listSelfEnrollments',
    method: 'get',
    path: '/v1/self-enrollment/me',
    auth: ['token'],
    access: 'end-user',
    tags,
    extension: true,
    rateLimited: true,
    summary: 'What you enrolled: one member per global environment, newest first',
    responses: [{ status: 200, description: 'your enrollments', schema: Type.Object({ items: Type.Array(SelfEnrollmentSchema) }) }, endUserOnly],
    async handler(context) {
      const subject = (context.principal as { subject: string }).subject
      const rows = await selfEnrollments(context.app, subject)
      return {
        items: rows.map((row) => ({
          member_id: row.member_id,
          environment_id: row.environment_id,
          environment_name: row.environment_name,
          display_name: row.display_name,
          palm_templates_enrolled: row.palm_templates_enrolled,
          created_at: timestamp(row.created_at),
          last_enrolled_at: timestamp(row.last_enrolled_at),
        })),
      }
    },
  }),
  defineRoute({
    operationId: 'eraseSelfEnrollment',
    method: 'delete',
    path: '/v1/self-enrollment/me/:member_id',
    auth: ['token'],
    access: 'end-user',
    tags,
    extension: true,
    rateLimited: true,
    summary:
      'Erase yourself (the right to erasure): the member, its data key and its templates are deleted, so every copy of its encrypted templates is unreadable; identification stops finding you at once',
    params: PathIds('member_id'),
    responses: [{ status: 204, description: 'erased' }, endUserOnly],
    async handler(context) {
      const subject = (context.principal as { subject: string }).subject
      context.attribute(await eraseSelfEnrollment(context.app, subject, context.params.member_id))
    },
  }),
]
