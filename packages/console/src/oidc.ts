// OpenID Connect sign-in (authorization code flow with PKCE, as a public client) with oauth4webapi,
// loaded only where the service says it is configured. What survives the round trip to the issuer
// (the PKCE verifier, state, nonce and the page to come back to) waits in sessionStorage and is
// removed the moment the issuer sends the browser back; the ID token itself stays in memory only.
import * as oauth from 'oauth4webapi'

export interface OidcSettings {
  issuer: string
  client_id: string
  scope: string
}
export interface OidcToken {
  token: string
  subject: string
  expiresAt: Date
}

const PENDING = 'palmvein-console-oidc-pending'
/** Registered at the issuer as the client's redirect URI: the console's own page. */
const redirectUri = () => `${location.origin}/console/`

/** Plain http is accepted for an issuer on this machine only (development, tests). */
function requestOptions(issuer: URL) {
  const loopback = issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname)
  return loopback ? { [oauth.allowInsecureRequests]: true } : {}
}

async function discover(settings: OidcSettings) {
  const issuer = new URL(settings.issuer)
  const options = requestOptions(issuer)
  const server = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options }))
  return { server, options, client: { client_id: settings.client_id } }
}

/** Sends the browser to the issuer's sign-in page. */
export async function beginOidcSignIn(settings: OidcSettings): Promise<void> {
  const { server } = await discover(settings)
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const nonce = oauth.generateRandomNonce()
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, nonce, route: location.hash }))
  const url = new URL(server.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: settings.client_id,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: settings.scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  }).toString()
  location.assign(url.href)
}

/** True when the issuer has just sent the browser back here with a code (or an error). */
export const isOidcCallback = () => sessionStorage.getItem(PENDING) !== null && /[?&](code|error)=/.test(location.search)

/** Exchanges the code for an ID token; the address loses the code and returns to the page the person left. */
export async function finishOidcSignIn(settings: OidcSettings): Promise<OidcToken> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING)!) as { verifier: string; state: string; nonce: string; route: string }
  sessionStorage.removeItem(PENDING)
  const answered = new URL(location.href)
  history.replaceState(null, '', `${location.pathname}${pending.route || '#/'}`)
  // replaceState fires no event: the router learns of the page to return to here.
  dispatchEvent(new HashChangeEvent('hashchange'))
  const { server, options, client } = await discover(settings)
  const params = oauth.validateAuthResponse(server, client, answered, pending.state)
  const response = await oauth.authorizationCodeGrantRequest(server, client, oauth.None(), params, redirectUri(), pending.verifier, options)
  const result = await oauth.processAuthorizationCodeResponse(server, client, response, { expectedNonce: pending.nonce, requireIdToken: true })
  const claims = oauth.getValidatedIdTokenClaims(result)!
  return { token: result.id_token!, subject: claims.sub, expiresAt: new Date(claims.exp * 1000) }
}

/** Why the sign-in did not complete, in the issuer's words when it gave some. */
export function oidcFailure(error: unknown): string {
  if (error instanceof oauth.AuthorizationResponseError) return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`
  return error instanceof Error ? error.message : String(error)
}
