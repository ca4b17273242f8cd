/// <reference path="./webassembly.d.ts" preserve="true" />
// Finds the scan backends: the napi addon (native SIMD), the AssemblyScript module (WASM SIMD)
// and the TypeScript reference, in that order of preference. Loading may fail (no Rust
// toolchain at install, no WASM build); `loadX` returns the reason instead of throwing so the
// caller can fall back and say why.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

export type BackendName = 'native' | 'wasm' | 'js'
export type BackendChoice = BackendName | 'auto'
export const BACKEND_NAMES: readonly BackendName[] = ['native', 'wasm', 'js']

export interface BackendInfo {
  name: BackendName
  /** native: the addon's active kernel (e.g. 'avx512vnni', 'avx2', 'scalar'); wasm: 'simd128'; js: 'scalar'. */
  isa: string
  /** The popcount kernel of two-stage searches (native: 'avx512vpopcntdq', 'avx2', 'neon', 'scalar'). */
  popcountIsa?: string
}

/** The napi addon's exports (napi/). */
export interface NativeAddon {
  /** glibc `malloc_trim(0)`: true when memory went back to the system (see napi/src/heap.rs). */
  releaseFreeHeap(): boolean
  /** glibc `mallopt(M_ARENA_MAX, count)` for arenas not yet created: true when set (see napi/src/heap.rs). */
  limitMallocArenas(count: number): boolean
  /** Offers the buffer's 2 MiB-aligned part transparent huge pages (Linux; false elsewhere or when nothing is aligned). */
  adviseHugePages(bytes: Uint8Array): boolean
  /** Bytes from the start of `bytes` to the first address that is a multiple of `alignment` (a power of two). */
  bytesToAlignment(bytes: Uint8Array, alignment: number): number
  scanTopK(
    gallery: Int8Array,
    strideInBytes: number,
    dimension: number,
    rowStart: number,
    rowEnd: number,
    normsSquared: Uint32Array,
    live: Uint8Array,
    probes: Int8Array,
    probeNormsSquared: Uint32Array,
    k: number,
    outRows: Int32Array,
    outScores: Float64Array,
    scoreFloors?: Float64Array,
  ): void
  dotI8(a: Int8Array, b: Int8Array): number
  activeIsa(): string
  availableIsas(): string[]
  setIsa(name: string): string
  streamRead(buffer: Int8Array): number
  mergeNearestBySignBits(
    bits: Uint8Array,
    bitsStride: number,
    signBytes: number,
    rowStart: number,
    rowEnd: number,
    baseRow: number,
    live: Uint8Array,
    probeBits: Uint8Array,
    c: number,
    outRows: Int32Array,
    outDistances: Uint32Array,
  ): void
  scorePairs(
    gallery: Int8Array,
    strideInBytes: number,
    dimension: number,
    normsSquared: Uint32Array,
    pairRows: Int32Array,
    pairProbes: Uint32Array,
    probes: Int8Array,
    probeNormsSquared: Uint32Array,
    outScores: Float64Array,
  ): void
  activePopcountIsa(): string
  limits(): { maxK: number; maxDimension: number; maxCandidates: number }
  chooseIsa(requested: string | undefined): { isa: string; warning?: string }
  /** AES-256-GCM over many blobs (crates/sealing, bound by napi/src/sealing.rs; used by the service's src/keys/gcm-batch.ts). */
  gcmOpenBatch(
    keys: Uint8Array,
    keyOfItem: Uint32Array,
    sealed: Uint8Array,
    sealedEnds: Uint32Array,
    aad: Uint8Array,
    aadEnds: Uint32Array,
    out: Uint8Array,
    opened: Uint8Array,
  ): number
  gcmSealBatch(
    keys: Uint8Array,
    keyOfItem: Uint32Array,
    plain: Uint8Array,
    plainEnds: Uint32Array,
    aad: Uint8Array,
    aadEnds: Uint32Array,
    nonces: Uint8Array,
    out: Uint8Array,
  ): void
}

/** The AssemblyScript module's exports (assembly/index.ts): arrays are byte offsets. */
export interface WasmExports {
  scanTopK(
    gallery: number,
    strideInBytes: number,
    dimension: number,
    rowStart: number,
    rowEnd: number,
    normsSquared: number,
    live: number,
    probes: number,
    probeNormsSquared: number,
    probeCount: number,
    k: number,
    outRows: number,
    outScores: number,
  ): void
  dotI8(a: number, b: number, length: number): number
  streamRead(offset: number, length: number): number
  mergeNearestBySignBits(
    bits: number,
    bitsStride: number,
    signBytes: number,
    rowStart: number,
    rowEnd: number,
    baseRow: number,
    live: number,
    probeBits: number,
    probeCount: number,
    c: number,
    outRows: number,
    outDistances: number,
  ): void
  scorePairs(
    gallery: number,
    strideInBytes: number,
    dimension: number,
    normsSquared: number,
    pairRows: number,
    pairProbes: number,
    pairCount: number,
    probes: number,
    probeNormsSquared: number,
    outScores: number,
  ): void
}

