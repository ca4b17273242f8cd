// One interface over the three scan backends, all reading the same shared memory: the main
// thread (inline scans of small galleries) and every pool worker build one of these.
import { MemoryViews, type SharedMemory } from './shared-memory.js'
import type { BackendInfo, BackendName, NativeAddon, WasmExports } from './backend.js'
import * as reference from './reference.js'

/** A run of rows inside one gallery chunk. Offsets are bytes into the shared memory. */
export interface Segment {
  rowsOffset: number
  normsOffset: number
  liveOffset: number
  /** The rows' sign bits (`signBytes` per row, packed). */
  bitsOffset: number
  /** Rows the chunk can hold (the extent of its arrays). */
  capacity: number
  /** Chunk-relative, end exclusive. */
  rowStart: number
  rowEnd: number
  /** Absolute row index of the chunk's row 0. */
  baseRow: number
}

export interface ScanShape {
  strideInBytes: number
  dimension: number
  /** Bytes of sign bits per row (and per probe); also the bits' stride. */
  signBytes: number
}

export interface ScanKernel {
  readonly info: BackendInfo
  /**
   * Scans one segment for `probeNorms.length` probes; writes chunk-relative rows (best first,
   * -1 unused) and scores into `outRows`/`outScores` (probeCount * k entries). Rows scoring below
   * their probe's `scoreFloors` entry may be left out (the native kernel uses them to filter
   * sooner; the others report every row).
   */
  scan(
    segment: Segment,
    shape: ScanShape,
    probes: Int8Array,
    probeNorms: Uint32Array,
    k: number,
    outRows: Int32Array,
    outScores: Float64Array,
    scoreFloors?: Float64Array,
  ): void
  /**
   * Two-stage search, stage 1: merges the segment's live rows into each probe's list of the `c`
   * rows nearest in Hamming distance over their sign bits (`probeBits`: signBytes per probe).
   * Lists hold absolute rows, nearest first (ties by lower row), -1 / 0xFFFFFFFF unused; a task
   * passes the same lists, empty at first, to each of its segments.
   */
  nearest(segment: Segment, shape: ScanShape, probeBits: Uint8Array, c: number, outRows: Int32Array, outDistances: Uint32Array): void
  /** Stage 2: `outScores[i]` = the exact score of chunk-relative row `pairRows[i]` for probe `pairProbes[i]`. */
  scorePairs(
    segment: Segment,
    shape: ScanShape,
    pairRows: Int32Array,
    pairProbes: Uint32Array,
    probes: Int8Array,
    probeNorms: Uint32Array,
    outScores: Float64Array,
  ): void
  /** Reads `length` bytes of the shared memory at `offset`: the bandwidth floor. */
  streamRead(offset: number, length: number): number
}

export interface KernelSources {
  addon?: NativeAddon
  wasmModule?: WebAssembly.Module
}

export function createKernel(name: BackendName, memory: SharedMemory, sources: KernelSources): ScanKernel {
  const views = new MemoryViews(memory)
  if (name === 'native') {
    if (!sources.addon) throw new Error('native kernel needs the addon')
    return createViewKernel({ name, isa: sources.addon.activeIsa(), popcountIsa: sources.addon.activePopcountIsa() }, views, sources.addon)
  }
  if (name === 'wasm') {
    if (!sources.wasmModule) throw new Error('wasm kernel needs the compiled module')
    return createWasmKernel(memory, views, sources.wasmModule)
  }
  return createViewKernel({ name: 'js', isa: 'scalar', popcountIsa: 'scalar' }, views, reference)
}

type ViewScanner = Pick<NativeAddon, 'scanTopK' | 'streamRead' | 'mergeNearestBySignBits' | 'scorePairs'>

// native and js take typed-array views over the shared buffer: zero copies.
function createViewKernel(info: BackendInfo, views: MemoryViews, scanner: ViewScanner): ScanKernel {
  return {
    info,
    scan(segment, shape, probes, probeNorms, k, outRows, outScores, scoreFloors) {
      scanner.scanTopK(
        views.int8(segment.rowsOffset, segment.capacity * shape.strideInBytes),
        shape.strideInBytes,
        shape.dimension,
        segment.rowStart,
        segment.rowEnd,
        views.uint32(segment.normsOffset, segment.capacity),
        views.uint8(segment.liveOffset, segment.capacity),
        probes,
        probeNorms,
        k,
        outRows,
        outScores,
        scoreFloors,
      )
    },
    nearest(segment, shape, probeBits, c, outRows, outDistances) {
      scanner.mergeNearestBySignBits(
        views.uint8(segment.bitsOffset, segment.capacity * shape.signBytes),
        shape.signBytes,
        shape.signBytes,
        segment.rowStart,
        segment.rowEnd,
        segment.baseRow,
        views.uint8(segment.liveOffset, segment.capacity),
        probeBits,
        c,
        outRows,
        outDistances,
      )
    },
    scorePairs(segment, shape, pairRows, pairProbes, probes, probeNorms, outScores) {
      scanner.scorePairs(
        views.int8(segment.rowsOffset, segment.capacity * shape.strideInBytes),
        shape.strideInBytes,
        shape.dimension,
        views.uint32(segment.normsOffset, segment.capacity),
        pairRows,
        pairProbes,
        probes,
        probeNorms,
        outScores,
      )
    },
    streamRead(offset, length) {
      return scanner.streamRead(views.int8(offset, length))
    },
  }
}

