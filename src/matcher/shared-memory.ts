// The gallery's home: one shared, growable WebAssembly.Memory. Its buffer is a
// SharedArrayBuffer, so the WASM module scans it in place, the native addon and the JS reference
// take typed-array views over it, and every worker sees the same bytes without a copy. A shared
// memory never moves when it grows, so views made earlier stay valid (over their old length).

export const PAGE_BYTES = 65536
/** wasm32's limit and the maximum the AssemblyScript module's memory import declares. */
export const MAX_PAGES = 65536

export function createSharedMemory(maximumBytes: number): WebAssembly.Memory {
  const maximum = Math.max(2, Math.min(MAX_PAGES, Math.ceil(maximumBytes / PAGE_BYTES)))
  // Page 0 stays reserved for the WASM module's own static data (it has none today).
  return new WebAssembly.Memory({ initial: 1, maximum, shared: true })
}

/**
 * Reserves `bytes` (rounded up to whole pages) and returns the region's byte offset. Growing is
 * atomic across threads, so any thread may allocate this way: the region between the old and
 * the new size belongs to the caller alone. Memory is never given back (wasm cannot shrink).
 */
export function allocateRegion(memory: WebAssembly.Memory, bytes: number): number {
  const pages = Math.max(1, Math.ceil(bytes / PAGE_BYTES))
  try {
    return memory.grow(pages) * PAGE_BYTES
  } catch (error) {
    throw new RangeError(`matcher memory is full: cannot grow by ${pages} pages (${String(error)})`)
  }
}

/** Caches the memory's buffer, refreshing it only when a region lies beyond the cached length. */
export class MemoryViews {
  private buffer: SharedArrayBuffer
  constructor(readonly memory: WebAssembly.Memory) {
    this.buffer = memory.buffer as unknown as SharedArrayBuffer
  }

  bufferCovering(end: number): SharedArrayBuffer {
    if (end > this.buffer.byteLength) this.buffer = this.memory.buffer as unknown as SharedArrayBuffer
    return this.buffer
  }

  int8(offset: number, length: number): Int8Array {
    return new Int8Array(this.bufferCovering(offset + length), offset, length)
  }

  uint8(offset: number, length: number): Uint8Array {
    return new Uint8Array(this.bufferCovering(offset + length), offset, length)
  }

  uint32(offset: number, length: number): Uint32Array {
    return new Uint32Array(this.bufferCovering(offset + length * 4), offset, length)
  }
}
