// A project's webhook endpoints: the list, creating one (its signing secret shown once, here, until
// the page is left) with the event types it receives, and deleting one after a confirmation.
import { useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api'
import { ConfirmButton, Field, useAction, fieldError, ProblemView, ShownOnce, useLoad, useSubmit, when } from '../components'

/** The event types a subscription may name (the API's enum; webhook.test goes to one endpoint on request). */
export const EVENT_TYPES = ['enrollment.completed', 'demo.scan.success'] as const
type EventType = (typeof EVENT_TYPES)[number]

function NewEndpoint({ projectId, created }: { projectId: string; created: (webhook: Schemas['WebhookSubscriptionCreated']) => void }) {
  const [url, setUrl] = useState('')
  const [types, setTypes] = useState<EventType[]>(['enrollment.completed'])
  const toggle = (type: EventType, on: boolean) => setTypes(on ? [...types, type] : types.filter((each) => each !== type))
  const { refused, submit } = useSubmit(
    () => call(api.POST('/v1/projects/{project_id}/webhooks', { params: { path: { project_id: projectId } }, body: { url, event_types: types } })),
    (webhook) => {
      setUrl('')
      created(webhook)
    },
  )
  return (
    <form onSubmit={submit} aria-labelledby="new-endpoint">
      <h2 id="new-endpoint">New endpoint</h2>
      <Field label="Endpoint URL" id="endpoint-url" error={fieldError(refused, '/url')}>
        <input
          id="endpoint-url"
          type="url"
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
          required
          placeholder="https://example.com/palmvein"
        />
      </Field>
      <fieldset>
        <legend>Event types</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} class="check">
            <input type="checkbox" checked={types.includes(type)} onChange={(event) => toggle(type, event.currentTarget.checked)} /> <code>{type}</code>
          </label>
        ))}
        {fieldError(refused, '/event_types') && (
          <span class="field-error" role="alert">
            {fieldError(refused, '/event_types')}
          </span>
        )}
      </fieldset>
      <ProblemView problem={refused} />
      <button type="submit" disabled={types.length === 0}>
        Create endpoint
      </button>
    </form>
  )
}

export function WebhooksPage({ orgId, projectId }: { orgId: string; projectId: string }) {
  const path = { params: { path: { project_id: projectId } } }
  const endpoints = useLoad(() => call(api.GET('/v1/projects/{project_id}/webhooks', path)), [projectId])
  const [created, setCreated] = useState<Schemas['WebhookSubscriptionCreated'] | null>(null)
  const remove = useAction(endpoints.reload)
  return (
    <>
      <h1>Webhooks</h1>
      {created && (
        <ShownOnce
          id="created-endpoint"
          heading={`Endpoint ${created.url} created`}
          secret={created.secret}
          label="Copy signing secret"
          testId="webhook-secret"
        />
      )}
      <ProblemView problem={endpoints.problem} />
      {endpoints.data &&
        (endpoints.data.length === 0 ? (
          <p>No endpoint yet: events of this project go nowhere.</p>
        ) : (
          <table>
            <caption>Endpoints that receive this project's events</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Event types</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.map((endpoint) => (
                <tr key={endpoint.id}>
                  <td>
                    <a href={`#/orgs/${orgId}/projects/${projectId}/webhooks/${endpoint.id}`}>{endpoint.url}</a>
                  </td>
                  <td>{endpoint.event_types.join(', ')}</td>
                  <td>{endpoint.enabled ? 'enabled' : `disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}`}</td>
                  <td>{when(endpoint.created_at)}</td>
                  <td>
                    <ConfirmButton
                      label="Delete…"
                      confirmLabel={`Delete ${endpoint.url} and its deliveries`}
                      onConfirm={() =>
                        void remove.run(
                          call(
                            api.DELETE('/v1/projects/{project_id}/webhooks/{webhook_id}', {
                              params: { path: { project_id: projectId, webhook_id: endpoint.id } },
                            }),
                          ),
                        )
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      <ProblemView problem={remove.problem} />
      <NewEndpoint
        projectId={projectId}
        created={(webhook) => {
          setCreated(webhook)
          endpoints.reload()
        }}
      />
    </>
  )
}
