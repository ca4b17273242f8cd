// Bulk enrollment: the fast path that loads many already-enrolled members at once (benchmark
// environments of up to a million members; imports from another system). It runs beside, not
// inside, a service: nothing is published to a gallery, because a service builds its galleries
// from these rows when it starts, exactly as after any restart.
//
// Every capture goes through the same code as POST .../biometrics/enroll: parsed and checked
// against the environment (parseCapture), the per-hand reference built by referenceTemplate, each
// member given its own data key wrapped by the environment key (newMemberKey), every template
// sealed under it (sealTemplate). What it leaves out, and why:
// - the duplicate-palm search: one search per member against everyone enrolled before is
//   quadratic work, and the caller vouches for distinct palms (the synthetic generator's are);
// - the per-enrollment scan record and enrollment.completed event: a bulk load is not a user
//   enrolling at a terminal, and a million webhook deliveries would be a flood, not a feature.
// Members and templates of a batch commit in one multi-row INSERT transaction each, so a failed
// batch leaves nothing behind.
import type postgres from 'postgres'
import { ServiceError } from '../errors.js'
import { newId } from '../ids.js'
import type { Sql } from '../store/database.js'
import { countMembersOfProject, insertMembersWithTemplates, type BulkWrite } from '../store/members.js'
import type { EnvironmentRow } from '../store/organizations.js'
import type { ProjectRow } from '../store/projects.js'
import type { Hand } from '../store/templates.js'
import { parseCapture, referenceTemplate } from './captures.js'
import type { Keyring } from './keyring.js'
import { newMemberKey, sealTemplate } from './template-crypto.js'

export interface BulkHand {
  enroll_capture: string
  identify_capture: string
}

export interface BulkMember {
  display_name: string
  metadata?: postgres.JSONValue | null
  left_hand?: BulkHand | null
  right_hand?: BulkHand | null
}

export interface BulkEnrollment {
  sql: Sql
  /** Binary COPY on PostgreSQL, INSERTs on the embedded database (store/members.ts bulkWriteFor). */
  write: BulkWrite
  keyring: Keyring
  project: Pick<ProjectRow, 'id' | 'headcount'>
  environment: EnvironmentRow
  /**
   * Keep the encrypted enroll and identify captures beside the reference (default true, as
   * enrollment does). False stores only the per-hand reference the gallery is built from: a
   * third of the rows, for loads where insert time dominates (benchmarks); palm_templates_enrolled
   * is then 0, since no capture is stored.
   */
  storeCaptures?: boolean
}

const HANDS: readonly Hand[] = ['left', 'right']

/** Encrypts and prepares one batch without touching the database (exported so callers can time it apart). */
export function prepareBulkMembers(target: BulkEnrollment, members: readonly BulkMember[]) {
  const { keyring, project, environment } = target
  const storeCaptures = target.storeCaptures ?? true
  const memberRows: Array<Record<string, unknown>> = []
  const templateRows: Array<Record<string, unknown>> = []
  const now = new Date()
  members.forEach((member, index) => {
    const id = newId()
    const key = newMemberKey(keyring, environment, id)
    let captures = 0
    let hands = 0
    for (const hand of HANDS) {
      const input = member[`${hand}_hand`]
      if (!input) continue
      const field = `/${index}/${hand}_hand`
      const enroll = parseCapture(input.enroll_capture, `${field}/enroll_capture`, environment, hand)
      const identify = parseCapture(input.identify_capture, `${field}/identify_capture`, environment, hand)
      const reference = referenceTemplate([enroll, identify], field)
      const common = { member_id: id, environment_id: environment.id, hand, silhouette: null, palm_position: null }
      if (storeCaptures) {
        templateRows.push(
          { ...common, id: newId(), kind: 'enroll', ciphertext: sealTemplate(key.key, id, hand, 'enroll', enroll.bytes) },
          { ...common, id: newId(), kind: 'identify', ciphertext: sealTemplate(key.key, id, hand, 'identify', identify.bytes) },
        )
        captures += 2
      }
      templateRows.push({ ...common, id: newId(), kind: 'reference', ciphertext: sealTemplate(key.key, id, hand, 'reference', new Uint8Array(reference.buffer, reference.byteOffset, reference.length)) })
      hands += 1
    }
    if (hands === 0) {
      throw new ServiceError('invalid_request', `member ${index} has neither left_hand nor right_hand`, { errors: [{ path: `/${index}`, message: 'needs at least one hand' }] })
    }
    memberRows.push({
      id, project_id: project.id, environment_id: environment.id, display_name: member.display_name,
      metadata: member.metadata ?? null, wrapped_key: key.wrapped, palm_templates_enrolled: captures,
      created_at: now, updated_at: now, last_enrolled_at: now,
    })
  })
  return { memberRows, templateRows }
}

export interface BulkLoader {
  /** Encrypts a batch (no database work). */
  prepare(members: readonly BulkMember[]): PreparedBatch
  /** Writes a prepared batch in one short transaction; returns the member ids in input order. */
  insert(batch: PreparedBatch): Promise<string[]>
  /** prepare + insert. */
  enroll(members: readonly BulkMember[]): Promise<string[]>
}

export type PreparedBatch = ReturnType<typeof prepareBulkMembers>

/**
 * A loader for one project. The headcount is checked against the members counted once, at the
 * first batch, plus those this loader added: counting a million rows per batch would make the load
 * quadratic. One loader per project at a time (run it while no service enrolls into the project).
 */
export function createBulkLoader(target: BulkEnrollment): BulkLoader {
  const { sql, project } = target
  let members: number | null = null
  const loader: BulkLoader = {
    prepare: (batch) => prepareBulkMembers(target, batch),
    async insert({ memberRows, templateRows }) {
      if (members === null) {
        members = await countMembersOfProject(sql, project.id)
      }
      if (members + memberRows.length > project.headcount) {
        throw new ServiceError('conflict', `project ${project.id} has ${members} members; ${memberRows.length} more would exceed its headcount of ${project.headcount}`)
      }
      await insertMembersWithTemplates(sql, memberRows, templateRows, target.write)
      members += memberRows.length
      return memberRows.map((row) => row.id as string)
    },
    enroll: async (batch) => loader.insert(loader.prepare(batch)),
  }
  return loader
}
