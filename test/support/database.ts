// A fresh, migrated database per test file: a temporary PGlite data directory by default, or a
// temporary database on the PostgreSQL server named by DATABASE_URL (dropped afterwards).
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient, openDatabase, type Database } from '../../src/store/engine/database.js'
import { migrate } from '../../src/store/migrate.js'

export interface TestStorage {
  /** Pass to loadConfig()/start() so a service uses this same storage. */
  databaseUrl: string | null
  dataDir: string
  db: Database
  /**
   * On the embedded database, let go of it so a `palmvein serve` child can own the data directory
   * (serve refuses a directory another process serves); the CLI and this process may join it later.
   */
  handOver(): Promise<void>
  cleanup(): Promise<void>
}

export const usingPostgres = Boolean(process.env.DATABASE_URL)

// Creating an embedded database and migrating it takes 5 to 7 s of CPU; a test run makes a few
// hundred. The first file of a run makes one migrated data directory per set of migrations (named
// by their hash, so a changed migration makes a new one) and every storage starts as a copy of it
// (40 MB, a fraction of a second), which is what a fresh `migrate` would leave.
const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url))

function migrationsHash(): string {
  const hash = createHash('sha256')
  for (const name of readdirSync(MIGRATIONS).sort()) hash.update(name).update(readFileSync(path.join(MIGRATIONS, name)))
  return hash.digest('hex').slice(0, 16)
}

async function migratedEmbeddedTemplate(): Promise<string> {
  const template = path.join(os.tmpdir(), `palmvein-test-template-${migrationsHash()}`)
  if (
    await fs.stat(path.join(template, 'ready')).then(
      () => true,
      () => false,
    )
  )
    return template
  const building = await fs.mkdtemp(`${template}-building-`)
  const db = await openDatabase({ databaseUrl: null, dataDir: building })
  await migrate(db.sql)
  await db.close()
  await fs.writeFile(path.join(building, 'ready'), '')
  // Two files may build it at once: the first rename wins, the other's copy goes.
  await fs.rename(building, template).catch(() => fs.rm(building, { recursive: true, force: true }))
  return template
}

export async function createTestStorage(): Promise<TestStorage> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-test-'))
  let databaseUrl: string | null = null
  let dropDatabase = async () => {}
  if (process.env.DATABASE_URL) {
    const name = `palmvein_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
    const admin = createClient({ url: process.env.DATABASE_URL, max: 1 })
    await admin.unsafe(`CREATE DATABASE ${name}`)
    const url = new URL(process.env.DATABASE_URL)
    url.pathname = `/${name}`
    databaseUrl = url.toString()
    dropDatabase = async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end({ timeout: 5 })
    }
  }
  if (!databaseUrl) await fs.cp(path.join(await migratedEmbeddedTemplate(), 'pglite'), path.join(dataDir, 'pglite'), { recursive: true })
  const db = await openDatabase({ databaseUrl, dataDir })
  await migrate(db.sql)
  return {
    databaseUrl,
    dataDir,
    db,
    async handOver() {
      if (!databaseUrl) await db.close()
    },
    async cleanup() {
      await db.close()
      await dropDatabase()
      await fs.rm(dataDir, { recursive: true, force: true })
    },
  }
}
