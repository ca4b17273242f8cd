// The embedded database's files are readable by their owner only. PGlite writes the files of a new
// database (its initdb) 0666 and its directories 0755 whatever the umask, and earlier versions
// left them so: at every open (and after a restore) the tree is set to 0700 directories and 0600
// files. What PostgreSQL creates later it creates 0600 / 0700 itself.
import fs from 'node:fs/promises'
import path from 'node:path'

const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600

/** Sets `directory` and everything under it to owner-only modes; returns how many entries changed. */
export async function restrictToOwner(directory: string): Promise<number> {
  let changed = 0
  const visit = async (entry: string): Promise<void> => {
    let stats
    try {
      stats = await fs.lstat(entry)
    } catch (error) {
      // Removed meanwhile (PostgreSQL deletes temporary files while it runs).
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    if (stats.isSymbolicLink()) return
    const mode = stats.isDirectory() ? DIRECTORY_MODE : FILE_MODE
    if ((stats.mode & 0o777) !== mode) {
      await fs.chmod(entry, mode).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
      changed += 1
    }
    if (stats.isDirectory()) {
      const names = await fs.readdir(entry).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return []
        throw error
      })
      for (const name of names) await visit(path.join(entry, name))
    }
  }
  await visit(directory)
  return changed
}
