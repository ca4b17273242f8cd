// Which nodes should hold a shard: rendezvous (highest random weight) hashing. Every node ranks the
// live nodes by a hash of (node, environment, shard) and the first `replicas` hold it, so all
// nodes agree from the same membership without talking, and a node joining or leaving moves only
// the shards it wins or held (about 1/N of them), never reshuffles the rest.
import { createHash } from 'node:crypto'
import { compareCodeUnits } from '../runtime/code-unit-order.js'

function weight(nodeId: string, environmentId: string, shard: number): bigint {
  return createHash('md5').update(`${nodeId}\0${environmentId}\0${shard}`).digest().readBigUInt64BE(0)
}

/** The nodes that should hold the shard, best first: at most `replicas` of `nodeIds`. */
export function replicasFor(nodeIds: readonly string[], environmentId: string, shard: number, replicas: number): string[] {
  return nodeIds
    .map((nodeId) => ({ nodeId, weight: weight(nodeId, environmentId, shard) }))
    .sort((a, b) => (a.weight === b.weight ? compareCodeUnits(a.nodeId, b.nodeId) : a.weight > b.weight ? -1 : 1))
    .slice(0, replicas)
    .map((entry) => entry.nodeId)
}
