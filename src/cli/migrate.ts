// `palmvein migrate`: apply the database migrations and exit (the service applies them too, at boot).
import { Command } from 'commander'
import { loadConfig } from '../config.js'
import { openDatabase } from '../store/engine/database.js'
import { migrate } from '../store/migrate.js'

async function runMigrate(): Promise<void> {
  const db = await openDatabase(loadConfig())
  try {
    const applied = await migrate(db.sql)
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema up to date')
  } finally {
    await db.close()
  }
}

export const migrateCommand = () =>
  new Command('migrate').description('apply database migrations and exit (creates the data directory of the embedded database)').action(runMigrate)
