// The deduplication report (`palmvein dedup`): every pair of distinct members of an environment
// whose palms match at or above a threshold, both hands compared with both (a left palm enrolled
// as someone's right is a duplicate too). Two searches give it: `findDuplicatePairs`, exact by
// construction, searches each stored reference against the whole gallery in batches the matcher
// scans in one pass (N x N / 16 scans); `findDuplicatePairsByCells` searches each palm only in
// the cells of the register nearest to it (dedup-cells.ts), with every candidate scored exactly.
import { rmSync } from 'node:fs'
import type { DomainResources } from '../resources.js'
import type { Config } from '../../config.js'
import { createMatcher } from '@palmvein/matcher'
import type { Hand } from '../../store/templates.js'
import { countEnvironmentReferences, environmentReferenceKeysPage } from '../../store/templates.js'
import { findPairsByCells, type CellCheckpoint, type PalmRegister } from './dedup-cells.js'
import { loadCheckpoint, registerFingerprint, saveCheckpoint } from './dedup-checkpoint.js'
import { compareCodeUnits } from '../../runtime/code-unit-order.js'

export interface DuplicatePair {
  member_a: string
  hand_a: Hand
  member_b: string
  hand_b: Hand
  score: number
}

/** The report's order, the same for the exact and the cell search: best score first, then by member ids. */
function byScoreThenMembers(x: DuplicatePair, y: DuplicatePair): number {
  return y.score - x.score || compareCodeUnits(x.member_a, y.member_a) || compareCodeUnits(x.member_b, y.member_b)
}

/** Rows read back per search: enough for a palm matching several others above the threshold. */
const HITS_PER_PROBE = 16
const PAGE_ROWS = 2_048

/**
 * The pairs at or above `threshold` (default: the environment's match_threshold), best score per
 * pair of members, highest first. `onProgress(done, total)` follows the references searched.
 */
export async function findDuplicatePairs(
  app: Pick<DomainResources, 'galleries' | 'sql'>,
  environmentId: string,
  threshold: number | null,
  onProgress: (done: number, total: number) => void = () => {},
): Promise<{ pairs: DuplicatePair[]; threshold: number; references: number }> {
  const { environment, gallery } = await app.galleries.acquire(environmentId)
  const floor = threshold ?? environment.match_threshold
  const total = await countEnvironmentReferences(app.sql, environmentId)
  const best = new Map<string, DuplicatePair>()
  // One page searched while the next is read and queued: the pool's threads never wait for the
  // database or for this thread's bookkeeping between pages (they did 20 % of the time).
  const searchPage = async (after: string | null) => {
    const page = await environmentReferenceKeysPage(app.sql, environmentId, after, PAGE_ROWS)
    const probes = page.flatMap((row) => {
      const vector = gallery.vector(row.member_id, { partition: row.hand })
      return vector ? [{ row, vector }] : []
    })
    const results = gallery.searchBatch(
      probes.map((probe) => probe.vector),
      { k: HITS_PER_PROBE },
    )
    // Awaited after the page before it; until then a failure must not count as unhandled.
    results.catch(() => {})
    return { page, probes, results }
  }
  let done = 0
  let current = await searchPage(null)
  while (true) {
    const { page, probes } = current
    const next = page.length < PAGE_ROWS ? null : await searchPage(page[page.length - 1].id)
    const results = await current.results
    results.forEach((hits, index) => {
      const { member_id: member, hand } = probes[index].row
      for (const hit of hits) {
        if (hit.score < floor) break
        if (hit.id === member) continue
        const [a, b] =
          member < hit.id
            ? [
                { id: member, hand },
                { id: hit.id, hand: hit.partition as Hand },
              ]
            : [
                { id: hit.id, hand: hit.partition as Hand },
                { id: member, hand },
              ]
        const key = `${a.id}/${b.id}`
        if ((best.get(key)?.score ?? -1) < hit.score) best.set(key, { member_a: a.id, hand_a: a.hand, member_b: b.id, hand_b: b.hand, score: hit.score })
      }
    })
    done += page.length
    onProgress(done, Math.max(total, done))
    if (!next) break
    current = next
  }
  const pairs = [...best.values()].sort(byScoreThenMembers)
  return { pairs, threshold: floor, references: done }
}

export interface CellSearchOptions {
  probes?: number
  cells?: number
  /** Saved every `checkpointSeconds` and when the run stops early; resumed from when it exists. */
  checkpoint?: string | null
  checkpointSeconds?: number
  /** Search at most this many cells in this run, then save the checkpoint and stop. */
  stopAfterCells?: number | null
  onProgress?: (done: number, total: number) => void
}

