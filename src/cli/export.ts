// `palmvein export --project <id> --include-biometrics`: the project's members as `palmvein import`
// lines on stdout, captures decrypted. Refused without --include-biometrics, and it says on stderr
// that the output holds biometric data.
import { Command } from 'commander'
import { once } from 'node:events'
import { CommandRefused } from './errors.js'
import { tenantProject, withCliSession } from './session.js'
import { exportMembers, type ExportCounts } from '../domain/import/member-export.js'

async function runExport(args: { project: string; includeBiometrics: boolean }): Promise<void> {
  if (!args.includeBiometrics) {
    throw new CommandRefused(
      "export writes every member's palm captures in the clear: add --include-biometrics to confirm, and keep the output as safe as the database",
    )
  }
  await withCliSession(async (session) => {
    const project = await tenantProject(session, args.project, 'export reads')
    process.stderr.write('palmvein export: the output holds biometric data (decrypted palm captures); store and move it as such\n')
    const counts: ExportCounts = { members: 0, withoutCaptures: 0 }
    for await (const member of exportMembers({ keyring: session.keyring, sql: session.db.sql }, project, counts)) {
      if (!process.stdout.write(JSON.stringify(member) + '\n')) await once(process.stdout, 'drain')
    }
    const without = counts.withoutCaptures
      ? `, ${counts.withoutCaptures} without stored captures (exported without hands: they cannot be re-enrolled from the file)`
      : ''
    process.stderr.write(`palmvein export: ${counts.members} member(s)${without}\n`)
  })
}

export const exportCommand = () =>
  new Command('export')
    .description("print the project's members with their palm captures (decrypted) as import lines")
    .requiredOption('--project <project_id>', 'a project with its own (tenant-managed) environment')
    .option('--include-biometrics', "confirm that the output holds every member's palm captures in the clear")
    .action((options: { project: string; includeBiometrics?: boolean }) =>
      runExport({ project: options.project, includeBiometrics: options.includeBiometrics ?? false }),
    )
