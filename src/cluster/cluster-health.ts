// The cluster's line in /healthz: as the database and the peers say now, not as of the last
// heartbeat; it fails (non-critical) while a shard has fewer ready replicas than wanted.
import type { HealthCheck } from '../health.js'
import type { ClusterView } from './cluster-view.js'
import { unreachableNodes } from './peer-reachability.js'
import { describeCluster } from './status.js'

// /healthz must answer within 800 ms (health.ts): the peers' /livez get part of it.
const HEALTH_PROBE_MS = 400

export function clusterHealth(node: { selfId: string; nodeUrl: string; replicas: number; view: ClusterView; serving: ReadonlySet<string> }): HealthCheck {
  const { selfId, view } = node
  return {
    name: 'cluster',
    critical: false,
    async check() {
      await view.refresh(performance.now())
      const { nodes, holds, environments } = view.rows()
      const unreachable = await unreachableNodes(nodes, HEALTH_PROBE_MS, selfId)
      const now = describeCluster(nodes, holds, environments, node.replicas, unreachable)
      const held = [...node.serving].sort()
      const replicas = now.environments.map((environment) => {
        const shards = environment.shard_replicas.map((shard) => `shard ${shard.shard} on [${shard.ready.join(', ')}]`)
        return `; environment ${environment.environment_id}: ${shards.join(', ')}`
      })
      const summary =
        `node ${selfId} at ${node.nodeUrl}; ${now.nodes.length} live node(s); serves ${held.length} shard(s)${held.length ? `: ${held.join(', ')}` : ''}` +
        replicas.join('')
      if (now.warnings.length) throw new Error(`${now.warnings.join('; ')}; ${summary}`)
      return summary
    },
  }
}
