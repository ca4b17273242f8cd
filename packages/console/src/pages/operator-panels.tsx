// The platform operator's live panels on the operations page, from the operator API
// (/v1/operations/...): the cluster's nodes and shard replicas, each node's requests and identify
// latency over the last minutes as charts, and the projects' rate-limit use. They are asked again
// every few seconds while the page is visible, and not at all while it is hidden.
import { useCallback, useMemo } from 'preact/hooks'
import { api, call, type Schemas } from '../api'
import { ProblemView, useLoad, when } from '../components'
import { LiveChart, type Line } from '../live-chart'
import { REFRESH_MS } from '../live-refresh'
import { useVisibleInterval } from '../use-visible-interval'

const COLOURS = ['#1f6feb', '#b35900', '#1a7f37', '#8250df', '#cf222e', '#0a7ea4']
const short = (nodeId: string) => (nodeId.length > 24 ? `…${nodeId.slice(-12)}` : nodeId)

/** Loads on mount and again every REFRESH_MS while the page is visible. */
function useLive<T>(load: () => Promise<{ data: T } | { problem: Schemas['Problem'] }>) {
  const live = useLoad(load, [])
  const tick = useCallback(() => live.reload(), [live.reload])
  useVisibleInterval(tick, REFRESH_MS)
  return live
}

export function ClusterPanel() {
  const cluster = useLive(() => call(api.GET('/v1/operations/cluster')))
  const data = cluster.data
  return (
    <section aria-labelledby="cluster-heading">
      <h2 id="cluster-heading">Cluster</h2>
      <ProblemView problem={cluster.problem} />
      {data && !data.clustered && <p data-testid="cluster-mode">One service process: not clustered (PALMVEIN_NODE_URL is not set).</p>}
      {data?.clustered && (
        <>
          <table>
            <caption data-testid="cluster-mode">
              {data.nodes.length} live nodes; this page is answered by {data.node_id}
            </caption>
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">URL</th>
                <th scope="col">Shards held</th>
                <th scope="col">State</th>
                <th scope="col">Started</th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {data.nodes.map((node) => (
                <tr key={node.node_id} data-testid="cluster-node">
                  <td>{node.node_id}</td>
                  <td>{node.url}</td>
                  <td>{node.shards_held}</td>
                  <td>{!node.reachable ? 'not answering' : node.full ? 'memory full' : 'serving'}</td>
                  <td>{when(node.started_at)}</td>
                  <td>{when(node.heartbeat_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {data.warnings.map((warning) => (
            <p key={warning} class="problem" role="alert">
              {warning}
            </p>
          ))}
          {data.environments.map((environment) => (
            <table key={environment.environment_id} data-testid="shard-table">
              <caption>
                Environment {environment.name}: {environment.shards} shards, {environment.replicas_wanted} replicas wanted
              </caption>
              <thead>
                <tr>
                  <th scope="col">Shard</th>
                  <th scope="col">Ready on</th>
                  <th scope="col">Loading on</th>
                  <th scope="col">Not answering</th>
                </tr>
              </thead>
              <tbody>
                {environment.shard_replicas.map((shard) => (
                  <tr key={shard.shard} data-testid="shard-row">
                    <td>{shard.shard}</td>
                    <td data-testid="shard-ready">{shard.ready.map(short).join(', ') || '—'}</td>
                    <td>{shard.loading.map(short).join(', ') || '—'}</td>
                    <td>{shard.unreachable.map(short).join(', ') || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </>
      )}
    </section>
  )
}

/** One line per node (and per percentile for latency), the slots' starts as the time axis. */
function chartsOf(traffic: Schemas['Traffic']) {
  const times = traffic.nodes[0]?.points.map((point) => Date.parse(point.at) / 1000) ?? []
  const rate: Line[] = []
  const latency: Line[] = []
  traffic.nodes.forEach((node, index) => {
    const stroke = COLOURS[index % COLOURS.length]
    const name = short(node.node_id)
    const values = (pick: (point: Schemas['Traffic']['nodes'][number]['points'][number]) => number | null) =>
      times.map((_, slot) => (node.points[slot] ? pick(node.points[slot]) : null))
    rate.push({ label: `${name} requests/s`, stroke, values: values((point) => Math.round((point.requests / traffic.slot_seconds) * 100) / 100) })
    latency.push({ label: `${name} p50`, stroke, values: values((point) => point.identify_p50_ms) })
    latency.push({ label: `${name} p95`, stroke, dash: [6, 4], values: values((point) => point.identify_p95_ms) })
  })
  return { times, rate, latency }
}

export function TrafficPanel() {
  const traffic = useLive(() => call(api.GET('/v1/operations/traffic', { params: { query: { minutes: 5 } } })))
  const charts = useMemo(() => (traffic.data ? chartsOf(traffic.data) : null), [traffic.data])
  return (
    <section aria-labelledby="traffic-heading">
      <h2 id="traffic-heading">Traffic, last 5 minutes</h2>
      <ProblemView problem={traffic.problem} />
      {traffic.data && charts && (
        <>
          <ul class="plain">
            {traffic.data.nodes.map((node) => (
              <li key={node.node_id} data-testid="traffic-node">
                {node.node_id}:{' '}
                {node.answered
                  ? `${node.requests_per_second} requests/s, identify p50 ${node.identify_p50_ms ?? '—'} ms, p95 ${node.identify_p95_ms ?? '—'} ms`
                  : `did not answer (${node.error})`}
              </li>
            ))}
          </ul>
          <LiveChart title="Requests per second" unit="requests/s" times={charts.times} lines={charts.rate} testId="rate-chart" />
          <LiveChart title="Identify latency" unit="ms" times={charts.times} lines={charts.latency} testId="latency-chart" />
        </>
      )}
    </section>
  )
}

export function RateLimitPanel() {
  const use = useLive(() => call(api.GET('/v1/operations/rate-limits', { params: { query: { limit: 50 } } })))
  return (
    <section aria-labelledby="rate-heading">
      <h2 id="rate-heading">Rate-limit use</h2>
      <ProblemView problem={use.problem} />
      {use.data && (
        <table>
          <caption>Projects with requests today, the busiest this minute first</caption>
          <thead>
            <tr>
              <th scope="col">Organization</th>
              <th scope="col">Project</th>
              <th scope="col">Plan</th>
              <th scope="col">This minute</th>
              <th scope="col">Today (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {use.data.projects.map((project) => (
              <tr key={project.project_id} data-testid="rate-row">
                <td>{project.org_name}</td>
                <td>{project.project_name}</td>
                <td>{project.plan}</td>
                <td>
                  <meter min={0} max={project.requests_per_minute} value={project.minute_count} aria-label={`${project.project_name} this minute`} />{' '}
                  {project.minute_count} / {project.requests_per_minute}
                </td>
                <td data-testid="rate-day">
                  {project.day_count} / {project.daily_request_limit}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
