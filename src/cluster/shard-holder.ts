// The shards this node holds: a shard is taken by claiming it ('loading'), reading its rows into
// the gallery, serving it, and marking it 'ready'; given up by no longer serving it, releasing the
// hold and dropping its rows. Moves run one at a time, behind the heartbeat (which must never wait
// for a load).
import type { Logger } from 'pino'
import type { Galleries } from '../domain/galleries/galleries.js'
import type { Sql } from '../store/engine/database.js'
import { claimShard, markShardReady, releaseShard } from '../store/cluster.js'
import { shardKey, type ShardMove } from './shard-plan.js'

export interface ShardHolder {
  /** The shards this node serves ("environment/shard"). */
  serving: ReadonlySet<string>
  /** The shards with a move under way (the next plan leaves them alone). */
  busy: ReadonlySet<string>
  /** Queues each move behind the earlier ones; a failed move is retried at a later heartbeat. */
  queue(moves: readonly ShardMove[]): void
  /** Takes every shard of an environment just created (empty: each loads at once). */
  takeNew(environmentId: string, shards: number): Promise<void>
  /** Resolves when the queued moves have ended. */
  settled(): Promise<void>
}

export function createShardHolder(options: {
  sql: Sql
  log: Logger
  selfId: string
  leaseMs: number
  galleries: () => Galleries | null
  closed: () => boolean
}): ShardHolder {
  const { sql, log, selfId } = options
  const serving = new Set<string>()
  const busy = new Set<string>()
  let work: Promise<void> = Promise.resolve()

  async function take(environmentId: string, shard: number): Promise<void> {
    const galleries = options.galleries()
    if (options.closed() || !galleries) return
    const hold = { environmentId, shard, nodeId: selfId }
    await claimShard(sql, hold, options.leaseMs)
    try {
      const rows = await galleries.loadShard(environmentId, shard)
      // Served before it is announced: a peer that reads the hold as ready finds it served.
      serving.add(shardKey(environmentId, shard))
      await markShardReady(sql, hold, rows)
      log.info(`Cluster: serving shard ${shard} of environment ${environmentId}`)
    } catch (error) {
      serving.delete(shardKey(environmentId, shard))
      await releaseShard(sql, hold).catch(() => {})
      throw error
    }
  }

  async function give(environmentId: string, shard: number): Promise<void> {
    serving.delete(shardKey(environmentId, shard))
    await releaseShard(sql, { environmentId, shard, nodeId: selfId })
    await options.galleries()?.dropShard(environmentId, shard)
    log.info(`Cluster: gave up shard ${shard} of environment ${environmentId}`)
  }

  function queueOne({ move, environmentId, shard }: ShardMove): void {
    const key = shardKey(environmentId, shard)
    busy.add(key)
    work = work
      .then(() => (move === 'take' ? take(environmentId, shard) : give(environmentId, shard)))
      .catch((error) => log.error({ err: error, shard: key }, 'Cluster: a shard move failed; retried on a later heartbeat'))
      .finally(() => busy.delete(key))
  }

  async function takeNow(environmentId: string, shard: number): Promise<void> {
    const key = shardKey(environmentId, shard)
    if (busy.has(key)) return
    busy.add(key)
    try {
      await take(environmentId, shard)
    } catch (error) {
      log.warn({ err: error, shard: key }, "Cluster: could not take a new environment's shard; its holders take it at their next heartbeat")
    } finally {
      busy.delete(key)
    }
  }

  return {
    serving,
    busy,
    queue: (moves) => {
      for (const move of moves) queueOne(move)
    },
    takeNew: async (environmentId, shards) => {
      await Promise.all(Array.from({ length: shards }, (_, shard) => takeNow(environmentId, shard)))
    },
    settled: () => work.catch(() => {}),
  }
}
