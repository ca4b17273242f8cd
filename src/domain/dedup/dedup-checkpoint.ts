// The checkpoint file of a long deduplication run (`palmvein dedup --checkpoint <file>`): where
// the cell search stands (its centroids, the cells searched, the pairs found so far) and a
// fingerprint of the register it was made on, so a resumed run continues the same search or
// refuses a file made for another register. Replaced durably (synced, renamed, directory synced),
// so an interruption or a power cut while saving leaves the previous checkpoint or the new one whole.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { replaceFileDurably } from '../../store/durable-files.js'
import type { CellCheckpoint } from './dedup-cells.js'

const VERSION = 1

interface CheckpointFile {
  version: number
  environment: string
  fingerprint: string
  threshold: number
  cells: number
  probes: number
  palms: number
  cells_done: number
  centroids: string
  /** [palm a, palm b, score, rank] */
  pairs: Array<[number, number, number, number]>
}

/** A digest of the palms in search order (their member ids and hands). */
export function registerFingerprint(palms: Iterable<string>): string {
  const hash = createHash('sha256')
  for (const palm of palms) hash.update(palm).update('\n')
  return hash.digest('hex')
}

export async function saveCheckpoint(path: string, environment: string, fingerprint: string, state: CellCheckpoint): Promise<void> {
  const file: CheckpointFile = {
    version: VERSION,
    environment,
    fingerprint,
    threshold: state.threshold,
    cells: state.cells,
    probes: state.probes,
    palms: state.palms,
    cells_done: state.cellsDone,
    centroids: Buffer.from(state.centroids.buffer, state.centroids.byteOffset, state.centroids.byteLength).toString('base64'),
    pairs: state.pairs.map((pair) => [pair.a, pair.b, pair.score, pair.rank]),
  }
  await replaceFileDurably(path, JSON.stringify(file))
}

/**
 * The checkpoint at `path` if there is one; null if there is none. Throws a message for a file
 * that is not a checkpoint or was made for another environment, register or threshold.
 */
export function loadCheckpoint(path: string, environment: string, fingerprint: string, threshold: number): CellCheckpoint | null {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  let file: CheckpointFile
  try {
    file = JSON.parse(text) as CheckpointFile
  } catch {
    throw new Error(`${path} is not a dedup checkpoint`)
  }
  if (file.version !== VERSION || typeof file.centroids !== 'string' || !Array.isArray(file.pairs)) throw new Error(`${path} is not a dedup checkpoint`)
  if (file.environment !== environment) throw new Error(`${path} is the checkpoint of environment ${file.environment}, not ${environment}`)
  if (file.fingerprint !== fingerprint) throw new Error(`${path} was made on other palms (members enrolled or removed since): delete it to start again`)
  if (file.threshold !== threshold) throw new Error(`${path} was made at threshold ${file.threshold}, not ${threshold}`)
  const centroids = new Int8Array(Buffer.from(file.centroids, 'base64'))
  return {
    threshold: file.threshold,
    cells: file.cells,
    probes: file.probes,
    palms: file.palms,
    cellsDone: file.cells_done,
    centroids,
    pairs: file.pairs.map(([a, b, score, rank]) => ({ a, b, score, rank })),
  }
}
