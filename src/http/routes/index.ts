// The route table: every route the service answers, one group per resource of the spec.
import type { Route } from '../route.js'
import { apiKeyRoutes } from './api-keys.js'
import { healthRoutes } from './health.js'
import { openApiRoute } from './openapi.js'
import { organizationRoutes } from './organizations.js'
import { projectRoutes } from './projects.js'

export function routeTable(version: string): Route[] {
  const routes: Route[] = [
    ...healthRoutes,
    ...organizationRoutes,
    ...apiKeyRoutes,
    ...projectRoutes,
  ]
  return [...routes, openApiRoute(routes, version)]
}
