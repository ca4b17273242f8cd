// createMatcher: picks the backend once (native -> wasm -> js, or forced), creates the shared
// memory every gallery lives in and the worker pool that scans it, and says what it chose.
import { loadNativeAddon, loadWasmModule, resolveBackendChoice, type BackendChoice, type BackendInfo, type BackendName, type NativeAddon } from './backend.js'
import { createGallery, type Gallery, type GallerySettings, type Hit } from './gallery.js'
import { createKernel, type ScanKernel } from './kernel.js'
import { createScanPool, type ScanPool } from './pool.js'
import type { ScanEngine } from './scanner.js'
import { createSharedMemory, createSlabMemory, defaultSlabBudget, MAX_PAGES, PAGE_BYTES, type NativePages } from './shared-memory.js'

export interface MatcherOptions {
  /** Components per vector (PVT1 allows 128, 256, 512). */
  dimension: number
  /** Pool workers; 0 scans every gallery on the calling thread. Default: 2. */
  threads?: number
  /** 'auto' (default) tries native, then wasm, then js; PALMVEIN_MATCHER_BACKEND overrides 'auto'. */
  backend?: BackendChoice
  /**
   * Force a native kernel ('avx512vnni', 'avx2', 'scalar', ...): an unknown or unavailable name
   * throws. Default: PALMVEIN_MATCHER_ISA, where an unknown or unavailable name is ignored with a
   * warning (to `logger`) and the best kernel is used, the rule the Rust core applies to it too.
   */
  isa?: string
  /** Receives one line when the backend is chosen (and why a better one was not). Default: silent. */
  logger?: (message: string) => void
  /**
   * The memory budget of all galleries together; past it an upsert fails with "matcher memory is
   * full". native and js: default the machine's memory, no 4 GiB ceiling (a budget of at most
   * 4 GiB keeps the galleries in a wasm memory instead, which the WASM kernels can scan too).
   * wasm: at most and by default 4 GiB, the wasm32 limit.
   */
  maxMemoryBytes?: number
  /** Rows per memory chunk; a scan slice never crosses a chunk. Default 65536. */
  chunkRows?: number
  /** Galleries with fewer rows are scanned inline rather than on the pool. Default 16384. */
  inlineBelowRows?: number
  /**
   * Micro-batching: most probes per scan (default 16), and batches scanning one gallery at once
   * (default 1: probes arriving meanwhile wait and leave together in the next pass).
   */
  maxBatch?: number
  maxBatchesInFlight?: number
  /** Rows stage 1 of a two-stage search keeps per probe, when a search does not say. Default 256. */
  candidates?: number
  /** Searches with mode 'auto' are two-stage from this many rows in a partition. Default 262144. */
  twoStageFromRows?: number
  /**
   * Share of two-stage searches re-run exactly in the background (0..1, default 0); counted in
   * `gallery.exactAudit`, each disagreement (a different best id) reported to `onDisagreement`.
   */
  exactAudit?: { rate: number; onDisagreement?: (twoStage: Hit[], exact: Hit[]) => void }
  /** Called after each pass of a search batch over a gallery: how many probes it served, how long it took. */
  onScan?: (probes: number, seconds: number) => void
}

/** The scan's limits in every backend; the native addon states its own. */
const PORTABLE_LIMITS = { maxK: 1024, maxDimension: 65535, maxCandidates: 65536 }

export interface Matcher {
  readonly backend: BackendInfo
  readonly dimension: number
  readonly threads: number
  /** Largest k a search accepts. */
  readonly maxK: number
  /** Mode 'auto' searches a partition two-stage from this many rows. */
  readonly twoStageFromRows: number
  createGallery(settings?: GallerySettings): Gallery
  /** Bytes the galleries have reserved (it grows, never shrinks; compaction reuses a gallery's own). */
  memoryBytes(): number
  /** The budget `memoryBytes()` may reach. */
  readonly maxMemoryBytes: number
  close(): Promise<void>
}

interface ChosenBackend {
  name: BackendName
  addon?: NativeAddon
  wasmModule?: WebAssembly.Module
  notes: string[]
}

function chooseBackend(choice: BackendChoice, dimension: number): ChosenBackend {
  const notes: string[] = []
  if (choice === 'native' || choice === 'auto') {
    const addon = loadNativeAddon()
    const { maxDimension } = addon.ok ? addon.value.limits() : PORTABLE_LIMITS
    if (addon.ok && dimension <= maxDimension) return { name: 'native', addon: addon.value, notes }
    const reason = addon.ok ? `its kernels scan at most ${maxDimension} dimensions, not ${dimension}` : addon.reason
    if (choice === 'native') throw new RangeError(`native matcher backend unavailable: ${reason}`)
    notes.push(`native unavailable (${reason})`)
  }
  if (choice === 'wasm' || choice === 'auto') {
    const module = loadWasmModule()
    if (module.ok) return { name: 'wasm', wasmModule: module.value, notes }
    if (choice === 'wasm') throw new Error(`wasm matcher backend unavailable: ${module.reason}`)
    notes.push(`wasm unavailable (${module.reason})`)
  }
  return { name: 'js', notes }
}