// The WASM module can only address its own memory, so probes and results pass through a
// scratch region this thread reserves for itself (allocation is atomic across threads).
function createWasmKernel(memory: SharedMemory, views: MemoryViews, module: WebAssembly.Module): ScanKernel {
  if (!memory.wasm) throw new Error('the WASM backend scans a wasm memory only')
  const exports = new WebAssembly.Instance(module, { env: { memory: memory.wasm } }).exports as unknown as WasmExports
  let scratchOffset = 0
  let scratchBytes = 0
  const reserve = (bytes: number): number => {
    if (bytes > scratchBytes) {
      scratchBytes = Math.max(bytes, 65536)
      scratchOffset = memory.allocate(scratchBytes)
    }
    return scratchOffset
  }
  const wasm: WasmScratch = { exports, views, reserve }
  return {
    info: { name: 'wasm', isa: 'simd128', popcountIsa: 'simd128' },
    scan: (...args) => wasmScan(wasm, ...args),
    nearest: (...args) => wasmNearest(wasm, ...args),
    scorePairs: (...args) => wasmScorePairs(wasm, ...args),
    streamRead(offset, length) {
      return exports.streamRead(offset, length)
    },
  }
}

/** A WASM instance and the scratch region (reserved by this thread) its calls pass arrays through. */
interface WasmScratch {
  exports: WasmExports
  views: MemoryViews
  /** The offset of at least `bytes` of scratch, reused while big enough. */
  reserve(bytes: number): number
}

function wasmScan(wasm: WasmScratch, ...[segment, shape, probes, probeNorms, k, outRows, outScores]: Parameters<ScanKernel['scan']>): void {
  const probeCount = probeNorms.length
  const slots = probeCount * k
  // Layout: scores (8-aligned) | rows | probe norms | probes.
  const scoresAt = 0
  const rowsAt = scoresAt + slots * 8
  const normsAt = rowsAt + slots * 4
  const probesAt = normsAt + probeCount * 4
  const base = wasm.reserve(probesAt + probes.length)
  const buffer = wasm.views.bufferCovering(base + probesAt + probes.length)
  new Int8Array(buffer, base + probesAt, probes.length).set(probes)
  new Uint32Array(buffer, base + normsAt, probeCount).set(probeNorms)
  wasm.exports.scanTopK(
    segment.rowsOffset,
    shape.strideInBytes,
    shape.dimension,
    segment.rowStart,
    segment.rowEnd,
    segment.normsOffset,
    segment.liveOffset,
    base + probesAt,
    base + normsAt,
    probeCount,
    k,
    base + rowsAt,
    base + scoresAt,
  )
  outRows.set(new Int32Array(buffer, base + rowsAt, slots))
  outScores.set(new Float64Array(buffer, base + scoresAt, slots))
}

function wasmNearest(wasm: WasmScratch, ...[segment, shape, probeBits, c, outRows, outDistances]: Parameters<ScanKernel['nearest']>): void {
  const probeCount = probeBits.length / shape.signBytes
  const slots = probeCount * c
  // Layout: rows | distances | probe bits.
  const distancesAt = slots * 4
  const bitsAt = distancesAt + slots * 4
  const base = wasm.reserve(bitsAt + probeBits.length)
  const buffer = wasm.views.bufferCovering(base + bitsAt + probeBits.length)
  new Uint8Array(buffer, base + bitsAt, probeBits.length).set(probeBits)
  new Int32Array(buffer, base, slots).set(outRows.subarray(0, slots))
  new Uint32Array(buffer, base + distancesAt, slots).set(outDistances.subarray(0, slots))
  wasm.exports.mergeNearestBySignBits(
    segment.bitsOffset,
    shape.signBytes,
    shape.signBytes,
    segment.rowStart,
    segment.rowEnd,
    segment.baseRow,
    segment.liveOffset,
    base + bitsAt,
    probeCount,
    c,
    base,
    base + distancesAt,
  )
  outRows.set(new Int32Array(buffer, base, slots))
  outDistances.set(new Uint32Array(buffer, base + distancesAt, slots))
}

function wasmScorePairs(
  wasm: WasmScratch,
  ...[segment, shape, pairRows, pairProbes, probes, probeNorms, outScores]: Parameters<ScanKernel['scorePairs']>
): void {
  const pairs = pairRows.length
  // Layout: scores (8-aligned) | rows | probe indexes | probe norms | probes.
  const rowsAt = pairs * 8
  const probeIndexesAt = rowsAt + pairs * 4
  const normsAt = probeIndexesAt + pairs * 4
  const probesAt = normsAt + probeNorms.length * 4
  const base = wasm.reserve(probesAt + probes.length)
  const buffer = wasm.views.bufferCovering(base + probesAt + probes.length)
  new Int32Array(buffer, base + rowsAt, pairs).set(pairRows)
  new Uint32Array(buffer, base + probeIndexesAt, pairs).set(pairProbes)
  new Uint32Array(buffer, base + normsAt, probeNorms.length).set(probeNorms)
  new Int8Array(buffer, base + probesAt, probes.length).set(probes)
  wasm.exports.scorePairs(
    segment.rowsOffset,
    shape.strideInBytes,
    shape.dimension,
    segment.normsOffset,
    base + rowsAt,
    base + probeIndexesAt,
    pairs,
    base + probesAt,
    base + normsAt,
    base,
  )
  outScores.set(new Float64Array(buffer, base, pairs))
}
