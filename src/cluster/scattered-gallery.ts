// A sharded environment's gallery as identify, enrollment and calibration see it: changes go to
// this node's own gallery, searches scatter to every shard's holder (scatter.ts).
import type { Gallery, Hit, SearchOptions } from '@palmvein/matcher'
import type { VectorInput } from '@palmvein/matcher/vector-input'

export function scatteredGallery(local: Gallery, scatter: (probe: VectorInput, options?: SearchOptions) => Promise<Hit[]>): Gallery {
  return {
    upsert: (id, vector, options) => local.upsert(id, vector, options),
    upsertRows: (rows, options) => local.upsertRows(rows, options),
    reserve: (rows, options) => local.reserve(rows, options),
    remove: (id, options) => local.remove(id, options),
    has: (id, options) => local.has(id, options),
    vector: (id, options) => local.vector(id, options),
    partitionsOf: (id) => local.partitionsOf(id),
    get size() {
      return local.size
    },
    get deadRows() {
      return local.deadRows
    },
    get exactAudit() {
      return local.exactAudit
    },
    search: (probe, options) => scatter(probe, options),
    searchBatch: (probes, options) => Promise.all(probes.map((probe) => scatter(probe, options))),
    compact: () => local.compact(),
    partitions: () => local.partitions(),
    readRows: (partition, from, limit) => local.readRows(partition, from, limit),
  }
}
