// Scatter-gather: a search of a sharded environment goes to one ready replica of every shard (this
// node for the shards it serves), in parallel, and the top-k of the answers is merged. The merge
// is exact: a row of the global top-k is in the top-k of any set of shards that contains its own.
// Replicas are picked at random among those that did not fail lately; a replica slower than the
// hedge delay is raced by another, and one that fails is replaced by another. A shard no live
// replica answers for makes the search fail with 503 shard_unavailable: a partial search could
// turn a mate into NotFound.
import type { Logger } from 'pino'
import { ServiceError } from '../errors.js'
import type { Gallery, Hit, SearchOptions } from '@palmvein/matcher'
import { byScoreThenId } from '@palmvein/matcher/gallery-search'
import { toInt8Vector } from '@palmvein/matcher/vector-input'
import type { EnvironmentRow } from '../store/organizations.js'
import { createPeerClient, type PeerSearch } from './peer-client.js'
import { createReplicaChoice } from './replica-choice.js'
import type { ShardDirectory } from './shard-directory.js'
import { scatteredGallery } from './scattered-gallery.js'

export type { ShardDirectory } from './shard-directory.js'

export interface ScatterOptions {
  directory: ShardDirectory
  /** How this node signs and reaches its peers (peer-client.ts). */
  peer: { secret: string; ca?: Buffer }
  hedgeMs: number
  /** Searches this node's rows for the given shards (galleries.searchShards). */
  searchHere(environmentId: string, shards: readonly number[], minSeq: number, probe: Int8Array, options: SearchOptions): Promise<Hit[]>
  log: Logger
}

export interface Scatter {
  search(environment: EnvironmentRow, probe: Int8Array, options: SearchOptions, minSeq: number): Promise<Hit[]>
  /** The environment's gallery as identify, enrollment and calibration see it: changes stay local, searches scatter. */
  wrap(environment: EnvironmentRow, local: Gallery, syncedSeq: () => number): Gallery
  /** Closes the connections to the peers. */
  close(): Promise<void>
}

export function mergeHits(parts: readonly Hit[][], k: number): Hit[] {
  const seen = new Set<string>()
  const merged: Hit[] = []
  for (const hit of parts.flat()) {
    const key = `${hit.id}/${hit.partition ?? ''}`
    if (seen.has(key)) continue
    seen.add(key)
    merged.push(hit)
  }
  return merged.sort(byScoreThenId).slice(0, k)
}

export function createScatter(options: ScatterOptions): Scatter {
  const { directory, log } = options
  const replicas = createReplicaChoice(directory)
  const peers = createPeerClient(options.peer)

  /**
   * As `plan`, but a shard without a replica in this node's view is looked for again in the
   * database (a replica may have become ready since the last heartbeat). Throws when one still has none.
   */
  async function planOrRefresh(environmentId: string, shards: readonly number[], tried: ReadonlySet<string>): Promise<Map<string, number[]>> {
    const since = performance.now()
    let planned = replicas.plan(environmentId, shards, tried)
    if (planned.missing.length) {
      await directory.refresh(since)
      planned = replicas.plan(environmentId, shards, tried)
    }
    const [shard] = planned.missing
    if (shard !== undefined)
      throw new ServiceError('shard_unavailable', `shard ${shard} of environment ${environmentId} has no live replica; retry shortly`, { retryAfter: 5 })
    return planned.groups
  }

  /** Searches `shards` somewhere, avoiding the nodes in `tried`. */
  async function cover(
    environment: EnvironmentRow,
    shards: readonly number[],
    request: Omit<PeerSearch, 'shards'>,
    tried: ReadonlySet<string>,
  ): Promise<Hit[]> {
    const groups = await planOrRefresh(environment.id, shards, tried)
    const parts = await Promise.all([...groups].map(([nodeId, group]) => ask(environment, nodeId, group, request, new Set([...tried, nodeId]))))
    return mergeHits(parts, request.options.k ?? 1)
  }

  /** One node's part, hedged: slower than the hedge delay or failed, the same shards are asked elsewhere. */
  function ask(environment: EnvironmentRow, nodeId: string, shards: number[], request: Omit<PeerSearch, 'shards'>, tried: Set<string>): Promise<Hit[]> {
    if (nodeId === directory.selfId) {
      // This node gave the shards up since it picked itself: their new holders are ready.
      return options.searchHere(environment.id, shards, request.minSeq, request.probe, request.options).catch((error) => {
        if (!(error instanceof ServiceError && error.code === 'shard_unavailable')) throw error
        return cover(environment, shards, request, tried)
      })
    }
    const url = directory.urlOf(nodeId)
    const attempt = url ? peers.search(url, { ...request, shards }) : Promise.reject(new Error(`node ${nodeId} has no URL`))
    return hedged(
      attempt,
      options.hedgeMs,
      () => cover(environment, shards, request, tried),
      (error) => {
        replicas.failed(nodeId)
        log.warn({ node_id: nodeId, shards, reason: (error as Error).message }, 'Cluster: a replica did not answer; asking another')
      },
    )
  }

  const search: Scatter['search'] = (environment, probe, searchOptions, minSeq) => {
    const shards = Array.from({ length: environment.shards }, (_, shard) => shard)
    return cover(environment, shards, { environmentId: environment.id, probe, options: searchOptions, minSeq }, new Set())
  }

  return {
    search,
    close: () => peers.close(),
    wrap: (environment, local, syncedSeq) =>
      scatteredGallery(local, (probe, searchOptions = {}) => search(environment, toInt8Vector(probe, environment.dimension), searchOptions, syncedSeq())),
  }
}

/**
 * The attempt's answer, or the fallback's: the fallback starts when the attempt is slower than
 * `hedgeMs` (a hedge; the attempt's answer may still come first) or fails (`onFailure` hears why).
 */
function hedged<T>(attempt: Promise<T>, hedgeMs: number, fallback: () => Promise<T>, onFailure: (error: unknown) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false
    let started: Promise<T> | null = null
    const win = (answer: T) => {
      if (!settled) {
        settled = true
        clearTimeout(timer)
        resolve(answer)
      }
    }
    const lose = (error: unknown) => {
      if (!settled) {
        settled = true
        reject(error)
      }
    }
    /** `afterFailure`: the attempt failed; otherwise a hedge while it is pending (its answer may still come). */
    const startFallback = (afterFailure: boolean) => {
      started = fallback()
      started.then(win, (error) => {
        if (afterFailure) lose(error)
      })
    }
    const timer = setTimeout(() => startFallback(false), hedgeMs)
    attempt.then(win, (error) => {
      onFailure(error)
      clearTimeout(timer)
      if (!started) return startFallback(true)
      // The hedge was planned before this failure: if it found no other replica, plan again now
      // (this node gave the shards up, so their new holder is ready: a re-read finds it).
      started.catch(fallback).then(win, lose)
    })
  })
}
