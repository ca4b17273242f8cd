// An import's input as batches of raw NDJSON lines (`palmvein import`): the reading thread only
// cuts the bytes at line ends, and whoever prepares a batch (an import thread, domain/import/import-prepare.ts)
// parses and checks its lines. Parsing on the reading thread, then cloning the parsed members into
// a thread, cost ~35 µs a member there, a third of the reading thread's time.
import { EnrollHand } from './http/resources/palms.js'
import { DisplayName, Metadata } from './http/resources/members.js'
import { compile, Nullable, Type } from './http/schema.js'
import type { ImportMember, ImportRejection } from './domain/import/member-import.js'

export const ImportLineSchema = Type.Object({
  member_id: Type.Optional(Type.String({ format: 'uuid', description: 'keep this id (an import run again skips members already present)' })),
  display_name: DisplayName,
  metadata: Type.Optional(Metadata),
  left_hand: Type.Optional(Nullable(EnrollHand)),
  right_hand: Type.Optional(Nullable(EnrollHand)),
}, { additionalProperties: false })

let validLine: ReturnType<typeof compile<typeof ImportLineSchema>> | undefined

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

/** The batch's lines checked against the import schema: JSON and schema errors become rejections; blank lines are skipped. */
export function parseLineBatch(batch: LineBatch): ImportItem[] {
  validLine ??= compile(ImportLineSchema, 'body')
  const items: ImportItem[] = []
  const text = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength).toString('utf8')
  let start = 0
  for (let line = batch.firstLine; start < text.length; line++) {
    let end = text.indexOf('\n', start)
    if (end === -1) end = text.length
    const lineText = text.slice(start, end)
    start = end + 1
    if (lineText.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(lineText)
    } catch (error) {
      items.push({ line, rejection: { line, code: 'invalid_request', detail: `line ${line} is not JSON: ${(error as Error).message}` } })
      continue
    }
    if (!validLine(value)) {
      // A rule the schema states for a field keeps that field's code (a capture's alphabet or size: capture_invalid), as over HTTP.
      items.push({ line, rejection: { line, code: validLine.errorCode ?? 'invalid_request', detail: `line ${line} does not match the import schema`, ...(validLine.errors ? { errors: validLine.errors } : {}) } })
      continue
    }
    const member = value as ImportMember
    if (!member.left_hand && !member.right_hand) {
      items.push({ line, rejection: { line, code: 'invalid_request', detail: 'at least one of left_hand and right_hand is required', errors: [{ path: '/left_hand', message: 'is required when right_hand is absent' }] } })
      continue
    }
    items.push({ line, member })
  }
  return items
}
