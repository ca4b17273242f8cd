// One webhook endpoint: its delivery log (a time window paged by the service, newest first), each
// delivery's attempts, resending one, sending again every failed delivery since a time, and a
// test event. The delivery log is filtered by creation time, status and event type on the service.
import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api'
import {
  DAY_MS,
  Field,
  fieldError,
  Pager,
  ProblemView,
  SelectField,
  TimeWindowFields,
  toInstant,
  toLocalInput,
  useLoad,
  useSubmit,
  useTimeWindow,
  when,
} from '../components'

type Delivery = Schemas['WebhookDelivery']
type DeliveryStatus = Delivery['status']
const PER_PAGE = 20
const STATUSES: DeliveryStatus[] = ['pending', 'success', 'failed']

function Attempts({ projectId, webhookId, deliveryId }: { projectId: string; webhookId: string; deliveryId: string }) {
  const attempts = useLoad(
    () =>
      call(
        api.GET('/v1/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/attempts', {
          params: { path: { project_id: projectId, webhook_id: webhookId, delivery_id: deliveryId } },
        }),
      ),
    [deliveryId],
  )
  return (
    <>
      <ProblemView problem={attempts.problem} />
      {attempts.data && (
        <table>
          <caption>Attempts of delivery {deliveryId}</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">At</th>
              <th scope="col">Answer</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {attempts.data.map((attempt) => (
              <tr key={attempt.id}>
                <td>{attempt.attempt_number}</td>
                <td>{when(attempt.attempted_at)}</td>
                <td>{attempt.response_status ?? 'no answer'}</td>
                <td>{attempt.duration_ms} ms</td>
                <td>{attempt.error_message ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}

function DeliveryRow({
  delivery,
  projectId,
  webhookId,
  resent,
}: {
  delivery: Delivery
  projectId: string
  webhookId: string
  resent: (problem: Problem | null) => void
}) {
  const [open, setOpen] = useState(false)
  const resend = async () => {
    const result = await call(
      api.POST('/v1/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend', {
        params: { path: { project_id: projectId, webhook_id: webhookId, delivery_id: delivery.id } },
      }),
    )
    resent('problem' in result ? result.problem : null)
  }
  return (
    <>
      <tr>
        <td>{when(delivery.created_at)}</td>
        <td>
          <code>{delivery.payload.data.event_type}</code>
        </td>
        <td data-testid="delivery-status">
          {delivery.status}
          {delivery.attempt_pending ? ' (retry scheduled)' : ''}
        </td>
        <td>{delivery.attempt_count}</td>
        <td>{delivery.response_status ?? '—'}</td>
        <td>
          <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide attempts' : 'Attempts'}
          </button>{' '}
          <button type="button" onClick={() => void resend()}>
            Resend
          </button>
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={6}>
            <Attempts projectId={projectId} webhookId={webhookId} deliveryId={delivery.id} />
          </td>
        </tr>
      )}
    </>
  )
}

function Recover({ projectId, webhookId, done }: { projectId: string; webhookId: string; done: () => void }) {
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - DAY_MS)))
  const [resent, setResent] = useState<number | null>(null)
  const { refused, submit } = useSubmit(
    () =>
      call(
        api.POST('/v1/projects/{project_id}/webhooks/{webhook_id}/recover', {
          params: { path: { project_id: projectId, webhook_id: webhookId } },
          body: { since: toInstant(since) },
        }),
      ),
    (answer) => {
      setResent(answer.resent)
      done()
    },
  )
  return (
    <form onSubmit={submit} aria-labelledby="recover">
      <h2 id="recover">Recover failed deliveries</h2>
      <p>Sends again, as new deliveries of the same events, every failed delivery created since a time (each failure once).</p>
      <Field label="Failed since" id="recover-since" error={fieldError(refused, '/since')}>
        <input id="recover-since" type="datetime-local" value={since} onInput={(event) => setSince(event.currentTarget.value)} required />
      </Field>
      <ProblemView problem={refused} />
      <button type="submit">Send failed deliveries again</button>
      {resent !== null && (
        <p role="status">
          {resent} failed {resent === 1 ? 'delivery' : 'deliveries'} sent again.
        </p>
      )}
    </form>
  )
}

function EndpointFacts({ endpoint }: { endpoint: Schemas['WebhookSubscription'] }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd>
        <code>{endpoint.url}</code>
      </dd>
      <dt>Event types</dt>
      <dd>{endpoint.event_types.join(', ')}</dd>
      <dt>Status</dt>
      <dd>{endpoint.enabled ? 'enabled' : `disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}`}</dd>
    </dl>
  )
}

function DeliveriesTable({
  deliveries,
  total,
  filtered,
  page,
  projectId,
  webhookId,
  resent,
}: {
  deliveries: Delivery[]
  total: number
  filtered: boolean
  page: number
  projectId: string
  webhookId: string
  resent: (problem: Problem | null) => void
}) {
  return (
    <table>
      <caption>
        {total} {total === 1 ? 'delivery' : 'deliveries'} in the window{filtered ? ' matching the filters' : ''}, newest first, page {page}
      </caption>
      <thead>
        <tr>
          <th scope="col">Created</th>
          <th scope="col">Event type</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last answer</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((delivery) => (
          <DeliveryRow key={delivery.id} delivery={delivery} projectId={projectId} webhookId={webhookId} resent={resent} />
        ))}
      </tbody>
    </table>
  )
}

