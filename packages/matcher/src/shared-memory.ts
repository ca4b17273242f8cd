/// <reference path="./webassembly.d.ts" preserve="true" />
// The galleries' home, shared by every worker without copies. Two kinds:
//   - a shared, growable WebAssembly.Memory (the WASM backend scans it in place; wasm32 caps it
//     at 4 GiB). Growing is atomic across threads, so workers may reserve scratch in it too;
//     views made earlier stay valid because a shared memory never moves.
//   - slabs: SharedArrayBuffers of 1 GiB (or one region's size if larger), added as galleries
//     grow, for the native and JS backends: no 4 GiB ceiling. Offsets are virtual: slab i starts
//     at i * 2^32, and a region never crosses a slab, so every view stays below 4 GiB (V8 on
//     Node 20 refuses larger typed arrays). The operating system commits a slab's pages only
//     when rows are written. Only the main thread allocates; workers receive the slab list with
//     each task (structured clone shares the memory, it does not copy it). With the native
//     addon, regions start on a cache line, and regions of 2 MiB or more on a huge page: a 1 GiB
//     SharedArrayBuffer comes from calloc, 16 bytes past a page boundary, and rows laid from its
//     start straddled cache lines (Zen 5, 1M x 256: one probe 7.4 ms instead of 6.5, stage 1 of
//     the two-stage search 1.05 ms instead of 0.86).
// Memory is never given back: a gallery's compaction reuses its own chunks instead.
import os from 'node:os'

export const PAGE_BYTES = 65536
/** wasm32's limit and the maximum the AssemblyScript module's memory import declares. */
export const MAX_PAGES = 65536

export interface SharedMemory {
  /** The bytes (a wasm memory's buffer object is replaced when it grows: read it again). */
  readonly buffer: SharedArrayBuffer
  /** Bytes reserved so far. */
  readonly usedBytes: number
  /** The budget: reserving past it fails with "matcher memory is full". */
  readonly capacityBytes: number
  /** The wasm memory, for the WASM backend (undefined for a buffer memory). */
  readonly wasm?: WebAssembly.Memory
  /** What a worker needs to see the same bytes (structured-cloned without copying). */
  readonly handle: WebAssembly.Memory | SharedArrayBuffer[]
  /** A slab memory's slabs (slab i holds the virtual offsets [i * 2^32, i * 2^32 + its length)). */
  readonly slabs?: SharedArrayBuffer[]
  /** Reserves `bytes` (rounded up to 64 KiB) and returns the region's byte offset. */
  allocate(bytes: number): number
  /** Asks the system to back fresh, untouched bytes with huge pages (where the native addon is loaded). */
  readonly adviseHugePages?: HugePageAdvice
}

export type HugePageAdvice = (bytes: Uint8Array) => unknown

/** What the native addon can do with the addresses of a memory's bytes. */
export interface NativePages {
  adviseHugePages: HugePageAdvice
  /** Bytes from the start of `bytes` to the first address that is a multiple of `alignment`. */
  bytesToAlignment(bytes: Uint8Array, alignment: number): number
}

const CACHE_LINE_BYTES = 64
const HUGE_PAGE_BYTES = 2 << 20

const modulo = (value: number, divisor: number) => ((value % divisor) + divisor) % divisor
/** The first offset from `from` on whose address is aligned, given that `anchor`'s is. */
const nextAligned = (from: number, anchor: number, alignment: number) => from + modulo(anchor - from, alignment)

const full = (detail: string) => new RangeError(`matcher memory is full: ${detail}`)

/**
 * A shared wasm memory of at most `maximumBytes` (and 4 GiB). Its start is page-aligned, so its
 * 64 KiB pages start on cache lines; with the addon, regions of 2 MiB or more start on a huge page.
 */
export function createSharedMemory(maximumBytes: number, pages?: NativePages): SharedMemory {
  const maximum = Math.max(2, Math.min(MAX_PAGES, Math.ceil(maximumBytes / PAGE_BYTES)))
  // Page 0 stays reserved for the WASM module's own static data (it has none today).
  const memory = new WebAssembly.Memory({ initial: 1, maximum, shared: true })
  const hugePageStart = pages?.bytesToAlignment(new Uint8Array(memory.buffer, 0, 1), HUGE_PAGE_BYTES)
  return wrapWasmMemory(memory, maximum * PAGE_BYTES, pages && { advise: pages.adviseHugePages, hugePageStart: hugePageStart! })
}

function wrapWasmMemory(memory: WebAssembly.Memory, capacityBytes: number, huge?: { advise: HugePageAdvice; hugePageStart: number }): SharedMemory {
  return {
    get buffer() {
      return memory.buffer as unknown as SharedArrayBuffer
    },
    get usedBytes() {
      return memory.buffer.byteLength
    },
    capacityBytes,
    wasm: memory,
    handle: memory,
    adviseHugePages: huge?.advise,
    allocate(bytes) {
      const pages = Math.max(1, Math.ceil(bytes / PAGE_BYTES))
      // Pages skipped so the region starts on a huge page (where a 64 KiB page can). A worker
      // growing the memory for its scratch meanwhile only costs the alignment: the region still
      // lies in what was grown.
      const end = memory.buffer.byteLength
      const gap = huge && bytes >= HUGE_PAGE_BYTES ? nextAligned(end, huge.hugePageStart, HUGE_PAGE_BYTES) - end : 0
      const skip = gap % PAGE_BYTES === 0 ? gap / PAGE_BYTES : 0
      try {
        return (memory.grow(skip + pages) + skip) * PAGE_BYTES
      } catch (error) {
        throw full(`cannot grow by ${skip + pages} pages of 64 KiB within ${capacityBytes} bytes (${String(error)})`)
      }
    },
  }
}

