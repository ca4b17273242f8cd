// The id <-> row maps of one gallery store (main thread only). Two forms:
//   - 'string' (default): any non-empty string; a Map and an array of strings.
//   - 'uuid': canonical UUIDs kept as 16 bytes a row in a typed array, found through an
//     open-addressing hash table of row numbers (Int32Array): about 25 bytes a row instead of
//     a string, a Map entry and an array slot (over 100). Ids are returned in lowercase.
export type IdKind = 'string' | 'uuid'

export interface IdIndex {
  /** Ids present. */
  readonly size: number
  rowOf(id: string): number | undefined
  /** The id of `row` if one is there. */
  idAt(row: number): string | undefined
  isPresent(row: number): boolean
  /** Records `id` at the new `row`; where the id was already, returns its old row (now forgotten). One lookup, where rowOf then set made two. */
  place(id: string, row: number): number | undefined
  /** place, for an id given as its 16 bytes at `offset` of `source` ('uuid' ids only). */
  placeBytes(source: Uint8Array, offset: number, row: number): number | undefined
  /** Room for `rows` ids in all, so that filling it grows nothing. */
  reserve(rows: number): void
  /** Forgets the id at `row`. */
  clear(row: number): void
  /** Moves the id at `from` to the empty `to` (compaction). */
  move(from: number, to: number): void
  /** Rows from `rowCount` on are gone (after compaction). */
  truncate(rowCount: number): void
  /** Throws a TypeError if `id` is not acceptable; returns the form it is stored and reported in. */
  normalise(id: string): string
}

export function createIdIndex(kind: IdKind): IdIndex {
  return kind === 'uuid' ? new UuidIndex() : new StringIndex()
}

// A V8 Map holds at most 2^24 entries; past that, ids spill into further maps (a gallery of
// 18M string ids needs two). Lookups try each map, newest first; there are rarely more than two.
const MAP_ENTRIES = 2 ** 24

export class StringIndex implements IdIndex {
  private readonly maps: Map<string, number>[] = [new Map()]
  private idByRow: (string | undefined)[] = []
  private count = 0

  constructor(private readonly entriesPerMap = MAP_ENTRIES - 1) {}

  get size() {
    return this.count
  }
  /** Maps in use (for tests of the spill). */
  get mapCount() {
    return this.maps.length
  }

  private mapHolding(id: string): Map<string, number> | undefined {
    for (let index = this.maps.length - 1; index >= 0; index--) if (this.maps[index].has(id)) return this.maps[index]
    return undefined
  }

  rowOf(id: string) {
    return this.mapHolding(id)?.get(id)
  }
  idAt(row: number) {
    return this.idByRow[row]
  }
  isPresent(row: number) {
    return this.idByRow[row] !== undefined
  }
  place(id: string, row: number) {
    const previous = this.rowOf(id)
    if (previous !== undefined) this.clear(previous)
    this.idByRow[row] = id
    let last = this.maps[this.maps.length - 1]
    if (last.size >= this.entriesPerMap) this.maps.push((last = new Map()))
    last.set(id, row)
    this.count++
    return previous
  }
  placeBytes(): number | undefined {
    throw new TypeError('ids given as bytes need a gallery of UUID ids')
  }
  reserve() {}
  clear(row: number) {
    const id = this.idByRow[row]
    this.idByRow[row] = undefined
    if (id === undefined) return
    const holding = this.mapHolding(id)
    if (holding?.get(id) !== row) return
    holding.delete(id)
    this.count--
  }
  move(from: number, to: number) {
    const id = this.idByRow[from]!
    this.idByRow[to] = id
    this.idByRow[from] = undefined
    this.mapHolding(id)!.set(id, to)
  }
  truncate(rowCount: number) {
    this.idByRow.length = rowCount
  }
  normalise(id: string) {
    if (typeof id !== 'string' || id.length === 0) throw new TypeError('id must be a non-empty string')
    return id
  }
}

const EMPTY = -1
const DELETED = -2
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

class UuidIndex implements IdIndex {
  private bytes = new Uint8Array(16 * 1024)
  private present = new Uint8Array(1024)
  private slots = new Int32Array(2048).fill(EMPTY)
  private used = 0 // slots holding a row or DELETED
  private count = 0
  private readonly scratch = new Uint8Array(16)

  get size() {
    return this.count
  }

  // The id last parsed into `scratch`: an upsert normalises, looks up and records the same id, and
  // parsing it once instead of three times shows in a boot of millions of rows.
  private scratchId: string | null = null

  normalise(id: string): string {
    if (typeof id !== 'string' || !this.parse(id, this.scratch))
      throw new TypeError(`id must be a UUID (this gallery stores ids as 16 bytes), got ${JSON.stringify(id)}`)
    return id.toLowerCase()
  }

  private parse(id: string, out: Uint8Array): boolean {
    if (out === this.scratch) {
      if (id === this.scratchId) return true
      this.scratchId = null
    }
    if (!this.parseInto(id, out)) return false
    if (out === this.scratch) this.scratchId = id
    return true
  }

  private parseInto(id: string, out: Uint8Array): boolean {
    if (id.length !== 36) return false
    let at = 0
    for (let index = 0; index < 36; index++) {
      if (index === 8 || index === 13 || index === 18 || index === 23) {
        if (id.charCodeAt(index) !== 45) return false
        continue
      }
      const high = hexValue(id.charCodeAt(index++))
      const low = hexValue(id.charCodeAt(index))
      if (high < 0 || low < 0) return false
      out[at++] = (high << 4) | low
    }
    return true
  }

