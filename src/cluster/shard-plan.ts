// Which shard moves a node makes at a heartbeat: it takes each shard rendezvous hashing names it
// for and it does not hold, and gives up one it holds but is no longer named for once every node
// named instead serves it (so a rebalance never leaves a shard without replicas).
import type { ShardHoldRow } from '../store/cluster.js'
import { replicasFor } from './rendezvous.js'

export interface ShardMove {
  move: 'take' | 'give'
  environmentId: string
  shard: number
}

export const shardKey = (environmentId: string, shard: number): string => `${environmentId}/${shard}`

export function planShardMoves(plan: {
  selfId: string
  nodeIds: readonly string[]
  /** Nodes past their memory budget: they take no more shards but keep the ones they have. */
  fullNodes: ReadonlySet<string>
  holds: readonly ShardHoldRow[]
  environments: ReadonlyArray<{ id: string; shards: number }>
  replicas: number
  /** Shards with a move under way: left alone until it ends. */
  busy: ReadonlySet<string>
}): ShardMove[] {
  const { selfId, fullNodes, busy } = plan
  const holders = new Map<string, ShardHoldRow[]>()
  for (const hold of plan.holds) {
    const key = shardKey(hold.environment_id, hold.shard)
    holders.set(key, [...(holders.get(key) ?? []), hold])
  }
  const moves: ShardMove[] = []
  for (const environment of plan.environments) {
    for (let shard = 0; shard < environment.shards; shard++) {
      if (busy.has(shardKey(environment.id, shard))) continue
      const held = holders.get(shardKey(environment.id, shard)) ?? []
      const eligible = plan.nodeIds.filter((nodeId) => !fullNodes.has(nodeId) || held.some((hold) => hold.node_id === nodeId))
      const wanted = replicasFor(eligible, environment.id, shard, plan.replicas)
      const mine = held.some((hold) => hold.node_id === selfId)
      if (wanted.includes(selfId) && !mine) moves.push({ move: 'take', environmentId: environment.id, shard })
      else if (!wanted.includes(selfId) && mine) {
        const ready = new Set(held.filter((hold) => hold.state === 'ready').map((hold) => hold.node_id))
        if (wanted.every((nodeId) => ready.has(nodeId))) moves.push({ move: 'give', environmentId: environment.id, shard })
      }
    }
  }
  return moves
}
