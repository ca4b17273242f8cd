// The embedded database: PGlite (Postgres compiled to WASM) in the data directory, run in a
// thread of its own (pglite-worker.ts) and served on loopback (pglite-server.ts) so the same
// `postgres` client talks to it. PGlite is single-process, so the process
// that opens it writes its port to `pglite.json`; another process on the same data directory
// (the CLI while `palmvein serve` runs) connects to that port instead of opening the files.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import type { Duplex } from 'node:stream'
import { restrictToOwner } from './owner-only-files.js'
import { PgliteActivity } from './pglite-activity.js'
import { connectToPgliteWorker, releasePgliteWorkerGarbage, startPgliteWorker, stopPgliteWorker } from './pglite-thread.js'

export interface EmbeddedDatabase {
  host: string
  port: number
  /** Random per start, kept in the 0600 pglite.json: the loopback port is not an open door. */
  password: string
  directory: string
  /** True when this process opened PGlite; false when it joined a running service's socket. */
  owned: boolean
  /**
   * Owned only: the thread's state, read without a round trip (the health check), and a connection
   * to it over a MessageChannel (this process's own clients use it rather than loopback TCP).
   */
  thread?: { activity: PgliteActivity; exited: () => boolean; connect: () => Duplex; releaseGarbage: () => Promise<void> }
  close(): Promise<void>
}

const HOST = '127.0.0.1'
// PGlite's own default is PostgreSQL's 128MB: 165 MiB of the service's RSS at 400k gallery rows,
// for a second copy of pages the operating system caches anyway (see Config.embeddedSharedBuffers).
// All of it is resident from the start (8MB: 22.1 MiB of PGlite's memory, 16MB: 30.1), and 8MB
// served 1M members' reads and identify writes as fast as 16MB (bench/results/2026-11-29T09-25Z-page-cache).
const DEFAULT_SHARED_BUFFERS = '8MB'

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.setTimeout(1000, () => {
      socket.destroy()
      resolve(false)
    })
  })
}

async function runningServer(portFile: string): Promise<{ pid: number; port: number; password: string } | null> {
  try {
    const { pid, port, password } = JSON.parse(await fs.readFile(portFile, 'utf8')) as { pid: number; port: number; password: string }
    if (pid !== process.pid && processAlive(pid) && (await portAnswers(port))) return { pid, port, password }
  } catch {
    // no port file, or a stale one: this process opens the database itself
  }
  return null
}

// Within one process, opens of the same directory share one PGlite (tests boot several services).
const openInProcess = new Map<string, { database: Promise<EmbeddedDatabase>; users: number }>()

/** The data directory is served by another live process, and this one may not join it. */
export class DataDirectoryInUse extends Error {
  override name = 'DataDirectoryInUse'
}

/**
 * `exclusive`: `serve` owns its data directory. A second service joining another's embedded database
 * would never hear its gallery changes (notifications are in-process), so it is refused; the CLI's
 * short commands join.
 */
export async function openEmbedded(dataDir: string, options: { exclusive?: boolean; sharedBuffers?: string } = {}): Promise<EmbeddedDatabase> {
  const key = path.resolve(dataDir)
  let entry = openInProcess.get(key)
  if (!entry) {
    entry = { database: openOnce(key, options.exclusive ?? false, options.sharedBuffers ?? DEFAULT_SHARED_BUFFERS), users: 0 }
    openInProcess.set(key, entry)
    entry.database.catch(() => openInProcess.delete(key))
  }
  entry.users += 1
  const shared = await entry.database
  const owner = entry
  let closed = false
  return {
    ...shared,
    async close() {
      if (closed) return
      closed = true
      owner.users -= 1
      if (owner.users === 0) {
        openInProcess.delete(key)
        await shared.close()
      }
    },
  }
}

async function openOnce(dataDir: string, exclusive: boolean, sharedBuffers: string): Promise<EmbeddedDatabase> {
  const directory = path.join(dataDir, 'pglite')
  const portFile = path.join(dataDir, 'pglite.json')
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 })

  const existing = await runningServer(portFile)
  if (existing !== null) {
    if (exclusive) {
      throw new DataDirectoryInUse(
        `the data directory ${dataDir} is served by another palmvein process (pid ${existing.pid}): a second service on its embedded database would not hear the first one's changes. Stop that one, or run several processes on PostgreSQL (DATABASE_URL)`,
      )
    }
    return { host: HOST, port: existing.port, password: existing.password, directory, owned: false, close: async () => {} }
  }

  const password = randomBytes(24).toString('base64url')
  const activity = PgliteActivity.create()
  const { worker, port } = await startPgliteWorker({ directory, host: HOST, password, sharedBuffers, activity: activity.buffer })
  // Once PGlite has made (or found) its files: they are the owner's alone.
  await restrictToOwner(directory)
  let exited = false
  worker.once('exit', () => {
    exited = true
  })
  // Written with O_EXCL after removing a stale file, so the mode is ours (0600) from the first byte.
  await fs.rm(portFile, { force: true })
  await fs.writeFile(portFile, JSON.stringify({ pid: process.pid, port, password }), { mode: 0o600, flag: 'wx' })
  return {
    host: HOST,
    port,
    password,
    directory,
    owned: true,
    thread: {
      activity,
      exited: () => exited,
      connect: () => connectToPgliteWorker(worker),
      releaseGarbage: () => (exited ? Promise.resolve() : releasePgliteWorkerGarbage(worker)),
    },
    async close() {
      await stopPgliteWorker(worker)
      await fs.rm(portFile, { force: true })
    },
  }
}
