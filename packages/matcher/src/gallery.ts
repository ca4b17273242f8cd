// The public gallery: validated upserts and removes on shared-memory stores (one per partition,
// so a partition's rows are stored apart and a search of one partition reads only its bytes),
// and searches that go through the micro-batcher (see gallery-search.ts).
import { runSearchBatch, type PendingSearch, type SearchLimits, type SearchMode } from './gallery-search.js'
import { GalleryStore } from './gallery-store.js'
import { MicroBatcher } from './micro-batcher.js'
import { normSquaredInt8 } from './quantize.js'
import { prepareRows, type PreparedRows } from './row-page.js'
import type { Hit, ScanEngine } from './scanner.js'
import { StringIndex, type IdKind } from './id-index.js'
import type { SharedMemory } from './shared-memory.js'
import { toInt8Vector, type VectorInput } from './vector-input.js'

export type { Hit } from './scanner.js'
export type { SearchMode } from './gallery-search.js'

export interface SearchOptions {
  /** Number of best matches to return: 1 (default) to the matcher's `maxK`. */
  k?: number
  /** Search only this partition's rows (default: every partition). */
  partition?: string
  /** Or only these partitions' rows, merged (1 to 4096 of them; not with `partition`). */
  partitions?: readonly string[]
  /**
   * 'exact' (default) scores every row; 'two_stage' scores only the `candidates` rows whose sign
   * bits are nearest the probe's (every reported score is still exact, but a row outside the
   * candidates is never reported); 'auto' is two-stage from the matcher's `twoStageFromRows`.
   */
  mode?: SearchMode
  /** Rows stage 1 keeps per probe (per worker's share of the partition). Default: the matcher's `candidates`. */
  candidates?: number
}

export interface UpsertOptions {
  /**
   * A small label (1 to 64 characters) whose rows are stored and searched apart, e.g. 'left'.
   * Ids are per partition: the same id may have a row in several partitions.
   */
  partition?: string
}

/** A page of rows for `upsertRows`. */
export interface RowsInput {
  /** The rows' ids: strings, or in a gallery of UUID ids also their 16 bytes each, end to end. */
  ids: readonly string[] | Uint8Array
  /** The rows' int8 vectors, `dimension` components each, end to end. */
  vectors: Int8Array
  /**
   * The rows' squared norms and sign bits exactly as `readRows` returned them with these vectors
   * (a copy of a gallery reloaded), so that nothing is computed again. They are not checked: other
   * values give wrong scores (sign bits of the caller's own, a rotated code, serve only its own
   * two-stage scans: row-range-scan.ts). Without them (both or neither), they are computed and
   * every vector is checked as `upsert` checks it.
   */
  norms?: Uint32Array
  signBits?: Uint8Array
}

/** Which partition a remove or has applies to (default: every partition). */
export interface PartitionOption {
  partition?: string
}

export interface GallerySettings {
  /**
   * 'string' (default): any non-empty string id. 'uuid': ids are UUIDs, stored as 16 bytes a row
   * (about a quarter of the memory of string ids) and returned in lowercase.
   */
  ids?: IdKind
}

export interface ExactAuditCounts {
  /** Two-stage searches re-run exactly. */
  audited: number
  /** Of those, searches whose best id differed from the exact search's. */
  disagreements: number
}

export interface Gallery {
  /** Adds or replaces the vector stored under `id` in `options.partition` (default: none). */
  upsert(id: string, vector: VectorInput, options?: UpsertOptions): void
  /**
   * Adds or replaces a page of rows in `options.partition` (default: none), as many `upsert` calls
   * in order would, at a fraction of their cost (a load of millions of rows). All or nothing: an
   * unacceptable id or vector, or a full memory, throws and stores none of the page.
   */
  upsertRows(rows: RowsInput, options?: UpsertOptions): void
  /**
   * Makes room for `rows` more rows in `options.partition` (default: none), so a load that knows
   * its size fills id maps sized once instead of regrown (and copied) as it goes.
   */
  reserve(rows: number, options?: PartitionOption): void
  /** Removes `id` (from one partition, or all); true if it was there. Searches resolving afterwards never return it. */
  remove(id: string, options?: PartitionOption): boolean
  has(id: string, options?: PartitionOption): boolean
  /** A copy of the int8 vector stored under `id` (in `options.partition`, or the first partition holding it). */
  vector(id: string, options?: PartitionOption): Int8Array | undefined
  /** The partitions holding a row of `id` ('' = the unpartitioned rows). */
  partitionsOf(id: string): string[]
  /** Live rows. */
  readonly size: number
  /** Tombstoned rows not yet reclaimed by compaction. */
  readonly deadRows: number
  /** Two-stage searches re-run exactly in the background, and how many disagreed. */
  readonly exactAudit: ExactAuditCounts
  /** Best `k` matches, best first; equal scores ordered by id (then partition). Hits of a partitioned row say its partition. */
  search(probe: VectorInput, options?: SearchOptions): Promise<Hit[]>
  searchBatch(probes: readonly VectorInput[], options?: SearchOptions): Promise<Hit[][]>
  /** Reclaims tombstoned rows once no scan is in flight (also triggered automatically). */
  compact(): Promise<void>
  /** The partitions that hold rows or once did ('' = the unpartitioned rows). */
  partitions(): string[]
  /**
   * A page of one partition's live rows in storage order, to copy the gallery out a page at a time
   * (the service's snapshots) while it keeps serving. Rows changed between pages may be seen in
   * either state; a compaction in between moves rows, so a copy whose `layout` changed starts again.
   */
  readRows(partition: string, from: number, limit: number): RowPage
}

