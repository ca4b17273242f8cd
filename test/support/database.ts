// A fresh, migrated database per test file: a temporary PGlite data directory by default, or a
// temporary database on the PostgreSQL server named by DATABASE_URL (dropped afterwards).
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
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
