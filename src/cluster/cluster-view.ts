// This node's view of the cluster as the database says it: who is alive (and where), who holds
// which shard, and which replicas are ready. Read at each heartbeat and again when a search finds no
// replica; callers that started after a read began share it.
import type { Sql } from '../store/engine/database.js'
import { environmentShardCounts, liveHolds, liveNodes, type NodeRow, type ShardHoldRow } from '../store/cluster.js'
import { shardKey } from './shard-plan.js'
import { describeCluster, type ClusterStatus } from './status.js'

export interface ClusterRows {
  nodes: NodeRow[]
  holds: ShardHoldRow[]
  environments: Array<{ id: string; name: string; shards: number }>
}

export interface ClusterView {
  rows(): ClusterRows
  /** The nodes whose hold of the shard is ready. */
  replicas(environmentId: string, shard: number): string[]
  urlOf(nodeId: string): string | undefined
  status(): ClusterStatus
  refresh(since: number): Promise<void>
}

export function createClusterView(options: { sql: Sql; leaseMs: number; replicas: number }): ClusterView {
  const { sql, leaseMs } = options
  let rows: ClusterRows = { nodes: [], holds: [], environments: [] }
  let urls = new Map<string, string>()
  let readyHolders = new Map<string, string[]>()
  let snapshot: ClusterStatus = { nodes: [], environments: [], warnings: [] }
  let reading: { startedAt: number; done: Promise<void> } | null = null

  async function read(): Promise<void> {
    const [nodes, holds, environments] = await Promise.all([liveNodes(sql, leaseMs), liveHolds(sql, leaseMs), environmentShardCounts(sql)])
    rows = { nodes, holds, environments }
    urls = new Map(nodes.map((node) => [node.node_id, node.url]))
    const ready = new Map<string, string[]>()
    for (const hold of holds) {
      const key = shardKey(hold.environment_id, hold.shard)
      if (hold.state === 'ready') ready.set(key, [...(ready.get(key) ?? []), hold.node_id])
    }
    readyHolders = ready
    snapshot = describeCluster(nodes, holds, environments, options.replicas)
  }

  return {
    rows: () => rows,
    replicas: (environmentId, shard) => readyHolders.get(shardKey(environmentId, shard)) ?? [],
    urlOf: (nodeId) => urls.get(nodeId),
    status: () => snapshot,
    refresh(since) {
      if (reading && reading.startedAt >= since) return reading.done
      reading = { startedAt: performance.now(), done: read() }
      return reading.done
    },
  }
}