export interface RowPage {
  ids: string[]
  /** The rows' int8 vectors, end to end. */
  vectors: Int8Array
  /** Their squared norms and sign bits (what `upsertRows` may be given back). */
  norms: Uint32Array
  signBits: Uint8Array
  /** The row to read on from, or null after the last. */
  next: number | null
  /** Changes whenever a compaction moves the partition's rows. */
  layout: number
}

export interface GalleryOptions {
  dimension: number
  chunkRows: number
  maxBatch: number
  /** Batches scanning at once per gallery. */
  maxBatchesInFlight: number
  /** Compact automatically once this share of rows is dead (and at least 1024 rows are). */
  compactDeadRatio: number
  limits: SearchLimits & { maxCandidates: number }
  defaultCandidates: number
  /** Share of two-stage searches re-run exactly in the background (0 = none). */
  exactAuditRate: number
  onExactAuditDisagreement?: (twoStage: Hit[], exact: Hit[]) => void
  onScan?: (probes: number, seconds: number) => void
}

const NO_PARTITION = ''
const MODES: readonly SearchMode[] = ['exact', 'two_stage', 'auto']

// For benchmarks in this repository only (not exported from index.ts): the stores behind a gallery.
const storesOf = new WeakMap<Gallery, ReadonlyMap<string, GalleryStore>>()
export function galleryStoreOf(gallery: Gallery, partition = NO_PARTITION): GalleryStore | undefined {
  return storesOf.get(gallery)?.get(partition)
}
// And for row-level scans (partition-scan.ts): the engine that scans a gallery.
const enginesOf = new WeakMap<Gallery, ScanEngine>()
export function galleryEngineOf(gallery: Gallery): ScanEngine | undefined {
  return enginesOf.get(gallery)
}

const MAX_PARTITIONS_PER_SEARCH = 4096

/** The partitions a search reads, sorted and distinct; undefined: every one. */
function partitionsOf(options: SearchOptions): string[] | undefined {
  if (options.partitions === undefined) return options.partition === undefined ? undefined : [checkPartition(options.partition)]
  if (options.partition !== undefined) throw new TypeError('give partition or partitions, not both')
  if (!Array.isArray(options.partitions) || options.partitions.length === 0 || options.partitions.length > MAX_PARTITIONS_PER_SEARCH) {
    throw new TypeError(`partitions must be a list of 1 to ${MAX_PARTITIONS_PER_SEARCH} partitions`)
  }
  return [...new Set(options.partitions.map(checkPartition))].sort()
}

function checkPartition(partition: unknown): string {
  if (partition === undefined) return NO_PARTITION
  if (typeof partition !== 'string' || partition.length === 0 || partition.length > 64) {
    throw new TypeError(`partition must be a string of 1 to 64 characters, got ${JSON.stringify(partition)}`)
  }
  return partition
}

/** k, mode, candidates and partitions of a search, checked against the matcher's limits. */
function checkSearch(searchOptions: SearchOptions, options: GalleryOptions) {
  const { limits } = options
  const maxK = limits.maxScanK - 1
  const k = searchOptions.k ?? 1
  const mode = searchOptions.mode ?? 'exact'
  const candidates = searchOptions.candidates ?? options.defaultCandidates
  if (!Number.isInteger(k) || k < 1 || k > maxK) throw new RangeError(`k must be an integer in 1..${maxK}, got ${k}`)
  if (!MODES.includes(mode)) throw new RangeError(`mode must be one of ${MODES.join(', ')}, got ${JSON.stringify(mode)}`)
  if (!Number.isInteger(candidates) || candidates < 1 || candidates > limits.maxCandidates) {
    throw new RangeError(`candidates must be an integer in 1..${limits.maxCandidates}, got ${candidates}`)
  }
  return { k, mode, candidates, reading: partitionsOf(searchOptions) }
}

