// The CPU half of an import (member-import.ts): a batch of input lines parsed and checked against
// the import line's wire schema (handed in by the caller: `LineParser`), each member's metadata and captures checked as enroll
// checks them, its reference templates built, a data key made and wrapped by the environment key,
// every row sealed and encoded for the bulk write. A pure function of its task, so it runs the
// same on the main thread (small imports) and as the piscina task of an import's threads
// (import-pool.ts, whose thread module the caller names), which leave the main thread to read,
// write and search.
import { ServiceError } from '../../errors.js'
import { newId } from '../../ids.js'
import { bulkRows, type BulkRows, type BulkWrite } from '../../store/members.js'
import type { EnvironmentRow } from '../../store/organizations.js'
import { handProbes, prepareHands, type HandProbes, type PreparedHand } from '../enrollment/enrollment.js'
import type { ImportItem, ImportMember, ImportRejection, LineBatch } from './line-batches.js'
import { checkMetadata } from '../members/members.js'
import { sealNewMembers } from '../../keys/member-sealing.js'

/** A batch's lines checked against the import line's wire schema: each a member or a rejection (blank lines skipped). */
export type LineParser = (batch: LineBatch) => ImportItem[]

/** What the checks need of the environment (cloned into a thread). */
export type PrepareEnvironment = Pick<EnvironmentRow, 'id' | 'dimension' | 'extractor_id' | 'extractor_version' | 'min_quality' | 'match_threshold'>

export interface PrepareTask {
  environment: PrepareEnvironment
  /** The environment's data key, unwrapped: member keys are wrapped under it. */
  environmentKey: Uint8Array
  projectId: string
  lines: LineBatch
  write: BulkWrite
  /** Return each member's vectors for the duplicate-palm search. */
  probes: boolean
}

/** The members that passed the checks, in input order; `rows` holds member i's rows at index i. */
export interface PrepareResult {
  /** `named`: the line gave the member_id (a fresh id cannot repeat). */
  members: Array<{ line: number; id: string; named: boolean; hands: HandProbes[] }>
  rows: BulkRows
  rejected: ImportRejection[]
}

export function prepareImportLines(task: PrepareTask, parseLines: LineParser): PrepareResult {
  const { environment, environmentKey, projectId } = task
  const checked: Array<{ line: number; id: string; named: boolean; member: ImportMember; metadata: unknown; hands: PreparedHand[] }> = []
  const rejected: ImportRejection[] = []
  for (const item of parseLines(task.lines)) {
    if ('rejection' in item) {
      rejected.push(item.rejection)
      continue
    }
    const { line, member } = item
    try {
      const metadata = checkMetadata(member.metadata)
      const named = member.member_id !== undefined
      checked.push({
        line,
        id: named ? member.member_id!.toLowerCase() : newId(),
        named,
        member,
        metadata,
        hands: prepareHands(member, environment as EnvironmentRow),
      })
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error
      rejected.push({ line, code: error.code, detail: error.message, ...(error.errors ? { errors: error.errors } : {}) })
    }
  }
  // Every member of the task sealed in two batches.
  const sealed = sealNewMembers(environmentKey, environment.id, checked)
  const now = new Date()
  const memberRows = checked.map(({ id, member, metadata, hands }, index) => ({
    id,
    project_id: projectId,
    environment_id: environment.id,
    display_name: member.display_name,
    metadata: metadata ?? null,
    wrapped_key: sealed[index].wrapped,
    palm_templates_enrolled: 2 * hands.length,
    created_at: now,
    updated_at: now,
    last_enrolled_at: now,
  }))
  return {
    members: checked.map(({ line, id, named, hands }) => ({ line, id, named, hands: task.probes ? handProbes(hands) : [] })),
    rows: bulkRows(
      task.write,
      memberRows,
      sealed.map((member) => member.templates),
    ),
    rejected,
  }
}
