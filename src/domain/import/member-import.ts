// Import of members with their palms (`palmvein import`): each input is what POST .../members and
// POST .../biometrics/enroll would take together, checked by the same code (metadata, captures
// against the environment, the two captures agreeing, the duplicate-palm search, the headcount),
// each member sealed under a new data key. A batch is one transaction under the environment's
// gallery lock, so an interrupted import leaves whole members only, and running services read the
// batch into their galleries from its change numbers (one notification per batch).
//
// What it leaves out: no scan record and no enrollment.completed event (an import is a migration,
// not a person at a terminal; a million webhook deliveries would be a flood). A member_id already
// in the project is skipped, so re-running an interrupted import completes it.
import os from 'node:os'
import type { DomainResources } from '../resources.js'
import { requireEnvironmentOwner } from '../../auth/access.js'
import { ServiceError } from '../../errors.js'
import type { Queryable, Sql } from '../../store/engine/database.js'
import { commitWithoutFlushWait, waitForDurableCommits } from '../../store/engine/commit-durability.js'
import { lockEnvironmentGallery, recordGalleryChanges } from '../../store/gallery-changes.js'
import { bulkWriteFor, countMembersOfProject, existingMembers, insertMembersAndTemplates, type BulkRows } from '../../store/members.js'
import { environmentById, type EnvironmentRow } from '../../store/organizations.js'
import type { ProjectRow } from '../../store/projects.js'
import type { HandProbes } from '../enrollment/enrollment.js'
import { screenCandidates } from './import-duplicates.js'
import { createBatchDuplicateSearch, EXACT_SEARCH, type BatchDuplicateSearch, type DuplicateSearchMode } from './import-duplicate-search.js'
import { CELL_INDEX_SETTINGS } from './duplicate-cells.js'
import { createImportPool, type ImportLines, type ImportPool } from './import-pool.js'
import { prepareImportLines, type PrepareResult, type PrepareTask } from './import-prepare.js'
import { lineBatches, type ImportRejection } from './line-batches.js'
import type { EnvironmentGallery } from '../galleries/galleries.js'

export type { ImportMember, ImportRejection } from './line-batches.js'

export interface ImportSummary {
  imported: number
  /** member_ids already in the project (an earlier run imported them). */
  skipped: number
  rejected: number
  /** Of the rejected, those refused as duplicate palms. */
  duplicates: number
  seconds: number
}

export interface ImportOptions {
  /** Store members whose palms match another member's (no duplicate-palm search). */
  allowDuplicates?: boolean
  onRejected?(rejection: ImportRejection): void
  /** After each batch: members handled so far (imported, skipped or rejected). */
  onProgress?(handled: number): void
  /** Threads that parse, check, seal and encode members once the input exceeds one batch (default: one per CPU; 0: this thread). */
  threads?: number
  /** How the duplicate-palm search reads the stored palms (default 'exact'; 'cells': the cell index, import-duplicate-search.ts). */
  duplicateSearch?: DuplicateSearchMode
  /** Cells of the index a probe reads (default CELL_INDEX_SETTINGS.probed). */
  cellProbes?: number
}

/** A checked and sealed member of a batch; `index` is its place in the batch's rows. */
interface Candidate {
  line: number
  id: string
  /** The line gave the member_id (a fresh one cannot be present). */
  named: boolean
  hands: HandProbes[]
  index: number
}

/** The project's member count as last counted plus what this import added since. */
interface HeadcountEstimate {
  members: number | null
  /** Candidates of the batches being written. */
  pending: number
}

// Past this share of the headcount every batch counts again, so members enrolled through the API
// meanwhile are seen before the limit (the API checks its own enrollments itself).
const RECOUNT_ABOVE_SHARE = 0.9

// Batches written at once on PostgreSQL without the duplicate search, each on its own connection:
// the server's work on a batch (its COPY, the keys and checks of ~3 000 rows) was the import's
// critical path, on one of two cores, while the import's threads stood idle.
const OVERLAPPING_WRITES = 2

type ImportApp = Pick<DomainResources, 'db' | 'galleries' | 'keyring' | 'log' | 'sql'>