/** The default budget of a slab memory: the machine's memory. */
export function defaultSlabBudget(): number {
  return os.totalmem()
}

const SLAB_STRIDE = 2 ** 32
const SLAB_BYTES = 2 ** 30

/** Slabs of SharedArrayBuffer up to a budget of `capacityBytes`. */
export function createSlabMemory(capacityBytes: number, pages?: NativePages): SharedMemory {
  const slabs: SharedArrayBuffer[] = []
  /** Per slab, the offset of its first 2 MiB-aligned address (with the addon). */
  const hugePageStarts: number[] = []
  let slabUsed = 0
  let used = 0
  /** Where a region of `size` bytes starts in the last slab, at or after `from` (unaligned without the addon: addresses unknown). */
  const startOf = (size: number, from: number) =>
    pages ? nextAligned(from, hugePageStarts[slabs.length - 1], size >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : CACHE_LINE_BYTES) : from
  const memory: SharedMemory = {
    get buffer(): SharedArrayBuffer {
      throw new Error('a slab memory has no single buffer; use MemoryViews')
    },
    get usedBytes() {
      return used
    },
    capacityBytes,
    get handle() {
      return [...slabs]
    },
    slabs,
    adviseHugePages: pages?.adviseHugePages,
    allocate(bytes) {
      const size = Math.max(1, Math.ceil(bytes / PAGE_BYTES)) * PAGE_BYTES
      // (Its alignment may move it up to 2 MiB into its slab, whose virtual offsets end at 4 GiB.)
      if (size > SLAB_STRIDE - HUGE_PAGE_BYTES) throw new RangeError(`a matcher region of ${size} bytes is larger than 4 GiB less 2 MiB; lower chunkRows`)
      if (used + size > capacityBytes) {
        throw full(`${size} more bytes do not fit the budget of ${capacityBytes} bytes (${used} in use); raise maxMemoryBytes`)
      }
      let start = slabs.length > 0 ? startOf(size, slabUsed) : Infinity
      if (start + size > (slabs.at(-1)?.byteLength ?? 0)) {
        // Room for the region after its alignment too.
        const slabBytes = Math.max(SLAB_BYTES, size + (pages ? HUGE_PAGE_BYTES : 0))
        let slab: SharedArrayBuffer
        try {
          slab = new SharedArrayBuffer(slabBytes)
        } catch (error) {
          throw full(`the system refused ${slabBytes} more bytes (${String(error)})`)
        }
        slabs.push(slab)
        if (pages) hugePageStarts.push(pages.bytesToAlignment(new Uint8Array(slab, 0, 1), HUGE_PAGE_BYTES))
        start = startOf(size, 0)
      }
      const offset = (slabs.length - 1) * SLAB_STRIDE + start
      slabUsed = start + size
      used += size
      return offset
    },
  }
  return memory
}

/** A worker's view of the main thread's memory, from its handle (slabs: refreshed per task by `adopt`). */
export function openSharedMemory(handle: SharedMemory['handle']): SharedMemory {
  if (handle instanceof WebAssembly.Memory) return wrapWasmMemory(handle, MAX_PAGES * PAGE_BYTES)
  const slabs = [...handle]
  return {
    get buffer(): SharedArrayBuffer {
      throw new Error('a slab memory has no single buffer; use MemoryViews')
    },
    usedBytes: 0,
    capacityBytes: 0,
    handle: slabs,
    slabs,
    allocate: () => {
      throw new Error('only the main thread allocates in a slab memory')
    },
  }
}

/** Gives a worker's slab memory the slabs the main thread has now (each task carries them). */
export function adoptSlabs(memory: SharedMemory, slabs: readonly SharedArrayBuffer[] | undefined): void {
  if (!memory.slabs || !slabs) return
  for (let index = memory.slabs.length; index < slabs.length; index++) memory.slabs.push(slabs[index])
}

/** Reserves `bytes` of `memory`; see `SharedMemory.allocate`. */
export function allocateRegion(memory: SharedMemory, bytes: number): number {
  return memory.allocate(bytes)
}

/**
 * Typed-array views of a memory at virtual offsets. A wasm memory's buffer is cached and
 * refreshed only when a region lies beyond the cached length; a slab memory maps an offset to
 * its slab.
 */
export class MemoryViews {
  private buffer: SharedArrayBuffer | undefined
  constructor(readonly memory: SharedMemory) {
    this.buffer = memory.slabs ? undefined : memory.buffer
  }

  /** The wasm memory's buffer covering `end` (wasm memories only). */
  bufferCovering(end: number): SharedArrayBuffer {
    if (!this.buffer || end > this.buffer.byteLength) this.buffer = this.memory.buffer
    return this.buffer
  }

  private locate(offset: number, bytes: number): [SharedArrayBuffer, number] {
    const { slabs } = this.memory
    if (!slabs) return [this.bufferCovering(offset + bytes), offset]
    const slab = Math.floor(offset / SLAB_STRIDE)
    if (slab >= slabs.length) throw new RangeError(`offset ${offset} lies in slab ${slab}, which this thread has not received`)
    return [slabs[slab], offset - slab * SLAB_STRIDE]
  }

  int8(offset: number, length: number): Int8Array {
    const [buffer, at] = this.locate(offset, length)
    return new Int8Array(buffer, at, length)
  }

  uint8(offset: number, length: number): Uint8Array {
    const [buffer, at] = this.locate(offset, length)
    return new Uint8Array(buffer, at, length)
  }

  uint32(offset: number, length: number): Uint32Array {
    const [buffer, at] = this.locate(offset, length * 4)
    return new Uint32Array(buffer, at, length)
  }
}
