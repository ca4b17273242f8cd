// `palmvein backup --out <file>`: the embedded database, while the service runs or not (restore.ts
// loads it back). It neither holds nor needs to write the master key: a backup is useless without
// it, so it is kept apart. Nor the erasure ledger (domain/erasures.ts), kept with the key.
import { Command } from 'commander'
import fs from 'node:fs/promises'
import path from 'node:path'
import { loadConfig } from '../config.js'
import { backupEmbedded } from '../store/engine/embedded-backup.js'
import { openEmbedded } from '../store/engine/embedded.js'
import { refuseMissingDataDirectory } from './data-directory.js'
import { CommandRefused } from './errors.js'

const MASTER_KEY_NOTE =
  'the backup does not hold the master key (PALMVEIN_MASTER_KEY, or master.key in the data directory): keep the key apart from the backup; a restore needs it'

async function runBackup(out: string): Promise<void> {
  const config = loadConfig()
  if (config.databaseUrl)
    throw new CommandRefused(
      'backup covers the embedded database; on PostgreSQL use its own tools, e.g. pg_dump --format=custom "$DATABASE_URL" > palmvein.dump (and keep the master key apart)',
    )
  // Checked here, after the PostgreSQL answer (which needs no data directory).
  refuseMissingDataDirectory(config)
  if (
    await fs.stat(out).then(
      () => true,
      () => false,
    )
  )
    throw new CommandRefused(`${out} exists: choose a new file`)
  const directory = path.dirname(path.resolve(out))
  if (
    !(await fs.stat(directory).then(
      (stat) => stat.isDirectory(),
      () => false,
    ))
  )
    throw new CommandRefused(`cannot write ${out}: there is no directory ${directory}`)
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

export const backupCommand = () =>
  new Command('backup')
    .description('a consistent backup of the embedded database, while the service runs (not the master key: keep it apart); on PostgreSQL use pg_dump')
    .requiredOption('--out <file>', 'the backup file to write (it must not exist)')
    .action((options: { out: string }) => runBackup(options.out))
