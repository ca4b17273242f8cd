// Files that must survive a crash or a power cut as written: a new name is durable only once its
// directory is synced, and a replaced file only if its content was synced before the rename.
import fs from 'node:fs/promises'
import path from 'node:path'

/** A new file's name is durable once its directory is synced. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await fs.open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Replaces `file` with `content` all at once: a crash leaves the old file or the new one, never a part. */
export async function replaceFileDurably(file: string, content: string | Buffer, mode = 0o600): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}`)
  const handle = await fs.open(temporary, 'w', mode)
  try {
    await handle.writeFile(content)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await fs.rename(temporary, file)
  await syncDirectory(path.dirname(file))
}