/** The project's environment, what a thread checks members against, and its data key. */
async function importTarget(app: ImportApp, project: ProjectRow) {
  requireEnvironmentOwner(project)
  const environment = await environmentById(app.sql, project.environment_id)
  if (!environment) throw new ServiceError('not_found', `environment ${project.environment_id} not found`)
  const { id, dimension, extractor_id, extractor_version, min_quality, match_threshold } = environment
  const rules = { id, dimension, extractor_id, extractor_version, min_quality, match_threshold }
  return { environment, rules, environmentKey: app.keyring.environmentKey(environment.id, environment.wrapped_key) }
}

/**
 * A batch's members less those whose member_id an earlier line named (counted skipped): the first
 * line of an id is the one imported. Only ids the input names are remembered (10M fresh ids would
 * hold ~800 MB).
 */
function firstOfEachId(result: PrepareResult, seen: Set<string>, summary: ImportSummary): Candidate[] {
  const candidates: Candidate[] = []
  result.members.forEach(({ line, id, named, hands }, index) => {
    if (named && seen.has(id)) summary.skipped += 1
    else candidates.push({ line, id, named, hands, index })
    if (named) seen.add(id)
  })
  return candidates
}

/**
 * Imports the NDJSON `input` (one member a line) into the project's environment in batches of
 * `batchSize` lines, each line checked by `lines` (the wire schema's check, import-pool.ts).
 */
export async function importMembers(
  app: ImportApp,
  project: ProjectRow,
  input: AsyncIterable<Buffer | string>,
  batchSize: number,
  lines: ImportLines,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const started = performance.now()
  const { environment, rules, environmentKey } = await importTarget(app, project)
  const summary: ImportSummary = { imported: 0, skipped: 0, rejected: 0, duplicates: 0, seconds: 0 }
  const seen = new Set<string>()
  const headcount: HeadcountEstimate = { members: null, pending: 0 }
  // On PostgreSQL every batch but the last commits without waiting for its WAL flush (commit-durability.ts).
  const flushes = { deferred: app.db.kind === 'postgres', pending: false }
  const reject = countRejections(summary, options)

  // Lines are parsed, checked, sealed and encoded (import-prepare.ts) ahead of the write, on
  // threads once the input has more than one batch; batches are written in input order, one at a
  // time or, on PostgreSQL without the duplicate search, two at a time (OVERLAPPING_WRITES).
  const allowDuplicates = options.allowDuplicates ?? false
  const write = bulkWriteFor(app.db)
  // Every CPU: the reading and writing thread mostly waits (for the threads and the database).
  const threads = options.threads ?? os.availableParallelism()
  const preparer = createPreparer(threads, lines)
  const search = allowDuplicates
    ? EXACT_SEARCH
    : createBatchDuplicateSearch(
        options.duplicateSearch ?? 'exact',
        { threads: os.availableParallelism() },
        { ...CELL_INDEX_SETTINGS, probed: options.cellProbes ?? CELL_INDEX_SETTINGS.probed },
      )
  const preparing: Array<Promise<PrepareResult>> = []
  // Writes in flight, oldest first. Settling one rethrows its failure.
  const writing: Array<Promise<void>> = []
  const settle = async (keep: number) => {
    while (writing.length > keep) await writing.shift()
  }
  const writeNext = async (last: boolean) => {
    const result = await preparing.shift()!
    for (const rejection of result.rejected) reject(rejection)
    const candidates = firstOfEachId(result, seen, summary)
    // Overlapping writes (OVERLAPPING_WRITES) are for batches the headcount estimate admits whole
    // without a recount; any other batch, and the last, waits for the writes before it.
    const overlap = !last && flushes.deferred && allowDuplicates && admittedWithoutRecount(headcount, candidates.length, project)
    await settle(overlap ? OVERLAPPING_WRITES - 1 : 0)
    const batch: BatchWrite = { allowDuplicates, search, summary, reject, headcount, durable: last || !flushes.deferred, overlap }
    headcount.pending += candidates.length
    const written = importBatch(app, project, environment, candidates, result.rows, batch)
      .then((committed) => {
        if (committed) flushes.pending = !batch.durable
      })
      .finally(() => {
        headcount.pending -= candidates.length
      })
      .then(() => options.onProgress?.(summary.imported + summary.skipped + summary.rejected))
    // Settled by a later write; until then a failure must not count as unhandled.
    written.catch(() => {})
    writing.push(written)
  }
  try {
    const batches = lineBatches(input, batchSize)
    for (let next = await batches.next(); !next.done; ) {
      const lines = next.value
      next = await batches.next()
      const prepared = preparer.prepare(
        { environment: rules, environmentKey, projectId: project.id, lines, write, probes: !allowDuplicates },
        next.done === true,
      )
      prepared.catch(() => {})
      preparing.push(prepared)
      // The threads stay busy: up to two batches each prepared ahead of the write.
      while (preparing.length > 2 * preparer.threads()) await writeNext(next.done === true && preparing.length === 1)
    }
    while (preparing.length) await writeNext(preparing.length === 1)
    await settle(0)
    // The last batch committed nothing: the ones before it may still be on their way to disk.
    if (flushes.pending) await waitForDurableCommits(app.sql)
  } finally {
    // A failure while reading leaves no write running behind the caller's back.
    await Promise.allSettled(writing)
    await preparer.close()
    await search.close()
  }
  summary.seconds = (performance.now() - started) / 1000
  return summary
}

