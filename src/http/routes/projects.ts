// Projects (spec "Scans, transactions, project"): list, read, and the server-lookup switch.
import { reachableProjects, switchServerLookup } from '../../domain/tenants/projects.js'
import { projectResource, ProjectSchema } from '../resources/projects.js'
import { defineRoute, type Route } from '../route.js'
import { Body, PathIds, Type } from '../schema.js'

const tags = ['Projects']
const ProjectParams = PathIds('project_id')

export const projectRoutes: Route[] = [
  defineRoute({
    operationId: 'listProjects',
    method: 'get',
    path: '/v1/projects',
    auth: ['token', 'key'],
    access: 'caller',
    tags,
    summary:
      'List projects: with a token, every project of the organizations the user administers; with an API key, every project the key can reach. Not rate-limited',
    responses: [{ status: 200, description: 'projects, oldest first', schema: Type.Array(ProjectSchema) }],
    async handler({ app, principal }) {
      return (await reachableProjects(app.sql, principal)).map(projectResource)
    },
  }),
  defineRoute({
    operationId: 'getProject',
    method: 'get',
    path: '/v1/projects/:project_id',
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: 'Read a project',
    params: ProjectParams,
    responses: [{ status: 200, description: 'the project', schema: ProjectSchema }],
    async handler(context) {
      return projectResource(context.project)
    },
  }),
  defineRoute({
    operationId: 'setServerLookup',
    method: 'put',
    path: '/v1/projects/:project_id/server-lookup',
    auth: ['token'],
    access: 'project',
    tags,
    rateLimited: true,
    summary:
      "Enable or disable server lookup: 1:N identification by the service for the project's terminals (POST /v1/device-com/identify; while off they get 403 server_lookup_disabled). Enabling needs the project's environment to allow it (environment_enables_server_lookup), else 422 server_lookup_not_allowed; disabling is always allowed. REST identify with an API key is not affected",
    params: ProjectParams,
    body: Body({ enable_server_lookup: Type.Boolean() }),
    responses: [
      { status: 204, description: 'set' },
      { status: 422, description: 'server_lookup_not_allowed: the project has no environment, or its environment does not allow server lookup' },
    ],
    async handler(context) {
      await switchServerLookup(context.app.sql, context.project, context.body.enable_server_lookup)
      return undefined
    },
  }),
]