  private hashAt(source: Uint8Array, offset: number): number {
    // FNV-1a over the 16 bytes; UUIDs are mostly random, this only spreads them.
    let hash = 0x811c9dc5
    for (let index = 0; index < 16; index++) hash = Math.imul(hash ^ source[offset + index], 0x01000193)
    return hash >>> 0
  }

  /** Without a subarray view: one a row fed the garbage collector in a boot of millions. */
  private copyId(source: Uint8Array, offset: number, row: number): void {
    const at = row * 16
    for (let index = 0; index < 16; index++) this.bytes[at + index] = source[offset + index]
  }

  private sameAt(row: number, source: Uint8Array, offset: number): boolean {
    const at = row * 16
    for (let index = 0; index < 16; index++) if (this.bytes[at + index] !== source[offset + index]) return false
    return true
  }

  /** The slot holding `id`, or -1. */
  private find(id: Uint8Array): number {
    const mask = this.slots.length - 1
    for (let slot = this.hashAt(id, 0) & mask; ; slot = (slot + 1) & mask) {
      const row = this.slots[slot]
      if (row === EMPTY) return -1
      if (row >= 0 && this.sameAt(row, id, 0)) return slot
    }
  }

  rowOf(id: string): number | undefined {
    if (!this.parse(id, this.scratch)) return undefined
    const slot = this.find(this.scratch)
    return slot < 0 ? undefined : this.slots[slot]
  }

  idAt(row: number): string | undefined {
    if (!this.isPresent(row)) return undefined
    const at = row * 16
    const hex = (from: number, to: number) => {
      let text = ''
      for (let index = from; index < to; index++) text += HEX[this.bytes[at + index]]
      return text
    }
    return `${hex(0, 4)}-${hex(4, 6)}-${hex(6, 8)}-${hex(8, 10)}-${hex(10, 16)}`
  }

  isPresent(row: number): boolean {
    return row < this.present.length && this.present[row] === 1
  }

  private ensureRows(rows: number): void {
    if (rows > this.present.length) this.resizeRows(Math.max(rows, this.present.length * 2))
  }

  private resizeRows(capacity: number): void {
    const bytes = new Uint8Array(capacity * 16)
    bytes.set(this.bytes)
    this.bytes = bytes
    const present = new Uint8Array(capacity)
    present.set(this.present)
    this.present = present
  }

  reserve(rows: number): void {
    if (rows > this.present.length) this.resizeRows(rows)
    let size = this.slots.length
    while (size < 2 * rows) size *= 2
    if (size > this.slots.length) this.rebuild(size)
  }

  private rehash(): void {
    // Grow only when live ids need it; otherwise rebuild at the same size to drop DELETED marks.
    this.rebuild(this.count * 4 > this.slots.length ? this.slots.length * 2 : this.slots.length)
  }

  private rebuild(size: number): void {
    this.slots = new Int32Array(size).fill(EMPTY)
    this.used = 0
    const mask = size - 1
    for (let row = 0; row < this.present.length; row++) {
      if (this.present[row] !== 1) continue
      let slot = this.hashAt(this.bytes, row * 16) & mask
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask
      this.slots[slot] = row
      this.used++
    }
  }

  place(id: string, row: number): number | undefined {
    if (!this.parse(id, this.scratch)) throw new TypeError(`id must be a UUID, got ${JSON.stringify(id)}`)
    return this.placeBytes(this.scratch, 0, row)
  }

  placeBytes(source: Uint8Array, offset: number, row: number): number | undefined {
    this.ensureRows(row + 1)
    if ((this.used + 1) * 2 > this.slots.length) this.rehash()
    const mask = this.slots.length - 1
    let reusable = -1
    let slot = this.hashAt(source, offset) & mask
    for (; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot]
      if (held === EMPTY) break
      if (held === DELETED) {
        if (reusable < 0) reusable = slot
      } else if (this.sameAt(held, source, offset)) {
        this.copyId(source, offset, row)
        this.present[row] = 1
        this.present[held] = 0
        this.slots[slot] = row
        return held
      }
    }
    if (reusable >= 0) slot = reusable
    else this.used++
    this.slots[slot] = row
    this.copyId(source, offset, row)
    this.present[row] = 1
    this.count++
    return undefined
  }

  private slotOfRow(row: number): number {
    const mask = this.slots.length - 1
    for (let slot = this.hashAt(this.bytes, row * 16) & mask; ; slot = (slot + 1) & mask) {
      if (this.slots[slot] === row) return slot
      if (this.slots[slot] === EMPTY) return -1
    }
  }

  clear(row: number): void {
    if (!this.isPresent(row)) return
    const slot = this.slotOfRow(row)
    if (slot >= 0) this.slots[slot] = DELETED
    this.present[row] = 0
    this.count--
  }

  move(from: number, to: number): void {
    const slot = this.slotOfRow(from)
    this.ensureRows(to + 1)
    this.bytes.copyWithin(to * 16, from * 16, from * 16 + 16)
    this.present[to] = 1
    this.present[from] = 0
    if (slot >= 0) this.slots[slot] = to
  }

  truncate(rowCount: number): void {
    // Rows past the end are already cleared; keep the arrays (later upserts refill them).
    this.present.fill(0, Math.min(rowCount, this.present.length))
  }
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  if (code >= 97 && code <= 102) return code - 87
  if (code >= 65 && code <= 70) return code - 55
  return -1
}