/** Counts a rejected line in the summary and reports it. */
function countRejections(summary: ImportSummary, options: ImportOptions): (rejection: ImportRejection) => void {
  return (rejection) => {
    summary.rejected += 1
    if (rejection.code === 'duplicate_palm') summary.duplicates += 1
    options.onRejected?.(rejection)
  }
}

/** The headcount estimate admits this many more members whole, without counting again under the lock. */
function admittedWithoutRecount(headcount: HeadcountEstimate, candidates: number, project: ProjectRow): boolean {
  return headcount.members !== null && headcount.members + headcount.pending + candidates <= project.headcount * RECOUNT_ABOVE_SHARE
}

/**
 * Prepares batches on this thread, or on a pool of threads started at the first batch that is not
 * the last (an input of one batch is not worth starting threads for).
 */
function createPreparer(threads: number, lines: ImportLines) {
  let pool: ImportPool | null = null
  return {
    prepare(task: PrepareTask, last: boolean): Promise<PrepareResult> {
      if (!pool && !last && threads > 0) pool = createImportPool(threads, lines)
      return pool ? pool.prepare(task) : Promise.resolve().then(() => prepareImportLines(task, lines.parse))
    },
    /** Threads preparing (0 until the pool starts). */
    threads: () => pool?.threads ?? 0,
    close: async () => {
      await pool?.close()
    },
  }
}

/** How a batch is written, and where its outcome is counted. */
interface BatchWrite {
  allowDuplicates: boolean
  /** Where the duplicate probes are searched. */
  search: BatchDuplicateSearch
  summary: ImportSummary
  reject(rejection: ImportRejection): void
  headcount: HeadcountEstimate
  /** Wait for the commit's WAL flush (the last batch); otherwise commitWithoutFlushWait. */
  durable: boolean
  /**
   * Written beside another batch: the headcount estimate admitted it whole, and it takes the
   * gallery lock after its COPY, only to number its changes (in commit order, as readers expect).
   */
  overlap: boolean
}

/** Writes one batch; true when it committed members. */
async function importBatch(
  app: ImportApp,
  project: ProjectRow,
  environment: EnvironmentRow,
  batch: Candidate[],
  rows: BulkRows,
  how: BatchWrite,
): Promise<boolean> {
  if (!batch.length) return false
  const fresh = await notYetPresent(app, project, batch, how)
  if (!fresh.length) return false
  const write = (gallery: EnvironmentGallery | null) => writeFresh(app, project, environment, { fresh, rows, gallery }, how)
  return how.allowDuplicates ? write(null) : app.galleries.exclusive(environment.id, write)
}

/**
 * The batch's candidates whose member_id is not stored yet: one already in the project is counted
 * skipped (an earlier run imported it), one in another project is rejected.
 */
async function notYetPresent(app: ImportApp, project: ProjectRow, batch: Candidate[], { summary, reject }: BatchWrite): Promise<Candidate[]> {
  const named = batch.filter((candidate) => candidate.named).map((candidate) => candidate.id)
  const present = new Map(named.length ? (await existingMembers(app.sql, named)).map((row) => [row.id, row.project_id]) : [])
  const fresh: Candidate[] = []
  for (const candidate of batch) {
    const projectId = present.get(candidate.id)
    if (projectId === undefined) fresh.push(candidate)
    else if (projectId === project.id) summary.skipped += 1
    else
      reject({
        line: candidate.line,
        code: 'conflict',
        detail: `member_id ${candidate.id} belongs to another project`,
        errors: [{ path: '/member_id', message: 'is taken' }],
      })
  }
  return fresh
}

