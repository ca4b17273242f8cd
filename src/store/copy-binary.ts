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

function fieldBytes(type: CopyType, value: unknown): Buffer {
  switch (type) {
    case 'uuid':
      return Buffer.from((value as string).replace(/-/g, ''), 'hex')
    case 'text':
      return Buffer.from(value as string, 'utf8')
    case 'bytea':
      return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array)
    case 'int4': {
      const bytes = Buffer.allocUnsafe(4)
      bytes.writeInt32BE(value as number)
      return bytes
    }
    case 'timestamptz': {
      const bytes = Buffer.allocUnsafe(8)
      bytes.writeBigInt64BE(BigInt((value as Date).getTime() - POSTGRES_EPOCH_MS) * 1000n)
      return bytes
    }
    case 'jsonb':
      // Version 1 of jsonb's binary form: the JSON text after a version byte.
      return Buffer.concat([Buffer.of(1), Buffer.from(JSON.stringify(value), 'utf8')])
  }
}

/** The COPY binary stream of `rows` (header, one tuple per row, trailer); null and undefined are NULL. */
export function encodeCopyBinary(columns: readonly CopyColumn[], rows: ReadonlyArray<Record<string, unknown>>): Buffer {
  const parts: Buffer[] = [SIGNATURE, Buffer.alloc(8)]
  const count = Buffer.allocUnsafe(2)
  count.writeInt16BE(columns.length)
  for (const row of rows) {
    parts.push(count)
    for (const column of columns) {
      const value = row[column.name]
      const length = Buffer.allocUnsafe(4)
      if (value === null || value === undefined) {
        length.writeInt32BE(-1)
        parts.push(length)
        continue
      }
      const bytes = fieldBytes(column.type, value)
      length.writeInt32BE(bytes.length)
      parts.push(length, bytes)
    }
  }
  parts.push(Buffer.from([0xff, 0xff]))
  return Buffer.concat(parts)
}

/** Writes `rows` into `table` with binary COPY, inside the caller's transaction. */
export async function copyRows(tx: Queryable, table: string, columns: readonly CopyColumn[], rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  if (!rows.length) return
  const names = columns.map((column) => column.name)
  const stream = await tx`COPY ${tx(table)} (${tx(names)}) FROM STDIN (FORMAT binary)`.writable()
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject)
    stream.on('finish', resolve)
    stream.end(encodeCopyBinary(columns, rows))
  })
}
