// The identify decision (DECISIONS "Palm captures and matching"), a pure function of the gallery's
// best rows: each member counts with its best row (left or right hand);
//   Found      the best member scores >= threshold, and the runner-up member is below the
//              threshold or at least `margin` lower;
//   Ambiguous  two members pass the threshold within `margin` (member_id null);
//   NotFound   otherwise (member_id null, match_score = the best score, 0 on an empty gallery).
import type { Hand } from '../../store/templates.js'

export type IdentifyStatus = 'Found' | 'Ambiguous' | 'NotFound'

export interface Candidate {
  member_id: string
  match_score: number
  hand: Hand
}

export interface Decision {
  status: IdentifyStatus
  member_id: string | null
  match_score: number
  hand: Hand | null
  /** Best row per member, best first. */
  members: Candidate[]
}

/** Gallery rows needed to see `members` distinct members: each member has at most two rows. */
export const rowsForMembers = (members: number): number => members * 2

/** A gallery hit: the member id, in the partition of its hand. */
export interface GalleryHit {
  id: string
  score: number
  partition?: string
}

/** Best row per member, best first; `hits` are best first (as the matcher returns them). */
export function bestPerMember(hits: ReadonlyArray<GalleryHit>): Candidate[] {
  const seen = new Set<string>()
  const members: Candidate[] = []
  for (const hit of hits) {
    if (seen.has(hit.id)) continue
    seen.add(hit.id)
    members.push({ member_id: hit.id, match_score: hit.score, hand: hit.partition as Hand })
  }
  return members
}

export function decide(hits: ReadonlyArray<GalleryHit>, settings: { match_threshold: number; margin: number }): Decision {
  const members = bestPerMember(hits)
  const [best, runnerUp] = members
  if (!best) return { status: 'NotFound', member_id: null, match_score: 0, hand: null, members }
  if (best.match_score < settings.match_threshold) {
    return { status: 'NotFound', member_id: null, match_score: best.match_score, hand: null, members }
  }
  const clear =
    !runnerUp ||
    runnerUp.match_score < settings.match_threshold ||
    // Scores are cosines in [0, 1]; a tiny epsilon keeps 0.85 − 0.82 ≥ 0.03 true despite binary floats.
    best.match_score - runnerUp.match_score >= settings.margin - 1e-12
  if (!clear) return { status: 'Ambiguous', member_id: null, match_score: best.match_score, hand: null, members }
  return { status: 'Found', member_id: best.member_id, match_score: best.match_score, hand: best.hand, members }
}
