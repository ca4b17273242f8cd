// The console's shell: sign-in states, a header with sign-out, and hash routes (the service serves
// one index.html at /console/; the part after # is the page).
import { useEffect, useState } from 'preact/hooks'
import { AccuracyPage } from './pages/accuracy'
import { ApiKeysPage } from './pages/api-keys'
import { DevicePage } from './pages/device'
import { DevicesPage } from './pages/devices'
import { AuditPage } from './pages/audit'
import { MembersPage } from './pages/members'
import { OrganizationPage } from './pages/organization'
import { OperationsPage } from './pages/operations'
import { OrganizationsPage } from './pages/organizations'
import { PlaygroundPage } from './pages/playground'
import { WebhookPage } from './pages/webhook'
import { WebhooksPage } from './pages/webhooks'
import type { OidcSettings } from './oidc'
import { signInWithOidc, signOut, useSession, type SignOutReason } from './session'

function useHashRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean)
  const [route, setRoute] = useState(read)
  useEffect(() => {
    const changed = () => setRoute(read())
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}

const HEADINGS: Record<SignOutReason, string> = {
  none: 'Sign in to the palmvein console',
  ended: 'Your session ended',
  'signed-out': 'You are signed out',
  'link-refused': 'This sign-in link does not work',
  'oidc-refused': 'The sign-in did not complete',
}

function SignedOut({ reason, detail, oidc }: { reason: SignOutReason; detail?: string; oidc: OidcSettings | null }) {
  return (
    <main class="sign-in" id="main">
      <h1>{HEADINGS[reason]}</h1>
      {detail && (
        <p class="problem" role="alert">
          {detail}
        </p>
      )}
      {reason === 'ended' && <p role="status">The session expired or was signed out. Sign in again to continue.</p>}
      {oidc ? (
        <>
          <p>
            This service signs you in with your organization's identity provider, <code>{new URL(oidc.issuer).host}</code>.
          </p>
          <button type="button" onClick={() => void signInWithOidc()}>
            Sign in with OpenID Connect
          </button>
        </>
      ) : (
        <>
          <p>On the machine that runs the service, print a one-time sign-in link and open it in this browser:</p>
          <pre>
            <code>palmvein console --sub you@example.com</code>
          </pre>
        </>
      )}
    </main>
  )
}

const PROJECT_TABS = [
  ['keys', 'API keys'],
  ['members', 'Members'],
  ['webhooks', 'Webhooks'],
  ['devices', 'Devices'],
  ['playground', 'Identify playground'],
] as const

function ProjectPage({ orgId, projectId, tab, itemId }: { orgId: string; projectId: string; tab: string; itemId?: string }) {
  const base = `#/orgs/${orgId}/projects/${projectId}`
  return (
    <>
      <nav aria-label="Project" class="tabs">
        <a href={`#/orgs/${orgId}`}>← Organization</a>
        {PROJECT_TABS.map(([id, label]) => (
          <a key={id} href={`${base}/${id}`} aria-current={tab === id ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {tab === 'members' ? (
        <MembersPage projectId={projectId} />
      ) : tab === 'webhooks' && itemId ? (
        <WebhookPage key={itemId} orgId={orgId} projectId={projectId} webhookId={itemId} />
      ) : tab === 'webhooks' ? (
        <WebhooksPage orgId={orgId} projectId={projectId} />
      ) : tab === 'devices' && itemId ? (
        <DevicePage key={itemId} orgId={orgId} projectId={projectId} deviceId={itemId} />
      ) : tab === 'devices' ? (
        <DevicesPage orgId={orgId} projectId={projectId} />
      ) : tab === 'playground' ? (
        <PlaygroundPage orgId={orgId} projectId={projectId} />
      ) : (
        <ApiKeysPage orgId={orgId} projectId={projectId} />
      )}
    </>
  )
}

function Page({ route }: { route: string[] }) {
  const [first, orgId, second, projectId, tab, itemId] = route
  if (first === 'orgs' && orgId && second === 'projects' && projectId)
    return <ProjectPage key={projectId} orgId={orgId} projectId={projectId} tab={tab ?? 'keys'} itemId={itemId} />
  if (first === 'orgs' && orgId && second === 'environments' && projectId && tab === 'accuracy')
    return <AccuracyPage key={projectId} orgId={orgId} environmentId={projectId} />
  if (first === 'operations') return <OperationsPage />
  if (first === 'orgs' && orgId && second === 'audit') return <AuditPage key={orgId} orgId={orgId} />
  if (first === 'orgs' && orgId) return <OrganizationPage key={orgId} orgId={orgId} />
  return <OrganizationsPage />
}

export function App() {
  const session = useSession()
  const route = useHashRoute()
  if (session.kind === 'loading')
    return (
      <main id="main" aria-busy="true">
        <p>Loading…</p>
      </main>
    )
  if (session.kind === 'signed-out') return <SignedOut reason={session.reason} detail={session.detail} oidc={session.oidc} />
  return (
    <>
      <header class="bar">
        <a class="brand" href="#/">
          palmvein console
        </a>
        <a href="#/operations">Operations</a>
        <span class="who">
          Signed in as <strong>{session.subject}</strong>
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Page route={route} />
      </main>
    </>
  )
}
