// An import line's wire schema (`palmvein import`: one member a line, the enroll body's hands) and
// the check of a batch of lines against it, run by whoever prepares the batch (the CLI hands it to
// domain/import/import-prepare.ts, in an import thread: cli/import-thread.ts): JSON and schema
// errors become rejections, as over HTTP.
import type { ImportItem, ImportMember, LineBatch } from '../../domain/import/line-batches.js'
import { compile, Nullable, Type } from '../schema.js'
import { DisplayName, Metadata } from './members.js'
import { EnrollHand } from './palms.js'

export const ImportLineSchema = Type.Object(
  {
    member_id: Type.Optional(Type.String({ format: 'uuid', description: 'keep this id (an import run again skips members already present)' })),
    display_name: DisplayName,
    metadata: Type.Optional(Metadata),
    left_hand: Type.Optional(Nullable(EnrollHand)),
    right_hand: Type.Optional(Nullable(EnrollHand)),
  },
  { additionalProperties: false },
)

let validLine: ReturnType<typeof compile<typeof ImportLineSchema>> | undefined

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
      items.push({
        line,
        rejection: {
          line,
          code: validLine.errorCode ?? 'invalid_request',
          detail: `line ${line} does not match the import schema`,
          ...(validLine.errors ? { errors: validLine.errors } : {}),
        },
      })
      continue
    }
    const member = value as ImportMember
    if (!member.left_hand && !member.right_hand) {
      items.push({
        line,
        rejection: {
          line,
          code: 'invalid_request',
          detail: 'at least one of left_hand and right_hand is required',
          errors: [{ path: '/left_hand', message: 'is required when right_hand is absent' }],
        },
      })
      continue
    }
    items.push({ line, member })
  }
  return items
}
