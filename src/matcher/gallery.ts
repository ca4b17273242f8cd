// The public gallery: validated upserts and removes on the shared-memory store, and searches
// that go through the micro-batcher, then are made exact with respect to ties and concurrent
// removes (see `resolveProbe`).
import { GalleryStore } from './gallery-store.js'
import { MicroBatcher } from './micro-batcher.js'
import { normSquaredInt8 } from './quantize.js'
import { scanStore, type Hit, type ProbeCandidates, type ScanEngine } from './scanner.js'
import { toInt8Vector, type VectorInput } from './vector-input.js'

export type { Hit } from './scanner.js'

export interface SearchOptions {
  /** Number of best matches to return: 1 (default) to 1023. */
  k?: number
}

export interface Gallery {
  /** Adds or replaces the vector stored under `id`. */
  upsert(id: string, vector: VectorInput): void
  /** Removes `id`; true if it was there. Searches resolving afterwards never return it. */
  remove(id: string): boolean
  has(id: string): boolean
  /** Live rows. */
  readonly size: number
  /** Tombstoned rows not yet reclaimed by compaction. */
  readonly deadRows: number
  /** Best `k` matches, best first; equal scores ordered by id. */
  search(probe: VectorInput, options?: SearchOptions): Promise<Hit[]>
  searchBatch(probes: readonly VectorInput[], options?: SearchOptions): Promise<Hit[][]>
  /** Reclaims tombstoned rows once no scan is in flight (also triggered automatically). */
  compact(): Promise<void>
}

export interface GalleryOptions {
  dimension: number
  chunkRows: number
  maxBatch: number
  /** Batches scanning at once per gallery. */
  maxBatchesInFlight: number
  /** Compact automatically once this share of rows is dead (and at least 1024 rows are). */
  compactDeadRatio: number
}

interface PendingSearch {
  probe: Int8Array
  norm: number
  k: number
  resolve(hits: Hit[]): void
  reject(error: unknown): void
}

/** The native kernel's limit on k per scan; one row of it is kept for the tie check. */
export const MAX_SCAN_K = 1024
export const MAX_K = MAX_SCAN_K - 1

const byScoreThenId = (a: Hit, b: Hit): number => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

// For benchmarks in this repository only (not exported from index.ts): the store behind a gallery.
const stores = new WeakMap<Gallery, GalleryStore>()
export function galleryStoreOf(gallery: Gallery): GalleryStore | undefined {
  return stores.get(gallery)
}

export function createGallery(memory: WebAssembly.Memory, engine: ScanEngine, options: GalleryOptions, isClosed: () => boolean): Gallery {
  const store = new GalleryStore(memory, options.dimension, options.chunkRows)
  const { dimension } = options

  // Ask the kernel for one more row than wanted: if the extra row scores strictly lower than the
  // k-th, no unseen row can tie with the k-th and the id tie-break is exact.
  async function resolveProbe(entry: PendingSearch, candidates: ProbeCandidates, scannedK: number): Promise<Hit[]> {
    let current = candidates
    let asked = scannedK
    while (true) {
      if (current.complete) return current.hits.sort(byScoreThenId).slice(0, entry.k)
      const strong = current.hits.filter((hit) => hit.score > current.floorScore)
      if (strong.length >= entry.k) return strong.sort(byScoreThenId).slice(0, entry.k)
      // More than MAX_SCAN_K rows tie at the cut: the id order holds among the rows seen.
      if (asked >= MAX_SCAN_K) return current.hits.sort(byScoreThenId).slice(0, entry.k)
      // Ties at the cut, or rows removed during the scan: widen and scan again (rare).
      asked = Math.min(MAX_SCAN_K, Math.max(asked * 2, entry.k + 1))
      const probes = new Int8Array(entry.probe)
      ;[current] = await scanStore(engine, store, probes, Uint32Array.of(entry.norm), asked)
    }
  }

  async function runBatch(entries: PendingSearch[]): Promise<void> {
    try {
      if (isClosed()) throw new Error('matcher is closed')
      const scanK = Math.min(MAX_SCAN_K, Math.max(...entries.map((entry) => entry.k)) + 1)
      const probes = new Int8Array(entries.length * dimension)
      const norms = new Uint32Array(entries.length)
      entries.forEach((entry, index) => {
        probes.set(entry.probe, index * dimension)
        norms[index] = entry.norm
      })
      const candidates = await scanStore(engine, store, probes, norms, scanK)
      await Promise.all(entries.map(async (entry, index) => {
        try {
          entry.resolve(await resolveProbe(entry, candidates[index], scanK))
        } catch (error) {
          entry.reject(error)
        }
      }))
    } catch (error) {
      for (const entry of entries) entry.reject(error)
    }
  }

  const batcher = new MicroBatcher<PendingSearch>({ maxBatch: options.maxBatch, maxInFlight: options.maxBatchesInFlight, run: runBatch })

  function enqueue(input: VectorInput, searchOptions: SearchOptions): Promise<Hit[]> {
    const k = searchOptions.k ?? 1
    if (!Number.isInteger(k) || k < 1 || k > MAX_K) return Promise.reject(new RangeError(`k must be an integer in 1..${MAX_K}, got ${k}`))
    if (isClosed()) return Promise.reject(new Error('matcher is closed'))
    let probe: Int8Array
    try {
      probe = toInt8Vector(input, dimension)
    } catch (error) {
      return Promise.reject(error)
    }
    if (store.rows === 0) return Promise.resolve([])
    return new Promise<Hit[]>((resolve, reject) => {
      batcher.add({ probe: new Int8Array(probe), norm: normSquaredInt8(probe), k, resolve, reject })
    })
  }

  function maybeCompact(): void {
    const dead = store.deadRows
    if (dead >= 1024 && dead >= store.rows * options.compactDeadRatio) void store.compact()
  }

  const gallery: Gallery = {
    upsert(id, vector) {
      if (typeof id !== 'string' || id.length === 0) throw new TypeError('id must be a non-empty string')
      store.upsert(id, toInt8Vector(vector, dimension))
      maybeCompact()
    },
    remove(id) {
      const removed = store.remove(id)
      if (removed) maybeCompact()
      return removed
    },
    has: (id) => store.has(id),
    get size() { return store.size },
    get deadRows() { return store.deadRows },
    search: (probe, searchOptions = {}) => enqueue(probe, searchOptions),
    searchBatch: (probes, searchOptions = {}) => Promise.all(probes.map((probe) => enqueue(probe, searchOptions))),
    compact: () => store.compact(),
  }
  stores.set(gallery, store)
  return gallery
}
