// The gallery snapshot file: one environment's reference vectors as of a change-log number, sealed
// so it stays as protected on disk as the templates it was made from. A fresh data key per file,
// wrapped under the environment key (the templates' key hierarchy: master → environment → this
// key); the rows in chunks, each AES-256-GCM with the header's digest, its index and whether it
// is the last in its authenticated data. So a flipped byte anywhere, a chunk moved or dropped, a
// header edited or a file cut short fails verification, and the boot reads the database instead.
// Written to a temporary file, synced, then renamed over the old one and the directory synced: a
// crash at any moment leaves the old snapshot or the new one, whole.
//
// Read in one pass: each chunk's rows go to the gallery as soon as its tag verifies (a file refused
// part way leaves its rows in a gallery the boot then drops).
//
//   "PVGSNAP1" | u32 header length | header (JSON, "format": 2) | chunks: u32 sealed length | sealed chunk
//   a rows chunk (one hand's page, laid out to be handed to the matcher as it is, no row copied):
//     hand (u8: 0 left, 1 right) | 3 zero bytes | u32 rows (LE) | member ids (16 bytes each) |
//     vectors (dimension bytes each) | squared norms (u32 LE each) | sign bits (signBytes each)
//   the last chunk: JSON { rows, touched } (`touched`: members changed while the copy ran, re-read at boot)
// Format 1 (one row after another: id | hand | vector) is no longer read: such a file is refused
// and the database read, and the next snapshot replaces it.
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { open, seal } from '../../keys/keyring.js'
import type { Keyring } from '../../keys/keyring.js'
import { syncDirectory } from '../../store/durable-files.js'
import type { Hand } from '../../store/templates.js'
import type { RowsBlock } from './gallery-rows.js'

const MAGIC = Buffer.from('PVGSNAP1')
const FORMAT = 2
const CHUNK_HEAD_BYTES = 8
const ID_BYTES = 16
const MAX_HEADER_BYTES = 64 << 10
const MAX_CHUNK_BYTES = 256 << 20
export const SNAPSHOT_SUFFIX = '.snapshot'

export interface SnapshotHeader {
  format: number
  environment_id: string
  /** Every change of the environment up to this change-log number is in the rows. */
  seq: number
  dimension: number
  /**
   * The environment's latest changes up to `seq` (member id, change number), latest first: a boot
   * uses the file only if the database's change log holds each of them (at that number or later).
   */
  latest_changes: Array<[string, number]>
  /** Rows in the gallery when the copy began (sizes the boot's id maps). */
  rows_hint: number
  written_at: string
  /** The file's data key, wrapped under the environment key (base64). */
  wrapped_key: string
}

export interface SnapshotTrailer {
  rows: number
  /** Members whose rows changed in the gallery while it was copied: the boot re-reads them. */
  touched: string[]
}

/** A snapshot that does not verify: never used, the boot reads the database. */
export class SnapshotInvalidError extends Error {
  override name = 'SnapshotInvalidError'
}

export const snapshotFile = (directory: string, environmentId: string) => path.join(directory, `gallery-${environmentId}${SNAPSHOT_SUFFIX}`)
const keyContext = (environmentId: string) => `gallery-snapshot:${environmentId}`
const chunkContext = (environmentId: string, digest: string, index: number, last: boolean) =>
  `gallery-snapshot:${environmentId}:${digest}:${index}:${last ? 'end' : 'rows'}`

const HAND_CODES: Record<Hand, number> = { left: 0, right: 1 }
const HANDS_BY_CODE: readonly Hand[] = ['left', 'right']

function uuidBytes(id: string, out: Buffer, at: number): void {
  out.write(id.replaceAll('-', ''), at, ID_BYTES, 'hex')
}

/** Sign-bit bytes a row at `dimension` (the matcher's layout: whole 64-bit words). */
export const signBytesOf = (dimension: number) => Math.ceil(dimension / 64) * 8

const lengthPrefixed = (bytes: Uint8Array) => {
  const prefix = Buffer.alloc(4)
  prefix.writeUInt32BE(bytes.length)
  return [prefix, bytes]
}

export interface RowsPage {
  ids: readonly string[]
  hand: Hand
  /** ids.length x dimension int8 components. */
  vectors: Int8Array
  /** Their squared norms and sign bits, as the matcher keeps them (gallery.readRows). */
  norms: Uint32Array
  signBits: Uint8Array
}

