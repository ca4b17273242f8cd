// Cluster mode: a node's gallery holds the shards it was assigned. A shard is loaded or dropped
// after the environment's earlier changes, and a peer's search reads only the shards it asks for.
import type { Hit, SearchOptions } from '@palmvein/matcher'
import { ServiceError } from '../../errors.js'
import { memberIdsOfShard } from '../../store/cluster.js'
import type { GalleriesContext } from './galleries-context.js'
import { handOfPartition, shardPartition, type Entry } from './gallery-entry.js'
import type { GalleryRegistry } from './gallery-registry.js'
import { HANDS, loadSink } from './gallery-rows.js'
import type { GallerySync } from './gallery-sync.js'
import { rowByRow } from './reference-reader.js'

export interface GalleryShards {
  loadShard(environmentId: string, shard: number): Promise<number>
  dropShard(environmentId: string, shard: number): Promise<void>
  searchShards(environmentId: string, shards: readonly number[], minSeq: number, probe: Int8Array, options: SearchOptions): Promise<Hit[]>
}

export function createGalleryShards(context: GalleriesContext, registry: GalleryRegistry, sync: GallerySync): GalleryShards {
  const { entries, sql, log } = context

  /** 'auto' decided as one process holding the whole environment would: by a hand's rows in it, not in one shard. */
  async function searchMode(entry: Entry, options: SearchOptions): Promise<SearchOptions['mode']> {
    if (options.mode !== 'auto') return options.mode
    const environment = entry.environment!
    const { twoStageFromRows } = await context.matchers.forDimension(environment.dimension)
    const handRows = (entry.gallery!.size / HANDS.length) * (environment.shards / Math.max(1, entry.shardsHeld?.size ?? 1))
    return handRows >= twoStageFromRows ? 'two_stage' : 'exact'
  }

  return {
    loadShard: (environmentId, shard) =>
      registry.exclusive(environmentId, async ({ environment }) => {
        const entry = entries.get(environmentId)!
        if (!entry.shardsHeld || !entry.gallery) throw new Error('loadShard needs cluster mode')
        // Held before the read: changes applied meanwhile keep the shard's rows too.
        entry.shardsHeld.add(shard)
        await context.reader.read(environment, 0, rowByRow(loadSink(log, entry, entry.gallery)), { shard, shards: environment.shards })
        await sync.catchUp(entry)
        entry.shardsReady.add(shard)
        return entry.gallery.size
      }),
    dropShard: (environmentId, shard) =>
      registry.exclusive(environmentId, async ({ environment }) => {
        const entry = entries.get(environmentId)!
        entry.shardsReady.delete(shard)
        entry.shardsHeld?.delete(shard)
        for (const memberId of await memberIdsOfShard(sql, environmentId, shard, environment.shards)) entry.gallery?.remove(memberId)
      }),
    async searchShards(environmentId, shards, minSeq, probe, options) {
      const entry = entries.get(environmentId)
      const missing = shards.filter((shard) => !entry?.shardsReady.has(shard))
      if (!entry?.gallery || missing.length) {
        throw new ServiceError('shard_unavailable', `this node does not serve shard(s) ${missing.join(', ')} of environment ${environmentId}`)
      }
      // Not queued behind the environment's changes: one of them may be an enrollment waiting for the peer's lock.
      if (entry.syncedSeq < minSeq) await sync.catchUp(entry)
      const hands = options.partition ? [options.partition] : HANDS
      const hits = await entry.gallery.search(probe, {
        k: options.k,
        mode: await searchMode(entry, options),
        candidates: options.candidates,
        partitions: shards.flatMap((shard) => hands.map((hand) => shardPartition(hand, shard))),
      })
      return hits.map((hit) => ({ ...hit, partition: handOfPartition(hit.partition) }))
    },
  }
}
