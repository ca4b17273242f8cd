// `palmvein dedup --environment <id> [--threshold t] [--exact] [--checkpoint <file>]
// [--checkpoint-every <s>] [--stop-after <cells>] [--summary <file>] [--probes <n>] [--cells <n>]
// [--progress-lines]`: the deduplication report as NDJSON pairs on stdout
// ({"member_a","hand_a","member_b","hand_b","score"}, best first), progress with an ETA on stderr
// (a bar on a terminal, or one JSON line per percent with --progress-lines), a one-line summary
// on stderr and, with --summary, the summary for adjudicators as JSON (dedup-summary.ts).
// By default the cell search (dedup-cells.ts); --exact searches every palm against every palm.
import { Command } from 'commander'
import { writeFileSync } from 'node:fs'
import { Presets, SingleBar } from 'cli-progress'
import { withCliSession } from './session.js'
import { findDuplicatePairs, findDuplicatePairsByCells, type DuplicatePair } from '../domain/dedup/dedup.js'
import { summarisePairs } from '../domain/dedup/dedup-summary.js'
import { isUuid } from '../ids.js'
import { environmentById } from '../store/organizations.js'
import { positiveFraction, uuidOf, wholeNumber } from './arguments.js'
import { CommandRefused } from './errors.js'

interface DedupArguments {
  environment: string
  threshold: number | null
  exact?: boolean
  checkpoint?: string | null
  checkpointSeconds?: number
  stopAfterCells?: number | null
  summary?: string | null
  probes?: number
  cells?: number
  progressLines?: boolean
}

/** Exit code of a run stopped by --stop-after with its checkpoint saved. */
export const DEDUP_PAUSED = 3

interface Progress {
  update(done: number, total: number): void
  /** A phase before the search starts (reading the register, training, placing...): minutes at 1M members. */
  phase(name: string): void
  stop(): void
}

// The ETA is the work left at the rate of the search so far (from its first report, so the time
// spent placing the palms before it does not count as search): the work is counted in pair
// scores, which cost the same wherever they fall (bench/dedup.ts measures how close it comes).
function progress(lines: boolean): Progress {
  const started = performance.now()
  let first: { at: number; done: number } | null = null
  if (lines) {
    let reported = -1
    return {
      update(done, total) {
        const now = performance.now()
        first ??= { at: now, done }
        const percent = Math.floor((done / Math.max(1, total)) * 100)
        if (percent === reported) return
        reported = percent
        const elapsed = (now - started) / 1000
        const rate = (done - first.done) / Math.max(1e-9, (now - first.at) / 1000)
        const eta = done >= total ? 0 : rate > 0 ? (total - done) / rate : null
        process.stderr.write(
          JSON.stringify({ done, total, percent, elapsed_s: Number(elapsed.toFixed(1)), eta_s: eta === null ? null : Number(eta.toFixed(1)) }) + '\n',
        )
      },
      phase(name) {
        process.stderr.write(JSON.stringify({ phase: name, elapsed_s: Number(((performance.now() - started) / 1000).toFixed(1)) }) + '\n')
      },
      stop() {},
    }
  }
  if (!process.stderr.isTTY) return { update() {}, phase() {}, stop() {} }
  const bar = new SingleBar(
    { stream: process.stderr, etaBuffer: 1000, format: 'dedup {phase} |{bar}| {percentage}% | ETA {eta_formatted}' },
    Presets.shades_classic,
  )
  bar.start(1, 0, { phase: 'reading' })
  return {
    update(done, total) {
      bar.setTotal(total)
      bar.update(done)
    },
    phase: (name) => bar.update({ phase: name }),
    stop: () => bar.stop(),
  }
}

/** The lowest threshold at which the cell search's recall was measured (100 % against --exact). */
export const CELL_SEARCH_MIN_THRESHOLD = 0.7

