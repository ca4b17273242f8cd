// GET /v1/openapi.json: the document, built once from the route table at boot.
import { buildOpenApi } from '../openapi.js'
import { defineRoute, Reply, type Route } from '../route.js'

export function openApiRoute(routes: Route[], version: string): Route {
  let document: string | null = null
  const route: Route = defineRoute({
    operationId: 'getOpenApiDocument',
    method: 'get',
    path: '/v1/openapi.json',
    auth: ['none'],
    access: 'none',
    tags: ['Meta'],
    extension: true,
    usesDatabase: false,
    summary: 'This OpenAPI 3.0 description',
    responses: [{ status: 200, description: 'the OpenAPI document', contentType: 'application/json' }],
    async handler() {
      document ??= JSON.stringify(buildOpenApi([...routes, route], version))
      return new Reply(200, document, 'application/json; charset=utf-8')
    },
  })
  return route
}
