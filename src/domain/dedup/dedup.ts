// The deduplication report (`palmvein dedup`): every pair of distinct members of an environment
// whose palms match at or above a threshold, both hands compared with both (a left palm enrolled
// as someone's right is a duplicate too). Two searches give it: `findDuplicatePairs`, exact by
// construction, searches each stored reference against the whole gallery in batches the matcher
// scans in one pass (N x N / 16 scans); `findDuplicatePairsByCells` searches each palm only in
// the cells of the register nearest to it (dedup-cells.ts), with every candidate scored exactly.
import { rmSync } from 'node:fs'
import type { DomainResources } from '../resources.js'
import { createMatcher } from '@palmvein/matcher'
import type { Hand } from '../../store/templates.js'
import { countEnvironmentReferences, environmentReferenceKeysPage } from '../../store/templates.js'
import { findPairsByCells, type CellCheckpoint, type DedupPhase } from './dedup-cells.js'
import { loadCheckpoint, registerFingerprint, saveCheckpoint } from './dedup-checkpoint.js'
import type { ReferenceKeys } from './dedup-reference-keys.js'
import { readEnvironmentRegister, type RegisterReading } from './dedup-environment-register.js'
import { environmentById } from '../../store/organizations.js'
import { ServiceError } from '../../errors.js'
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
  /** Told as each phase starts: reading (the palms and their members and hands, from the database), then the cell search's (DedupPhase). */
  onPhase?: (phase: 'reading' | DedupPhase) => void
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

/**
 * The pairs at or above `threshold` (default: the environment's match_threshold) found by the
 * cell search: best score per pair of members, highest first, every score exact. Runs on a
 * matcher of its own (configured like the service's), closed afterwards.
 */
export async function findDuplicatePairsByCells(
  app: RegisterReading,
  environmentId: string,
  threshold: number | null,
  options: CellSearchOptions = {},
): Promise<CellSearchReport> {
  const environment = await environmentById(app.sql, environmentId)
  if (!environment) throw new ServiceError('not_found', `environment ${environmentId} not found`)
  const floor = threshold ?? environment.match_threshold
  options.onPhase?.('reading')
  const { palms, keys } = await readEnvironmentRegister(app, environment)
  const fingerprint = registerFingerprint(palmNames(keys))
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
    const result = await findPairsByCells(matcher, palms, {
      threshold: floor,
      probes: options.probes,
      cells: options.cells,
      resume,
      onCheckpoint: save,
      checkpointSeconds: options.checkpointSeconds,
      onProgress: options.onProgress,
      onPhase: options.onPhase,
      shouldPause: options.stopAfterCells == null ? undefined : () => cellsThisRun++ >= options.stopAfterCells!,
    })
    // The lower member id first, as the exact search reports a pair.
    const pairs = result.pairs.map((pair): DuplicatePair => {
      const [x, y] = keys.memberId(pair.a) < keys.memberId(pair.b) ? [pair.a, pair.b] : [pair.b, pair.a]
      return { member_a: keys.memberId(x), hand_a: keys.hand(x), member_b: keys.memberId(y), hand_b: keys.hand(y), score: pair.score }
    })
    pairs.sort(byScoreThenMembers)
    // Done: a later run starts afresh rather than from a checkpoint of this one.
    if (result.complete && options.checkpoint) rmSync(options.checkpoint, { force: true })
    return { pairs, threshold: floor, references: keys.count, complete: result.complete, resumed: resume !== null }
  } finally {
    await matcher.close()
  }
}

/** The checkpoint's names of the palms, `member/hand` in palm order, one at a time. */
function* palmNames(keys: ReferenceKeys): Generator<string> {
  for (let palm = 0; palm < keys.count; palm++) yield `${keys.memberId(palm)}/${keys.hand(palm)}`
}
