// The embedded database's files are its owner's alone: after a start its directories are 0700 and
// its files 0600 (PGlite itself writes a new database's files 0666), and a data directory left
// readable by an earlier version is made so at the next start.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEmbedded } from '../../src/store/engine/embedded.js'

/** Every entry under `directory` (itself included) whose mode is not owner-only, as "mode path". */
async function notOwnerOnly(directory: string): Promise<string[]> {
  const found: string[] = []
  const visit = async (entry: string) => {
    const stats = await fs.lstat(entry)
    if (stats.isSymbolicLink()) return
    const mode = stats.mode & 0o777
    if (mode !== (stats.isDirectory() ? 0o700 : 0o600)) found.push(`${mode.toString(8)} ${path.relative(directory, entry) || '.'}`)
    if (stats.isDirectory()) for (const name of await fs.readdir(entry)) await visit(path.join(entry, name))
  }
  await visit(directory)
  return found
}

describe('embedded database file modes', () => {
  let dataDir: string
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-modes-'))
  })
  afterAll(async () => {
    await fs.rm(dataDir, { recursive: true, force: true })
  })

  it('a new database: directories 0700, files 0600, none readable by others', { timeout: 120_000 }, async () => {
    const db = await openEmbedded(dataDir)
    try {
      const pglite = path.join(dataDir, 'pglite')
      expect((await fs.readdir(pglite)).length).toBeGreaterThan(5)
      expect(await notOwnerOnly(pglite)).toEqual([])
    } finally {
      await db.close()
    }
  })

  it('files and directories an earlier version left 0666 / 0755 are fixed at the next start', { timeout: 120_000 }, async () => {
    const pglite = path.join(dataDir, 'pglite')
    await fs.chmod(path.join(pglite, 'PG_VERSION'), 0o666)
    await fs.chmod(path.join(pglite, 'global'), 0o755)
    await fs.chmod(pglite, 0o755)
    expect(await notOwnerOnly(pglite)).toEqual(['755 .', '666 PG_VERSION', '755 global'])
    const db = await openEmbedded(dataDir)
    try {
      expect(await notOwnerOnly(pglite)).toEqual([])
    } finally {
      await db.close()
    }
  })
})
