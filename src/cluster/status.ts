// What the cluster looks like from the database: live nodes, and for every environment each
// shard's live replicas. /healthz (through node.ts) and `palmvein cluster status` print it. A node
// whose heartbeat is still within the lease but that does not answer (killed a moment ago) is
// `reachable: false`, and its holds are not counted as ready replicas: a shard it alone held is
// reported as soon as it is known, not a lease later.
import type { Queryable } from '../store/engine/database.js'
import { unreachableNodes } from './peer-reachability.js'
import { environmentShardCounts, liveHolds, liveNodes, type NodeRow, type ShardHoldRow } from '../store/cluster.js'

export interface ShardStatus {
  shard: number
  ready: string[]
  loading: string[]
  unreachable: string[]
}

export interface EnvironmentShards {
  environment_id: string
  name: string
  shards: number
  /** Replicas each shard should have now: PALMVEIN_SHARD_REPLICAS, fewer when fewer nodes (with memory to spare) are up. */
  replicas_wanted: number
  shard_replicas: ShardStatus[]
}

export interface ClusterStatus {
  nodes: Array<{ node_id: string; url: string; started_at: string; heartbeat_at: string; full: boolean; shards_held: number; reachable: boolean }>
  environments: EnvironmentShards[]
  /** One line per shard with fewer ready replicas than wanted. */
  warnings: string[]
}

export function describeCluster(
  nodes: readonly NodeRow[],
  holds: readonly ShardHoldRow[],
  environments: ReadonlyArray<{ id: string; name: string; shards: number }>,
  replicas: number,
  unreachable: ReadonlySet<string> = new Set(),
): ClusterStatus {
  const byShard = new Map<string, ShardHoldRow[]>()
  for (const hold of holds) {
    const key = `${hold.environment_id}/${hold.shard}`
    byShard.set(key, [...(byShard.get(key) ?? []), hold])
  }
  // Nodes past their memory budget take no shards; at least one replica is always wanted.
  const wanted = Math.max(1, Math.min(replicas, nodes.filter((node) => !node.full && !unreachable.has(node.node_id)).length))
  const warnings: string[] = []
  const described = environments.map((environment) => {
    const shardReplicas = Array.from({ length: environment.shards }, (_, shard) => {
      const held = byShard.get(`${environment.id}/${shard}`) ?? []
      const answering = held.filter((hold) => !unreachable.has(hold.node_id))
      const ready = answering.filter((hold) => hold.state === 'ready').map((hold) => hold.node_id)
      const gone = held.filter((hold) => unreachable.has(hold.node_id)).map((hold) => hold.node_id)
      if (ready.length < wanted) {
        warnings.push(
          `shard ${shard} of environment ${environment.id} has ${ready.length} ready replica(s) of ${wanted} wanted${gone.length ? ` (not answering: ${gone.join(', ')})` : ''}`,
        )
      }
      return { shard, ready, loading: answering.filter((hold) => hold.state === 'loading').map((hold) => hold.node_id), unreachable: gone }
    })
    return { environment_id: environment.id, name: environment.name, shards: environment.shards, replicas_wanted: wanted, shard_replicas: shardReplicas }
  })
  return {
    nodes: nodes.map((node) => ({
      node_id: node.node_id,
      url: node.url,
      started_at: node.started_at.toISOString(),
      heartbeat_at: node.heartbeat_at.toISOString(),
      full: node.full,
      shards_held: holds.filter((hold) => hold.node_id === node.node_id).length,
      reachable: !unreachable.has(node.node_id),
    })),
    environments: described,
    warnings,
  }
}

/** `probeMs`: how long each live node has to answer /livez (peer-reachability.ts). */
export async function clusterStatus(sql: Queryable, leaseMs: number, replicas: number, probeMs: number): Promise<ClusterStatus> {
  const [nodes, holds, environments] = await Promise.all([liveNodes(sql, leaseMs), liveHolds(sql, leaseMs), environmentShardCounts(sql)])
  return describeCluster(nodes, holds, environments, replicas, await unreachableNodes(nodes, probeMs))
}
