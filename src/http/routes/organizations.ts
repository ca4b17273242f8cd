// Admin extensions (token only, organization admins only): organizations, their environments and
// their projects. Not in the spec; marked as extensions in the OpenAPI document.
import { environmentAccuracy } from '../../domain/accuracy/environment-accuracy.js'
import {
  createEnvironment,
  createOrganization,
  createProject,
  environmentsOf,
  organizationsOf,
  planAuthorityOf,
  projectsOf,
  updateEnvironment,
  updateProject,
  type EnvironmentChanges,
  type ProjectInput,
  type ProjectUpdate,
} from '../../domain/tenants/organizations.js'
import { EnvironmentAccuracySchema } from '../resources/environment-accuracy.js'
import {
  environmentResource,
  EnvironmentFixedFields,
  EnvironmentSchema,
  EnvironmentSettingsFields,
  organizationResource,
  OrganizationSchema,
  ProjectFieldsSchema,
  ProjectInputSchema,
} from '../resources/organizations.js'
import { projectResource, ProjectSchema } from '../resources/projects.js'
import { defineRoute, type Route } from '../route.js'
import { Body, PathIds, Text, Type } from '../schema.js'

const tags = ['Organizations (extension)']

const OrgParams = PathIds('org_id')

export const organizationRoutes: Route[] = [
  defineRoute({
    operationId: 'createOrganization',
    method: 'post',
    path: '/v1/organizations',
    auth: ['token'],
    access: 'caller',
    tags,
    extension: true,
    summary: 'Create a customer organization; the caller becomes its admin',
    body: Body({ name: Text({ minLength: 1, maxLength: 200 }) }),
    responses: [{ status: 201, description: 'the organization', schema: OrganizationSchema }],
    async handler({ app, body, principal }) {
      const subject = principal.kind === 'token' ? principal.subject : ''
      return organizationResource(await createOrganization(app, { name: body.name, kind: 'customer' }, subject))
    },
  }),
  defineRoute({
    operationId: 'listOrganizations',
    method: 'get',
    path: '/v1/organizations',
    auth: ['token'],
    access: 'caller',
    tags,
    extension: true,
    summary: 'List the organizations the caller administers',
    responses: [{ status: 200, description: 'organizations', schema: Type.Array(OrganizationSchema) }],
    async handler({ app, principal }) {
      const subject = principal.kind === 'token' ? principal.subject : ''
      return (await organizationsOf(app.sql, subject)).map(organizationResource)
    },
  }),
  defineRoute({
    operationId: 'createEnvironment',
    method: 'post',
    path: '/v1/organization/:org_id/environments',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary: 'Create an environment owned by the organization (global when the organization is a platform one)',
    params: OrgParams,
    body: Body({ ...EnvironmentFixedFields, ...EnvironmentSettingsFields }),
    responses: [{ status: 201, description: 'the environment', schema: EnvironmentSchema }],
    async handler(context) {
      return environmentResource(await createEnvironment(context.app, context.params.org_id, context.body))
    },
  }),
  defineRoute({
    operationId: 'listEnvironments',
    method: 'get',
    path: '/v1/organization/:org_id/environments',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary: "List the organization's environments",
    params: OrgParams,
    responses: [{ status: 200, description: 'environments', schema: Type.Array(EnvironmentSchema) }],
    async handler(context) {
      return (await environmentsOf(context.app.sql, context.params.org_id)).map(environmentResource)
    },
  }),
  defineRoute({
    operationId: 'updateEnvironment',
    method: 'patch',
    path: '/v1/organization/:org_id/environments/:environment_id',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary: "Change an environment's settings (not its dimension or extractor); every service process takes them up",
    params: PathIds('org_id', 'environment_id'),
    body: Type.Partial(Body(EnvironmentSettingsFields), { additionalProperties: false, minProperties: 1 }),
    responses: [
      { status: 200, description: 'the environment as changed', schema: EnvironmentSchema },
      { status: 409, description: 'conflict: match_threshold is derived from target_fpir (set target_fpir to null with it)' },
    ],
    async handler(context) {
      return environmentResource(await updateEnvironment(context.app, context.params.org_id, context.params.environment_id, context.body as EnvironmentChanges))
    },
  }),
  defineRoute({
    operationId: 'getEnvironmentAccuracy',
    method: 'get',
    path: '/v1/organization/:org_id/environments/:environment_id/accuracy',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary:
      "The environment's match threshold and what it is worth: how it was calibrated from target_fpir, the estimated FPIR at the current gallery size with its interval, the sample behind it",
    params: PathIds('org_id', 'environment_id'),
    responses: [{ status: 200, description: 'the accuracy of the threshold in use', schema: EnvironmentAccuracySchema }],
    async handler(context) {
      return environmentAccuracy(context.app, context.params.org_id, context.params.environment_id)
    },
  }),
  defineRoute({
    operationId: 'createProject',
    method: 'post',
    path: '/v1/organization/:org_id/projects',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary:
      "Create a project on one of the organization's environments or on a global one. An organization admin creates it on a self-service plan (PALMVEIN_SELF_SERVICE_PLANS, default sandbox); a platform operator (an admin of a platform organization) on any plan",
    params: OrgParams,
    body: Body(ProjectInputSchema),
    responses: [
      { status: 201, description: 'the project', schema: ProjectSchema },
      { status: 403, description: 'forbidden: a plan that is not offered for self-service, asked by an organization admin who is no platform operator' },
      { status: 422, description: "invalid_reference: environment_id is not one of the organization's environments nor a global one" },
    ],
    async handler(context) {
      const authority = await planAuthorityOf(context.app.sql, (context.principal as { subject: string }).subject)
      return projectResource(await createProject(context.app, context.params.org_id, context.body as ProjectInput, authority))
    },
  }),
  defineRoute({
    operationId: 'updateProject',
    method: 'patch',
    path: '/v1/organization/:org_id/projects/:project_id',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary:
      "Rename or redescribe one of the organization's projects; a platform operator (an admin of a platform organization) also changes its plan, which sets its rate, daily limit and headcount (members above a lowered headcount stay). The environment cannot change",
    params: PathIds('org_id', 'project_id'),
    body: Type.Partial(Body(ProjectFieldsSchema), { additionalProperties: false, minProperties: 1 }),
    responses: [
      { status: 200, description: 'the project as changed', schema: ProjectSchema },
      {
        status: 403,
        description:
          "forbidden: a plan change asked by an organization admin who is no platform operator (plans are set by the operator: an admin of a platform organization, or the CLI's palmvein project plan)",
      },
    ],
    async handler(context) {
      const authority = await planAuthorityOf(context.app.sql, (context.principal as { subject: string }).subject)
      return projectResource(await updateProject(context.app, context.params.org_id, context.params.project_id, context.body as ProjectUpdate, authority))
    },
  }),
  defineRoute({
    operationId: 'listOrganizationProjects',
    method: 'get',
    path: '/v1/organization/:org_id/projects',
    auth: ['token'],
    access: 'org-admin',
    tags,
    extension: true,
    summary: "List the organization's projects",
    params: OrgParams,
    responses: [{ status: 200, description: 'projects', schema: Type.Array(ProjectSchema) }],
    async handler(context) {
      return (await projectsOf(context.app.sql, context.params.org_id)).map(projectResource)
    },
  }),
]
