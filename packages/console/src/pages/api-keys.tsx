// The keys that reach a project: create one (its plaintext shown once, here, until the page is
// left), see prefix, scope and last use, revoke with a confirmation.
import { useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api'
import { ConfirmButton, NameForm, useAction, ProblemView, ShownOnce, useLoad, when } from '../components'

type Created = Schemas['ApiKeyCreated']

export function ApiKeysPage({ orgId, projectId }: { orgId: string; projectId: string }) {
  const path = { params: { path: { project_id: projectId } } }
  const keys = useLoad(() => call(api.GET('/v1/projects/{project_id}/api-keys', path)), [projectId])
  const [created, setCreated] = useState<Created | null>(null)
  const revoke = useAction(keys.reload)
  return (
    <>
      <h1>API keys</h1>
      {created && <ShownOnce id="created-key" heading={`Key “${created.name}” created`} secret={created.key} label="Copy key" testId="plaintext-key" />}
      <ProblemView problem={keys.problem} />
      {keys.data && (
        <table>
          <caption>Keys that can reach this project</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scope</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.prefix}</code>
                </td>
                <td>{key.project_ids === null ? 'organization-wide' : `${key.project_ids.length} project(s)`}</td>
                <td>{when(key.last_used_at)}</td>
                <td>{key.revoked_at ? `revoked ${when(key.revoked_at)}` : 'active'}</td>
                <td>
                  {!key.revoked_at && (
                    <ConfirmButton
                      label="Revoke…"
                      confirmLabel={`Revoke ${key.name} for good`}
                      onConfirm={() =>
                        void revoke.run(
                          call(api.DELETE('/v1/organization/{org_id}/api-keys/{key_id}', { params: { path: { org_id: orgId, key_id: key.id } } })),
                        )
                      }
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ProblemView problem={revoke.problem} />
      <NameForm
        id="key-name"
        heading="New key for this project"
        label="Key name"
        field="/name"
        button="Create key"
        send={(name) => call(api.POST('/v1/projects/{project_id}/api-keys', { ...path, body: { name } }))}
        done={(key) => {
          setCreated(key as Created)
          keys.reload()
        }}
      />
    </>
  )
}
