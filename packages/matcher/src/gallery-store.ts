// The rows of one gallery partition inside the shared memory, and its id <-> row maps (main
// thread only; see id-index.ts).
//
// Layout: fixed-size chunks of `chunkRows` rows, each one region of the shared memory:
//   rows   chunkRows * strideInBytes int8 (stride = dimension rounded up to 64 bytes; padding 0)
//   norms  chunkRows u32, the squared integer norm of each row
//   live   chunkRows u8, 1 = live, 0 = dead (tombstone)
//   bits   chunkRows * signBytes, each row's sign bits (stage 1 of a two-stage search reads
//          only these: d/8 bytes a row instead of d)
// Growth appends a chunk and never moves existing rows, so scans in flight keep valid offsets.
//
// Consistency: a row's bytes are written before its live flag (Atomics.store orders them), and
// only rows at or beyond the current row count are ever written, except by compaction, which
// runs only when no scan is in flight (the scan gate below). A scan therefore sees a fixed set
// of rows; a row removed while it runs is dropped when its results are mapped back to ids.
import { MemoryViews, type SharedMemory } from './shared-memory.js'
import { normSquaredInt8 } from './quantize.js'
import { planSegments, type ChunkLocation } from './scan-plan.js'
import { signBytesFor, writeSignBits } from './sign-bits.js'
import type { ScanShape, Segment } from './kernel.js'
import { createIdIndex, type IdIndex, type IdKind } from './id-index.js'

interface Chunk extends ChunkLocation {
  rows: Int8Array
  norms: Uint32Array
  live: Uint8Array
  bits: Uint8Array
}

export class GalleryStore {
  readonly shape: ScanShape
  private readonly chunks: Chunk[] = []
  private readonly views: MemoryViews
  readonly ids: IdIndex
  private rowCount = 0
  private scansInFlight = 0
  /** Compactions so far: row numbers read before one do not hold after it (readRows' callers start again). */
  compactions = 0
  private compaction: { promise: Promise<void>; resolve: () => void } | null = null

  constructor(
    readonly memory: SharedMemory,
    dimension: number,
    readonly chunkRows: number,
    idKind: IdKind = 'string',
  ) {
    this.ids = createIdIndex(idKind)
    this.shape = { dimension, strideInBytes: Math.ceil(dimension / 64) * 64, signBytes: signBytesFor(dimension) }
    this.views = new MemoryViews(memory)
  }

  /** Live rows. */
  get size(): number {
    return this.ids.size
  }

  /** Rows in use, live or dead (the extent a scan covers). */
  get rows(): number {
    return this.rowCount
  }

  get deadRows(): number {
    return this.rowCount - this.ids.size
  }

  has(id: string): boolean {
    return this.ids.rowOf(id) !== undefined
  }

  /** The id at `row` if that row is live now, else undefined. */
  idAt(row: number): string | undefined {
    return this.ids.idAt(row)
  }

  /** Stores a validated int8 vector; an existing id is tombstoned and re-appended. */
  upsert(id: string, vector: Int8Array): void {
    const row = this.rowCount
    // Reserve first: if memory is full, nothing has changed.
    const chunk = this.chunkFor(row)
    const previous = this.ids.place(id, row)
    if (previous !== undefined) this.markDead(previous)
    const local = row % this.chunkRows
    chunk.rows.set(vector, local * this.shape.strideInBytes)
    chunk.norms[local] = normSquaredInt8(vector)
    writeSignBits(vector, chunk.bits, local * this.shape.signBytes)
    Atomics.store(chunk.live, local, 1)
    this.rowCount = row + 1
  }

  /**
   * Stores `count` validated rows at once (a load): the vectors packed, `dimension` bytes each, with
   * their norms and sign bits (prepareRows or a page read out); `ids` as strings already
   * normalised, or 16 bytes each for 'uuid' ids. An id already stored, or met again in the page,
   * keeps its last row, as one upsert after another would. All or nothing: the chunks are reserved
   * first, so a full memory changes nothing.
   */
  upsertRows(ids: readonly string[] | Uint8Array, vectors: Int8Array, norms: Uint32Array, signBits: Uint8Array, count: number): void {
    if (count === 0) return
    const first = this.rowCount
    this.chunkFor(first + count - 1)
    // Rows, norms, bits and live flags chunk by chunk, before any id points at them.
    this.writeRows(first, vectors, norms, signBits, count)
    // The ids last: one met again (in the store or the page) kills its earlier row.
    const bytes = ids instanceof Uint8Array ? ids : null
    for (let index = 0; index < count; index++) {
      const row = first + index
      const previous = bytes ? this.ids.placeBytes(bytes, index * 16, row) : this.ids.place((ids as readonly string[])[index], row)
      if (previous !== undefined) this.markDead(previous)
    }
    // A scan covers the rows below the count it read as it began (beginScan): these are whole before they count.
    this.rowCount = first + count
  }

