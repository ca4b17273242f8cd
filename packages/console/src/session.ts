// The console's sign-in state. Two ways in, as the service says (GET /console/session):
// - a one-time link (the embedded default): the session's secret is an HttpOnly cookie the page
//   cannot read; the identity token it yields is renewed a minute before it expires;
// - OpenID Connect (a configured issuer, oidc.ts): the issuer's ID token, until it expires.
// Either token lives in this module's memory only (never localStorage or sessionStorage). When
// the session is over (signed out elsewhere, expired), the page says so instead of failing silently.
import { useEffect, useState } from 'preact/hooks'
import type { OidcSettings } from './oidc'

export type SignOutReason = 'none' | 'ended' | 'signed-out' | 'link-refused' | 'oidc-refused'

export type SessionState =
  | { kind: 'loading' }
  | { kind: 'signed-in'; subject: string; expiresAt: string }
  /** `reason`: none (never signed in here), ended (expired or revoked), signed-out, link-refused, oidc-refused. */
  | { kind: 'signed-out'; reason: SignOutReason; detail?: string; oidc: OidcSettings | null }

interface TokenAnswer {
  token: string
  subject: string
  expires_at: string
  session_expires_at: string
}
interface Probe {
  sign_in: 'link' | 'oidc'
  oidc: OidcSettings | null
  session: { subject: string; session_expires_at: string } | null
}

let token: string | null = null
let timer: ReturnType<typeof setTimeout> | undefined
let oidc: OidcSettings | null = null
let state: SessionState = { kind: 'loading' }
const listeners = new Set<(next: SessionState) => void>()

function set(next: SessionState) {
  state = next
  for (const listener of listeners) listener(next)
}

export function useSession(): SessionState {
  const [current, setCurrent] = useState(state)
  useEffect(() => {
    listeners.add(setCurrent)
    setCurrent(state)
    return () => {
      listeners.delete(setCurrent)
    }
  }, [])
  return current
}

export const currentToken = (): string | null => token

function end(reason: SignOutReason, detail?: string) {
  token = null
  clearTimeout(timer)
  set({ kind: 'signed-out', reason, detail, oidc })
}

/** Holds a token; `next` runs a minute before it expires (renewal) or when it does (the end). */
function hold(value: string, subject: string, expiresAt: Date, sessionEndsAt: string, next: () => void, lead: number) {
  token = value
  clearTimeout(timer)
  timer = setTimeout(next, Math.max(5_000, expiresAt.getTime() - Date.now() - lead))
  set({ kind: 'signed-in', subject, expiresAt: sessionEndsAt })
}

const accept = (answer: TokenAnswer) =>
  hold(
    answer.token,
    answer.subject,
    new Date(answer.expires_at),
    answer.session_expires_at,
    () => {
      void renew(true)
    },
    60_000,
  )

const send = (method: string, path: string, body?: unknown) =>
  fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

/** How to sign in here and the cookie's session: answered 200 either way (no failed request in the browser's console). */
async function probe(): Promise<Probe | null> {
  const answer = await send('GET', '/console/session').catch(() => null)
  if (!answer?.ok) return null
  const found = (await answer.json()) as Probe
  oidc = found.oidc
  return found
}

/** A new token from the session cookie; `wasSignedIn` decides whether "no session" reads "session ended". */
async function renew(wasSignedIn: boolean, probed?: Probe | null): Promise<boolean> {
  const found = probed === undefined ? await probe() : probed
  const answer = found?.session ? await send('POST', '/console/session/token').catch(() => null) : null
  if (answer?.ok) {
    accept(await answer.json())
    return true
  }
  end(wasSignedIn ? 'ended' : 'none', found ? undefined : 'The service could not be reached.')
  return false
}

async function startOidc(settings: OidcSettings): Promise<void> {
  const flow = await import('./oidc')
  if (!flow.isOidcCallback()) return end('none')
  try {
    const signedIn = await flow.finishOidcSignIn(settings)
    hold(signedIn.token, signedIn.subject, signedIn.expiresAt, signedIn.expiresAt.toISOString(), () => end('ended'), 0)
  } catch (error) {
    end('oidc-refused', flow.oidcFailure(error))
  }
}

/** On load: redeem a sign-in link in the address (then drop it from the address and history), finish an OpenID Connect sign-in, or resume the session. */
export async function startSession(): Promise<void> {
  const code = /(?:^#|&)sign-in=([^&]+)/.exec(location.hash)?.[1]
  if (code) {
    history.replaceState(null, '', `${location.pathname}#/`)
    const answer = await send('POST', '/console/session', { code: decodeURIComponent(code) })
    if (answer.ok) return accept(await answer.json())
    const problem = await answer.json().catch(() => ({}))
    return end('link-refused', problem.detail)
  }
  const found = await probe()
  if (found?.sign_in === 'oidc' && found.oidc) return startOidc(found.oidc)
  await renew(false, found)
}

/** The "Sign in" button where the service signs in by OpenID Connect: off to the issuer. */
export async function signInWithOidc(): Promise<void> {
  if (!oidc) return
  const flow = await import('./oidc')
  await flow.beginOidcSignIn(oidc).catch((error: unknown) => end('oidc-refused', flow.oidcFailure(error)))
}

/** An API answer of 401 to our own token: the token or the session is over; with a link session, try once for a new token. */
export async function tokenRefused(): Promise<void> {
  if (state.kind !== 'signed-in') return
  if (oidc) return end('ended')
  await renew(true)
}

export async function signOut(): Promise<void> {
  if (!oidc) await send('DELETE', '/console/session').catch(() => {})
  end('signed-out')
}
