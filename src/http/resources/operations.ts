// The platform operator's view on the wire (routes/operations.ts): the cluster's nodes, shards and
// replicas; each node's traffic of the last minutes; the projects' use of their rate limits.
import { Nullable, Type } from '../schema.js'

const NodeId = Type.String({ description: 'The node id cluster mode gives a process (hostname-pid-random); `standalone` for a service not in a cluster' })

export const ClusterOverviewSchema = Type.Object(
  {
    clustered: Type.Boolean({ description: 'false: one service process (PALMVEIN_NODE_URL unset); nodes and environments are then empty' }),
    node_id: Nullable(Type.String({ description: 'The node that answered' })),
    nodes: Type.Array(
      Type.Object({
        node_id: Type.String(),
        url: Type.String(),
        started_at: Type.String({ format: 'date-time' }),
        heartbeat_at: Type.String({ format: 'date-time' }),
        full: Type.Boolean({ description: 'Past its memory budget: takes no more shards' }),
        shards_held: Type.Integer(),
        reachable: Type.Boolean({ description: 'Answered /livez just now (a node within its lease may have died a moment ago)' }),
      }),
      { description: 'Live nodes (heartbeat within the lease), oldest first' },
    ),
    environments: Type.Array(
      Type.Object({
        environment_id: Type.String({ format: 'uuid' }),
        name: Type.String(),
        shards: Type.Integer(),
        replicas_wanted: Type.Integer({ description: 'PALMVEIN_SHARD_REPLICAS, fewer while fewer nodes with memory to spare are up' }),
        shard_replicas: Type.Array(
          Type.Object({
            shard: Type.Integer(),
            ready: Type.Array(Type.String(), { description: 'Nodes serving the shard' }),
            loading: Type.Array(Type.String(), { description: 'Nodes loading it' }),
            unreachable: Type.Array(Type.String(), { description: 'Nodes holding it that did not answer' }),
          }),
        ),
      }),
    ),
    warnings: Type.Array(Type.String(), { description: 'One line per shard with fewer ready replicas than wanted' }),
  },
  { $id: 'ClusterOverview' },
)

const TrafficPoint = Type.Object({
  at: Type.String({ format: 'date-time', description: "The slot's start" }),
  requests: Type.Integer({ description: 'Requests answered in the slot (every route)' }),
  server_errors: Type.Integer({ description: 'Of which answered with a 5xx status' }),
  identifies: Type.Integer({ description: 'Identify requests answered (POST …/identify and Device-Com identify)' }),
  identify_p50_ms: Nullable(Type.Number({ description: 'Median identify latency in the slot, to about 4 %; null without identifies' })),
  identify_p95_ms: Nullable(Type.Number()),
})

export const TrafficSchema = Type.Object(
  {
    window_seconds: Type.Integer({ description: 'The span asked for' }),
    slot_seconds: Type.Integer({ description: 'The length of each point' }),
    nodes: Type.Array(
      Type.Object({
        node_id: NodeId,
        answered: Type.Boolean({ description: 'false: the peer did not answer (its figures are then empty); `error` says why' }),
        error: Nullable(Type.String()),
        requests_per_second: Type.Number({ description: 'Over the span' }),
        identify_p50_ms: Nullable(Type.Number({ description: 'Over the span' })),
        identify_p95_ms: Nullable(Type.Number({ description: 'Over the span' })),
        points: Type.Array(TrafficPoint, { description: 'Oldest first, one per slot of the span' }),
      }),
      { description: 'The answering node first, then its peers' },
    ),
  },
  { $id: 'Traffic' },
)

export const RateLimitUseSchema = Type.Object(
  {
    projects: Type.Array(
      Type.Object({
        project_id: Type.String({ format: 'uuid' }),
        project_name: Type.String(),
        org_id: Type.String({ format: 'uuid' }),
        org_name: Type.String(),
        plan: Type.String(),
        requests_per_minute: Type.Integer({ description: "The plan's rate" }),
        minute_count: Type.Integer({ description: 'Requests counted in the current minute' }),
        daily_request_limit: Type.Integer(),
        day_count: Type.Integer({ description: 'Requests counted in the current UTC day' }),
      }),
      {
        description:
          'Projects with requests counted today, the busiest this minute first. Counts include the requests service processes have leased ahead (at most 1 % of a large limit per process), so they can run slightly ahead of the requests served',
      },
    ),
  },
  { $id: 'RateLimitUse' },
)
