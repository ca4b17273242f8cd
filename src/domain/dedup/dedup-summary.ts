// What a programme's adjudicators work from besides the pairs: how many pairs and members, the
// clusters of more than two members joined by pairs (one person enrolled three times, or a family
// of look-alikes: adjudicated together, not pair by pair), and how the scores fall just above the
// threshold, where look-alikes and true duplicates are hardest to tell apart.

export interface SummaryPair {
  member_a: string
  member_b: string
  score: number
}

export interface DedupSummary {
  threshold: number
  palms: number
  pairs: number
  /** Members in at least one pair. */
  members: number
  /** Connected groups of more than two members, largest first (their members sorted). */
  clusters: Array<{ size: number; members: string[] }>
  /** Pairs per score band: [from, to) in steps of 0.01 up to threshold + 0.1, then the rest. */
  scores: Array<{ from: number; to: number; pairs: number }>
}

const BANDS = 10
const STEP = 0.01

export function summarisePairs(pairs: readonly SummaryPair[], threshold: number, palms: number): DedupSummary {
  const parent = new Map<string, string>()
  const root = (member: string): string => {
    let current = member
    while (parent.get(current) !== current) current = parent.get(current)!
    // Path halving is not needed for the few thousand members a report names; this keeps it short.
    parent.set(member, current)
    return current
  }
  for (const pair of pairs) {
    for (const member of [pair.member_a, pair.member_b]) if (!parent.has(member)) parent.set(member, member)
    const [a, b] = [root(pair.member_a), root(pair.member_b)]
    // biome-ignore lint/complexity/useMathMinMax: member ids are strings, ordered as text
    if (a !== b) parent.set(a < b ? b : a, a < b ? a : b)
  }
  const groups = new Map<string, string[]>()
  for (const member of parent.keys()) {
    const key = root(member)
    const group = groups.get(key)
    if (group) group.push(member)
    else groups.set(key, [member])
  }
  const clusters = [...groups.values()]
    .filter((group) => group.length > 2)
    .map((group) => ({ size: group.length, members: group.sort() }))
    .sort((x, y) => y.size - x.size || (x.members[0] < y.members[0] ? -1 : 1))
  const scores = Array.from({ length: BANDS + 1 }, (_, band) => ({
    from: Number((threshold + band * STEP).toFixed(4)),
    to: band === BANDS ? 1 : Number((threshold + (band + 1) * STEP).toFixed(4)),
    pairs: 0,
  }))
  for (const pair of pairs) scores[Math.min(BANDS, Math.max(0, Math.floor((pair.score - threshold) / STEP + 1e-9)))].pairs++
  return { threshold, palms, pairs: pairs.length, members: parent.size, clusters, scores }
}
