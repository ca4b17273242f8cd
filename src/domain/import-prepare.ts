// The CPU half of an import (member-import.ts): each member's metadata and captures checked as
// enroll checks them, its reference templates built, a data key made and wrapped by the
// environment key, and every row sealed. A pure function of its task, so it runs the same on the
// main thread (small imports) and as the piscina task of an import's threads (import-pool.ts),
// which leave the main thread to read, write and search.
import { ServiceError } from '../errors.js'
import type { EnvironmentRow } from '../store/organizations.js'
import type { TemplateInsert } from '../store/templates.js'
import { handProbes, prepareHands, type HandProbes, type PreparedHand } from './enrollment.js'
import type { ImportMember, ImportRejection } from './member-import.js'
import { checkMetadata } from './members.js'
import { sealNewMembers } from './member-sealing.js'

/** What the checks need of the environment (cloned into a thread). */
export type PrepareEnvironment = Pick<EnvironmentRow, 'id' | 'dimension' | 'extractor_id' | 'extractor_version' | 'min_quality' | 'match_threshold'>

export interface PrepareTask {
  environment: PrepareEnvironment
  /** The environment's data key, unwrapped: member keys are wrapped under it. */
  environmentKey: Uint8Array
  projectId: string
  items: Array<{ line: number; id: string; member: ImportMember }>
}

export interface PreparedMember {
  line: number
  id: string
  row: Record<string, unknown>
  templates: TemplateInsert[]
  hands: HandProbes[]
}

export interface PrepareResult {
  prepared: PreparedMember[]
  rejected: ImportRejection[]
}

export function prepareImportItems(task: PrepareTask): PrepareResult {
  const { environment, environmentKey, projectId } = task
  const checked: Array<{ line: number; id: string; member: ImportMember; metadata: unknown; hands: PreparedHand[] }> = []
  const rejected: ImportRejection[] = []
  for (const { line, id, member } of task.items) {
    try {
      const metadata = checkMetadata(member.metadata)
      checked.push({ line, id, member, metadata, hands: prepareHands(member, environment as EnvironmentRow) })
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error
      rejected.push({ line, code: error.code, detail: error.message, ...(error.errors ? { errors: error.errors } : {}) })
    }
  }
  // Every member of the task sealed in two batches.
  const sealed = sealNewMembers(environmentKey, environment.id, checked)
  const now = new Date()
  const prepared = checked.map(({ line, id, member, metadata, hands }, index): PreparedMember => ({
    line,
    id,
    row: {
      id, project_id: projectId, environment_id: environment.id, display_name: member.display_name,
      metadata: metadata ?? null, wrapped_key: sealed[index].wrapped, palm_templates_enrolled: 2 * hands.length,
      created_at: now, updated_at: now, last_enrolled_at: now,
    },
    templates: sealed[index].templates,
    hands: handProbes(hands),
  }))
  return { prepared, rejected }
}

// The piscina task.
export default prepareImportItems