/** A rows chunk's plaintext: see the layout above. */
function encodeRowsChunk(page: RowsPage, dimension: number): Buffer {
  const count = page.ids.length
  const signBytes = signBytesOf(dimension)
  if (page.vectors.length !== count * dimension || page.norms.length !== count || page.signBits.length !== count * signBytes) {
    throw new Error('a snapshot page does not hold whole rows')
  }
  const plain = Buffer.alloc(CHUNK_HEAD_BYTES + count * (ID_BYTES + dimension + 4 + signBytes))
  plain[0] = HAND_CODES[page.hand]
  plain.writeUInt32LE(count, 4)
  let at = CHUNK_HEAD_BYTES
  for (const id of page.ids) {
    uuidBytes(id, plain, at)
    at += ID_BYTES
  }
  plain.set(new Uint8Array(page.vectors.buffer, page.vectors.byteOffset, page.vectors.byteLength), at)
  at += page.vectors.byteLength
  for (let row = 0; row < count; row++, at += 4) plain.writeUInt32LE(page.norms[row], at)
  plain.set(page.signBits, at)
  return plain
}

/** The page a rows chunk holds, as views into it (norms copied only where the plaintext is not 4-byte aligned). */
function decodeRowsChunk(plain: Buffer, dimension: number, index: number): RowsBlock {
  const invalid = () => new SnapshotInvalidError(`chunk ${index} is not whole rows`)
  if (plain.length < CHUNK_HEAD_BYTES) throw invalid()
  const hand = HANDS_BY_CODE[plain[0]]
  if (!hand) throw new SnapshotInvalidError('a rows chunk names no hand')
  const count = plain.readUInt32LE(4)
  const signBytes = signBytesOf(dimension)
  if (count === 0 || plain.length !== CHUNK_HEAD_BYTES + count * (ID_BYTES + dimension + 4 + signBytes)) throw invalid()
  let at = plain.byteOffset + CHUNK_HEAD_BYTES
  const ids = new Uint8Array(plain.buffer, at, count * ID_BYTES)
  at += count * ID_BYTES
  const vectors = new Int8Array(plain.buffer, at, count * dimension)
  at += count * dimension
  const norms = at % 4 === 0 ? new Uint32Array(plain.buffer, at, count) : new Uint32Array(plain.buffer.slice(at, at + count * 4))
  at += count * 4
  const signBits = new Uint8Array(plain.buffer, at, count * signBytes)
  return { hand, count, ids, vectors, norms, signBits }
}

/**
 * Writes the snapshot of `pages` (awaited one at a time, so the caller may yield between them)
 * durably, replacing the environment's previous one. `finish` gives the trailer once every page is
 * read. Returns the file's size in bytes.
 */
export async function writeSnapshot(options: {
  directory: string
  keyring: Keyring
  environmentKey: Uint8Array
  header: Omit<SnapshotHeader, 'format' | 'wrapped_key' | 'written_at'>
  pages: AsyncIterable<RowsPage>
  finish: () => Omit<SnapshotTrailer, 'rows'>
}): Promise<{ file: string; bytes: number; rows: number }> {
  const { directory, header } = options
  await fs.mkdir(directory, { recursive: true, mode: 0o700 })
  const file = snapshotFile(directory, header.environment_id)
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
  const { key, wrapped } = options.keyring.newKey(options.environmentKey, keyContext(header.environment_id))
  const headerBytes = Buffer.from(
    JSON.stringify({ format: FORMAT, ...header, written_at: new Date().toISOString(), wrapped_key: wrapped.toString('base64') } satisfies SnapshotHeader),
  )
  const digest = createHash('sha256').update(headerBytes).digest('hex')
  const handle = await fs.open(temporary, 'wx', 0o600)
  let bytes = 0
  let rows = 0
  let index = 0
  const write = async (parts: Uint8Array[]) => {
    const { bytesWritten } = await handle.writev(parts)
    bytes += bytesWritten
  }
  try {
    await write([MAGIC, ...lengthPrefixed(headerBytes)])
    for await (const page of options.pages) {
      if (page.ids.length === 0) continue
      const plain = encodeRowsChunk(page, header.dimension)
      await write(lengthPrefixed(seal(key, plain, chunkContext(header.environment_id, digest, index++, false))))
      rows += page.ids.length
    }
    const trailer: SnapshotTrailer = { rows, ...options.finish() }
    await write(lengthPrefixed(seal(key, Buffer.from(JSON.stringify(trailer)), chunkContext(header.environment_id, digest, index, true))))
    await handle.sync()
  } catch (error) {
    await handle.close()
    await fs.rm(temporary, { force: true })
    throw error
  }
  await handle.close()
  await fs.rename(temporary, file)
  await syncDirectory(directory)
  return { file, bytes, rows }
}

export interface OpenedSnapshot {
  header: SnapshotHeader
  /**
   * Reads the file once, handing each rows chunk to `onPage` as soon as it verifies (every chunk's
   * tag, in order, the trailer present and last, the row count); returns the trailer.
   * SnapshotInvalidError part way when the rest does not verify: the pages handed over must be dropped.
   */
  load(onPage: (page: RowsBlock) => void): Promise<SnapshotTrailer>
  close(): Promise<void>
}

