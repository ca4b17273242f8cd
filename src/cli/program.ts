// The `palmvein` command line as commander builds it from the command table, with the manners of
// git and npm: every command has its own help (--help, -h, `palmvein help <cmd>`) that runs
// nothing; a usage error is one line and a hint, exit 2.
import { Command } from 'commander'
import { loadConfig } from '../config.js'
import { VERSION } from '../version.js'
import { COMMANDS } from './commands.js'
import { keepsFilesInDataDirectory, refuseMissingDataDirectory } from './data-directory.js'

/** `palmvein audit verify` for the command `verify` under `audit`. */
export function commandPath(command: Command): string {
  const names: string[] = []
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name())
  return names.join(' ')
}

export const helpHint = (command: Command) => `see '${commandPath(command)} --help'`

/** Each command and its subcommands: errors thrown (main.ts sets the exit code), one line and a hint on stderr. */
function withManners(command: Command, helpWidth: number | undefined): void {
  command.exitOverride()
  command.showSuggestionAfterError()
  command.configureOutput({
    outputError: (text, write) =>
      write(
        `${commandPath(command)}: ${text
          .replace(/^error: /, '')
          .trim()
          .replace(/\s*\n\s*/g, ' ')}\n${helpHint(command)}\n`,
      ),
  })
  if (helpWidth) command.configureHelp({ helpWidth })
  for (const sub of command.commands) withManners(sub, helpWidth)
}

/** The top-level command `command` belongs to. */
function topLevel(command: Command): Command {
  let at = command
  while (at.parent?.parent) at = at.parent
  return at
}

/** The command `argv` (the arguments after `palmvein`) runs or asks help for: its module is the one to load. */
export function commandNamed(argv: string[]): string | undefined {
  const words = argv.filter((word) => !word.startsWith('-'))
  return words[0] === 'help' ? words[1] : words[0]
}

/**
 * `palmvein help audit verify` as `palmvein audit verify --help`: commander's own help command
 * reads one name only, and printed audit's help for it.
 */
export function helpAsFlag(argv: string[]): string[] {
  const at = argv.findIndex((word) => !word.startsWith('-'))
  return at !== -1 && argv[at] === 'help' ? [...argv.slice(0, at), ...argv.slice(at + 1), '--help'] : argv
}

/**
 * The program. `load`: the command whose module is loaded (the others are listed by their summary
 * only), or 'all' (docs/cli.md). `helpWidth` fixes the help's width (docs/cli.md must not depend
 * on the terminal).
 */
export async function buildProgram(options: { load: string | undefined | 'all'; helpWidth?: number; onAction?: (command: Command) => void }): Promise<Command> {
  const program = new Command('palmvein')
    .description('palm vein identity service and 1:N matcher. Every command honours the same environment as `serve` (DATABASE_URL, PALMVEIN_DATA_DIR, ...).')
    .version(VERSION, '-V, --version', 'print the version')
  for (const entry of COMMANDS) {
    const command = options.load === 'all' || options.load === entry.name ? await entry.load() : new Command(entry.name)
    program.addCommand(command.summary(entry.summary))
  }
  withManners(program, options.helpWidth)
  program.hook('preAction', (_program, action) => {
    options.onAction?.(action)
    if (COMMANDS.find((entry) => entry.name === topLevel(action).name())?.dataDirectory !== 'existing') return
    const config = loadConfig()
    if (keepsFilesInDataDirectory(config)) refuseMissingDataDirectory(config)
  })
  return program
}
