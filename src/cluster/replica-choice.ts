// Which node searches which shard: this node for the shards it serves, else a node already asked
// for another shard (fewer requests), else a random replica that did not fail lately.
import type { ShardDirectory } from './shard-directory.js'

// A replica that failed is asked last for this long.
const FAILED_FOR_MS = 5_000

export interface ReplicaChoice {
  /** The shards grouped by the node that will search them, and the shards with no replica left. */
  plan(environmentId: string, shards: readonly number[], tried: ReadonlySet<string>): { groups: Map<string, number[]>; missing: number[] }
  /** The node did not answer: it is asked last for a while. */
  failed(nodeId: string): void
}

export function createReplicaChoice(directory: ShardDirectory): ReplicaChoice {
  const failedAt = new Map<string, number>()

  function pick(environmentId: string, shard: number, tried: ReadonlySet<string>, chosen: ReadonlyMap<string, unknown>): string | null {
    if (!tried.has(directory.selfId) && directory.servesHere(environmentId, shard)) return directory.selfId
    const open = directory.replicas(environmentId, shard).filter((nodeId) => !tried.has(nodeId) && nodeId !== directory.selfId)
    if (open.length === 0) return null
    const now = Date.now()
    const healthy = open.filter((nodeId) => now - (failedAt.get(nodeId) ?? -Infinity) > FAILED_FOR_MS)
    const from = healthy.length ? healthy : open
    return from.find((nodeId) => chosen.has(nodeId)) ?? from[Math.floor(Math.random() * from.length)]
  }

  return {
    plan(environmentId, shards, tried) {
      const groups = new Map<string, number[]>()
      const missing: number[] = []
      for (const shard of shards) {
        const nodeId = pick(environmentId, shard, tried, groups)
        if (nodeId) groups.set(nodeId, [...(groups.get(nodeId) ?? []), shard])
        else missing.push(shard)
      }
      return { groups, missing }
    },
    failed: (nodeId) => {
      failedAt.set(nodeId, Date.now())
    },
  }
}
