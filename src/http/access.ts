// The access hook: every request's declared access is resolved here, once, after authentication
// and validation and before the handler. This is where a caller meets the resource it addresses,
// so it is the place to record who did what with which outcome.
import type { AppContext } from '../app-context.js'
import type { Principal } from '../auth/principal.js'
import { resolveAccess, type Resolution } from '../auth/route-access.js'
import type { Route } from './route.js'

export function grantAccess(
  app: AppContext,
  route: Route,
  principal: Principal,
  params: Record<string, string>,
  responseHeaders: Record<string, string>,
): Promise<Resolution> {
  return resolveAccess(app, { access: route.access, rateLimited: route.rateLimited ?? false, principal, params, responseHeaders })
}
