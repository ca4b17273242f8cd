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
import type { AppContext } from '../app-context.js'
import { ServiceError, type ErrorCode } from '../errors.js'
import { newId } from '../ids.js'
import type { Sql } from '../store/database.js'
import { lockEnvironmentGallery, recordGalleryChanges } from '../store/gallery-changes.js'
import { bulkWriteFor, countMembersOfProject, existingMembers, insertMembersAndTemplates } from '../store/members.js'
import { environmentById, type EnvironmentRow } from '../store/organizations.js'
import type { ProjectRow } from '../store/projects.js'
import { findDuplicate, type EnrollHand } from './enrollment.js'
import { createImportPool, type ImportPool } from './import-pool.js'
import { prepareImportItems, type PrepareResult, type PrepareTask, type PreparedMember } from './import-prepare.js'
import type { EnvironmentGallery } from './galleries.js'

/** One member to import: the member fields and the enroll body's hands. */
export interface ImportMember {
  member_id?: string
  display_name: string
  metadata?: unknown
  left_hand?: EnrollHand | null
  right_hand?: EnrollHand | null
}

export interface ImportRejection {
  /** 1-based line (or item) number of the input. */
  line: number
  code: ErrorCode
  detail: string
  errors?: Array<{ path: string; message: string }>
}

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
  /** Threads that check and seal members once the input exceeds one batch (default: the CPUs but one; 0: this thread). */
  threads?: number
}

/** An input item: a member to import, or a line already refused by the caller's parsing. */
export type ImportItem = { line: number; member: ImportMember } | { line: number; rejection: ImportRejection }

type Candidate = PreparedMember

/** The project's member count as last counted plus what this import added since. */
interface HeadcountEstimate {
  members: number | null
}

// Past this share of the headcount every batch counts again, so members enrolled through the API
// meanwhile are seen before the limit (the API checks its own enrollments itself).
const RECOUNT_ABOVE_SHARE = 0.9

type ImportApp = Pick<AppContext, 'db' | 'galleries' | 'keyring' | 'log' | 'sql'>

/** Imports `items` into the project's environment in batches of `batchSize`. */
export async function importMembers(app: ImportApp, project: ProjectRow, items: AsyncIterable<ImportItem>, batchSize: number, options: ImportOptions = {}): Promise<ImportSummary> {
  const started = performance.now()
  if (!project.environment_id) throw new ServiceError('environment_not_tenant_managed', `project ${project.id} has no environment of its own to import members into`)
  const environmentId = project.environment_id
  const environment = await environmentById(app.sql, environmentId)
  if (!environment) throw new ServiceError('not_found', `environment ${environmentId} not found`)
  const summary: ImportSummary = { imported: 0, skipped: 0, rejected: 0, duplicates: 0, seconds: 0 }
  const seen = new Set<string>()
  const headcount: HeadcountEstimate = { members: null }
  const reject = (rejection: ImportRejection) => {
    summary.rejected += 1
    if (rejection.code === 'duplicate_palm') summary.duplicates += 1
    options.onRejected?.(rejection)
  }

  // Members are checked and sealed (import-prepare.ts) ahead of the write, on threads once the
  // input has more than one batch; batches are written one at a time, in input order.
  const environmentKey = app.keyring.environmentKey(environment.id, environment.wrapped_key)
  const { id, dimension, extractor_id, extractor_version, min_quality, match_threshold } = environment
  const rules = { id, dimension, extractor_id, extractor_version, min_quality, match_threshold }
  const threads = options.threads ?? Math.max(0, os.availableParallelism() - 1)
  let pool: ImportPool | null = null
  let batch: PrepareTask['items'] = []
  const preparing: Array<Promise<PrepareResult>> = []
  let writing: Promise<void> = Promise.resolve()
  const writeNext = async () => {
    const result = await preparing.shift()!
    await writing
    for (const rejection of result.rejected) reject(rejection)
    writing = importBatch(app, project, environment, result.prepared, options.allowDuplicates ?? false, summary, reject, headcount)
      .then(() => options.onProgress?.(summary.imported + summary.skipped + summary.rejected))
    // Awaited by the next write; until then a failure must not count as unhandled.
    writing.catch(() => {})
  }
  const flush = async (last: boolean) => {
    if (batch.length) {
      const task: PrepareTask = { environment: rules, environmentKey, projectId: project.id, items: batch }
      batch = []
      if (!pool && !last && threads > 0) pool = createImportPool(threads)
      const prepared = pool ? pool.prepare(task) : Promise.resolve().then(() => prepareImportItems(task))
      prepared.catch(() => {})
      preparing.push(prepared)
    }
    // The threads stay busy: up to one batch each prepared ahead of the write.
    while (preparing.length > (last ? 0 : pool?.threads ?? 0)) await writeNext()
  }
  try {
    for await (const item of items) {
      if ('rejection' in item) {
        reject(item.rejection)
        continue
      }
      const { member } = item
      if (!member.left_hand && !member.right_hand) {
        reject({ line: item.line, code: 'invalid_request', detail: 'at least one of left_hand and right_hand is required', errors: [{ path: '/left_hand', message: 'is required when right_hand is absent' }] })
        continue
      }
      const id = member.member_id?.toLowerCase() ?? newId()
      if (seen.has(id)) {
        summary.skipped += 1
        continue
      }
      seen.add(id)
      batch.push({ line: item.line, id, member })
      if (batch.length >= batchSize) await flush(false)
    }
    await flush(true)
    await writing
  } finally {
    // A failure while reading leaves no write running behind the caller's back.
    await writing.catch(() => {})
    await (pool as ImportPool | null)?.close()
  }
  summary.seconds = (performance.now() - started) / 1000
  return summary
}

