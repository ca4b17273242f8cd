// This process as a cluster node: it registers in PostgreSQL and heartbeats every third of the
// lease (extending its shard holds with it), reads who is alive and who holds what, and takes or
// gives up shards so that each is held by the nodes rendezvous hashing names (rendezvous.ts).
// A shard is taken by claiming it ('loading'), reading its rows, and marking it 'ready'; it is
// given up only once the nodes that should hold it instead are ready, so a rebalance never leaves
// a shard without replicas. A node that dies stops heartbeating: after the lease its holds no
// longer count, the ranking moves on, and other nodes load its shards.
// Between heartbeats the view can be stale (a shard moved, a replica became ready): a search that
// finds no replica for a shard re-reads the holds first (`refresh`). A new environment's shards are
// taken by the node that creates it before its creation answers (`environmentCreated`): they are
// empty, so that is at once, and the ranking moves them on at the next heartbeats.
import os from 'node:os'
import type { Logger } from 'pino'
import type { ClusterConfig } from '../config.js'
import type { Galleries } from '../domain/galleries/galleries.js'
import type { HealthCheck } from '../health.js'
import type { Sql } from '../store/engine/database.js'
import { deregisterNode, heartbeat, registerNode } from '../store/cluster.js'
import { clusterHealth } from './cluster-health.js'
import { createClusterView } from './cluster-view.js'
import type { ShardDirectory } from './scatter.js'
import { createShardHolder } from './shard-holder.js'
import { planShardMoves, shardKey } from './shard-plan.js'
import type { ClusterStatus } from './status.js'

export interface ClusterNode extends ShardDirectory {
  /** Registers, then keeps heartbeating and balancing in the background. */
  start(galleries: Galleries): Promise<void>
  /** Takes the new environment's shards here before its creation answers (see environmentCreated below). */
  environmentCreated(environmentId: string, shards: number): Promise<void>
  status(): ClusterStatus & { node_id: string }
  health: HealthCheck
  close(): Promise<void>
}

export function createClusterNode(options: { cluster: ClusterConfig; sql: Sql; log: Logger }): ClusterNode {
  const { cluster, sql, log } = options
  const selfId = `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const tickMs = Math.max(200, Math.floor(cluster.leaseMs / 3))
  let galleries: Galleries | null = null
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const view = createClusterView({ sql, leaseMs: cluster.leaseMs, replicas: cluster.replicas })
  const holder = createShardHolder({ sql, log, selfId, leaseMs: cluster.leaseMs, galleries: () => galleries, closed: () => closed })

  const full = () => cluster.memoryBytes !== null && process.memoryUsage.rss() > cluster.memoryBytes

  async function tick(): Promise<void> {
    if (!(await heartbeat(sql, selfId, cluster.leaseMs, { full: full(), memoryBytes: process.memoryUsage.rss() }))) {
      log.error("Cluster: this node's registration was removed (another node took its URL?); registering again")
      await registerNode(sql, { nodeId: selfId, url: cluster.nodeUrl })
      // Its holds went with it: serve nothing until they are taken again.
      holder.queue(
        [...holder.serving].map((key) => {
          const [environmentId, shard] = key.split('/')
          return { move: 'give' as const, environmentId, shard: Number(shard) }
        }),
      )
      return
    }
    await view.refresh(performance.now())
    const { nodes, holds, environments } = view.rows()
    const fullNodes = new Set(nodes.filter((node) => node.full).map((node) => node.node_id))
    const nodeIds = nodes.map((node) => node.node_id)
    holder.queue(planShardMoves({ selfId, nodeIds, fullNodes, holds, environments, replicas: cluster.replicas, busy: holder.busy }))
  }

  function schedule(): void {
    if (closed) return
    timer = setTimeout(() => {
      tick()
        .catch((error) => log.error({ err: error }, 'Cluster: heartbeat failed'))
        .finally(schedule)
    }, tickMs)
    timer.unref()
  }

  return {
    selfId,
    replicas: view.replicas,
    urlOf: view.urlOf,
    servesHere: (environmentId, shard) => holder.serving.has(shardKey(environmentId, shard)),
    refresh: view.refresh,
    /**
     * Takes every shard of an environment just created (empty: each loads at once), so that it is
     * served the moment its creation answers. Not on a node past its memory budget: there the
     * nodes the ranking names take them at their next heartbeat.
     */
    async environmentCreated(environmentId, shards) {
      if (closed || !galleries || full()) return
      await holder.takeNew(environmentId, shards)
    },
    async start(ofGalleries) {
      galleries = ofGalleries
      await registerNode(sql, { nodeId: selfId, url: cluster.nodeUrl })
      log.info(`Cluster: node ${selfId} registered at ${cluster.nodeUrl} (lease ${cluster.leaseMs} ms, ${cluster.replicas} replica(s) per shard)`)
      await tick()
      schedule()
    },
    status: () => ({ node_id: selfId, ...view.status() }),
    health: clusterHealth({ selfId, nodeUrl: cluster.nodeUrl, replicas: cluster.replicas, view, serving: holder.serving }),
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await holder.settled()
      // Leaving at once: other nodes take this node's shards without waiting for the lease.
      await deregisterNode(sql, selfId).catch((error) => log.warn({ err: error }, 'Cluster: could not deregister'))
    },
  }
}
