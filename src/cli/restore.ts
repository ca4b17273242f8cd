// `palmvein restore <file>`: a backup (backup.ts) into an empty data directory, the erasure ledger
// applied before anything reads it, and a check that the master key at hand opens it.
import { Command } from 'commander'
import fs from 'node:fs/promises'
import path from 'node:path'
import { loadConfig } from '../config.js'
import { ERASURE_LEDGER_FILE, erasureLedgerFile } from '../domain/members/erasures.js'
import { ledgerExists } from '../store/erasure-ledger.js'
import { BackupRefused, restoreEmbedded } from '../store/engine/embedded-backup.js'
import { allEnvironments } from '../store/organizations.js'
import { CommandRefused } from './errors.js'
import { withCliSession } from './session.js'

async function runRestore(file: string, options: { withoutErasureLedger?: boolean } = {}): Promise<void> {
  const config = loadConfig()
  if (config.databaseUrl) throw new CommandRefused('restore covers the embedded database; on PostgreSQL use pg_restore')
  // Without a key the service would generate a new one, which opens nothing in the backup.
  if (
    !config.masterKey &&
    !(await fs.stat(path.join(config.dataDir, 'master.key')).then(
      () => true,
      () => false,
    ))
  ) {
    throw new CommandRefused(`the backup holds no master key: set PALMVEIN_MASTER_KEY, or copy the original master.key into ${config.dataDir}, first`)
  }
  // Without the ledger the members erased after the backup was taken would come back.
  const ledger = erasureLedgerFile(config)
  if (!options.withoutErasureLedger && !(await ledgerExists(ledger))) {
    throw new CommandRefused(
      `the backup holds no erasure ledger: copy the original ${ERASURE_LEDGER_FILE} (kept with master.key) to ${ledger} first, so members erased after the backup stay erased; only if it is lost, run again with --without-erasure-ledger`,
    )
  }
  try {
    await restoreEmbedded(file, config.dataDir)
  } catch (error) {
    if (error instanceof BackupRefused || (error as NodeJS.ErrnoException).code === 'ENOENT') throw new CommandRefused((error as Error).message)
    throw error
  }
  // The session applies the erasure ledger before anything reads the restored database.
  const unreadable = await withCliSession(async (session) => {
    const environments = await allEnvironments(session.db.sql)
    const failed = environments.filter((environment) => {
      try {
        session.keyring.environmentKey(environment.id, environment.wrapped_key)
        return false
      } catch {
        return true
      }
    })
    return { environments: environments.length, failed: failed.map((environment) => environment.id), reErased: session.reErased }
  })
  if (unreadable.failed.length > 0) {
    await fs.rm(path.join(config.dataDir, 'pglite'), { recursive: true, force: true })
    throw new CommandRefused(
      `the master key does not open environment ${unreadable.failed.join(', ')} of this backup; nothing was restored. Use the key the backup was taken under`,
    )
  }
  process.stdout.write(
    JSON.stringify({ restored: path.resolve(file), data_dir: config.dataDir, environments: unreadable.environments, erased_again: unreadable.reErased }) + '\n',
  )
}

export const restoreCommand = () =>
  new Command('restore')
    .description('restore a backup into an empty data directory (creates it); needs the master key and the erasure ledger')
    .argument('<file>', 'the backup (from palmvein backup)')
    .option('--without-erasure-ledger', 'restore although the erasure ledger (erasures.log) is lost: members erased after the backup come back')
    .action((file: string, options: { withoutErasureLedger?: boolean }) => runRestore(file, options))
