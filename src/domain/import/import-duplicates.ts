// The duplicate-palm check and headcount of one import batch (member-import.ts), with its searches
// batched. Checked one by one, each member's six probes cost a scan of the whole gallery; here
// every candidate's references are staged in the gallery first and all their probes searched at
// once, so a scan serves 16 probes. The verdicts are then taken in input order, the same as one
// member at a time would give: a candidate is refused when it matches a member already stored or an
// earlier candidate of the batch that was accepted, while a later candidate, or one refused, does
// not count. Where a candidate's hits cannot tell (all of them later or refused candidates above the
// threshold), the rest of the batch is checked one by one.
import { duplicateAmong, findDuplicate, type DuplicateMatch } from '../enrollment/enrollment.js'
import type { EnvironmentGallery, Galleries } from '../galleries/galleries.js'
import { EXACT_SEARCH, type BatchDuplicateSearch, type SearchedCandidate } from './import-duplicate-search.js'
import { rowsForMembers } from '../identification/identify-decision.js'

/** A candidate of a batch: its id and its hands' probes (the duplicate search's own shape). */
export type ScreenedCandidate = SearchedCandidate

export type Verdict = { accepted: true } | { accepted: false; headcount: true } | { accepted: false; headcount: false; duplicate: DuplicateMatch }

// Own two rows, and room for a few of the batch's other candidates ahead of a member that counts.
const BATCH_SEARCH_ROWS = rowsForMembers(4)

/**
 * Each candidate's verdict, in order; at most `headroom` are accepted. Accepted candidates' rows are
 * left in the gallery (the caller removes them if its transaction fails), the others' are not.
 */
export async function screenCandidates(
  galleries: Pick<Galleries, 'upsert' | 'removeMember'>,
  gallery: EnvironmentGallery,
  candidates: readonly ScreenedCandidate[],
  headroom: number,
  search: BatchDuplicateSearch = EXACT_SEARCH,
): Promise<Verdict[]> {
  const verdicts: Verdict[] = []
  const stage = (candidate: ScreenedCandidate) => {
    for (const hand of candidate.hands) galleries.upsert(gallery, candidate.id, hand.hand, hand.reference)
  }
  const unstage = (from: number) => {
    for (const candidate of candidates.slice(from)) galleries.removeMember(gallery.environment.id, candidate.id)
  }
  let accepted = 0
  await search.prepare(gallery)
  try {
    candidates.forEach(stage)
    const results = await search.search(gallery, candidates, BATCH_SEARCH_ROWS)
    const place = new Map(candidates.map((candidate, index) => [candidate.id, index]))
    for (let index = 0; index < candidates.length; index++) {
      const self = candidates[index].id
      if (accepted >= headroom) {
        verdicts.push({ accepted: false, headcount: true })
        galleries.removeMember(gallery.environment.id, self)
        continue
      }
      const counts = (memberId: string) => {
        if (memberId === self) return false
        const other = place.get(memberId)
        return other === undefined || (other < index && verdicts[other].accepted)
      }
      const duplicate = duplicateAmong(results[index], candidates[index].hands, gallery.environment.match_threshold, BATCH_SEARCH_ROWS, counts)
      if (duplicate === 'unsure') break
      verdicts.push(duplicate ? { accepted: false, headcount: false, duplicate } : { accepted: true })
      if (duplicate) galleries.removeMember(gallery.environment.id, self)
      else accepted += 1
    }
    // One by one from the first candidate the batched search could not decide.
    unstage(verdicts.length)
    for (let index = verdicts.length; index < candidates.length; index++) {
      if (accepted >= headroom) {
        verdicts.push({ accepted: false, headcount: true })
        continue
      }
      const duplicate = await findDuplicate(gallery, candidates[index].id, candidates[index].hands)
      verdicts.push(duplicate ? { accepted: false, headcount: false, duplicate } : { accepted: true })
      if (duplicate) continue
      stage(candidates[index])
      accepted += 1
    }
    await search.accepted(candidates.filter((_, index) => verdicts[index].accepted))
  } catch (error) {
    // Nothing is accepted when staging or a search fails: every staged row leaves the gallery again.
    unstage(0)
    throw error
  }
  return verdicts
}