export type Loaded<T> = { ok: true; value: T } | { ok: false; reason: string }

// src/*.ts and dist/*.js both sit one level below the package root.
const packageRoot = new URL('../', import.meta.url)
/** A build from source in a checkout (`npm run build:native`): it wins over the platform package. */
export const NATIVE_ADDON_PATH = fileURLToPath(new URL('native/palmvein_matcher.node', packageRoot))
export const WASM_MODULE_PATH = fileURLToPath(new URL('build/matcher.wasm', packageRoot))

/** The platforms a prebuilt addon is published for (packages/matcher/npm/<platform>/). */
export const PREBUILT_PLATFORMS: readonly string[] = ['linux-x64-gnu', 'linux-x64-musl', 'linux-arm64-gnu', 'linux-arm64-musl']

/** This machine's napi-rs platform name: `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, ... */
export function nativePlatform(): string {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  // glibc reports its version in the process report; musl (Alpine) does not.
  const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime
  return `linux-${process.arch}-${glibc ? 'gnu' : 'musl'}`
}

/** The napi-rs platform package of this machine (@palmvein/matcher-linux-x64-gnu, ...), an optional dependency. */
export function nativePlatformPackage(platform = nativePlatform()): string {
  return `@palmvein/matcher-${platform}`
}

/**
 * The addon: a local build from source (native/palmvein_matcher.node) when there is one, else the
 * prebuilt platform package of this platform and libc. When neither loads, the reason says why, and
 * the matcher falls back to WASM with it.
 */
export function loadNativeAddon(path = NATIVE_ADDON_PATH): Loaded<NativeAddon> {
  if (path !== NATIVE_ADDON_PATH || fs.existsSync(path)) return loadAddonFrom(path)
  const platform = nativePlatform()
  if (!PREBUILT_PLATFORMS.includes(platform)) {
    return { ok: false, reason: `${path} was not built, and no prebuilt addon is published for ${platform} (only ${PREBUILT_PLATFORMS.join(', ')})` }
  }
  const fromPackage = loadAddonFrom(nativePlatformPackage(platform))
  return fromPackage.ok ? fromPackage : { ok: false, reason: `${path} was not built, and ${fromPackage.reason}` }
}

function loadAddonFrom(path: string): Loaded<NativeAddon> {
  try {
    const addon = createRequire(import.meta.url)(path) as NativeAddon
    for (const name of [
      'scanTopK',
      'dotI8',
      'activeIsa',
      'availableIsas',
      'setIsa',
      'streamRead',
      'mergeNearestBySignBits',
      'scorePairs',
      'activePopcountIsa',
      'limits',
      'chooseIsa',
      'releaseFreeHeap',
      'limitMallocArenas',
      'adviseHugePages',
      'bytesToAlignment',
      'gcmOpenBatch',
      'gcmSealBatch',
    ] as const) {
      if (typeof addon[name] !== 'function') return { ok: false, reason: `${path} does not export ${name}` }
    }
    return { ok: true, value: addon }
  } catch (error) {
    return { ok: false, reason: `cannot load ${path}: ${(error as Error).message.split('\n')[0]}` }
  }
}

let compiledWasm: Loaded<WebAssembly.Module> | undefined

/** Compiles build/matcher.wasm once per thread (it is 1–2 KB; synchronous compilation is fine). */
export function loadWasmModule(path = WASM_MODULE_PATH): Loaded<WebAssembly.Module> {
  if (path === WASM_MODULE_PATH && compiledWasm) return compiledWasm
  let result: Loaded<WebAssembly.Module>
  try {
    result = { ok: true, value: new WebAssembly.Module(fs.readFileSync(path)) }
  } catch (error) {
    result = { ok: false, reason: `cannot load ${path}: ${(error as Error).message}` }
  }
  if (path === WASM_MODULE_PATH) compiledWasm = result
  return result
}

/** Option, then PALMVEIN_MATCHER_BACKEND, then 'auto'. */
export function resolveBackendChoice(option: BackendChoice | undefined, environment = process.env): BackendChoice {
  if (option && option !== 'auto') return option
  const fromEnvironment = environment.PALMVEIN_MATCHER_BACKEND?.trim().toLowerCase()
  if (!fromEnvironment || fromEnvironment === 'auto') return 'auto'
  if ((BACKEND_NAMES as readonly string[]).includes(fromEnvironment)) return fromEnvironment as BackendName
  throw new RangeError(`PALMVEIN_MATCHER_BACKEND="${fromEnvironment}" is not one of auto, native, wasm, js`)
}

/** Backends that load on this machine, best first (used by tests and benchmarks). */
export function availableBackends(): BackendName[] {
  const names: BackendName[] = []
  if (loadNativeAddon().ok) names.push('native')
  if (loadWasmModule().ok) names.push('wasm')
  names.push('js')
  return names
}
