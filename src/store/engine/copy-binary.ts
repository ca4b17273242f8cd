// Rows written with COPY … FROM STDIN (FORMAT binary): PostgreSQL's fastest way in. A multi-row
// INSERT sends each bytea as hex text (twice its size, encoded here and decoded there) and makes
// the server parse every value; the binary format carries raw bytes, and the rows stream while
// the server stores them. Used by bulk writes on PostgreSQL (the embedded database takes no COPY
// from a client).
import type { Queryable } from './database.js'

export type CopyType = 'uuid' | 'text' | 'bytea' | 'int4' | 'timestamptz' | 'jsonb'

export interface CopyColumn {
  name: string
  type: CopyType
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')
// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).
const POSTGRES_EPOCH_MS = 946_684_800_000

// Each hex digit's value by character code (-1: not a hex digit).
const HEX_DIGIT = Int8Array.from({ length: 128 }, (_, code) => {
  const character = String.fromCharCode(code)
  return /[0-9a-fA-F]/.test(character) ? Number.parseInt(character, 16) : -1
})

/** Grows as rows are written; every field is written in place, length first. */
class TupleWriter {
  bytes = Buffer.allocUnsafe(1 << 16)
  at = 0

  reserve(length: number): void {
    if (this.at + length <= this.bytes.length) return
    const grown = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.at + length))
    this.bytes.copy(grown, 0, 0, this.at)
    this.bytes = grown
  }

  int16(value: number): void {
    this.reserve(2)
    this.at = this.bytes.writeInt16BE(value, this.at)
  }

  field(type: CopyType, value: unknown): void {
    if (value === null || value === undefined) {
      this.reserve(4)
      this.at = this.bytes.writeInt32BE(-1, this.at)
      return
    }
    switch (type) {
      case 'uuid':
        this.reserve(20)
        this.at = this.bytes.writeInt32BE(16, this.at)
        this.uuid(value as string)
        return
      case 'text':
        return this.text(value as string, false)
      case 'jsonb':
        // Version 1 of jsonb's binary form: the JSON text after a version byte.
        return this.text(JSON.stringify(value), true)
      case 'bytea': {
        const bytes = value as Uint8Array
        this.reserve(4 + bytes.length)
        this.at = this.bytes.writeInt32BE(bytes.length, this.at)
        this.bytes.set(bytes, this.at)
        this.at += bytes.length
        return
      }
      case 'int4':
        this.reserve(8)
        this.at = this.bytes.writeInt32BE(4, this.at)
        this.at = this.bytes.writeInt32BE(value as number, this.at)
        return
      case 'timestamptz':
        this.reserve(12)
        this.at = this.bytes.writeInt32BE(8, this.at)
        this.at = this.bytes.writeBigInt64BE(BigInt((value as Date).getTime() - POSTGRES_EPOCH_MS) * 1000n, this.at)
    }
  }

  /**
   * A canonical UUID's 16 bytes, read from its hex digits into place. An import writes ~20 uuids a
   * member; a Buffer.write of each hex group was a tenth of the import threads' time.
   */
  private uuid(id: string): void {
    if (id.length !== 36) throw new TypeError(`not a UUID: ${id}`)
    const bytes = this.bytes
    let at = this.at
    for (let index = 0; index < 36; index += 2) {
      if (index === 8 || index === 13 || index === 18 || index === 23) index++
      const high = HEX_DIGIT[id.charCodeAt(index)] ?? -1
      const low = HEX_DIGIT[id.charCodeAt(index + 1)] ?? -1
      if (high < 0 || low < 0) throw new TypeError(`not a UUID: ${id}`)
      bytes[at++] = (high << 4) | low
    }
    this.at = at
  }

  private text(value: string, jsonb: boolean): void {
    const prefix = jsonb ? 1 : 0
    this.reserve(4 + prefix + 3 * value.length)
    const start = this.at + 4
    if (jsonb) this.bytes[start] = 1
    const length = prefix + this.bytes.write(value, start + prefix, 'utf8')
    this.bytes.writeInt32BE(length, this.at)
    this.at = start + length
  }
}

