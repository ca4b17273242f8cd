// The platform operator's routes (an extension; the console's operations page reads them): the
// cluster's nodes, shards and replicas, the traffic of the last minutes on every node, and the
// projects' use of their rate limits. Only an admin of a platform organization reaches them.
import type { AppContext } from '../../app-context.js'
import { clusterStatus } from '../../cluster/status.js'
import type { TrafficSnapshot } from '../../metrics/traffic-window.js'
import { rateLimitUse } from '../../store/rate-limits.js'
import { ClusterOverviewSchema, RateLimitUseSchema, TrafficSchema } from '../resources/operations.js'
import { defineRoute, type Route } from '../route.js'
import { Type } from '../schema.js'

const tags = ['Operations (extension)']
const forbidden = { status: 403, description: 'forbidden: the caller is no platform operator (an admin of a platform organization)' }
// A peer that has not answered /livez by then is shown unreachable (cluster/peer-reachability.ts).
const PROBE_MS = 400
const STANDALONE = 'standalone'

type NodeTraffic = TrafficSnapshot & { node_id: string; answered: boolean; error: string | null }

/** This node's traffic first, then each live peer's, asked at once; a peer that fails is listed with its error. */
async function gatherTraffic(app: AppContext, seconds: number): Promise<NodeTraffic[]> {
  const own = { node_id: app.clusterNode?.selfId ?? STANDALONE, answered: true, error: null, ...app.traffic.snapshot(seconds) }
  const { clusterNode, peers } = app
  if (!clusterNode || !peers) return [own]
  await clusterNode.refresh(performance.now())
  const others = clusterNode.status().nodes.filter((node) => node.node_id !== clusterNode.selfId)
  const answers = await Promise.all(
    others.map(async (node): Promise<NodeTraffic> => {
      try {
        return { ...((await peers.traffic(node.url, seconds)) as TrafficSnapshot), node_id: node.node_id, answered: true, error: null }
      } catch (error) {
        const empty = { slot_seconds: own.slot_seconds, points: [], requests_per_second: 0, identify_p50_ms: null, identify_p95_ms: null }
        return { ...empty, node_id: node.node_id, answered: false, error: error instanceof Error ? error.message : String(error) }
      }
    }),
  )
  return [own, ...answers]
}

export const operationRoutes: Route[] = [
  defineRoute({
    operationId: 'getClusterOverview',
    method: 'get',
    path: '/v1/operations/cluster',
    auth: ['token'],
    access: 'operator',
    tags,
    extension: true,
    summary: "The cluster as the database and the peers say now: live nodes, each environment's shards and the nodes serving them, shards short of replicas",
    responses: [{ status: 200, description: 'the cluster (clustered: false for one service process)', schema: ClusterOverviewSchema }, forbidden],
    async handler({ app }) {
      const cluster = app.config.cluster
      if (!cluster) return { clustered: false, node_id: null, nodes: [], environments: [], warnings: [] }
      const status = await clusterStatus(app.sql, cluster.leaseMs, cluster.replicas, PROBE_MS)
      return { clustered: true, node_id: app.clusterNode?.selfId ?? null, ...status }
    },
  }),
  defineRoute({
    operationId: 'getTraffic',
    method: 'get',
    path: '/v1/operations/traffic',
    auth: ['token'],
    access: 'operator',
    tags,
    extension: true,
    summary:
      'Requests answered and identify latency (p50, p95) over the last minutes, in 10-second slots, kept in memory by each process: the answering node gathers its peers’ in cluster mode',
    query: Type.Object(
      { minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 15, description: 'the span, 1 to 15 minutes; default 5' })) },
      { additionalProperties: false },
    ),
    responses: [{ status: 200, description: "each node's traffic", schema: TrafficSchema }, forbidden],
    async handler({ app, query }) {
      const seconds = (query.minutes ?? 5) * 60
      return { window_seconds: seconds, slot_seconds: app.traffic.snapshot(1).slot_seconds, nodes: await gatherTraffic(app, seconds) }
    },
  }),
  defineRoute({
    operationId: 'getRateLimitUse',
    method: 'get',
    path: '/v1/operations/rate-limits',
    auth: ['token'],
    access: 'operator',
    tags,
    extension: true,
    summary:
      "Each project's requests in the current minute and UTC day against its plan's limits, the busiest first (counted in the database, so every process's share)",
    query: Type.Object(
      { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'at most this many projects; default 50' })) },
      { additionalProperties: false },
    ),
    responses: [{ status: 200, description: 'the projects with requests today', schema: RateLimitUseSchema }, forbidden],
    async handler({ app, query }) {
      return { projects: await rateLimitUse(app.sql, query.limit ?? 50) }
    },
  }),
]