/**
 * A gallery's searches: checked, then queued into the micro-batcher's batches; a share of the
 * two-stage ones (exactAuditRate) is searched again exactly and the disagreements counted.
 */
function createSearchQueue(
  engine: ScanEngine,
  partitions: ReadonlyMap<string, GalleryStore>,
  options: GalleryOptions,
  isClosed: () => boolean,
  exactAudit: ExactAuditCounts,
): (input: VectorInput, searchOptions: SearchOptions) => Promise<Hit[]> {
  const { dimension, limits } = options
  const batcher = new MicroBatcher<PendingSearch>({
    maxBatch: options.maxBatch,
    maxInFlight: options.maxBatchesInFlight,
    run: async (entries) => {
      if (isClosed()) {
        for (const entry of entries) entry.reject(new Error('matcher is closed'))
        return
      }
      const started = performance.now()
      await runSearchBatch(engine, partitions, limits, entries, dimension)
      options.onScan?.(entries.length, (performance.now() - started) / 1000)
    },
  })

  function audit(probe: Int8Array, searchOptions: SearchOptions, twoStage: Hit[]): void {
    if (options.exactAuditRate <= 0 || Math.random() >= options.exactAuditRate) return
    void enqueue(probe, { ...searchOptions, mode: 'exact' }).then(
      (exact) => {
        exactAudit.audited++
        if (exact[0]?.id !== twoStage[0]?.id || exact[0]?.partition !== twoStage[0]?.partition) {
          exactAudit.disagreements++
          options.onExactAuditDisagreement?.(twoStage, exact)
        }
      },
      () => {
        /* the gallery closed meanwhile: nothing to count */
      },
    )
  }

  function enqueue(input: VectorInput, searchOptions: SearchOptions): Promise<Hit[]> {
    let checked: ReturnType<typeof checkSearch>
    let probe: Int8Array
    try {
      checked = checkSearch(searchOptions, options)
      if (isClosed()) throw new Error('matcher is closed')
      probe = toInt8Vector(input, dimension)
    } catch (error) {
      return Promise.reject(error)
    }
    const { k, mode, candidates, reading } = checked
    const stores = reading === undefined ? [...partitions.values()] : reading.map((name) => partitions.get(name))
    if (!stores.some((store) => store && store.rows > 0)) return Promise.resolve([])
    const copy = new Int8Array(probe)
    const found = new Promise<Hit[]>((resolve, reject) => {
      batcher.add({ probe: copy, norm: normSquaredInt8(copy), k, partitions: reading, mode, candidates, resolve, reject })
    })
    if (mode === 'exact') return found
    return found.then((hits) => {
      audit(copy, searchOptions, hits)
      return hits
    })
  }

  return enqueue
}

function checkIdKind(ids: IdKind | undefined): IdKind {
  const idKind = ids ?? 'string'
  if (idKind !== 'string' && idKind !== 'uuid') throw new RangeError(`ids must be 'string' or 'uuid', got ${JSON.stringify(idKind)}`)
  return idKind
}

/** The ids of a page, normalised (strings) or as given (UUID bytes), and how many rows they name. */
function checkRowIds(store: GalleryStore, ids: RowsInput['ids']): { ids: readonly string[] | Uint8Array; count: number } {
  if (ids instanceof Uint8Array) {
    if (ids.length % 16 !== 0) throw new TypeError('ids as bytes must be 16 bytes each')
    if (store.ids instanceof StringIndex) throw new TypeError('ids as bytes need a gallery of UUID ids')
    return { ids, count: ids.length / 16 }
  }
  if (!Array.isArray(ids)) throw new TypeError('ids must be an array of strings or a Uint8Array of 16-byte UUIDs')
  return { ids: ids.map((id) => store.ids.normalise(id)), count: ids.length }
}

/** The norms and sign bits a caller passed back, checked for size only (see RowsInput). */
function checkPrepared(rows: RowsInput, count: number, signBytes: number): PreparedRows {
  const { norms, signBits } = rows
  if (!(norms instanceof Uint32Array) || norms.length !== count || !(signBits instanceof Uint8Array) || signBits.length !== count * signBytes) {
    throw new TypeError(`norms (Uint32Array of ${count}) and signBits (Uint8Array of ${count} x ${signBytes}) go together, as readRows returned them`)
  }
  return { norms, signBits }
}

