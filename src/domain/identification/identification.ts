// 1:N identification against the project's environment gallery. The hot path touches no database:
// the environment's settings live with its gallery, and the scan result is queued for the batched
// writer. Works for any environment, global ones included (Device-Com terminals identify there);
// the REST route checks tenant management before calling.
import type { DomainResources } from '../resources.js'
import { ServiceError } from '../../errors.js'
import { newId } from '../../ids.js'
import type { ProjectRow } from '../../store/projects.js'
import type { PalmPosition } from '../../store/scans.js'
import type { Hand } from '../../store/templates.js'
import { parseCapture, probeVector } from './captures.js'
import { decide, rowsForMembers, type Candidate, type IdentifyStatus } from './identify-decision.js'
import { disclosedTo } from './score-disclosure.js'

export const MAX_CANDIDATES = 10

export interface IdentifyPalm {
  identify_capture: string
  /** Opaque; never used for matching. */
  silhouette?: string | null
  palm_position?: PalmPosition | null
}

export interface IdentifyResult {
  status: IdentifyStatus
  member_id: string | null
  match_score: number
  /** The hand of the matching row (Found only). */
  hand: Hand | null
  /** Top-k members, best first; only when k was asked for. */
  candidates?: Candidate[]
}

export interface IdentifyOptions {
  /** Candidates wanted (1..10); when given, the answer carries `candidates`. */
  k?: number
  callerType: 'api_key' | 'token' | 'device'
  deviceId?: string | null
  /** JSON pointer of the capture in the caller's body, for error details. Default /palm/identify_capture. */
  field?: string
}

export async function identifyPalm(
  app: Pick<DomainResources, 'galleries' | 'scans' | 'metrics'>,
  project: ProjectRow,
  palm: IdentifyPalm,
  options: IdentifyOptions,
): Promise<IdentifyResult> {
  const started = performance.now()
  if (!project.environment_id) throw new ServiceError('environment_not_tenant_managed', `project ${project.id} has no environment`)
  const k = options.k ?? 1
  if (!Number.isInteger(k) || k < 1 || k > MAX_CANDIDATES) throw new ServiceError('invalid_request', `k must be an integer from 1 to ${MAX_CANDIDATES}`)
  const { environment, gallery } = await app.galleries.acquire(project.environment_id)
  const capture = parseCapture(palm.identify_capture, options.field ?? '/palm/identify_capture', environment, null)
  // At least two members are needed to tell Found from Ambiguous. A capture flagged with its hand
  // is compared with that hand's references only; an unknown hand with both.
  const hand = capture.template.hand
  const probe = probeVector(capture)
  const search = () =>
    gallery.search(probe, {
      k: hand ? Math.max(k, 2) : rowsForMembers(Math.max(k, 2)),
      partition: hand ?? undefined,
      mode: environment.search_mode,
      candidates: environment.candidates,
    })
  let decision = decide(await search(), environment)
  // An answer that names a member (Found, Ambiguous, or candidates asked for) is first checked against
  // the changes other processes committed (galleries.fresh): none it names was deleted meanwhile.
  const namesMembers = decision.status !== 'NotFound' || (options.k !== undefined && decision.members.length > 0)
  if (namesMembers && (await app.galleries.fresh(environment.id))) decision = decide(await search(), environment)
  // The scan record keeps what the caller was shown: its project's scan history is theirs to read.
  const shown = disclosedTo(project, environment.match_threshold, {
    status: decision.status,
    match_score: decision.match_score,
    candidates: decision.members.slice(0, k),
  })
  const candidates = shown.candidates
  app.metrics.identified(decision.status)
  app.scans.record({
    id: newId(),
    project_id: project.id,
    caller_type: options.callerType,
    operation_type: 'identify',
    response_time_ms: Math.round(performance.now() - started),
    success: decision.status === 'Found',
    member_id: decision.member_id,
    device_id: options.deviceId ?? null,
    posture: palm.palm_position ?? null,
    results: candidates.map((candidate, index) => ({ match_score: candidate.match_score, position: index + 1 })),
    created_at: new Date(),
  })
  const result: IdentifyResult = {
    status: decision.status,
    member_id: decision.member_id,
    match_score: shown.match_score,
    hand: decision.hand,
  }
  if (options.k !== undefined) result.candidates = candidates
  return result
}
