// docs/cli.md, written from the command definitions (`npm run docs:cli`) so it cannot drift from
// them: test/cli/cli-reference.test.ts fails when the file is stale.
import type { Command } from 'commander'
import { buildProgram } from './program.js'

const INTRO = `# The palmvein command line

Generated from the command definitions in \`src/cli/\` by \`npm run docs:cli\`; do not edit by hand.
\`palmvein <command> --help\` (or \`-h\`, or \`palmvein help <command>\`) prints the same text.

Every command honours the same environment as \`palmvein serve\` (\`DATABASE_URL\`,
\`PALMVEIN_DATA_DIR\`, \`PALMVEIN_MASTER_KEY\`, ...). Only \`serve\`, \`migrate\` and \`restore\` create the
data directory; the other commands that keep files there refuse to run without it, naming the
directory they looked for.

Exit codes: 0 done; 1 the command ran and found a problem (refused import lines, a broken audit
chain, a shard short of replicas) or an unexpected error; 2 a usage error (one line and a hint) or
a command that could not start (one line); 3 \`dedup\` stopped by \`--stop-after\`.
`

export async function cliReference(): Promise<string> {
  const sections: string[] = [INTRO]
  const walk = (command: Command, path: string) => {
    sections.push(`## \`${path}\`\n\n\`\`\`text\n${command.helpInformation().trimEnd()}\n\`\`\`\n`)
    for (const sub of command.commands) walk(sub, `${path} ${sub.name()}`)
  }
  walk(await buildProgram({ load: 'all', helpWidth: 100 }), 'palmvein')
  return sections.join('\n')
}
