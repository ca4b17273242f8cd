// `palmvein import --project <id> [--allow-duplicates] [--rejects <file>] [--batch <n>] [--progress-lines] <file.ndjson | ->`
// One member a line: the POST .../members fields and the enroll body's hands. Each line is checked
// against the same schema as the API (import-lines.ts, on the import's threads), then as
// enroll checks it (domain/member-import.ts). Prints one JSON summary
// line on stdout; a progress bar goes to stderr on a terminal, or with --progress-lines one JSON
// line after each batch (what a script or the benchmark reads). Exit 0 when every line was
// imported (or already present), 1 when some were refused; usage and connection errors exit 2
// through the CLI's error handler.
import { Command, Option } from 'commander'
import { createReadStream, createWriteStream, existsSync, type WriteStream } from 'node:fs'
import { Presets, SingleBar } from 'cli-progress'
import { tenantProject, withCliSession } from './session.js'
import { importMembers, type ImportRejection } from '../domain/import/member-import.js'
import type { DuplicateSearchMode } from '../domain/import/import-duplicate-search.js'
import { importLines } from './import-thread.js'
import { wholeNumber } from './arguments.js'
import { stableMemberIds } from './import-identity.js'
import { UsageError } from './errors.js'

const DEFAULT_BATCH = 500

interface ImportArguments {
  project: string
  source: string
  allowDuplicates: boolean
  rejects: string | null
  batch: number
  /** `{"handled": n}` on stderr after each batch instead of a bar. */
  progressLines?: boolean
  duplicateSearch: DuplicateSearchMode
  cellProbes?: number
}

/** The progress of the members handled (imported, skipped or refused) out of `total` lines (null: reading stdin). */
function progressBar(total: number | null, lines: boolean): { update(handled: number): void; stop(): void } {
  if (lines)
    return {
      update: (handled) => {
        process.stderr.write(`${JSON.stringify({ handled })}\n`)
      },
      stop() {},
    }
  if (!process.stderr.isTTY) return { update() {}, stop() {} }
  const bar = new SingleBar(
    {
      stream: process.stderr,
      etaBuffer: 50,
      format: total === null ? 'import |{bar}| {value} members' : 'import |{bar}| {percentage}% | {value}/{total} members | ETA {eta_formatted}',
    },
    Presets.shades_classic,
  )
  bar.start(total ?? 1, 0)
  return { update: (handled) => bar.update(handled), stop: () => bar.stop() }
}

/** Lines of `file` that hold something (blank lines are no member): the bar's total, read before the import. */
async function countLines(file: string): Promise<number> {
  let lines = 0
  let content = false
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (const byte of chunk) {
      if (byte === 0x0a) {
        if (content) lines += 1
        content = false
      } else if (byte > 0x20) content = true
    }
  }
  return lines + (content ? 1 : 0)
}

/** What the refused lines were refused for, said plainly (the codes are those of --rejects and the API). */
const REASONS: Record<string, string> = {
  headcount_reached: "the project's plan headcount is reached (palmvein project plan changes the plan)",
  duplicate_palm: "a palm matches another member's (--allow-duplicates imports them)",
}

function reportRejections(byCode: Map<string, number>, rejectsFile: string | null): void {
  if (byCode.size === 0) return
  const counts = [...byCode].sort((a, b) => b[1] - a[1]).map(([code, count]) => `${count} ${code}${REASONS[code] ? `: ${REASONS[code]}` : ''}`)
  process.stderr.write(
    `palmvein import: refused ${counts.join('; ')}${rejectsFile ? `; each line is in ${rejectsFile}` : '; --rejects <file> lists each line'}\n`,
  )
}

async function runImport(args: ImportArguments): Promise<number> {
  const total = args.source === '-' || args.progressLines || !process.stderr.isTTY ? null : await countLines(args.source)
  return withCliSession(async (session) => {
    const project = await tenantProject(session, args.project, 'members are imported into')
    const rejects: WriteStream | null = args.rejects ? createWriteStream(args.rejects, { mode: 0o600 }) : null
    const bar = progressBar(total, args.progressLines ?? false)
    const byCode = new Map<string, number>()
    try {
      const input = args.source === '-' ? process.stdin : createReadStream(args.source)
      const summary = await importMembers({ ...session, sql: session.db.sql }, project, stableMemberIds(input, project.id), args.batch, importLines, {
        allowDuplicates: args.allowDuplicates,
        duplicateSearch: args.duplicateSearch,
        cellProbes: args.cellProbes,
        onRejected: (rejection: ImportRejection) => {
          byCode.set(rejection.code, (byCode.get(rejection.code) ?? 0) + 1)
          rejects?.write(JSON.stringify(rejection) + '\n')
        },
        onProgress: (handled) => bar.update(handled),
      })
      bar.stop()
      console.log(
        JSON.stringify({
          imported: summary.imported,
          skipped: summary.skipped,
          rejected: summary.rejected,
          duplicates: summary.duplicates,
          rejected_by_code: Object.fromEntries(byCode),
          seconds: Number(summary.seconds.toFixed(3)),
        }),
      )
      reportRejections(byCode, args.rejects)
      return summary.rejected === 0 ? 0 : 1
    } finally {
      bar.stop()
      await new Promise<void>((resolve) => (rejects ? rejects.end(resolve) : resolve()))
    }
  })
}

interface ImportOptionValues {
  project: string
  allowDuplicates?: boolean
  rejects?: string
  batch: number
  progressLines?: boolean
  duplicateSearch: DuplicateSearchMode
  cellProbes?: number
}

export const importCommand = () =>
  new Command('import')
    .description(
      'import members with their palms, one JSON object a line ({"member_id"?, "display_name", "metadata"?, "left_hand"?, "right_hand"?}, ' +
        'the hands as in the enroll body); prints a JSON summary; exit 1 when some lines were refused (--rejects lists them with their codes)',
    )
    .argument('<file>', 'the NDJSON file, or - for standard input')
    .requiredOption('--project <project_id>', 'a project with its own (tenant-managed) environment')
    .option('--allow-duplicates', "import palms that match another member's")
    .option('--rejects <file>', "write each refused line's number, code and detail there")
    .option('--batch <n>', 'lines per batch', wholeNumber(1, 10_000), DEFAULT_BATCH)
    .option('--progress-lines', '{"handled": n} on stderr after each batch (for scripts) instead of a bar')
    .addOption(
      new Option(
        '--duplicate-search <how>',
        'exact: scan every stored palm, as enrollment does; cells: the cell index, faster but measured to miss a few matches (docs/import.md)',
      )
        .choices(['exact', 'cells'])
        .default('exact'),
    )
    .option('--cell-probes <n>', 'with --duplicate-search cells: cells of the index each probe reads (default 48)', wholeNumber(1, 65_535))
    .action(async (source: string, options: ImportOptionValues) => {
      if (source !== '-' && !existsSync(source)) throw new UsageError(`cannot read ${source}: no such file`)
      process.exitCode = await runImport({
        project: options.project,
        source,
        allowDuplicates: options.allowDuplicates ?? false,
        rejects: options.rejects ?? null,
        batch: options.batch,
        progressLines: options.progressLines ?? false,
        duplicateSearch: options.duplicateSearch,
        cellProbes: options.cellProbes,
      })
    })
