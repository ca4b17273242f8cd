// The route table: every route the service answers, one group per resource of the spec.
import type { Route } from '../route.js'
import { apiKeyRoutes } from './api-keys.js'
import { auditRoutes } from './audit.js'
import { biometricRoutes } from './biometrics.js'
import { deviceComRoutes } from './device-com.js'
import { deviceRoutes } from './devices.js'
import { enrollmentSessionRoutes } from './enrollment-sessions.js'
import { healthRoutes } from './health.js'
import { memberRoutes } from './members.js'
import { openApiRoute } from './openapi.js'
import { operationRoutes } from './operations.js'
import { organizationRoutes } from './organizations.js'
import { projectRoutes } from './projects.js'
import { scanRoutes } from './scans.js'
import { selfEnrollmentRoutes } from './self-enrollment.js'
import { transactionRoutes } from './transactions.js'
import { webhookRoutes } from './webhooks.js'

/** `internal`: node-to-node routes (cluster mode), served but not in the OpenAPI document. */
export function routeTable(version: string, internal: Route[] = []): Route[] {
  const routes: Route[] = [
    ...healthRoutes,
    ...organizationRoutes,
    ...apiKeyRoutes,
    ...auditRoutes,
    ...projectRoutes,
    ...memberRoutes,
    ...biometricRoutes,
    ...scanRoutes,
    ...deviceRoutes,
    ...enrollmentSessionRoutes,
    ...transactionRoutes,
    ...webhookRoutes,
    ...deviceComRoutes,
    ...selfEnrollmentRoutes,
    ...operationRoutes,
  ]
  return [...routes, openApiRoute(routes, version), ...internal]
}
