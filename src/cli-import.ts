// `palmvein import --project <id> [--allow-duplicates] [--rejects <file>] [--batch <n>] [--progress-lines] <file.ndjson | ->`
// One member a line: the POST .../members fields and the enroll body's hands. Each line is checked
// against the same schema as the API, then by domain/member-import.ts. Prints one JSON summary
// line on stdout; a progress bar goes to stderr on a terminal, or with --progress-lines one JSON
// line after each batch (what a script or the benchmark reads). Exit 0 when every line was
// imported (or already present), 1 when some were refused; usage and connection errors exit 2
// through the CLI's error handler.
import { createReadStream, createWriteStream, statSync, type WriteStream } from 'node:fs'
import readline from 'node:readline'
import { Presets, SingleBar } from 'cli-progress'
import { tenantProject, withCliSession } from './cli-session.js'
import { importMembers, type ImportItem, type ImportRejection } from './domain/member-import.js'
import { EnrollHand } from './http/resources/palms.js'
import { DisplayName, Metadata } from './http/resources/members.js'
import { compile, Nullable, Type } from './http/schema.js'

export const ImportLineSchema = Type.Object({
  member_id: Type.Optional(Type.String({ format: 'uuid', description: 'keep this id (an import run again skips members already present)' })),
  display_name: DisplayName,
  metadata: Type.Optional(Metadata),
  left_hand: Type.Optional(Nullable(EnrollHand)),
  right_hand: Type.Optional(Nullable(EnrollHand)),
}, { additionalProperties: false })

const validLine = compile(ImportLineSchema, 'body')
export const DEFAULT_BATCH = 500

export interface ImportArguments {
  project: string
  source: string
  allowDuplicates: boolean
  rejects: string | null
  batch: number
  /** `{"handled": n}` on stderr after each batch instead of a bar. */
  progressLines?: boolean
}

/** The input's lines as import items: JSON and schema errors become rejections with their line numbers. */
function itemsOf(input: NodeJS.ReadableStream): AsyncGenerator<ImportItem> {
  // The iterator is taken now: lines read before the import asks for the first one are queued, not lost.
  const lines = readline.createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]()
  return parsedLines(lines)
}

async function* parsedLines(lines: AsyncIterator<string>): AsyncGenerator<ImportItem> {
  let line = 0
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const text = next.value
    line += 1
    if (text.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      yield { line, rejection: { line, code: 'invalid_request', detail: `line ${line} is not JSON: ${(error as Error).message}` } }
      continue
    }
    if (!validLine(value)) {
      yield { line, rejection: { line, code: 'invalid_request', detail: `line ${line} does not match the import schema`, errors: validLine.errors } }
      continue
    }
    yield { line, member: value }
  }
}

function progressBar(total: number | null, lines: boolean): { update(handled: number, bytes: number): void; stop(): void } {
  if (lines) return { update: (handled) => { process.stderr.write(`${JSON.stringify({ handled })}\n`) }, stop() {} }
  if (!process.stderr.isTTY) return { update() {}, stop() {} }
  const bar = new SingleBar({
    stream: process.stderr, etaBuffer: 50,
    format: total === null ? 'import |{bar}| {handled} members' : 'import |{bar}| {percentage}% | {handled} members | ETA {eta_formatted}',
  }, Presets.shades_classic)
  bar.start(total ?? 1, 0, { handled: 0 })
  return {
    update: (handled, bytes) => bar.update(total === null ? 0 : bytes, { handled }),
    stop: () => bar.stop(),
  }
}

export async function runImport(args: ImportArguments): Promise<number> {
  const total = args.source === '-' ? null : statSync(args.source).size
  return withCliSession(async (session) => {
    const project = await tenantProject(session, args.project, 'members are imported into')
    const rejects: WriteStream | null = args.rejects ? createWriteStream(args.rejects, { mode: 0o600 }) : null
    const bar = progressBar(total, args.progressLines ?? false)
    try {
      const input = args.source === '-' ? process.stdin : createReadStream(args.source)
      let bytes = 0
      const items = itemsOf(input)
      input.on('data', (chunk: Buffer | string) => { bytes += chunk.length })
      const summary = await importMembers({ ...session, sql: session.db.sql }, project, items, args.batch, {
        allowDuplicates: args.allowDuplicates,
        onRejected: (rejection: ImportRejection) => { rejects?.write(JSON.stringify(rejection) + '\n') },
        onProgress: (handled) => bar.update(handled, bytes),
      })
      bar.stop()
      console.log(JSON.stringify({ imported: summary.imported, skipped: summary.skipped, rejected: summary.rejected, duplicates: summary.duplicates, seconds: Number(summary.seconds.toFixed(3)) }))
      return summary.rejected === 0 ? 0 : 1
    } finally {
      bar.stop()
      await new Promise<void>((resolve) => (rejects ? rejects.end(resolve) : resolve()))
    }
  })
}
