// Biometrics (spec "Biometrics"): enroll and identify, API key only, only on a tenant-managed
// environment (checked first: 403 environment_not_tenant_managed).
import { callerType } from '../../auth/principal.js'
import { enrollMember } from '../../domain/enrollment/enrollment.js'
import { identifyPalm } from '../../domain/identification/identification.js'
import { AT_LEAST_ONE_HAND, CandidatesQuery, EnrollHand, IdentifyPalmSchema, IdentifyResultSchema } from '../resources/palms.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Nullable, PathIds, Type, Uuid } from '../schema.js'

const tags = ['Biometrics']

const responses503 = { status: 503, description: "unavailable: the environment's gallery is still loading after a restart (Retry-After)" }
const notTenantManaged = { status: 403, description: 'environment_not_tenant_managed: the project is on a global environment (or has none)' }

export const biometricRoutes: Route[] = [
  defineRoute({
    operationId: 'enrollPalms',
    method: 'post',
    path: '/v1/projects/:project_id/biometrics/enroll',
    auth: ['key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary:
      "Enroll a member's palms: per hand an enroll and an identify capture (at least one hand). Re-enrolling a hand replaces it. All or nothing; emits enrollment.completed",
    params: PathIds('project_id'),
    body: Body(
      {
        member_id: Uuid('an existing member of the project (else 422 invalid_reference)'),
        left_hand: Type.Optional(Nullable(EnrollHand)),
        right_hand: Type.Optional(Nullable(EnrollHand)),
      },
      AT_LEAST_ONE_HAND,
    ),
    responses: [
      { status: 200, description: 'enrolled', schema: Type.Object({ member_id: Type.String({ format: 'uuid' }) }) },
      {
        status: 400,
        description:
          "capture_invalid: a capture is not PVT1 in base64, or does not fit the environment's dimension, extractor or minimum quality (the detail names the field)",
      },
      notTenantManaged,
      { status: 409, description: 'duplicate_palm: a palm already belongs to another member of the environment; nothing is stored' },
      { status: 422, description: 'invalid_reference: member_id is not a member of the project' },
      responses503,
    ],
    async handler(context) {
      return enrollMember(context.app, context.project, context.body, { callerType: callerType(context.principal) })
    },
  }),
  defineRoute({
    operationId: 'identifyPalm',
    method: 'post',
    path: '/v1/projects/:project_id/biometrics/identify',
    auth: ['key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary: 'Identify a palm 1:N against every member of the environment',
    params: PathIds('project_id'),
    query: CandidatesQuery,
    body: Body({ palm: IdentifyPalmSchema }),
    responses: [
      { status: 200, description: 'the decision', schema: IdentifyResultSchema },
      {
        status: 400,
        description: "capture_invalid: the capture is not PVT1 in base64, or does not fit the environment's dimension, extractor or minimum quality",
      },
      notTenantManaged,
      responses503,
    ],
    async handler(context) {
      return identifyPalm(context.app, context.project, context.body.palm, { k: context.query.k, callerType: callerType(context.principal) })
    },
  }),
]