/** Compacts a store in the background once enough of its rows are dead to be worth the copy. */
function compactIfMostlyDead(store: GalleryStore, compactDeadRatio: number): void {
  const dead = store.deadRows
  if (dead >= 1024 && dead >= store.rows * compactDeadRatio) void store.compact()
}

/** The stores an id-addressed call applies to: one partition's, or every one. */
function storesAddressed(partitions: Map<string, GalleryStore>, option: PartitionOption): GalleryStore[] {
  if (option.partition === undefined) return [...partitions.values()]
  const store = partitions.get(checkPartition(option.partition))
  return store ? [store] : []
}

function sumOver(partitions: Map<string, GalleryStore>, of: (store: GalleryStore) => number): number {
  let total = 0
  for (const store of partitions.values()) total += of(store)
  return total
}

export function createGallery(
  memory: SharedMemory,
  engine: ScanEngine,
  options: GalleryOptions,
  isClosed: () => boolean,
  settings: GallerySettings = {},
): Gallery {
  const { dimension } = options
  const idKind = checkIdKind(settings.ids)
  const partitions = new Map<string, GalleryStore>()
  const exactAudit: ExactAuditCounts = { audited: 0, disagreements: 0 }

  function storeFor(partition: string): GalleryStore {
    let store = partitions.get(partition)
    if (!store) partitions.set(partition, (store = new GalleryStore(memory, dimension, options.chunkRows, idKind)))
    return store
  }

  const enqueue = createSearchQueue(engine, partitions, options, isClosed, exactAudit)

  const maybeCompact = (store: GalleryStore) => compactIfMostlyDead(store, options.compactDeadRatio)
  const storesFor = (option: PartitionOption) => storesAddressed(partitions, option)
  const sum = (of: (store: GalleryStore) => number) => sumOver(partitions, of)

  const gallery: Gallery = {
    upsert(id, vector, upsertOptions = {}) {
      const partition = checkPartition(upsertOptions.partition)
      const int8 = toInt8Vector(vector, dimension)
      const store = storeFor(partition)
      store.upsert(store.ids.normalise(id), int8)
      maybeCompact(store)
    },
    upsertRows(rows, upsertOptions = {}) {
      const store = storeFor(checkPartition(upsertOptions.partition))
      const { ids, count } = checkRowIds(store, rows.ids)
      if (!(rows.vectors instanceof Int8Array) || rows.vectors.length !== count * dimension) {
        throw new TypeError(`vectors must be an Int8Array of ${count} x ${dimension} components`)
      }
      const given = rows.norms !== undefined || rows.signBits !== undefined
      const prepared = given ? checkPrepared(rows, count, store.shape.signBytes) : prepareRows(rows.vectors, dimension, count)
      store.upsertRows(ids, rows.vectors, prepared.norms, prepared.signBits, count)
      maybeCompact(store)
    },
    reserve(rows, option = {}) {
      if (!Number.isSafeInteger(rows) || rows < 0) throw new RangeError(`rows must be a whole number, got ${rows}`)
      storeFor(checkPartition(option.partition)).reserve(rows)
    },
    remove(id, option = {}) {
      let removed = false
      for (const store of storesFor(option)) {
        if (store.remove(id)) {
          removed = true
          maybeCompact(store)
        }
      }
      return removed
    },
    has: (id, option = {}) => storesFor(option).some((store) => store.has(id)),
    vector(id, option = {}) {
      for (const store of storesFor(option)) {
        const vector = store.vectorOf(id)
        if (vector) return vector
      }
      return undefined
    },
    partitionsOf: (id) => [...partitions].filter(([, store]) => store.has(id)).map(([partition]) => partition),
    get size() {
      return sum((store) => store.size)
    },
    get deadRows() {
      return sum((store) => store.deadRows)
    },
    get exactAudit() {
      return { ...exactAudit }
    },
    search: (probe, searchOptions = {}) => enqueue(probe, searchOptions),
    searchBatch: (probes, searchOptions = {}) => Promise.all(probes.map((probe) => enqueue(probe, searchOptions))),
    compact: async () => {
      await Promise.all([...partitions.values()].map((store) => store.compact()))
    },
    partitions: () => [...partitions.keys()],
    readRows(partition, from, limit) {
      const store = partitions.get(checkPartition(partition || undefined))
      if (!store) return { ids: [], vectors: new Int8Array(0), norms: new Uint32Array(0), signBits: new Uint8Array(0), next: null, layout: 0 }
      return { ...store.readRows(from, limit), layout: store.compactions }
    },
  }
  storesOf.set(gallery, partitions)
  enginesOf.set(gallery, engine)
  return gallery
}
