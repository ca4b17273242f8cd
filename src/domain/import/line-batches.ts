// An import's input as batches of raw NDJSON lines (`palmvein import`): the reading thread only
// cuts the bytes at line ends, and whoever prepares a batch (an import thread, import-prepare.ts)
// parses and checks its lines against the wire schema (http/resources/import-line.ts). Parsing on
// the reading thread, then cloning the parsed members into a thread, cost ~35 µs a member there, a
// third of the reading thread's time.
import type { EnrollHand } from '../enrollment/enrollment.js'
import type { ErrorCode } from '../../errors.js'

/** One member to import: the member fields and the enroll body's hands. */
export interface ImportMember {
  member_id?: string
  display_name: string
  metadata?: unknown
  left_hand?: EnrollHand | null
  right_hand?: EnrollHand | null
}

export interface ImportRejection {
  /** 1-based line (or item) number of the input. */
  line: number
  code: ErrorCode
  detail: string
  errors?: Array<{ path: string; message: string }>
}

/** Whole lines of the input: `bytes` holds lines from 1-based line `firstLine`, each ending in "\n" but maybe the input's last. */
export interface LineBatch {
  firstLine: number
  bytes: Uint8Array
}

const NEWLINE = 0x0a

/** The input cut into batches of `batchSize` lines (blank lines included); a chunk's bytes are copied once. */
export async function* lineBatches(input: AsyncIterable<Buffer | string>, batchSize: number): AsyncGenerator<LineBatch> {
  let pending: Buffer[] = []
  let pendingLines = 0
  let firstLine = 1
  const take = (bytes: Buffer, lines: number): LineBatch => {
    const batch = { firstLine, bytes }
    firstLine += lines
    return batch
  }
  for await (const chunk of input) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    // Cut where the batch's last line ends: the rest starts the next batch.
    let from = 0
    while (true) {
      let end = from - 1
      let found = 0
      while (pendingLines + found < batchSize && (end = buffer.indexOf(NEWLINE, end + 1)) !== -1) found += 1
      if (pendingLines + found < batchSize) {
        if (from < buffer.length) pending.push(buffer.subarray(from))
        pendingLines += found
        break
      }
      const bytes = Buffer.concat([...pending, buffer.subarray(from, end + 1)])
      yield take(bytes, batchSize)
      pending = []
      pendingLines = 0
      from = end + 1
    }
  }
  const rest = Buffer.concat(pending)
  // A last line without "\n" counts as a line.
  const lines = pendingLines + (rest.length && rest[rest.length - 1] !== NEWLINE ? 1 : 0)
  if (lines) yield take(rest, lines)
}

/** An input line: a member to import, or the reason it is refused. */
export type ImportItem = { line: number; member: ImportMember } | { line: number; rejection: ImportRejection }
