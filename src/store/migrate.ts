// Forward-only SQL migrations from ./migrations, applied in file-name order, each in its own
// transaction, recorded in schema_migrations. An advisory lock serialises concurrent starts.
import fs from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { Sql } from './engine/database.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))
const LOCK_ID = 7_310_042_001

export async function migrate(sql: Sql, log: (message: string) => void = () => {}): Promise<string[]> {
  const files = (await fs.readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort()
  const applied: string[] = []
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LOCK_ID})`
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`
    const done = new Set((await tx<{ name: string }[]>`SELECT name FROM schema_migrations`).map((row) => row.name))
    for (const name of files) {
      if (done.has(name)) continue
      const text = await fs.readFile(MIGRATIONS_DIR + name, 'utf8')
      await tx.unsafe(text).simple()
      await tx`INSERT INTO schema_migrations (name) VALUES (${name})`
      applied.push(name)
      log(`migration applied: ${name}`)
    }
  })
  return applied
}
