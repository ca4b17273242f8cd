// Members (spec "Members"): token or key; only on a tenant-managed environment (checked first,
// 403 environment_not_tenant_managed), then the usual project access rules.
import { changeMember, createMember, listMembers, loadMember, removeMember } from '../../domain/members/members.js'
import { DisplayName, memberResource, MemberSchema, Metadata } from '../resources/members.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Pagination, PathIds, Text, Type } from '../schema.js'

const tags = ['Members']
const ProjectParams = PathIds('project_id')
const MemberParams = PathIds('project_id', 'member_id')
const notTenantManaged = { status: 403, description: 'environment_not_tenant_managed: the project is on a global environment (or has none)' }

export const memberRoutes: Route[] = [
  defineRoute({
    operationId: 'listMembers',
    method: 'get',
    path: '/v1/projects/:project_id/members',
    auth: ['token', 'key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary: "List the project's members, oldest first; or search them (q): by display name prefix, in name order",
    params: ProjectParams,
    // Extensions: without page, per_page and q, every member (the spec's array); with any, one page.
    query: Type.Object(
      {
        page: Type.Optional(Pagination(1000).page),
        per_page: Type.Optional(Pagination(1000).per_page),
        q: Type.Optional(
          Text({
            minLength: 1,
            maxLength: 200,
            description:
              'members whose display name begins with this text (case-insensitive), in name order, and the member whose id it is; one page (per_page default 100)',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: [
      { status: 200, description: 'members (one page of them when page, per_page or q is given)', schema: Type.Array(MemberSchema) },
      notTenantManaged,
    ],
    async handler(context) {
      const { project, query } = context
      const paged = query.page !== undefined || query.per_page !== undefined || query.q !== undefined
      const page = paged ? { page: query.page ?? 1, perPage: query.per_page ?? 100 } : undefined
      return (await listMembers(context.app.sql, project, page, query.q)).map(memberResource)
    },
  }),
  defineRoute({
    operationId: 'createMember',
    method: 'post',
    path: '/v1/projects/:project_id/members',
    auth: ['token', 'key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary:
      "Create a member (no palms yet: enroll them with POST .../biometrics/enroll). Refused with 422 headcount_reached once the plan's headcount is reached",
    params: ProjectParams,
    body: Body({ display_name: DisplayName, metadata: Type.Optional(Metadata) }),
    responses: [
      { status: 201, description: 'the member', schema: MemberSchema },
      notTenantManaged,
      { status: 422, description: "headcount_reached: the project's plan allows no more members" },
    ],
    async handler(context) {
      const { project } = context
      return memberResource(await createMember(context.app, project, context.body))
    },
  }),
  defineRoute({
    operationId: 'getMember',
    method: 'get',
    path: '/v1/projects/:project_id/members/:member_id',
    auth: ['token', 'key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary: 'Read a member',
    params: MemberParams,
    responses: [{ status: 200, description: 'the member', schema: MemberSchema }, notTenantManaged],
    async handler(context) {
      const { project } = context
      return memberResource(await loadMember(context.app, project, context.params.member_id))
    },
  }),
  defineRoute({
    operationId: 'updateMember',
    method: 'put',
    path: '/v1/projects/:project_id/members/:member_id',
    auth: ['token', 'key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary:
      'Change a member: the fields sent (display_name, metadata, at least one) replace the stored ones; a field left out keeps its value; metadata null clears it',
    params: MemberParams,
    body: Body({ display_name: Type.Optional(DisplayName), metadata: Type.Optional(Metadata) }, { minProperties: 1 }),
    responses: [{ status: 200, description: 'the member', schema: MemberSchema }, notTenantManaged],
    async handler(context) {
      const { project } = context
      return memberResource(await changeMember(context.app, project, context.params.member_id, context.body))
    },
  }),
  defineRoute({
    operationId: 'deleteMember',
    method: 'delete',
    path: '/v1/projects/:project_id/members/:member_id',
    auth: ['token', 'key'],
    access: 'tenant-project',
    tags,
    rateLimited: true,
    summary:
      'Delete a member: its data key is destroyed (its encrypted templates become unreadable everywhere, backups included) and its palms leave the gallery at once. Scan results and transactions keep the member id',
    params: MemberParams,
    responses: [{ status: 204, description: 'deleted' }, notTenantManaged],
    async handler(context) {
      const { project } = context
      await removeMember(context.app, project, context.params.member_id)
      return undefined
    },
  }),
]