/** A batch's fresh candidates, their encoded rows, and the gallery the duplicate search reads (null: no search). */
interface FreshBatch {
  fresh: Candidate[]
  rows: BulkRows
  gallery: EnvironmentGallery | null
}

/** One transaction: admits the fresh candidates under the gallery lock, stores them and numbers their changes. */
async function writeFresh(
  app: ImportApp,
  project: ProjectRow,
  environment: EnvironmentRow,
  { fresh, rows, gallery }: FreshBatch,
  how: BatchWrite,
): Promise<boolean> {
  const { summary, headcount } = how
  let accepted: Candidate[] = []
  let changeSeq = 0
  let staged: Candidate[] = []
  try {
    await app.sql.begin(async (tx) => {
      if (!how.durable) await commitWithoutFlushWait(tx)
      if (how.overlap) accepted = fresh
      else {
        await lockEnvironmentGallery(tx, environment.id)
        accepted = await admitFresh(app, project, tx, fresh, gallery, how)
        if (gallery) staged = accepted
      }
      if (!accepted.length) return
      await insertMembersAndTemplates(
        tx as unknown as Sql,
        rows,
        accepted.map((candidate) => candidate.index),
      )
      if (how.overlap) await lockEnvironmentGallery(tx, environment.id)
      changeSeq = await recordGalleryChanges(
        tx,
        environment.id,
        accepted.map((candidate) => candidate.id),
      )
    })
  } catch (error) {
    // Nothing was stored: the rows staged for the duplicate search leave the gallery again.
    for (const candidate of staged) app.galleries.removeMember(environment.id, candidate.id)
    throw error
  }
  summary.imported += accepted.length
  headcount.members! += accepted.length
  if (!accepted.length) return false
  if (gallery) app.galleries.applied(environment.id, changeSeq)
  await app.galleries.announce(environment.id, accepted[0].id).catch((error) => app.log.warn({ err: error }, 'import: gallery notification failed'))
  return true
}

/** Under the gallery lock: which of the fresh candidates the headcount (and the duplicate search) admit. */
async function admitFresh(
  app: ImportApp,
  project: ProjectRow,
  tx: Queryable,
  fresh: Candidate[],
  gallery: EnvironmentGallery | null,
  { reject, headcount, search }: BatchWrite,
): Promise<Candidate[]> {
  const rejectOverHeadcount = (candidate: Candidate) =>
    reject({ line: candidate.line, code: 'headcount_reached', detail: `project ${project.id} would exceed its headcount of ${project.headcount} members` })
  // Changes of other processes reach the gallery here; the cell index, built before them, is rebuilt.
  if (gallery && (await app.galleries.catchUp(gallery, tx)) > 0) search.invalidate()
  // Counted under the lock at the first batch and again near the headcount; between, the
  // count plus what this import added (a count per batch made a 1M-member import quadratic).
  if (headcount.members === null || headcount.members + fresh.length > project.headcount * RECOUNT_ABOVE_SHARE) {
    headcount.members = await countMembersOfProject(tx as unknown as Sql, project.id)
  }
  const headroom = project.headcount - headcount.members
  if (!gallery) {
    fresh.slice(Math.max(0, headroom)).forEach(rejectOverHeadcount)
    return fresh.slice(0, Math.max(0, headroom))
  }
  const admitted: Candidate[] = []
  const verdicts = await screenCandidates(app.galleries, gallery, fresh, headroom, search)
  verdicts.forEach((verdict, index) => {
    const candidate = fresh[index]
    if (verdict.accepted) admitted.push(candidate)
    else if (verdict.headcount) rejectOverHeadcount(candidate)
    else
      reject({
        line: candidate.line,
        code: 'duplicate_palm',
        detail: `the ${verdict.duplicate.hand} hand matches another member of this environment (score ${verdict.duplicate.score.toFixed(4)})`,
      })
  })
  return admitted
}