async function importBatch(
  app: ImportApp, project: ProjectRow, environment: EnvironmentRow, batch: Candidate[], allowDuplicates: boolean,
  summary: ImportSummary, reject: (rejection: ImportRejection) => void, headcount: HeadcountEstimate,
): Promise<void> {
  const present = new Map((await existingMembers(app.sql, batch.map((candidate) => candidate.id))).map((row) => [row.id, row.project_id]))
  const fresh: Candidate[] = []
  for (const candidate of batch) {
    const projectId = present.get(candidate.id)
    if (projectId === undefined) fresh.push(candidate)
    else if (projectId === project.id) summary.skipped += 1
    else reject({ line: candidate.line, code: 'conflict', detail: `member_id ${candidate.id} belongs to another project`, errors: [{ path: '/member_id', message: 'is taken' }] })
  }
  if (!fresh.length) return

  const write = async (gallery: EnvironmentGallery | null) => {
    let accepted: Candidate[] = []
    let changeSeq = 0
    const staged: Candidate[] = []
    try {
      await app.sql.begin(async (tx) => {
        accepted = []
        await lockEnvironmentGallery(tx, environment.id)
        if (gallery) await app.galleries.catchUp(gallery, tx)
        // Counted under the lock at the first batch and again near the headcount; between, the
        // count plus what this import added (a count per batch made a 1M-member import quadratic).
        if (headcount.members === null || headcount.members + fresh.length > project.headcount * RECOUNT_ABOVE_SHARE) {
          headcount.members = await countMembersOfProject(tx as unknown as Sql, project.id)
        }
        const headroom = project.headcount - headcount.members
        for (const candidate of fresh) {
          if (accepted.length >= headroom) {
            reject({ line: candidate.line, code: 'headcount_reached', detail: `project ${project.id} would exceed its headcount of ${project.headcount} members` })
            continue
          }
          if (gallery) {
            const duplicate = await findDuplicate(gallery, candidate.id, candidate.hands)
            if (duplicate) {
              reject({ line: candidate.line, code: 'duplicate_palm', detail: `the ${duplicate.hand} hand matches another member of this environment (score ${duplicate.score.toFixed(4)})` })
              continue
            }
            // Later members of the file are checked against this one too.
            for (const hand of candidate.hands) app.galleries.upsert(gallery, candidate.id, hand.hand, hand.reference)
            staged.push(candidate)
          }
          accepted.push(candidate)
        }
        if (!accepted.length) return
        await insertMembersAndTemplates(tx as unknown as Sql, accepted.map((candidate) => candidate.row), accepted.flatMap((candidate) => candidate.templates), bulkWriteFor(app.db))
        changeSeq = await recordGalleryChanges(tx, environment.id, accepted.map((candidate) => candidate.id))
      })
    } catch (error) {
      // Nothing was stored: the rows staged for the duplicate search leave the gallery again.
      for (const candidate of staged) app.galleries.removeMember(environment.id, candidate.id)
      throw error
    }
    summary.imported += accepted.length
    headcount.members! += accepted.length
    if (!accepted.length) return
    if (gallery) app.galleries.applied(environment.id, changeSeq)
    await app.galleries.announce(environment.id, accepted[0].id).catch((error) => app.log.warn({ err: error }, 'import: gallery notification failed'))
  }
  if (allowDuplicates) await write(null)
  else await app.galleries.exclusive(environment.id, write)
}
