// `palmvein import --project <id> [--allow-duplicates] [--rejects <file>] [--batch <n>] [--progress-lines] <file.ndjson | ->`
// One member a line: the POST .../members fields and the enroll body's hands. Each line is checked
// against the same schema as the API (import-lines.ts, on the import's threads), then as
// enroll checks it (domain/import/member-import.ts). Prints one JSON summary
// line on stdout; a progress bar goes to stderr on a terminal, or with --progress-lines one JSON
// line after each batch (what a script or the benchmark reads). Exit 0 when every line was
// imported (or already present), 1 when some were refused; usage and connection errors exit 2
// through the CLI's error handler.
import { createReadStream, createWriteStream, statSync, type WriteStream } from 'node:fs'
import { Presets, SingleBar } from 'cli-progress'
import { tenantProject, withCliSession } from './cli-session.js'
import { importMembers, type ImportRejection } from './domain/import/member-import.js'

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
      const counted = async function* () {
        for await (const chunk of input as AsyncIterable<Buffer>) {
          bytes += chunk.length
          yield chunk
        }
      }
      const summary = await importMembers({ ...session, sql: session.db.sql }, project, counted(), args.batch, {
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
