// How far an approximate search's answers are from the exact scan's, per probe: recall@k of the
// gallery rows and agreement of the identify decision (Found with the same member / Ambiguous /
// NotFound, decided by the service's own `decide` at the environment's threshold and margin).
import { decide, type GalleryHit } from '../../src/domain/identification/identify-decision.js'

export interface DecisionSettings {
  match_threshold: number
  margin: number
}

/** The service's defaults (migration 0001): what an environment decides with unless told otherwise. */
export const DEFAULT_DECISION: DecisionSettings = { match_threshold: 0.8, margin: 0.03 }

export interface Agreement {
  probes: number
  /** Exact top-k rows found in the approximate top-k, over all probes. */
  recall: number
  /** Share of probes whose identify decision equals the exact scan's. */
  decisionAgreement: number
}

const rowKey = (hit: GalleryHit) => `${hit.id}\u0000${hit.partition ?? ''}`

/** The decision a list of hits (best first) leads to, as one comparable string. */
export function decisionOf(hits: readonly GalleryHit[], settings: DecisionSettings): string {
  const decision = decide(hits, settings)
  return decision.status === 'Found' ? `Found:${decision.member_id}` : decision.status
}

/** `exact[i]` and `approximate[i]` are probe i's hits, best first; recall is over each exact list's first `k`. */
export function agreementWithExact(
  exact: readonly (readonly GalleryHit[])[],
  approximate: readonly (readonly GalleryHit[])[],
  k: number,
  settings: DecisionSettings = DEFAULT_DECISION,
): Agreement {
  if (exact.length !== approximate.length) throw new Error(`${exact.length} exact answers for ${approximate.length} approximate ones`)
  let expected = 0
  let found = 0
  let sameDecision = 0
  exact.forEach((truth, probe) => {
    const kept = new Set(approximate[probe].slice(0, k).map(rowKey))
    for (const hit of truth.slice(0, k)) {
      expected++
      if (kept.has(rowKey(hit))) found++
    }
    if (decisionOf(truth, settings) === decisionOf(approximate[probe], settings)) sameDecision++
  })
  return { probes: exact.length, recall: expected ? found / expected : 1, decisionAgreement: exact.length ? sameDecision / exact.length : 1 }
}
