// `palmvein export --project <id> --include-biometrics`: the project's members as `palmvein import`
// lines on stdout, captures decrypted. Refused without --include-biometrics, and it says on stderr
// that the output holds biometric data.
import { once } from 'node:events'
import { CommandRefused } from './cli-import.js'
import { loadConfig } from './config.js'
import { createKeyring, loadMasterKey } from './domain/keyring.js'
import { exportMembers, type ExportCounts } from './domain/member-export.js'
import { isUuid } from './ids.js'
import { openDatabase } from './store/database.js'
import { migrate } from './store/migrate.js'
import { projectById } from './store/projects.js'

export async function runExport(args: { project: string; includeBiometrics: boolean }): Promise<void> {
  if (!isUuid(args.project)) throw new CommandRefused('--project must be a project id (a UUID)')
  if (!args.includeBiometrics) {
    throw new CommandRefused('export writes every member\'s palm captures in the clear: add --include-biometrics to confirm, and keep the output as safe as the database')
  }
  const config = loadConfig()
  const db = await openDatabase(config)
  try {
    await migrate(db.sql)
    const project = await projectById(db.sql, args.project)
    if (!project) throw new CommandRefused(`project ${args.project} not found`)
    if (!project.environment_id) throw new CommandRefused(`project ${args.project} uses a shared environment; only a tenant-managed environment's members are exported`)
    process.stderr.write('palmvein export: the output holds biometric data (decrypted palm captures); store and move it as such\n')
    const keyring = createKeyring((await loadMasterKey(config)).key)
    const counts: ExportCounts = { members: 0, withoutCaptures: 0 }
    for await (const member of exportMembers({ keyring, sql: db.sql }, project, counts)) {
      if (!process.stdout.write(JSON.stringify(member) + '\n')) await once(process.stdout, 'drain')
    }
    process.stderr.write(`palmvein export: ${counts.members} member(s)${counts.withoutCaptures ? `, ${counts.withoutCaptures} without stored captures (exported without hands: they cannot be re-enrolled from the file)` : ''}\n`)
  } finally {
    await db.close()
  }
}
