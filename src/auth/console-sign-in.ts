// The console's embedded sign-in: `palmvein console --sub <email>` issues a one-time link; the
// console redeems it for a session (its secret in an HttpOnly cookie) and the session for
// short-lived identity tokens from the development issuer, which the console holds in memory and
// sends to the public API like any other client. The development issuer mints for nobody else:
// only whoever can run the CLI on the data directory (or the database) can issue a link.
import type { Config } from '../config.js'
import { ServiceError } from '../errors.js'
import { newId } from '../ids.js'
import type { Sql } from '../store/engine/database.js'
import { consumeSignInLink, endConsoleSession, insertConsoleSession, insertSignInLink, openConsoleSession } from '../store/console-sessions.js'
import { loadLocalIssuer } from './identity-tokens.js'
import { BEARER_SECRET_SHAPE, hashSecret, newSecret, secretMatches } from './secrets.js'

/** A link is meant to be clicked right after it is printed. */
export const SIGN_IN_LINK_SECONDS = 10 * 60
/** A working day; signing out or the end of it ends the session. */
export const CONSOLE_SESSION_SECONDS = 8 * 60 * 60
/** Identity tokens given to the console: short, so one taken from a page's memory soon stops working. */
export const CONSOLE_TOKEN_SECONDS = 10 * 60

type IssuerConfig = Pick<Config, 'dataDir' | 'jwtIssuer' | 'jwtAudience' | 'jwksUrl' | 'jwtPublicKey'>

/** Links and sessions mint development-issuer tokens: they work only where the API accepts those. */
function requireDevelopmentIssuer(config: IssuerConfig): void {
  if (config.jwksUrl || config.jwtPublicKey) {
    throw new ServiceError(
      'forbidden',
      'sign-in links work with the development issuer only; this service accepts identity tokens from a configured issuer (PALMVEIN_JWKS_URL or PALMVEIN_JWT_PUBLIC_KEY)',
    )
  }
}

export interface SignInLink {
  /** `<baseUrl>/console/#sign-in=<code>`: the code is in the fragment, which no request, log or Referer carries. */
  url: string
  expiresAt: Date
}

/**
 * Issues a one-time sign-in link for `subject` (the `sub` the console's tokens carry; the
 * organizations it administers decide what the console shows). `baseUrl` is where the browser
 * reaches the service (http://127.0.0.1:8080).
 */
export async function issueConsoleSignInLink(
  sql: Sql,
  config: IssuerConfig,
  subject: string,
  baseUrl: string,
  ttlSeconds: number = SIGN_IN_LINK_SECONDS,
): Promise<SignInLink> {
  requireDevelopmentIssuer(config)
  if (!subject.trim() || subject.length > 256) throw new ServiceError('invalid_request', 'the subject must be 1 to 256 characters')
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > 24 * 3600)
    throw new ServiceError('invalid_request', 'a sign-in link lives 1 second to 24 hours')
  const id = newId()
  const secret = newSecret()
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000)
  await insertSignInLink(sql, { id, secret_hash: hashSecret(secret), subject, expires_at: expiresAt })
  return { url: `${baseUrl.replace(/\/+$/, '')}/console/#sign-in=${id}.${secret}`, expiresAt }
}

export interface ConsoleSession {
  /** `{session id}.{secret}`: the cookie's value. */
  credential: string
  subject: string
  expiresAt: Date
}

const LINK_REFUSED = 'the sign-in link is unknown, already used or expired: run `palmvein console --sub <email>` for a new one'

/** Redeems a link once (on any number of processes), opening a session. */
export async function redeemSignInLink(sql: Sql, config: IssuerConfig, code: string): Promise<ConsoleSession> {
  requireDevelopmentIssuer(config)
  const parts = BEARER_SECRET_SHAPE.exec(code)
  if (!parts) throw new ServiceError('unauthenticated', LINK_REFUSED)
  // A wrong secret still spends the link: whoever holds a guessed id gets no second try either.
  const link = await consumeSignInLink(sql, parts[1])
  if (!link || !secretMatches(parts[2], link.secret_hash)) throw new ServiceError('unauthenticated', LINK_REFUSED)
  const id = newId()
  const secret = newSecret()
  const expiresAt = new Date(Date.now() + CONSOLE_SESSION_SECONDS * 1000)
  await insertConsoleSession(sql, { id, secret_hash: hashSecret(secret), subject: link.subject, link_id: link.id, expires_at: expiresAt })
  return { credential: `${id}.${secret}`, subject: link.subject, expiresAt }
}

/** The open session a cookie's credential names, or null (none, wrong secret, expired, signed out). */
export async function openSessionOf(sql: Sql, credential: string) {
  const parts = BEARER_SECRET_SHAPE.exec(credential)
  const session = parts ? await openConsoleSession(sql, parts[1]) : null
  return session && secretMatches(parts![2], session.secret_hash) ? session : null
}

async function sessionOf(sql: Sql, credential: string) {
  const session = await openSessionOf(sql, credential)
  if (!session) throw new ServiceError('unauthenticated', 'the console session has ended: sign in again')
  return session
}

export interface ConsoleToken {
  token: string
  subject: string
  /** When this token stops working (the console asks for the next one before). */
  expiresAt: Date
  sessionExpiresAt: Date
}

/** A fresh identity token for an open session, never outliving it. */
export async function consoleToken(sql: Sql, config: IssuerConfig, credential: string): Promise<ConsoleToken> {
  requireDevelopmentIssuer(config)
  const session = await sessionOf(sql, credential)
  const seconds = Math.min(CONSOLE_TOKEN_SECONDS, Math.floor((session.expires_at.getTime() - Date.now()) / 1000))
  if (seconds < 1) throw new ServiceError('unauthenticated', 'the console session has ended: sign in again')
  const issuer = await loadLocalIssuer(config)
  return {
    token: await issuer.sign(session.subject, seconds),
    subject: session.subject,
    expiresAt: new Date(Date.now() + seconds * 1000),
    sessionExpiresAt: session.expires_at,
  }
}

/** Signing out: the session gives no further token. Unknown or ended sessions are left as they are. */
export async function endSession(sql: Sql, credential: string): Promise<void> {
  const session = await openSessionOf(sql, credential)
  if (session) await endConsoleSession(sql, session.id)
}
