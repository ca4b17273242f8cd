// The console's sign-in (not part of the API; not in the OpenAPI document):
//   GET    /console/session        how to sign in here (link or OpenID Connect) and the cookie's open
//                                  session, if any: 200 either way, so a page without a session
//                                  loads without a failed request
//   POST   /console/session        { code } from a one-time link → a session cookie and a first token
//   POST   /console/session/token  the session cookie → a fresh identity token (10 minutes)
//   DELETE /console/session        sign out
// The session's secret lives in an HttpOnly, SameSite=Strict cookie scoped to /console/session:
// page script cannot read it, and the browser sends it on no other path and on no request another
// site starts. The identity token is held in the page's memory only and sent as a bearer header,
// which a browser never adds by itself: the public API stays immune to CSRF. On top of SameSite,
// requests another site's page starts are refused by their Fetch Metadata (Sec-Fetch-Site).
import { consoleToken, CONSOLE_SESSION_SECONDS, endSession, openSessionOf, redeemSignInLink, type ConsoleToken } from '../../auth/console-sign-in.js'
import type { Config } from '../../config.js'
import { ServiceError } from '../../errors.js'
import { consoleHeaders } from '../console/headers.js'
import { consoleOidc } from '../console/oidc.js'
import { defineRoute, Reply, type Route } from '../route.js'
import { Body, Text, Type } from '../schema.js'

const tags = ['Console']
const COOKIE = 'palmvein_console_session'
const COOKIE_PATH = '/console/session'

function cookieOf(headers: Record<string, string>): string {
  for (const pair of (headers.cookie ?? '').split(';')) {
    const [name, ...value] = pair.trim().split('=')
    if (name === COOKIE) return value.join('=')
  }
  return ''
}

/** Secure whenever the browser reached us over HTTPS (TLS here, or a trusted proxy that says so). */
function cookie(value: string, maxAge: number, config: Config, headers: Record<string, string>): string {
  const secure = config.tls || (config.trustProxy && headers['x-forwarded-proto'] === 'https') ? '; Secure' : ''
  return `${COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`
}

function refuseCrossSite(headers: Record<string, string>): void {
  const site = headers['sec-fetch-site']
  if (site && site !== 'same-origin') throw new ServiceError('forbidden', "the console session is used by the console's own pages only")
}

const tokenBody = (token: ConsoleToken) => ({
  token: token.token,
  subject: token.subject,
  expires_at: token.expiresAt.toISOString(),
  session_expires_at: token.sessionExpiresAt.toISOString(),
})

const noStore = (config: Config) => ({ ...consoleHeaders(config), 'Cache-Control': 'no-store' })

const TokenSchema = Type.Object({
  token: Type.String(),
  subject: Type.String(),
  expires_at: Type.String(),
  session_expires_at: Type.String(),
})

const StateSchema = Type.Object({
  sign_in: Type.Union([Type.Literal('link'), Type.Literal('oidc')]),
  oidc: Type.Union([Type.Object({ issuer: Type.String(), client_id: Type.String(), scope: Type.String() }), Type.Null()]),
  session: Type.Union([Type.Object({ subject: Type.String(), session_expires_at: Type.String() }), Type.Null()]),
})

export const consoleSessionRoutes: Route[] = [
  defineRoute({
    operationId: 'getConsoleSession',
    method: 'get',
    path: '/console/session',
    auth: ['none'],
    access: 'none',
    tags,
    summary: 'How to sign in to this console, and the open session its cookie names (null when none)',
    responses: [{ status: 200, description: 'the sign-in state', schema: StateSchema }],
    async handler({ app, headers }) {
      refuseCrossSite(headers)
      const oidc = consoleOidc(app.config)
      const session = oidc ? null : await openSessionOf(app.sql, cookieOf(headers))
      return Reply.json(
        200,
        {
          sign_in: oidc ? 'oidc' : 'link',
          oidc,
          session: session && { subject: session.subject, session_expires_at: session.expires_at.toISOString() },
        },
        noStore(app.config),
      )
    },
  }),
  defineRoute({
    operationId: 'signInToConsole',
    method: 'post',
    path: '/console/session',
    auth: ['none'],
    access: 'none',
    tags,
    summary: 'Redeem a one-time sign-in link: sets the session cookie, answers a first identity token',
    body: Body({ code: Text({ minLength: 1, maxLength: 200 }) }),
    responses: [{ status: 200, description: 'signed in', schema: TokenSchema }],
    async handler({ app, body, headers }) {
      refuseCrossSite(headers)
      const session = await redeemSignInLink(app.sql, app.config, body.code)
      const token = await consoleToken(app.sql, app.config, session.credential)
      return Reply.json(200, tokenBody(token), {
        ...noStore(app.config),
        'Set-Cookie': cookie(session.credential, CONSOLE_SESSION_SECONDS, app.config, headers),
      })
    },
  }),
  defineRoute({
    operationId: 'renewConsoleToken',
    method: 'post',
    path: '/console/session/token',
    auth: ['none'],
    access: 'none',
    tags,
    summary: 'A fresh identity token for the session its cookie names',
    responses: [{ status: 200, description: 'a token', schema: TokenSchema }],
    async handler({ app, headers }) {
      refuseCrossSite(headers)
      return Reply.json(200, tokenBody(await consoleToken(app.sql, app.config, cookieOf(headers))), noStore(app.config))
    },
  }),
  defineRoute({
    operationId: 'signOutOfConsole',
    method: 'delete',
    path: '/console/session',
    auth: ['none'],
    access: 'none',
    tags,
    summary: 'Sign out: the session gives no further token and its cookie is cleared',
    responses: [{ status: 204, description: 'signed out' }],
    async handler({ app, headers }) {
      refuseCrossSite(headers)
      await endSession(app.sql, cookieOf(headers))
      return new Reply(204, null, null, { ...noStore(app.config), 'Set-Cookie': cookie('', 0, app.config, headers) })
    },
  }),
]
