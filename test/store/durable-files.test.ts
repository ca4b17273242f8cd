// replaceFileDurably: the content is synced before the rename and the directory after it (what
// makes a replaced file survive a power cut), the file is owner-only, and no temporary is left.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { replaceFileDurably } from '../../src/store/durable-files.js'

describe('replaceFileDurably', () => {
  afterEach(() => vi.restoreAllMocks())

  it('syncs the new content, then the directory that names it', async () => {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'palmvein-durable-'))
    const file = path.join(directory, 'state.json')
    await fs.writeFile(file, 'old')
    // FileHandle is not exported: its prototype is that of any open handle.
    const probe = await fs.open(file, 'r')
    const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> }
    await probe.close()
    const synced: Array<{ directory: boolean; inode: number; size: number }> = []
    const original = prototype.sync
    vi.spyOn(prototype, 'sync').mockImplementation(async function (this: fs.FileHandle) {
      // What the handle is when it is synced: the file that the rename then names, or the directory.
      const stat = await this.stat()
      synced.push({ directory: stat.isDirectory(), inode: stat.ino, size: stat.size })
      return original.call(this)
    })
    await replaceFileDurably(file, 'new content')
    const replaced = await fs.stat(file)
    const folder = await fs.stat(directory)
    expect(synced).toEqual([
      { directory: false, inode: replaced.ino, size: 'new content'.length },
      { directory: true, inode: folder.ino, size: folder.size },
    ])
    expect(await fs.readFile(file, 'utf8')).toBe('new content')
    expect(replaced.mode & 0o777).toBe(0o600)
    expect(await fs.readdir(directory)).toEqual(['state.json'])
    await fs.rm(directory, { recursive: true })
  })
})
