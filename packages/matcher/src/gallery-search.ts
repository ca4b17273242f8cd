// How a batch of searches runs over a gallery's partitions: grouped by what they read (some
// partitions or all, exact or two-stage), one scan per partition store for each group, each
// probe's hits made exact with respect to ties and concurrent removes (`resolveProbe`), then
// merged across partitions.
import type { GalleryStore } from './gallery-store.js'
import { scanStore, type Hit, type ProbeCandidates, type ScanEngine } from './scanner.js'
import { packSignBits } from './sign-bits.js'

export type SearchMode = 'exact' | 'two_stage' | 'auto'

export interface PendingSearch {
  probe: Int8Array
  norm: number
  k: number
  /** The partitions read, sorted; undefined: every partition. */
  partitions: string[] | undefined
  mode: SearchMode
  candidates: number
  resolve(hits: Hit[]): void
  reject(error: unknown): void
}

export interface SearchLimits {
  /** The kernel's largest k per scan; one row of it is kept for the tie check. */
  maxScanK: number
  /** 'auto' searches two-stage from this many rows in a partition. */
  twoStageFromRows: number
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
export const byScoreThenId = (a: Hit, b: Hit): number => b.score - a.score || byText(a.id, b.id) || byText(a.partition ?? '', b.partition ?? '')

function packProbes(entries: readonly PendingSearch[], dimension: number): { probes: Int8Array; norms: Uint32Array } {
  const probes = new Int8Array(entries.length * dimension)
  const norms = new Uint32Array(entries.length)
  entries.forEach((entry, index) => {
    probes.set(entry.probe, index * dimension)
    norms[index] = entry.norm
  })
  return { probes, norms }
}

/** Ask the kernel for one more row than wanted: if it scores strictly lower than the k-th, no
 * unseen row can tie with the k-th and the id tie-break is exact. */
async function resolveProbe(
  engine: ScanEngine,
  store: GalleryStore,
  limits: SearchLimits,
  entry: PendingSearch,
  candidates: ProbeCandidates,
  scannedK: number,
): Promise<Hit[]> {
  let current = candidates
  let asked = scannedK
  while (true) {
    if (current.complete) return current.hits.sort(byScoreThenId).slice(0, entry.k)
    const strong = current.hits.filter((hit) => hit.score > current.floorScore)
    if (strong.length >= entry.k) return strong.sort(byScoreThenId).slice(0, entry.k)
    // More than maxScanK rows tie at the cut: the id order holds among the rows seen.
    if (asked >= limits.maxScanK) return current.hits.sort(byScoreThenId).slice(0, entry.k)
    // Ties at the cut, or rows removed during the scan: widen and scan again (rare).
    asked = Math.min(limits.maxScanK, Math.max(asked * 2, entry.k + 1))
    ;[current] = await scanStore(engine, store, new Int8Array(entry.probe), Uint32Array.of(entry.norm), asked)
  }
}

/** One scan of one store for entries that read it the same way; per entry, its exact best hits there. */
async function searchStore(engine: ScanEngine, store: GalleryStore, limits: SearchLimits, entries: PendingSearch[], dimension: number): Promise<Hit[][]> {
  if (store.size === 0) return entries.map(() => [])
  const { mode, candidates } = entries[0]
  const twoStage = mode === 'two_stage' || (mode === 'auto' && store.rows >= limits.twoStageFromRows)
  const scanK = Math.min(limits.maxScanK, Math.max(...entries.map((entry) => entry.k)) + 1)
  const { probes, norms } = packProbes(entries, dimension)
  const probeBits = twoStage ? packSignBits(probes, dimension, entries.length) : undefined
  const found = await scanStore(engine, store, probes, norms, scanK, probeBits && { probeBits, candidates })
  return Promise.all(entries.map((entry, index) => resolveProbe(engine, store, limits, entry, found[index], scanK)))
}

/** Runs a batch: per group of entries reading the same partitions in the same mode, one scan per store. */
export async function runSearchBatch(
  engine: ScanEngine,
  partitions: ReadonlyMap<string, GalleryStore>,
  limits: SearchLimits,
  entries: PendingSearch[],
  dimension: number,
): Promise<void> {
  const groups = new Map<string, PendingSearch[]>()
  for (const entry of entries) {
    const key = JSON.stringify([entry.partitions ?? null, entry.mode, entry.candidates])
    let group = groups.get(key)
    if (!group) groups.set(key, (group = []))
    group.push(entry)
  }
  await Promise.all(
    [...groups.values()].map(async (group) => {
      try {
        const reading = group[0].partitions
        const stores = [...partitions].filter(([name]) => reading === undefined || reading.includes(name))
        const perStore = await Promise.all(
          stores.map(async ([name, store]) => {
            const found = await searchStore(engine, store, limits, group, dimension)
            // Hits of a partitioned row say which partition it is in.
            return name === '' ? found : found.map((hits) => hits.map((hit) => ({ ...hit, partition: name })))
          }),
        )
        group.forEach((entry, index) => {
          const hits = perStore.length === 1 ? perStore[0][index] : perStore.flatMap((hitsOfStore) => hitsOfStore[index]).sort(byScoreThenId)
          entry.resolve(hits.slice(0, entry.k))
        })
      } catch (error) {
        for (const entry of group) entry.reject(error)
      }
    }),
  )
}
