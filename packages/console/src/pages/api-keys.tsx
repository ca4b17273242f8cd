// The keys that reach a project: create one (its plaintext shown once, here, until the page is
// left), see prefix, scope and last use, revoke with a confirmation.
import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api'
import { ConfirmButton, CopyButton, NameForm, ProblemView, useLoad, when } from '../components'

type Created = Schemas['ApiKeyCreated']

export function ApiKeysPage({ orgId, projectId }: { orgId: string; projectId: string }) {
  const path = { params: { path: { project_id: projectId } } }
  const keys = useLoad(() => call(api.GET('/v1/projects/{project_id}/api-keys', path)), [projectId])
  const [created, setCreated] = useState<Created | null>(null)
  const [revokeFailed, setRevokeFailed] = useState<Problem | null>(null)
  const revoke = async (keyId: string) => {
    const result = await call(api.DELETE('/v1/organization/{org_id}/api-keys/{key_id}', { params: { path: { org_id: orgId, key_id: keyId } } }))
    setRevokeFailed('problem' in result ? result.problem : null)
    keys.reload()
  }
  return (
    <>
      <h1>API keys</h1>
      {created && (
        <section class="once" aria-labelledby="created-key" role="status">
          <h2 id="created-key">Key “{created.name}” created</h2>
          <p>Copy it now: it is shown this once and never again.</p>
          <p><code class="secret" data-testid="plaintext-key">{created.key}</code> <CopyButton text={created.key} label="Copy key" /></p>
        </section>
      )}
      <ProblemView problem={keys.problem} />
      {keys.data && (
        <table>
          <caption>Keys that can reach this project</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scope</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td><td><code>{key.prefix}</code></td>
                <td>{key.project_ids === null ? 'organization-wide' : `${key.project_ids.length} project(s)`}</td>
                <td>{when(key.last_used_at)}</td>
                <td>{key.revoked_at ? `revoked ${when(key.revoked_at)}` : 'active'}</td>
                <td>
                  {!key.revoked_at && <ConfirmButton label="Revoke…" confirmLabel={`Revoke ${key.name} for good`} onConfirm={() => void revoke(key.id)} />}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ProblemView problem={revokeFailed} />
      <NameForm id="key-name" heading="New key for this project" label="Key name" field="/name" button="Create key"
        send={(name) => call(api.POST('/v1/projects/{project_id}/api-keys', { ...path, body: { name } }))}
        done={(key) => { setCreated(key as Created); keys.reload() }} />
    </>
  )
}