export function WebhookPage({ orgId, projectId, webhookId }: { orgId: string; projectId: string; webhookId: string }) {
  const path = { params: { path: { project_id: projectId, webhook_id: webhookId } } }
  const endpoint = useLoad(() => call(api.GET('/v1/projects/{project_id}/webhooks/{webhook_id}', path)), [webhookId])
  const range = useTimeWindow()
  const [status, setStatus] = useState('')
  const [eventType, setEventType] = useState('')
  const [page, setPage] = useState(1)
  const [loads, setLoads] = useState(0)
  const filters = { ...(status ? { status: status as DeliveryStatus } : {}), ...(eventType ? { event_type: eventType } : {}) }
  const deliveries = useLoad(
    () =>
      call(
        api.GET('/v1/projects/{project_id}/webhooks/{webhook_id}/deliveries', {
          params: { ...path.params, query: { ...range.query(), ...filters, page, per_page: PER_PAGE } },
        }),
      ),
    [webhookId, page, loads],
  )
  const refresh = () => setLoads(loads + 1)
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const [tested, setTested] = useState<string | null>(null)
  const sendTest = async () => {
    const result = await call(api.POST('/v1/projects/{project_id}/webhooks/{webhook_id}/test', path))
    setActionProblem('problem' in result ? result.problem : null)
    setTested('data' in result ? `Test event queued: ${result.data.message}` : null)
    refresh()
  }
  const total = deliveries.data?.total_count ?? 0
  return (
    <>
      <p>
        <a href={`#/orgs/${orgId}/projects/${projectId}/webhooks`}>← Webhooks</a>
      </p>
      <h1>Webhook endpoint</h1>
      <ProblemView problem={endpoint.problem} />
      {endpoint.data && <EndpointFacts endpoint={endpoint.data} />}
      <p>
        <button type="button" onClick={() => void sendTest()}>
          Send a test event
        </button>
      </p>
      {tested && <p role="status">{tested}</p>}
      <ProblemView problem={actionProblem} />

      <section aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <form
          class="filters"
          onSubmit={(event) => {
            event.preventDefault()
            setPage(1)
            refresh()
          }}
        >
          <TimeWindowFields id="deliveries" noun="Created" window={range} />
          <SelectField label="Status" id="deliveries-status" value={status} options={STATUSES} any="any" onChange={setStatus} />
          <SelectField
            label="Event type"
            id="deliveries-event-type"
            value={eventType}
            options={[...(endpoint.data?.event_types ?? []), 'webhook.test']}
            any="any"
            onChange={setEventType}
          />
          <button type="submit">Show deliveries</button>
        </form>
        <ProblemView problem={deliveries.problem} />
        {deliveries.data && (
          <DeliveriesTable
            deliveries={deliveries.data.items}
            total={total}
            filtered={Object.keys(filters).length > 0}
            page={page}
            projectId={projectId}
            webhookId={webhookId}
            resent={(problem) => {
              setActionProblem(problem)
              refresh()
            }}
          />
        )}
        <Pager label="Delivery pages" page={page} setPage={setPage} last={page * PER_PAGE >= total} />
      </section>
      <Recover projectId={projectId} webhookId={webhookId} done={refresh} />
    </>
  )
}
