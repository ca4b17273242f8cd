// `palmvein dedup --environment <id> [--threshold t]`: the deduplication report as NDJSON pairs
// on stdout ({"member_a","hand_a","member_b","hand_b","score"}, best first), a progress bar with
// an ETA on stderr when it is a terminal, and a one-line summary on stderr.
import { Presets, SingleBar } from 'cli-progress'
import { CommandRefused, withCliSession } from './cli-session.js'
import { findDuplicatePairs } from './domain/dedup.js'
import { isUuid } from './ids.js'
import { environmentById } from './store/organizations.js'

export async function runDedup(args: { environment: string; threshold: number | null }): Promise<void> {
  if (!isUuid(args.environment)) throw new CommandRefused('--environment must be an environment id (a UUID)')
  if (args.threshold !== null && !(args.threshold > 0 && args.threshold <= 1)) throw new CommandRefused('--threshold must be a number in (0, 1]')
  await withCliSession(async ({ db, galleries }) => {
    if (!(await environmentById(db.sql, args.environment))) throw new CommandRefused(`environment ${args.environment} not found`)
    const bar = process.stderr.isTTY
      ? new SingleBar({ stream: process.stderr, etaBuffer: 20, format: 'dedup |{bar}| {percentage}% | {value}/{total} palms | ETA {eta_formatted}' }, Presets.shades_classic)
      : null
    try {
      bar?.start(1, 0)
      const started = performance.now()
      const report = await findDuplicatePairs({ galleries, sql: db.sql }, args.environment, args.threshold, (done, total) => {
        bar?.setTotal(total)
        bar?.update(done)
      })
      bar?.stop()
      for (const pair of report.pairs) process.stdout.write(JSON.stringify({ ...pair, score: Number(pair.score.toFixed(6)) }) + '\n')
      process.stderr.write(`palmvein dedup: ${report.pairs.length} pair(s) at or above ${report.threshold} among ${report.references} palm(s) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    } finally {
      bar?.stop()
    }
  })
}