/**
 * Opens a snapshot and checks its header (format, environment, dimension, key). Null when there is
 * none; SnapshotInvalidError when it is not this environment's, or not of this format.
 */
export async function openSnapshot(
  file: string,
  expected: { environmentId: string; dimension: number; environmentKey: Uint8Array; keyring: Keyring },
): Promise<OpenedSnapshot | null> {
  const handle = await fs.open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw error
  })
  if (!handle) return null
  try {
    const size = (await handle.stat()).size
    let buffer = Buffer.allocUnsafe(0)
    /** `length` bytes at `position`, in a buffer reused from read to read (valid until the next). */
    const readAt = async (position: number, length: number): Promise<Buffer> => {
      if (position + length > size) throw new SnapshotInvalidError('the file ends early (cut short)')
      if (buffer.length < length) buffer = Buffer.allocUnsafe(Math.max(length, 2 * buffer.length))
      const { bytesRead } = await handle.read(buffer, 0, length, position)
      if (bytesRead !== length) throw new SnapshotInvalidError('the file ends early (cut short)')
      return buffer.subarray(0, length)
    }
    const prefix = Buffer.from(await readAt(0, MAGIC.length + 4))
    if (!prefix.subarray(0, MAGIC.length).equals(MAGIC)) throw new SnapshotInvalidError('not a gallery snapshot')
    const headerLength = prefix.readUInt32BE(MAGIC.length)
    if (headerLength > MAX_HEADER_BYTES) throw new SnapshotInvalidError('header too long')
    const headerBytes = Buffer.from(await readAt(prefix.length, headerLength))
    const header = parseHeader(headerBytes)
    if (header.environment_id !== expected.environmentId) throw new SnapshotInvalidError(`the snapshot is of environment ${header.environment_id}`)
    if (header.dimension !== expected.dimension)
      throw new SnapshotInvalidError(`the snapshot's dimension is ${header.dimension}, the environment's ${expected.dimension}`)
    let key: Buffer
    try {
      key = expected.keyring.unwrap(Buffer.from(header.wrapped_key, 'base64'), expected.environmentKey, keyContext(header.environment_id))
    } catch {
      throw new SnapshotInvalidError("the snapshot's key does not open under the environment key")
    }
    const digest = createHash('sha256').update(headerBytes).digest('hex')
    const firstChunk = prefix.length + headerLength
    return {
      header,
      async load(onPage) {
        let position = firstChunk
        let rows = 0
        for (let index = 0; ; index++) {
          const length = (await readAt(position, 4)).readUInt32BE(0)
          if (length > MAX_CHUNK_BYTES) throw new SnapshotInvalidError(`chunk ${index} too long`)
          const sealed = await readAt(position + 4, length)
          position += 4 + length
          const last = position === size
          let plain: Buffer
          try {
            plain = open(key, sealed, chunkContext(header.environment_id, digest, index, last))
          } catch {
            throw new SnapshotInvalidError(`chunk ${index} does not verify (altered, moved or cut short)`)
          }
          if (last) {
            const trailer = parseTrailer(plain)
            if (trailer.rows !== rows) throw new SnapshotInvalidError(`the trailer counts ${trailer.rows} rows, the chunks hold ${rows}`)
            return trailer
          }
          const page = decodeRowsChunk(plain, header.dimension, index)
          rows += page.count
          onPage(page)
        }
      },
      close: () => handle.close(),
    }
  } catch (error) {
    await handle.close()
    throw error
  }
}

function parseHeader(bytes: Buffer): SnapshotHeader {
  let header: SnapshotHeader
  try {
    header = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new SnapshotInvalidError('the header is not JSON')
  }
  if (
    header?.format !== FORMAT ||
    typeof header.environment_id !== 'string' ||
    !Number.isSafeInteger(header.seq) ||
    !Number.isSafeInteger(header.dimension) ||
    !Number.isSafeInteger(header.rows_hint) ||
    !Array.isArray(header.latest_changes) ||
    !header.latest_changes.every((change) => Array.isArray(change) && typeof change[0] === 'string' && Number.isSafeInteger(change[1])) ||
    typeof header.wrapped_key !== 'string'
  ) {
    throw new SnapshotInvalidError(
      header?.format === FORMAT ? 'the header is malformed' : `the snapshot is of format ${header?.format}, this version reads format ${FORMAT}`,
    )
  }
  return header
}

function parseTrailer(bytes: Buffer): SnapshotTrailer {
  const trailer = JSON.parse(bytes.toString('utf8')) as SnapshotTrailer
  if (!Number.isSafeInteger(trailer?.rows) || !Array.isArray(trailer.touched)) throw new SnapshotInvalidError('the trailer is malformed')
  return trailer
}
