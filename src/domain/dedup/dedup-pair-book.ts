// The best-scoring pair of palms for each pair of owners found so far (a resumed run starts from
// its checkpoint's), and for each the nearest probe rank that found it.
import type { PalmPair, PalmRegister } from './dedup-palms.js'

export interface PairBook {
  /** Palm x scored palm y at `score` while searching `cell` (a pair of one owner, or a gone palm, is not kept). */
  record(x: number, y: number, score: number, cell: number): void
  /** Best score first, then by palm numbers. */
  sorted(): PalmPair[]
  all(): PalmPair[]
}

export function createPairBook(register: PalmRegister, nearest: Uint16Array, present: Uint8Array, probes: number, resumed: readonly PalmPair[]): PairBook {
  const best = new Map<number, PalmPair>()
  const ownersKey = (x: number, y: number) => Math.min(x, y) * 2 ** 26 + Math.max(x, y)
  for (const pair of resumed) best.set(ownersKey(register.owner(pair.a), register.owner(pair.b)), pair)
  return {
    record(x, y, score, cell) {
      if (!present[x] || !present[y]) return
      const rank = nearest.subarray(x * probes, (x + 1) * probes).indexOf(cell)
      const ox = register.owner(x)
      const oy = register.owner(y)
      if (ox === oy) return
      const [a, b] = ox < oy ? [x, y] : [y, x]
      const key = ownersKey(ox, oy)
      const seen = best.get(key)
      const better = !seen || seen.score < score || (seen.score === score && (a < seen.a || (a === seen.a && b < seen.b)))
      if (better) best.set(key, { a, b, score, rank: Math.min(rank, seen?.rank ?? rank) })
      else if (rank < seen.rank) seen.rank = rank
    },
    sorted: () => [...best.values()].sort((x, y) => y.score - x.score || x.a - y.a || x.b - y.b),
    all: () => [...best.values()],
  }
}
