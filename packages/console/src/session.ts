// The console's sign-in state. The session's secret is an HttpOnly cookie the page cannot read;
// the identity token it yields lives in this module's memory only (never localStorage or
// sessionStorage) and is renewed a minute before it expires. When the session is over (signed
// out elsewhere, expired), the page says so instead of failing silently.
import { useEffect, useState } from 'preact/hooks'

export type SessionState =
  | { kind: 'loading' }
  | { kind: 'signed-in'; subject: string; sessionExpiresAt: string }
  /** `reason`: none (never signed in here), ended (expired or revoked), signed-out, link-refused. */
  | { kind: 'signed-out'; reason: 'none' | 'ended' | 'signed-out' | 'link-refused'; detail?: string }

interface TokenAnswer { token: string; subject: string; expires_at: string; session_expires_at: string }

let token: string | null = null
let renewal: ReturnType<typeof setTimeout> | undefined
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
    return () => { listeners.delete(setCurrent) }
  }, [])
  return current
}

export const currentToken = (): string | null => token

function end(reason: 'ended' | 'signed-out' | 'none' | 'link-refused', detail?: string) {
  token = null
  clearTimeout(renewal)
  set({ kind: 'signed-out', reason, detail })
}

function accept(answer: TokenAnswer) {
  token = answer.token
  clearTimeout(renewal)
  const renewIn = Math.max(5_000, new Date(answer.expires_at).getTime() - Date.now() - 60_000)
  renewal = setTimeout(() => { void renew(true) }, renewIn)
  set({ kind: 'signed-in', subject: answer.subject, sessionExpiresAt: answer.session_expires_at })
}

const post = (path: string, body?: unknown) => fetch(path, {
  method: 'POST', credentials: 'same-origin',
  headers: body === undefined ? {} : { 'content-type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
})

/** A new token from the session cookie; `wasSignedIn` decides whether a refusal reads "session ended". */
export async function renew(wasSignedIn: boolean): Promise<boolean> {
  const answer = await post('/console/session/token').catch(() => null)
  if (answer?.ok) {
    accept(await answer.json())
    return true
  }
  end(wasSignedIn ? 'ended' : 'none')
  return false
}

/** On load: redeem a sign-in link in the address (then drop it from the address and history), or resume the session. */
export async function startSession(): Promise<void> {
  const code = /(?:^#|&)sign-in=([^&]+)/.exec(location.hash)?.[1]
  if (code) {
    history.replaceState(null, '', `${location.pathname}#/`)
    const answer = await post('/console/session', { code: decodeURIComponent(code) })
    if (answer.ok) return accept(await answer.json())
    const problem = await answer.json().catch(() => ({}))
    return end('link-refused', problem.detail)
  }
  await renew(false)
}

/** An API answer of 401 to our own token: the token or the session is over; try once for a new token. */
export async function tokenRefused(): Promise<void> {
  if (state.kind === 'signed-in') await renew(true)
}

export async function signOut(): Promise<void> {
  await fetch('/console/session', { method: 'DELETE', credentials: 'same-origin' }).catch(() => {})
  end('signed-out')
}