export async function createMatcher(options: MatcherOptions): Promise<Matcher> {
  const { dimension } = options
  const { maxDimension } = PORTABLE_LIMITS
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > maxDimension)
    throw new RangeError(`dimension must be an integer in 1..${maxDimension}, got ${dimension}`)
  const threads = options.threads ?? 2
  if (!Number.isInteger(threads) || threads < 0) throw new RangeError(`threads must be a non-negative integer, got ${threads}`)
  const chunkRows = options.chunkRows ?? 65536
  if (!Number.isInteger(chunkRows) || chunkRows < 1) throw new RangeError(`chunkRows must be a positive integer, got ${chunkRows}`)

  const candidates = options.candidates ?? 256
  const twoStageFromRows = options.twoStageFromRows ?? 262144
  const exactAuditRate = options.exactAudit?.rate ?? 0
  if (!Number.isInteger(twoStageFromRows) || twoStageFromRows < 0)
    throw new RangeError(`twoStageFromRows must be a non-negative integer, got ${twoStageFromRows}`)
  if (!(exactAuditRate >= 0 && exactAuditRate <= 1)) throw new RangeError(`exactAudit.rate must be in 0..1, got ${exactAuditRate}`)

  const chosen = chooseBackend(resolveBackendChoice(options.backend), dimension)
  const limits = chosen.addon?.limits() ?? PORTABLE_LIMITS
  if (!Number.isInteger(candidates) || candidates < 1 || candidates > limits.maxCandidates)
    throw new RangeError(`candidates must be an integer in 1..${limits.maxCandidates}, got ${candidates}`)
  if (chosen.addon) {
    if (options.isa !== undefined) chosen.addon.setIsa(options.isa)
    else {
      const choice = chosen.addon.chooseIsa(process.env.PALMVEIN_MATCHER_ISA)
      if (choice.warning) options.logger?.(`palmvein matcher: ${choice.warning}`)
      chosen.addon.setIsa(choice.isa)
    }
  }
  const wasmLimit = MAX_PAGES * PAGE_BYTES
  const budget = options.maxMemoryBytes ?? (chosen.name === 'wasm' ? wasmLimit : defaultSlabBudget())
  if (!(budget > 0)) throw new RangeError(`maxMemoryBytes must be positive, got ${budget}`)
  // The addon's functions ignore `this`: the memory may call them detached.
  const pages: NativePages | undefined = chosen.addon
  const memory = chosen.name === 'wasm' || budget <= wasmLimit ? createSharedMemory(budget, pages) : createSlabMemory(budget, pages)
  const kernel: ScanKernel = createKernel(chosen.name, memory, chosen)
  const pool: ScanPool | null =
    threads > 0 ? createScanPool({ threads, memory, backend: chosen.name, wasmModule: chosen.wasmModule, isa: chosen.addon?.activeIsa() }) : null
  const engine: ScanEngine = { kernel, pool, inlineBelowRows: options.inlineBelowRows ?? 16384 }
  const backend: BackendInfo = { ...kernel.info }
  options.logger?.(
    `matcher backend ${backend.name} (${backend.isa}), ${threads} worker thread(s)` + (chosen.notes.length ? `; ${chosen.notes.join('; ')}` : ''),
  )

  let closed = false
  const galleryOptions = {
    dimension,
    chunkRows,
    maxBatch: options.maxBatch ?? 16,
    maxBatchesInFlight: options.maxBatchesInFlight ?? 1,
    compactDeadRatio: 0.25,
    limits: { maxScanK: limits.maxK, twoStageFromRows, maxCandidates: limits.maxCandidates },
    defaultCandidates: candidates,
    exactAuditRate,
    onExactAuditDisagreement: options.exactAudit?.onDisagreement,
    onScan: options.onScan,
  }
  return {
    backend,
    dimension,
    threads,
    maxK: limits.maxK - 1,
    twoStageFromRows,
    createGallery: (settings) => {
      if (closed) throw new Error('matcher is closed')
      return createGallery(memory, engine, galleryOptions, () => closed, settings)
    },
    memoryBytes: () => memory.usedBytes,
    maxMemoryBytes: memory.capacityBytes,
    async close() {
      if (closed) return
      closed = true
      await pool?.close()
    },
  }
}
