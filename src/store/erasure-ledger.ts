// The erasure ledger: one line per erased member (its id, its environment's and the time; nothing
// biometric), appended and synced to disk before a member DELETE commits. It is a file kept with
// the master key material (the data directory, or PALMVEIN_ERASURE_LEDGER), never in the database,
// so no database backup holds it and a restore of an older one cannot take an erasure back: every
// start and every restore applies the ledger before anything is served (domain/members/erasures.ts).
import fs from 'node:fs/promises'
import path from 'node:path'
import { syncDirectory } from './durable-files.js'

export interface Erasure {
  member_id: string
  environment_id: string
  erased_at: string
}

/** Creates the ledger when it does not exist yet (empty, 0600), durably. Returns whether it did. */
export async function createLedger(file: string): Promise<boolean> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    const handle = await fs.open(file, 'wx', 0o600)
    await handle.sync()
    await handle.close()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  await syncDirectory(path.dirname(file))
  return true
}

export async function ledgerExists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  )
}

/**
 * Appends one erasure and waits until it is on disk. One write() of one line with O_APPEND: lines
 * appended by several processes on one host do not interleave.
 */
export async function appendErasure(file: string, erasure: Erasure): Promise<void> {
  const created = await createLedger(file)
  const handle = await fs.open(file, 'a+', 0o600)
  try {
    // A line torn by a crash during its write (its DELETE never committed) is ended first.
    const { size } = await handle.stat()
    const torn = size > 0 && (await handle.read(Buffer.alloc(1), 0, 1, size - 1)).buffer[0] !== 0x0a
    await handle.write((torn ? '\n' : '') + JSON.stringify(erasure) + '\n')
    await handle.datasync()
  } finally {
    await handle.close()
  }
  if (created) await syncDirectory(path.dirname(file))
}

/**
 * The erasures in the ledger, oldest first (none when it does not exist), and how many lines were
 * torn: a line is synced before its DELETE commits, so a torn one (a crash during its write) is
 * of a DELETE that never answered.
 */
export async function readErasures(file: string): Promise<{ erasures: Erasure[]; torn: number }> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { erasures: [], torn: 0 }
    throw error
  }
  const erasures: Erasure[] = []
  let torn = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    const entry = parseErasure(line)
    if (entry) erasures.push(entry)
    else torn += 1
  }
  return { erasures, torn }
}

function parseErasure(line: string): Erasure | null {
  try {
    const entry = JSON.parse(line) as Partial<Erasure>
    if (typeof entry.member_id !== 'string' || typeof entry.environment_id !== 'string' || typeof entry.erased_at !== 'string') return null
    return { member_id: entry.member_id, environment_id: entry.environment_id, erased_at: entry.erased_at }
  } catch {
    return null
  }
}