/** Rows as COPY tuples end to end (no header or trailer); `ends[g]` is where group g's rows end. */
export interface CopyTuples {
  bytes: Uint8Array
  ends: Uint32Array
}

/** Encodes groups of rows (e.g. one member's templates); null and undefined are NULL. */
export function encodeCopyTuples(columns: readonly CopyColumn[], groups: ReadonlyArray<ReadonlyArray<Record<string, unknown>>>): CopyTuples {
  const writer = new TupleWriter()
  const ends = new Uint32Array(groups.length)
  groups.forEach((rows, group) => {
    for (const row of rows) {
      writer.int16(columns.length)
      for (const column of columns) writer.field(column.type, row[column.name])
    }
    ends[group] = writer.at
  })
  return { bytes: writer.bytes.subarray(0, writer.at), ends }
}

/** The tuples of the groups picked, in the order given (views, not copies). */
export function pickTuples(tuples: CopyTuples, groups: readonly number[]): Uint8Array[] {
  return groups.map((group) => tuples.bytes.subarray(group === 0 ? 0 : tuples.ends[group - 1], tuples.ends[group]))
}

const TRAILER = Buffer.from([0xff, 0xff])

/** Writes encoded tuples into `table` with binary COPY, inside the caller's transaction. */
export async function copyTuples(tx: Queryable, table: string, columns: readonly CopyColumn[], tuples: readonly Uint8Array[]): Promise<void> {
  if (!tuples.length) return
  const names = columns.map((column) => column.name)
  const stream = await tx`COPY ${tx(table)} (${tx(names)}) FROM STDIN (FORMAT binary)`.writable()
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject)
    stream.on('finish', resolve)
    stream.end(Buffer.concat([SIGNATURE, Buffer.alloc(8), ...tuples, TRAILER]))
  })
}

// The 11-byte signature, 4 bytes of flags and the header extension's length, before any extension.
const HEADER_BYTES = SIGNATURE.length + 8

/**
 * The fields of a binary COPY … TO STDOUT of `columns` columns: for row r and column c, where its
 * bytes start (`starts[r * columns + c]`) and how many there are (`lengths[…]`, -1 for NULL).
 */
export interface CopyFields {
  rows: number
  starts: Int32Array
  lengths: Int32Array
}

export function parseCopyFields(bytes: Buffer, columns: number): CopyFields {
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY stream')
  let at = HEADER_BYTES + bytes.readInt32BE(HEADER_BYTES - 4)
  let capacity = 1024
  let starts = new Int32Array(capacity * columns)
  let lengths = new Int32Array(capacity * columns)
  let rows = 0
  for (;;) {
    const count = bytes.readInt16BE(at)
    at += 2
    if (count === -1) break
    if (count !== columns) throw new Error(`binary COPY row of ${count} fields, ${columns} expected`)
    if (rows === capacity) {
      capacity *= 2
      const grownStarts = new Int32Array(capacity * columns)
      const grownLengths = new Int32Array(capacity * columns)
      grownStarts.set(starts)
      grownLengths.set(lengths)
      starts = grownStarts
      lengths = grownLengths
    }
    for (let column = 0, field = rows * columns; column < columns; column++, field++) {
      const length = bytes.readInt32BE(at)
      at += 4
      starts[field] = at
      lengths[field] = length
      if (length > 0) at += length
    }
    rows++
  }
  return { rows, starts, lengths }
}

/**
 * Rows written by `COPY (query) TO STDOUT (FORMAT binary)`, whole. The query can take no parameters.
 * Needs postgres.js's resume after COPY (scripts/patch-postgres.mjs), or a COPY whose end arrives
 * behind a full buffer leaves its connection stalled for the pool's next query.
 */
export async function copyOut(sql: Queryable, query: string): Promise<Buffer> {
  const stream = await sql.unsafe(`COPY (${query}) TO STDOUT (FORMAT binary)`).readable()
  const chunks: Buffer[] = []
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('error', reject)
    stream.on('end', resolve)
  })
  return Buffer.concat(chunks)
}