  /**
   * Writes `count` live rows in place from `firstRow` (rows a self-join laid out ahead and fills
   * later: the import's cell index), keeping their ids. Only while no scan is in flight: a scan
   * reads a fixed set of rows. A removed row is refused: writing it would bring it back to life
   * without an id.
   */
  overwriteRows(firstRow: number, vectors: Int8Array, norms: Uint32Array, signBits: Uint8Array, count: number): void {
    if (this.scansInFlight > 0) throw new Error('rows are written in place only while no scan is in flight')
    if (!Number.isInteger(firstRow) || firstRow < 0 || firstRow + count > this.rowCount) {
      throw new RangeError(`rows ${firstRow}..${firstRow + count} are not all below the row count ${this.rowCount}`)
    }
    for (let row = firstRow; row < firstRow + count; row++) {
      if (this.ids.idAt(row) === undefined) throw new RangeError(`row ${row} was removed`)
    }
    this.writeRows(firstRow, vectors, norms, signBits, count)
  }

  /** Rows [first, first + count) of reserved chunks: vectors, norms, sign bits, live flags. */
  private writeRows(first: number, vectors: Int8Array, norms: Uint32Array, signBits: Uint8Array, count: number): void {
    const { dimension, strideInBytes, signBytes } = this.shape
    for (let done = 0; done < count; ) {
      const row = first + done
      const chunk = this.chunks[Math.floor(row / this.chunkRows)]
      const local = row % this.chunkRows
      const run = Math.min(count - done, this.chunkRows - local)
      if (strideInBytes === dimension) {
        chunk.rows.set(vectors.subarray(done * dimension, (done + run) * dimension), local * strideInBytes)
      } else {
        for (let index = 0; index < run; index++) {
          chunk.rows.set(vectors.subarray((done + index) * dimension, (done + index + 1) * dimension), (local + index) * strideInBytes)
        }
      }
      chunk.norms.set(norms.subarray(done, done + run), local)
      chunk.bits.set(signBits.subarray(done * signBytes, (done + run) * signBytes), local * signBytes)
      chunk.live.fill(1, local, local + run)
      done += run
    }
  }

  /** Room in the id maps for `rows` more rows (a load that knows its size). */
  reserve(rows: number): void {
    this.ids.reserve(this.ids.size + rows)
  }

  remove(id: string): boolean {
    const row = this.ids.rowOf(id)
    if (row === undefined) return false
    this.kill(row)
    return true
  }

  /** A copy of the stored int8 vector of a live id (gallery.vector). */
  vectorOf(id: string): Int8Array | undefined {
    const row = this.ids.rowOf(id)
    if (row === undefined) return undefined
    const chunk = this.chunks[Math.floor(row / this.chunkRows)]
    const at = (row % this.chunkRows) * this.shape.strideInBytes
    return chunk.rows.slice(at, at + this.shape.dimension)
  }

  /** Copies row `row`'s vector into `out` at `offset` and returns its squared norm (a self-join's probes). */
  copyRow(row: number, out: Int8Array, offset: number): number {
    const chunk = this.chunks[Math.floor(row / this.chunkRows)]
    const local = row % this.chunkRows
    const at = local * this.shape.strideInBytes
    out.set(chunk.rows.subarray(at, at + this.shape.dimension), offset)
    return chunk.norms[local]
  }

  /** The live rows among [from, from + limit): ids, vectors (`dimension` bytes each, end to end), norms and sign bits, and where to read on (null: the end). */
  readRows(from: number, limit: number): { ids: string[]; vectors: Int8Array; norms: Uint32Array; signBits: Uint8Array; next: number | null } {
    const end = Math.min(this.rowCount, from + limit)
    const { dimension, signBytes } = this.shape
    const ids: string[] = []
    const capacity = Math.max(0, end - from)
    const vectors = new Int8Array(capacity * dimension)
    const norms = new Uint32Array(capacity)
    const signBits = new Uint8Array(capacity * signBytes)
    for (let row = from; row < end; row++) {
      const id = this.ids.idAt(row)
      if (id === undefined) continue
      const chunk = this.chunks[Math.floor(row / this.chunkRows)]
      const local = row % this.chunkRows
      norms[ids.length] = this.copyRow(row, vectors, ids.length * dimension)
      signBits.set(chunk.bits.subarray(local * signBytes, (local + 1) * signBytes), ids.length * signBytes)
      ids.push(id)
    }
    return {
      ids,
      vectors: vectors.subarray(0, ids.length * dimension),
      norms: norms.subarray(0, ids.length),
      signBits: signBits.subarray(0, ids.length * signBytes),
      next: end < this.rowCount ? end : null,
    }
  }