async function runDedup(args: DedupArguments): Promise<number> {
  if (!isUuid(args.environment)) throw new CommandRefused('--environment must be an environment id (a UUID)')
  if (args.threshold !== null && !(args.threshold > 0 && args.threshold <= 1)) throw new CommandRefused('--threshold must be a number in (0, 1]')
  if (args.exact && (args.checkpoint || args.stopAfterCells != null || args.probes !== undefined || args.cells !== undefined)) {
    throw new CommandRefused('--exact takes no --checkpoint, --stop-after, --probes or --cells')
  }
  if (args.stopAfterCells != null && !args.checkpoint) throw new CommandRefused('--stop-after needs --checkpoint <file>')
  return withCliSession(async ({ db, galleries, config, keyring, log }) => {
    const environment = await environmentById(db.sql, args.environment)
    if (!environment) throw new CommandRefused(`environment ${args.environment} not found`)
    // The cell search's recall is measured at thresholds of 0.7 and above (docs/dedup.md); below
    // that, unless the operator widens the search with --probes, every pair is searched.
    const threshold = args.threshold ?? environment.match_threshold
    const exact = args.exact || (threshold < CELL_SEARCH_MIN_THRESHOLD && args.probes === undefined)
    if (exact && !args.exact) {
      if (args.checkpoint || args.stopAfterCells != null || args.cells !== undefined) {
        throw new CommandRefused(
          `below a threshold of ${CELL_SEARCH_MIN_THRESHOLD} dedup searches every pair, which takes no --checkpoint, --stop-after or --cells; widen the cell search with --probes <n> instead`,
        )
      }
      process.stderr.write(
        `palmvein dedup: threshold ${threshold} is below ${CELL_SEARCH_MIN_THRESHOLD}, where the cell search's recall is not measured: searching every pair (--probes <n> widens the cell search instead)\n`,
      )
    }
    const bar = progress(args.progressLines ?? false)
    try {
      const started = performance.now()
      const onProgress = (done: number, total: number) => bar.update(done, total)
      let report: { pairs: DuplicatePair[]; threshold: number; references: number; complete: boolean }
      if (exact) {
        report = { ...(await findDuplicatePairs({ galleries, sql: db.sql }, args.environment, args.threshold, onProgress)), complete: true }
      } else {
        try {
          report = await findDuplicatePairsByCells({ sql: db.sql, config, keyring, log }, args.environment, args.threshold, {
            probes: args.probes,
            cells: args.cells,
            checkpoint: args.checkpoint,
            checkpointSeconds: args.checkpointSeconds,
            stopAfterCells: args.stopAfterCells,
            onProgress,
            onPhase: (phase) => bar.phase(phase),
          })
        } catch (error) {
          // A checkpoint made for other palms or another threshold: the user decides, nothing is overwritten.
          if (error instanceof Error && args.checkpoint && error.message.startsWith(args.checkpoint)) throw new CommandRefused(error.message)
          throw error
        }
      }
      bar.stop()
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      if (!report.complete) {
        process.stderr.write(`palmvein dedup: stopped after ${args.stopAfterCells} cell(s) in ${seconds} s; the checkpoint ${args.checkpoint} resumes it\n`)
        return DEDUP_PAUSED
      }
      for (const pair of report.pairs) process.stdout.write(JSON.stringify({ ...pair, score: Number(pair.score.toFixed(6)) }) + '\n')
      const summary = summarisePairs(report.pairs, report.threshold, report.references)
      if (args.summary) writeFileSync(args.summary, JSON.stringify(summary, null, 2) + '\n')
      process.stderr.write(
        `palmvein dedup: ${report.pairs.length} pair(s) at or above ${report.threshold} among ${report.references} palm(s) in ${seconds} s` +
          `; ${summary.members} member(s) in pairs, ${summary.clusters.length} cluster(s) of more than two\n`,
      )
      return 0
    } finally {
      bar.stop()
    }
  })
}

export const dedupCommand = () =>
  new Command('dedup')
    .description(
      'every pair of members whose palms match at or above a threshold, as JSON lines, best first (exit 3: stopped by --stop-after, the checkpoint resumes it)',
    )
    .requiredOption('--environment <environment_id>', 'the environment', uuidOf('an environment'))
    .option('--threshold <t>', "the score a pair must reach (default: the environment's match_threshold)", positiveFraction)
    .option('--exact', 'search every palm against every palm, not by cells')
    .option('--checkpoint <file>', 'save progress there and resume from it')
    .option('--checkpoint-every <s>', 'seconds between checkpoints', wholeNumber(0, 86_400))
    .option('--stop-after <cells>', 'stop after this many cells (with --checkpoint)', wholeNumber(0, 65_535))
    .option('--summary <file>', 'write the summary for adjudicators as JSON')
    .option('--probes <n>', 'cells searched per palm (widens the cell search)', wholeNumber(1, 65_535))
    .option('--cells <n>', 'cells k-means trains (oversized ones are split into more)', wholeNumber(1, 65_535))
    .option('--progress-lines', 'progress as JSON lines on stderr (one as each phase starts, then one per percent of the search; for scripts) instead of a bar')
    .action(
      async (options: {
        environment: string
        threshold?: number
        exact?: boolean
        checkpoint?: string
        checkpointEvery?: number
        stopAfter?: number
        summary?: string
        probes?: number
        cells?: number
        progressLines?: boolean
      }) => {
        process.exitCode = await runDedup({
          environment: options.environment,
          threshold: options.threshold ?? null,
          exact: options.exact ?? false,
          checkpoint: options.checkpoint ?? null,
          checkpointSeconds: options.checkpointEvery,
          stopAfterCells: options.stopAfter ?? null,
          summary: options.summary ?? null,
          probes: options.probes,
          cells: options.cells,
          progressLines: options.progressLines ?? false,
        })
      },
    )
