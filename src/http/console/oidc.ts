// OpenID Connect sign-in for the console, where the API takes identity tokens from a configured
// issuer: the page runs the authorization code flow with PKCE against PALMVEIN_JWT_ISSUER as the
// public client PALMVEIN_CONSOLE_OIDC_CLIENT_ID, and sends the ID token it gets to the API. That
// token's iss is the issuer and its aud the client id, so the API accepts it only when
// PALMVEIN_JWT_AUDIENCE is that client id (config.ts refuses to start otherwise).
import type { Config } from '../../config.js'

export interface ConsoleOidc {
  issuer: string
  client_id: string
  scope: string
}

export function consoleOidc(config: Pick<Config, 'consoleOidcClientId' | 'jwtIssuer'>): ConsoleOidc | null {
  if (!config.consoleOidcClientId) return null
  return { issuer: config.jwtIssuer, client_id: config.consoleOidcClientId, scope: 'openid' }
}
