// The deduplication report (`palmvein dedup`): every pair of distinct members of an environment
// whose palms match at or above a threshold. Each stored reference is searched against the whole
// gallery (both hands: a left palm enrolled as someone's right is a duplicate too), in batches
// the matcher scans in one pass, so the N x N job costs N/16 scans.
import type { AppContext } from '../app-context.js'
import type { Hand } from '../store/templates.js'
import { countEnvironmentReferences, environmentReferenceKeysPage } from '../store/templates.js'

export interface DuplicatePair {
  member_a: string
  hand_a: Hand
  member_b: string
  hand_b: Hand
  score: number
}

/** Rows read back per search: enough for a palm matching several others above the threshold. */
const HITS_PER_PROBE = 16
const PAGE_ROWS = 2_048

/**
 * The pairs at or above `threshold` (default: the environment's match_threshold), best score per
 * pair of members, highest first. `onProgress(done, total)` follows the references searched.
 */
export async function findDuplicatePairs(
  app: Pick<AppContext, 'galleries' | 'sql'>, environmentId: string, threshold: number | null,
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
    const results = gallery.searchBatch(probes.map((probe) => probe.vector), { k: HITS_PER_PROBE })
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
        const [a, b] = member < hit.id ? [{ id: member, hand }, { id: hit.id, hand: hit.partition as Hand }] : [{ id: hit.id, hand: hit.partition as Hand }, { id: member, hand }]
        const key = `${a.id}/${b.id}`
        if ((best.get(key)?.score ?? -1) < hit.score) best.set(key, { member_a: a.id, hand_a: a.hand, member_b: b.id, hand_b: b.hand, score: hit.score })
      }
    })
    done += page.length
    onProgress(done, Math.max(total, done))
    if (!next) break
    current = next
  }
  const pairs = [...best.values()].sort((x, y) => y.score - x.score || x.member_a.localeCompare(y.member_a) || x.member_b.localeCompare(y.member_b))
  return { pairs, threshold: floor, references: done }
}
