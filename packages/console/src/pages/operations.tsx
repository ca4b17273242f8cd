// A platform operator's view, from what the public API exposes: the service's readiness report
// (GET /healthz), every gallery (environment) of the organizations the signed-in person
// administers, with its size, shards, threshold and calibration state, and for a platform operator
// (an admin of a platform organization) the operator API's live panels.
import { api, call, type Schemas } from '../api'
import { ProblemView, useLoad } from '../components'
import { ClusterPanel, RateLimitPanel, TrafficPanel } from './operator-panels'

interface GalleryRow {
  org: Schemas['Organization']
  environment: Schemas['Environment']
  accuracy: Schemas['EnvironmentAccuracy'] | null
}

/** The readiness report is text, 200 when ready and 503 when a critical service is down: both are worth showing. */
async function readiness(): Promise<{ data: { ready: boolean; text: string } }> {
  try {
    const { data, error, response } = await api.GET('/healthz', { parseAs: 'text' })
    return { data: { ready: response.ok, text: String(data ?? error ?? '') } }
  } catch (error) {
    return { data: { ready: false, text: `The service could not be reached: ${String(error)}` } }
  }
}

async function galleries(orgs: Schemas['Organization'][]): Promise<{ data: GalleryRow[] } | { problem: Schemas['Problem'] }> {
  const rows: GalleryRow[] = []
  for (const org of orgs) {
    const path = { org_id: org.id }
    const environments = await call(api.GET('/v1/organization/{org_id}/environments', { params: { path } }))
    if ('problem' in environments) return environments
    const accuracies = await Promise.all(
      environments.data.map((environment) =>
        call(api.GET('/v1/organization/{org_id}/environments/{environment_id}/accuracy', { params: { path: { ...path, environment_id: environment.id } } })),
      ),
    )
    environments.data.forEach((environment, index) => {
      const accuracy = accuracies[index]
      rows.push({ org, environment, accuracy: 'data' in accuracy ? accuracy.data : null })
    })
  }
  return { data: rows }
}

export function OperationsPage() {
  const health = useLoad(readiness, [])
  const orgs = useLoad(() => call(api.GET('/v1/organizations')), [])
  const list = useLoad(async () => (orgs.data ? galleries(orgs.data) : { data: null }), [orgs.data])
  // The operator API answers platform operators only: nobody else is made to meet its 403.
  const operator = orgs.data?.some((org) => org.kind === 'platform') ?? false
  const total = list.data?.reduce((sum, row) => sum + (row.accuracy?.gallery_size ?? 0), 0)
  return (
    <>
      <p>
        <a href="#/">← Organizations</a>
      </p>
      <h1>Operations</h1>
      <section aria-labelledby="health-heading">
        <h2 id="health-heading">Health</h2>
        {health.data && (
          <>
            <p role="status" data-testid="health-state">
              {health.data.ready ? 'Ready' : 'Unavailable'}
            </p>
            <pre class="health" data-testid="health-report">
              {health.data.text}
            </pre>
          </>
        )}
        <button
          type="button"
          onClick={() => {
            health.reload()
            orgs.reload()
          }}
        >
          Refresh
        </button>
      </section>
      <section aria-labelledby="galleries-heading">
        <h2 id="galleries-heading">Galleries</h2>
        <ProblemView problem={orgs.problem ?? list.problem} />
        {list.data && (
          <table>
            <caption>
              The environments of the organizations you administer: {list.data.length} galleries, {total} references in all
            </caption>
            <thead>
              <tr>
                <th scope="col">Organization</th>
                <th scope="col">Environment</th>
                <th scope="col">Kind</th>
                <th scope="col">References</th>
                <th scope="col">Shards</th>
                <th scope="col">Match threshold</th>
                <th scope="col">Calibration</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map(({ org, environment, accuracy }) => (
                <tr key={environment.id} data-testid="gallery-row">
                  <td>
                    <a href={`#/orgs/${org.id}`}>{org.name}</a>
                  </td>
                  <td>
                    <a href={`#/orgs/${org.id}/environments/${environment.id}/accuracy`}>{environment.name}</a>
                  </td>
                  <td>{environment.kind}</td>
                  <td data-testid="gallery-size">{accuracy?.gallery_size ?? '—'}</td>
                  <td>{environment.shards}</td>
                  <td>{environment.match_threshold}</td>
                  <td>{accuracy?.status ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {operator ? (
        <>
          <ClusterPanel />
          <TrafficPanel />
          <RateLimitPanel />
        </>
      ) : (
        orgs.data && (
          <p data-testid="not-operator">
            Cluster nodes and replicas, traffic and rate-limit use are shown to platform operators (admins of a platform organization).
          </p>
        )
      )}
    </>
  )
}
