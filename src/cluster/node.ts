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
import { claimShard, deregisterNode, environmentShardCounts, heartbeat, liveHolds, liveNodes, markShardReady, registerNode, releaseShard, type NodeRow, type ShardHoldRow } from '../store/cluster.js'
import { unreachableNodes } from './peer-reachability.js'
import { replicasFor } from './rendezvous.js'
import type { ShardDirectory } from './scatter.js'
import { describeCluster, type ClusterStatus } from './status.js'

export interface ClusterNode extends ShardDirectory {
  /** Registers, then keeps heartbeating and balancing in the background. */
  start(galleries: Galleries): Promise<void>
  /** Takes the new environment's shards here before its creation answers (see environmentCreated below). */
  environmentCreated(environmentId: string, shards: number): Promise<void>
  status(): ClusterStatus & { node_id: string }
  health: HealthCheck
  close(): Promise<void>
}

const key = (environmentId: string, shard: number) => `${environmentId}/${shard}`
// /healthz must answer within 800 ms (health.ts): the peers' /livez get part of it.
const HEALTH_PROBE_MS = 400

export function createClusterNode(options: { cluster: ClusterConfig; sql: Sql; log: Logger }): ClusterNode {
  const { cluster, sql, log } = options
  const selfId = `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const tickMs = Math.max(200, Math.floor(cluster.leaseMs / 3))
  let galleries: Galleries | null = null
  let urls = new Map<string, string>()
  let readyHolders = new Map<string, string[]>()
  let snapshot: ClusterStatus = { nodes: [], environments: [], warnings: [] }
  let view: { nodes: NodeRow[]; holds: ShardHoldRow[]; environments: Array<{ id: string; name: string; shards: number }> } = { nodes: [], holds: [], environments: [] }
  let reading: { startedAt: number; done: Promise<void> } | null = null
  const serving = new Set<string>()
  const busy = new Set<string>()
  let work: Promise<void> = Promise.resolve()
  let timer: NodeJS.Timeout | null = null
  let closed = false

  const full = () => cluster.memoryBytes !== null && process.memoryUsage.rss() > cluster.memoryBytes

  /** Shard moves run one at a time, behind the heartbeat (which must never wait for a load). */
  function queue(shardKey: string, move: () => Promise<void>): void {
    busy.add(shardKey)
    work = work.then(move).catch((error) => log.error({ err: error, shard: shardKey }, 'Cluster: a shard move failed; retried on a later heartbeat')).finally(() => busy.delete(shardKey))
  }

  async function take(environmentId: string, shard: number): Promise<void> {
    if (closed || !galleries) return
    const hold = { environmentId, shard, nodeId: selfId }
    await claimShard(sql, hold, cluster.leaseMs)
    try {
      const rows = await galleries.loadShard(environmentId, shard)
      // Served before it is announced: a peer that reads the hold as ready finds it served.
      serving.add(key(environmentId, shard))
      await markShardReady(sql, hold, rows)
      log.info(`Cluster: serving shard ${shard} of environment ${environmentId}`)
    } catch (error) {
      serving.delete(key(environmentId, shard))
      await releaseShard(sql, hold).catch(() => {})
      throw error
    }
  }

  /** Reads who is alive and who holds what; callers that started after a read began share it. */
  function refresh(since: number): Promise<void> {
    if (reading && reading.startedAt >= since) return reading.done
    const startedAt = performance.now()
    const done = (async () => {
      const [nodes, holds, environments] = await Promise.all([liveNodes(sql, cluster.leaseMs), liveHolds(sql, cluster.leaseMs), environmentShardCounts(sql)])
      view = { nodes, holds, environments }
      urls = new Map(nodes.map((node) => [node.node_id, node.url]))
      const ready = new Map<string, string[]>()
      for (const hold of holds) if (hold.state === 'ready') ready.set(key(hold.environment_id, hold.shard), [...(ready.get(key(hold.environment_id, hold.shard)) ?? []), hold.node_id])
      readyHolders = ready
      snapshot = describeCluster(nodes, holds, environments, cluster.replicas)
    })()
    reading = { startedAt, done }
    return done
  }

  /**
   * Takes every shard of an environment just created (empty: each loads at once), so that it is
   * served the moment its creation answers. Not on a node past its memory budget: there the
   * nodes the ranking names take them at their next heartbeat.
   */
  async function environmentCreated(environmentId: string, shards: number): Promise<void> {
    if (closed || !galleries || full()) return
    await Promise.all(Array.from({ length: shards }, async (_, shard) => {
      const shardKey = key(environmentId, shard)
      if (busy.has(shardKey)) return
      busy.add(shardKey)
      try {
        await take(environmentId, shard)
      } catch (error) {
        log.warn({ err: error, shard: shardKey }, 'Cluster: could not take a new environment\'s shard; its holders take it at their next heartbeat')
      } finally {
        busy.delete(shardKey)
      }
    }))
  }

  async function give(environmentId: string, shard: number): Promise<void> {
    serving.delete(key(environmentId, shard))
    await releaseShard(sql, { environmentId, shard, nodeId: selfId })
    await galleries?.dropShard(environmentId, shard)
    log.info(`Cluster: gave up shard ${shard} of environment ${environmentId}`)
  }

  function balance(nodeIds: string[], fullNodes: Set<string>, holds: ShardHoldRow[], environments: Array<{ id: string; shards: number }>): void {
    const holders = new Map<string, ShardHoldRow[]>()
    for (const hold of holds) holders.set(key(hold.environment_id, hold.shard), [...(holders.get(key(hold.environment_id, hold.shard)) ?? []), hold])
    for (const environment of environments) {
      for (let shard = 0; shard < environment.shards; shard++) {
        const shardKey = key(environment.id, shard)
        if (busy.has(shardKey)) continue
        const held = holders.get(shardKey) ?? []
        // A full node takes no more shards but keeps the ones it has.
        const eligible = nodeIds.filter((nodeId) => !fullNodes.has(nodeId) || held.some((hold) => hold.node_id === nodeId))
        const wanted = replicasFor(eligible, environment.id, shard, cluster.replicas)
        const mine = held.some((hold) => hold.node_id === selfId)
        if (wanted.includes(selfId) && !mine) queue(shardKey, () => take(environment.id, shard))
        else if (!wanted.includes(selfId) && mine) {
          const ready = new Set(held.filter((hold) => hold.state === 'ready').map((hold) => hold.node_id))
          if (wanted.every((nodeId) => ready.has(nodeId))) queue(shardKey, () => give(environment.id, shard))
        }
      }
    }
  }

  async function tick(): Promise<void> {
    const memoryFull = full()
    if (!(await heartbeat(sql, selfId, cluster.leaseMs, { full: memoryFull, memoryBytes: process.memoryUsage.rss() }))) {
      log.error('Cluster: this node\'s registration was removed (another node took its URL?); registering again')
      await registerNode(sql, { nodeId: selfId, url: cluster.nodeUrl })
      // Its holds went with it: serve nothing until they are taken again.
      for (const shardKey of serving) {
        const [environmentId, shard] = shardKey.split('/')
        queue(shardKey, () => give(environmentId, Number(shard)))
      }
      return
    }
    await refresh(performance.now())
    const { nodes, holds, environments } = view
    balance(nodes.map((node) => node.node_id), new Set(nodes.filter((node) => node.full).map((node) => node.node_id)), holds, environments)
  }

  function schedule(): void {
    if (closed) return
    timer = setTimeout(() => {
      tick().catch((error) => log.error({ err: error }, 'Cluster: heartbeat failed')).finally(schedule)
    }, tickMs)
    timer.unref()
  }

  return {
    selfId,
    replicas: (environmentId, shard) => readyHolders.get(key(environmentId, shard)) ?? [],
    urlOf: (nodeId) => urls.get(nodeId),
    servesHere: (environmentId, shard) => serving.has(key(environmentId, shard)),
    refresh,
    environmentCreated,
    async start(ofGalleries) {
      galleries = ofGalleries
      await registerNode(sql, { nodeId: selfId, url: cluster.nodeUrl })
      log.info(`Cluster: node ${selfId} registered at ${cluster.nodeUrl} (lease ${cluster.leaseMs} ms, ${cluster.replicas} replica(s) per shard)`)
      await tick()
      schedule()
    },
    status: () => ({ node_id: selfId, ...snapshot }),
    health: {
      name: 'cluster',
      critical: false,
      async check() {
        // As the database and the peers say now, not as of the last heartbeat.
        await refresh(performance.now())
        const unreachable = await unreachableNodes(view.nodes, HEALTH_PROBE_MS, selfId)
        const now = describeCluster(view.nodes, view.holds, view.environments, cluster.replicas, unreachable)
        const held = [...serving].sort()
        const summary = `node ${selfId} at ${cluster.nodeUrl}; ${now.nodes.length} live node(s); serves ${held.length} shard(s)${held.length ? `: ${held.join(', ')}` : ''}`
          + now.environments.map((environment) => `; environment ${environment.environment_id}: ${environment.shard_replicas.map((shard) => `shard ${shard.shard} on [${shard.ready.join(', ')}]`).join(', ')}`).join('')
        if (now.warnings.length) throw new Error(`${now.warnings.join('; ')}; ${summary}`)
        return summary
      },
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await work.catch(() => {})
      // Leaving at once: other nodes take this node's shards without waiting for the lease.
      await deregisterNode(sql, selfId).catch((error) => log.warn({ err: error }, 'Cluster: could not deregister'))
    },
  }
}
