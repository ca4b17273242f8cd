// `palmvein backup --out <file>` and `palmvein restore <file>`: the embedded database, while the
// service runs or not. Neither holds nor needs to write the master key: a backup is useless
// without it, so it is kept apart, and a restore checks that the key at hand opens the backup.
// Nor the erasure ledger (domain/members/erasures.ts), kept with the key: a restore applies it.
import fs from 'node:fs/promises'
import path from 'node:path'
import { CommandRefused, withCliSession } from './cli-session.js'
import { loadConfig } from './config.js'
import { ERASURE_LEDGER_FILE, erasureLedgerFile } from './domain/members/erasures.js'
import { ledgerExists } from './store/erasure-ledger.js'
import { BackupRefused, backupEmbedded, restoreEmbedded } from './store/engine/embedded-backup.js'
import { openEmbedded } from './store/engine/embedded.js'
import { allEnvironments } from './store/organizations.js'

const MASTER_KEY_NOTE = 'the backup does not hold the master key (PALMVEIN_MASTER_KEY, or master.key in the data directory): keep the key apart from the backup; a restore needs it'

export async function runBackup(out: string): Promise<void> {
  const config = loadConfig()
  if (config.databaseUrl) throw new CommandRefused('backup covers the embedded database; on PostgreSQL use its own tools, e.g. pg_dump --format=custom "$DATABASE_URL" > palmvein.dump (and keep the master key apart)')
  if (await fs.stat(out).then(() => true, () => false)) throw new CommandRefused(`${out} exists: choose a new file`)
  const started = performance.now()
  // Joins the running service's database, or opens it here when none runs.
  const server = await openEmbedded(config.dataDir)
  try {
    const bytes = await backupEmbedded(server, out)
    process.stdout.write(JSON.stringify({ file: path.resolve(out), bytes, seconds: Math.round(performance.now() - started) / 1000 }) + '\n')
    process.stderr.write(`palmvein backup: ${MASTER_KEY_NOTE}\n`)
  } finally {
    await server.close()
  }
}

export async function runRestore(file: string, options: { withoutErasureLedger?: boolean } = {}): Promise<void> {
  const config = loadConfig()
  if (config.databaseUrl) throw new CommandRefused('restore covers the embedded database; on PostgreSQL use pg_restore')
  // Without a key the service would generate a new one, which opens nothing in the backup.
  if (!config.masterKey && !await fs.stat(path.join(config.dataDir, 'master.key')).then(() => true, () => false)) {
    throw new CommandRefused(`the backup holds no master key: set PALMVEIN_MASTER_KEY, or copy the original master.key into ${config.dataDir}, first`)
  }
  // Without the ledger the members erased after the backup was taken would come back.
  const ledger = erasureLedgerFile(config)
  if (!options.withoutErasureLedger && !await ledgerExists(ledger)) {
    throw new CommandRefused(`the backup holds no erasure ledger: copy the original ${ERASURE_LEDGER_FILE} (kept with master.key) to ${ledger} first, so members erased after the backup stay erased; only if it is lost, run again with --without-erasure-ledger`)
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
    throw new CommandRefused(`the master key does not open environment ${unreadable.failed.join(', ')} of this backup; nothing was restored. Use the key the backup was taken under`)
  }
  process.stdout.write(JSON.stringify({ restored: path.resolve(file), data_dir: config.dataDir, environments: unreadable.environments, erased_again: unreadable.reErased }) + '\n')
}
