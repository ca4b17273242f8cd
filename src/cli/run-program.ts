// `palmvein`'s program, loaded by the bin (main.ts). Commands and flags are a contract: other
// tools script them (docs/cli.md, generated from the definitions). Exit codes: 0 done; 1 the
// command ran and found a problem (refused import lines, a broken audit chain, ...) or a defect;
// 2 a usage error or a command that could not start; 3 dedup stopped by --stop-after.
import { CommanderError, type Command } from 'commander'
import { ConfigError } from '../config.js'
import { isDatabaseUnreachable } from '../store/engine/availability.js'
import { DataDirectoryInUse } from '../store/engine/embedded.js'
import { CommandRefused, UsageError } from './errors.js'
import { buildProgram, commandNamed, commandPath, helpAsFlag, helpHint } from './program.js'

let running: Command | null = null
const program = await buildProgram({
  load: commandNamed(process.argv.slice(2)),
  onAction: (command) => {
    running = command
  },
})

/** The one line an expected failure prints, or null for a defect (which keeps its stack). */
function expectedFailure(error: unknown): string | null {
  if (error instanceof CommandRefused || error instanceof DataDirectoryInUse) return error.message
  if (error instanceof ConfigError) return `configuration error: ${error.message}`
  if (isDatabaseUnreachable(error)) return `the database is unreachable: ${(error as Error).message}`
  return null
}

program.parseAsync(helpAsFlag(process.argv.slice(2)), { from: 'user' }).catch((error: unknown) => {
  // Commander has printed the help (exit 0 when asked for, 1 for a command given without its
  // subcommand) or a usage error's line and hint (program.ts: exit 2).
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 || error.code === 'commander.help' ? error.exitCode : 2)
  const command = running ?? program
  if (error instanceof UsageError) {
    console.error(`${commandPath(command)}: ${error.message}\n${helpHint(command)}`)
    process.exit(2)
  }
  const line = expectedFailure(error)
  if (line !== null) {
    console.error(`${commandPath(command)}: ${line}`)
    process.exit(2)
  }
  console.error(`${commandPath(command)}:`, error)
  process.exit(1)
})