  /**
   * Copies the rows `rows` (packed, `dimension` bytes each) into `out` and their squared norms into
   * `norms`: a self-join gathers millions of probes, and a view a row (copyRow) cost more than the
   * copy. Word by word where every offset allows it (the stride is a multiple of 64 bytes).
   */
  copyRows(rows: ArrayLike<number>, out: Int8Array, norms: Uint32Array): void {
    const { dimension, strideInBytes } = this.shape
    const words = dimension / 4
    const aligned = dimension % 4 === 0 && out.byteOffset % 4 === 0 && this.chunks.every((chunk) => chunk.rows.byteOffset % 4 === 0)
    if (!aligned) {
      for (let index = 0; index < rows.length; index++) norms[index] = this.copyRow(rows[index], out, index * dimension)
      return
    }
    const target = new Int32Array(out.buffer, out.byteOffset, rows.length * words)
    const sources = this.chunks.map((chunk) => new Int32Array(chunk.rows.buffer, chunk.rows.byteOffset, chunk.rows.length / 4))
    const strideWords = strideInBytes / 4
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]
      const chunk = Math.floor(row / this.chunkRows)
      const local = row - chunk * this.chunkRows
      const source = sources[chunk]
      const from = local * strideWords
      const to = index * words
      for (let word = 0; word < words; word++) target[to + word] = source[from + word]
      norms[index] = this.chunks[chunk].norms[local]
    }
  }

  segments(rowEnd = this.rowCount): Segment[] {
    return planSegments(this.chunks, this.chunkRows, rowEnd)
  }

  /** Waits for a pending compaction, then counts the scan in; returns the rows it may cover. */
  async beginScan(): Promise<number> {
    while (this.compaction) await this.compaction.promise
    this.scansInFlight++
    return this.rowCount
  }

  endScan(): void {
    this.scansInFlight--
    if (this.scansInFlight === 0 && this.compaction) this.compactNow()
  }

  /** Moves live rows into the holes once no scan is in flight; new scans wait for it. */
  compact(): Promise<void> {
    if (!this.compaction) {
      let resolve!: () => void
      const promise = new Promise<void>((done) => {
        resolve = done
      })
      this.compaction = { promise, resolve }
      if (this.scansInFlight === 0)
        queueMicrotask(() => {
          if (this.scansInFlight === 0 && this.compaction) this.compactNow()
        })
    }
    return this.compaction.promise
  }

  private compactNow(): void {
    const { strideInBytes, signBytes } = this.shape
    let hole = 0
    let tail = this.rowCount - 1
    // Two pointers: the lowest dead row receives the highest live row, until they meet.
    while (true) {
      while (hole < this.rowCount && this.ids.isPresent(hole)) hole++
      while (tail > hole && !this.ids.isPresent(tail)) tail--
      if (hole >= tail) break
      const from = this.chunks[Math.floor(tail / this.chunkRows)]
      const to = this.chunks[Math.floor(hole / this.chunkRows)]
      const fromLocal = tail % this.chunkRows
      const toLocal = hole % this.chunkRows
      to.rows.set(from.rows.subarray(fromLocal * strideInBytes, (fromLocal + 1) * strideInBytes), toLocal * strideInBytes)
      to.norms[toLocal] = from.norms[fromLocal]
      to.bits.set(from.bits.subarray(fromLocal * signBytes, (fromLocal + 1) * signBytes), toLocal * signBytes)
      to.live[toLocal] = 1
      from.live[fromLocal] = 0
      this.ids.move(tail, hole)
    }
    this.rowCount = this.ids.size
    this.ids.truncate(this.rowCount)
    this.compactions++
    const compaction = this.compaction
    this.compaction = null
    compaction?.resolve()
  }

  private kill(row: number): void {
    this.markDead(row)
    this.ids.clear(row)
  }

  /** Scans skip the row from now on (its id is the caller's business). */
  private markDead(row: number): void {
    Atomics.store(this.chunks[Math.floor(row / this.chunkRows)].live, row % this.chunkRows, 0)
  }

  private chunkFor(row: number): Chunk {
    const index = Math.floor(row / this.chunkRows)
    while (this.chunks.length <= index) this.chunks.push(this.allocateChunk())
    return this.chunks[index]
  }

  private allocateChunk(): Chunk {
    const rowsBytes = this.chunkRows * this.shape.strideInBytes
    const normsBytes = this.chunkRows * 4
    const bitsBytes = this.chunkRows * this.shape.signBytes
    const bytes = rowsBytes + normsBytes + bitsBytes + this.chunkRows
    const base = this.memory.allocate(bytes)
    // A gallery past its first chunk is a large one: its scans read it end to end, and huge pages
    // spare them a page walk per 4 KiB (on Zen 4, 1M x 256: one probe 13.8 -> 11.2 ms). Small
    // galleries stay on 4 KiB pages: a huge page would commit 2 MiB for their few rows.
    if (this.chunks.length > 0) this.memory.adviseHugePages?.(this.views.uint8(base, bytes))
    const rowsOffset = base
    const normsOffset = base + rowsBytes
    const bitsOffset = normsOffset + normsBytes
    const liveOffset = bitsOffset + bitsBytes
    return {
      rowsOffset,
      normsOffset,
      liveOffset,
      bitsOffset,
      rows: this.views.int8(rowsOffset, rowsBytes),
      norms: this.views.uint32(normsOffset, this.chunkRows),
      live: this.views.uint8(liveOffset, this.chunkRows),
      bits: this.views.uint8(bitsOffset, bitsBytes),
    }
  }
}