export interface CellSearchReport {
  pairs: DuplicatePair[]
  threshold: number
  references: number
  /** False when the run stopped early (`stopAfterCells`): the checkpoint holds the rest. */
  complete: boolean
  /** True when this run continued a checkpoint. */
  resumed: boolean
}

/** Every reference row of the environment in id order (the order a checkpoint's palm numbers refer to). */
async function referenceKeys(sql: DomainResources['sql'], environmentId: string): Promise<Array<{ member_id: string; hand: Hand }>> {
  const keys: Array<{ member_id: string; hand: Hand }> = []
  for (let after: string | null = null; ; ) {
    const page = await environmentReferenceKeysPage(sql, environmentId, after, PAGE_ROWS * 8)
    for (const row of page) keys.push({ member_id: row.member_id, hand: row.hand })
    if (page.length < PAGE_ROWS * 8) return keys
    after = page[page.length - 1].id
  }
}

/**
 * The pairs at or above `threshold` (default: the environment's match_threshold) found by the
 * cell search: best score per pair of members, highest first, every score exact. Runs on a
 * matcher of its own (configured like the service's), closed afterwards.
 */
export async function findDuplicatePairsByCells(
  app: Pick<DomainResources, 'galleries' | 'sql'> & { config: Pick<Config, 'matcherThreads' | 'matcherBackend' | 'matcherMaxMemoryBytes'> },
  environmentId: string,
  threshold: number | null,
  options: CellSearchOptions = {},
): Promise<CellSearchReport> {
  const { environment, gallery } = await app.galleries.acquire(environmentId)
  const floor = threshold ?? environment.match_threshold
  const keys = await referenceKeys(app.sql, environmentId)
  const owners = new Map<string, number>()
  const members: string[] = []
  const ownerOf = Int32Array.from(keys, (key) => {
    let owner = owners.get(key.member_id)
    if (owner === undefined) {
      owners.set(key.member_id, (owner = members.length))
      members.push(key.member_id)
    }
    return owner
  })
  const register: PalmRegister = {
    count: keys.length,
    dimension: environment.dimension,
    vector: (palm) => gallery.vector(keys[palm].member_id, { partition: keys[palm].hand }),
    owner: (palm) => ownerOf[palm],
  }
  const fingerprint = registerFingerprint(keys.map((key) => `${key.member_id}/${key.hand}`))
  const resume = options.checkpoint ? loadCheckpoint(options.checkpoint, environmentId, fingerprint, floor) : null
  const save = options.checkpoint ? (state: CellCheckpoint) => saveCheckpoint(options.checkpoint!, environmentId, fingerprint, state) : undefined
  let cellsThisRun = 0
  const matcher = await createMatcher({
    dimension: environment.dimension,
    threads: app.config.matcherThreads,
    backend: app.config.matcherBackend,
    ...(app.config.matcherMaxMemoryBytes ? { maxMemoryBytes: app.config.matcherMaxMemoryBytes } : {}),
  })
  try {
    const result = await findPairsByCells(matcher, register, {
      threshold: floor,
      probes: options.probes,
      cells: options.cells,
      resume,
      onCheckpoint: save,
      checkpointSeconds: options.checkpointSeconds,
      onProgress: options.onProgress,
      shouldPause: options.stopAfterCells == null ? undefined : () => cellsThisRun++ >= options.stopAfterCells!,
    })
    const pairs = result.pairs
      .map(
        (pair): DuplicatePair => ({
          member_a: keys[pair.a].member_id,
          hand_a: keys[pair.a].hand,
          member_b: keys[pair.b].member_id,
          hand_b: keys[pair.b].hand,
          score: pair.score,
        }),
      )
      .map((pair) =>
        pair.member_a < pair.member_b
          ? pair
          : { member_a: pair.member_b, hand_a: pair.hand_b, member_b: pair.member_a, hand_b: pair.hand_a, score: pair.score },
      )
    pairs.sort(byScoreThenMembers)
    // Done: a later run starts afresh rather than from a checkpoint of this one.
    if (result.complete && options.checkpoint) rmSync(options.checkpoint, { force: true })
    return { pairs, threshold: floor, references: keys.length, complete: result.complete, resumed: resume !== null }
  } finally {
    await matcher.close()
  }
}
