// API key management (spec "API keys"): identity token of an organization admin only. Lists
// include revoked keys (their record carries revoked_at); DELETE is a soft delete and idempotent.
import { createApiKey, keysOfOrganization, keysReachingProject, revokeKey } from '../../domain/tenants/api-keys.js'
import { ApiKeyCreatedSchema, apiKeyRecord, ApiKeyRecordSchema, KeyName } from '../resources/api-keys.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Nullable, PathIds, Type, Uuid } from '../schema.js'

const tags = ['API keys']

function subjectOf(principal: { kind: string; subject?: string }): string {
  // Routes here accept only tokens, so the subject is always there.
  return principal.kind === 'token' ? (principal.subject ?? '') : ''
}

export const apiKeyRoutes: Route[] = [
  defineRoute({
    operationId: 'listOrganizationApiKeys',
    method: 'get',
    path: '/v1/organization/:org_id/api-keys',
    auth: ['token'],
    access: 'org-admin',
    tags,
    summary: "List the organization's API keys, organization-wide and project-scoped, oldest first; revoked keys are included with revoked_at set",
    params: PathIds('org_id'),
    responses: [{ status: 200, description: 'API key records (never the plaintext key)', schema: Type.Array(ApiKeyRecordSchema) }],
    async handler(context) {
      return (await keysOfOrganization(context.app.sql, context.params.org_id)).map(apiKeyRecord)
    },
  }),
  defineRoute({
    operationId: 'createOrganizationApiKey',
    method: 'post',
    path: '/v1/organization/:org_id/api-keys',
    auth: ['token'],
    access: 'org-admin',
    tags,
    summary: 'Create an API key: organization-wide (project_ids null) or scoped to projects of the organization; the plaintext key is returned only here',
    params: PathIds('org_id'),
    body: Body({
      name: KeyName,
      project_ids: Nullable(
        Type.Array(Uuid(), {
          minItems: 1,
          maxItems: 1000,
          uniqueItems: true,
          description:
            'projects of this organization the key may reach; null for an organization-wide key (required, so a key is never organization-wide by omission)',
        }),
      ),
    }),
    responses: [
      { status: 201, description: 'the new key, with its plaintext `key` (shown once)', schema: ApiKeyCreatedSchema },
      { status: 422, description: 'invalid_reference: project_ids names a project that is not in the organization' },
    ],
    async handler(context) {
      const { app, params, body, principal } = context
      return createApiKey(app, { orgId: params.org_id, name: body.name, projectIds: body.project_ids, createdBy: subjectOf(principal) })
    },
  }),
  defineRoute({
    operationId: 'revokeApiKey',
    method: 'delete',
    path: '/v1/organization/:org_id/api-keys/:key_id',
    auth: ['token'],
    access: 'org-admin',
    tags,
    summary:
      'Revoke an API key: it stops working on the very next request, on every process. Soft delete (the record stays, with revoked_at); revoking again answers 204 and keeps the first revocation time',
    params: PathIds('org_id', 'key_id'),
    responses: [{ status: 204, description: 'revoked' }],
    async handler(context) {
      await revokeKey(context.app.sql, context.params.org_id, context.params.key_id)
      return undefined
    },
  }),
  defineRoute({
    operationId: 'listProjectApiKeys',
    method: 'get',
    path: '/v1/projects/:project_id/api-keys',
    auth: ['token'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'List the API keys that can reach the project (organization-wide and scoped to it), oldest first; revoked keys are included with revoked_at set',
    params: PathIds('project_id'),
    responses: [{ status: 200, description: 'API key records (never the plaintext key)', schema: Type.Array(ApiKeyRecordSchema) }],
    async handler(context) {
      const { project } = context
      return (await keysReachingProject(context.app.sql, project)).map(apiKeyRecord)
    },
  }),
  defineRoute({
    operationId: 'createProjectApiKey',
    method: 'post',
    path: '/v1/projects/:project_id/api-keys',
    auth: ['token'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Create an API key scoped to this project only; the plaintext key is returned only here',
    params: PathIds('project_id'),
    body: Body({ name: KeyName }),
    responses: [{ status: 201, description: 'the new key, with its plaintext `key` (shown once)', schema: ApiKeyCreatedSchema }],
    async handler(context) {
      const { project } = context
      return createApiKey(context.app, { orgId: project.org_id, name: context.body.name, projectIds: [project.id], createdBy: subjectOf(context.principal) })
    },
  }),
]
