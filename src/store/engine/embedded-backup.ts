// Backup and restore of the embedded database. A backup is a gzip tarball of PGlite's files, asked
// of whichever process serves them (the running service, or this one) over its loopback port
// (pglite-server.ts checks the request, this file makes the tarball). A restore unpacks one into an
// empty data directory and opens it once (PGlite replays its WAL).
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import type { Duplex } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { PGlite } from '@electric-sql/pglite'
import * as tar from 'tar'
import { syncDirectory } from '../durable-files.js'
import { restrictToOwner } from './owner-only-files.js'

/**
 * palmvein's own request in place of a startup message: length, this code, then the password.
 * Answered with a gzip tarball of the database files, and the connection closes.
 */
export const BACKUP_REQUEST = 0x50564231

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b])

/**
 * Sends the tarball of `directory` to `socket`. `whenIdle` copies the files while no unit of work
 * runs and no transaction is open (PGlite writes through to them, so the copy is consistent; a
 * restore replays its WAL), which stalls other work only for the copy; the tarball is then made
 * and sent from the copy.
 */
export async function sendBackup(directory: string, socket: Duplex, whenIdle: (task: () => Promise<void>) => Promise<void>): Promise<void> {
  const snapshot = `${directory}.backup-${process.pid}-${Date.now()}`
  try {
    await whenIdle(() => fs.cp(directory, snapshot, { recursive: true }))
    await pipeline(tar.c({ gzip: true, cwd: snapshot, portable: true }, ['.']), socket)
  } finally {
    await fs.rm(snapshot, { recursive: true, force: true })
  }
}

/** The backup or restore cannot be done as asked; nothing was written. */
export class BackupRefused extends Error {}

/** Writes the backup of the database served at `server` to `out` (whole, or not at all). Returns its size. */
export async function backupEmbedded(server: { host: string; port: number; password: string }, out: string): Promise<number> {
  const temporary = path.join(path.dirname(path.resolve(out)), `.${path.basename(out)}.${process.pid}.partial`)
  const file = await fs.open(temporary, 'wx', 0o600)
  let bytes = 0
  let head = Buffer.alloc(0)
  try {
    const socket = net.connect({ host: server.host, port: server.port })
    const password = Buffer.from(server.password)
    const request = Buffer.alloc(8)
    request.writeInt32BE(8 + password.length, 0)
    request.writeInt32BE(BACKUP_REQUEST, 4)
    socket.write(Buffer.concat([request, password]))
    for await (const chunk of socket as AsyncIterable<Buffer>) {
      if (head.length < 2) head = Buffer.concat([head, chunk]).subarray(0, 64)
      await file.write(chunk)
      bytes += chunk.length
    }
    await file.sync()
  } finally {
    await file.close()
  }
  if (!head.subarray(0, 2).equals(GZIP_MAGIC)) {
    await fs.rm(temporary, { force: true })
    // An error message of the wire protocol: 'E', then fields; the message text follows 'M'.
    const message = /M([^\0]*)/.exec(head.toString('latin1'))?.[1]
    throw new Error(`the embedded database did not send a backup${message ? `: ${message}` : ''}`)
  }
  await fs.rename(temporary, out)
  await syncDirectory(path.dirname(path.resolve(out)))
  return bytes
}

/** Loads `file` (a backup) into `dataDir`, which must hold no database yet. */
export async function restoreEmbedded(file: string, dataDir: string): Promise<void> {
  const directory = path.join(dataDir, 'pglite')
  const existing = await fs.readdir(directory).catch(() => [])
  if (existing.length > 0) throw new BackupRefused(`${directory} already holds a database: restore into an empty data directory (PALMVEIN_DATA_DIR)`)
  const handle = await fs.open(file)
  const { buffer: head } = await handle.read(Buffer.alloc(2), 0, 2, 0).finally(() => handle.close())
  if (!head.equals(GZIP_MAGIC)) throw new BackupRefused(`${file} is not a palmvein backup (a gzip tarball made by palmvein backup)`)
  await fs.mkdir(directory, { recursive: true, mode: 0o700 })
  try {
    await tar.x({ file, cwd: directory, strict: true })
    // Without its files PGlite would make a new, empty database here.
    if (
      !(await fs.stat(path.join(directory, 'PG_VERSION')).then(
        () => true,
        () => false,
      ))
    )
      throw new Error('it holds no database files')
    const db = await PGlite.create(directory)
    await db.close()
    await restrictToOwner(directory)
  } catch (error) {
    await fs.rm(directory, { recursive: true, force: true })
    throw new BackupRefused(`${file} could not be restored: ${error instanceof Error ? error.message : String(error)}`)
  }
}
