// Runs one scan of a gallery for a packed batch of probes: inline on the calling thread for
// small galleries (a pool round trip costs more than the scan), otherwise one task per worker,
// merged into the global top-k. Rows are mapped back to ids before the scan gate is released,
// because a compaction waiting at the gate renumbers rows.
import type { GalleryStore } from './gallery-store.js'
import type { ScanKernel } from './kernel.js'
import type { ScanPool } from './pool.js'
import { splitSegments } from './scan-plan.js'
import { runScanTask, type ScanTask } from './scan-task.js'
import { emptyTopK, mergeTopKInto, type TopK } from './top-k.js'

export interface ScanEngine {
  kernel: ScanKernel
  pool: ScanPool | null
  /** Galleries with fewer rows are scanned inline. */
  inlineBelowRows: number
}

export interface Hit {
  id: string
  score: number
  /** The row's partition, when it has one. */
  partition?: string
}

export interface ProbeCandidates {
  /** Candidates whose row is still live, in scan order (score desc, row asc). */
  hits: Hit[]
  /** True when the scan returned every live row it covered, so nothing was cut off. */
  complete: boolean
  /** Score of the last candidate the scan returned (live or not): unseen rows score <= this. */
  floorScore: number
}

/**
 * Scans the store for a packed batch of probes. With `twoStage`, only the candidates stage 1
 * keeps are scored; rows it did not keep are never seen, so the result counts as complete.
 */
export async function scanStore(
  engine: ScanEngine,
  store: GalleryStore,
  probes: Int8Array,
  probeNorms: Uint32Array,
  k: number,
  twoStage?: ScanTask['twoStage'],
): Promise<ProbeCandidates[]> {
  const rowEnd = await store.beginScan()
  try {
    const scanK = Math.max(1, Math.min(k, rowEnd))
    const task: ScanTask = { segments: store.segments(rowEnd), shape: store.shape, probes, probeNorms, k: scanK, twoStage }
    let topK: TopK
    if (!engine.pool || rowEnd < engine.inlineBelowRows || task.segments.length === 0) {
      topK = runScanTask(engine.kernel, task)
    } else {
      const groups = splitSegments(task.segments, engine.pool.threads)
      const slabs = store.memory.slabs && [...store.memory.slabs]
      const parts = await Promise.all(groups.map((segments) => engine.pool!.run({ ...task, segments, slabs })))
      topK = parts.length === 1 ? parts[0] : emptyTopK(probeNorms.length, scanK)
      if (parts.length > 1) for (const part of parts) mergeTopKInto(topK, part)
    }
    return collectCandidates(store, topK, k >= rowEnd || twoStage !== undefined)
  } finally {
    store.endScan()
  }
}

function collectCandidates(store: GalleryStore, topK: TopK, coversAllRows: boolean): ProbeCandidates[] {
  const candidates: ProbeCandidates[] = []
  for (let probe = 0; probe < topK.probeCount; probe++) {
    const hits: Hit[] = []
    let count = 0
    let floorScore = 0
    for (let slot = probe * topK.k; slot < (probe + 1) * topK.k; slot++) {
      const row = topK.rows[slot]
      if (row < 0) break
      count++
      floorScore = topK.scores[slot]
      const id = store.idAt(row)
      if (id !== undefined) hits.push({ id, score: topK.scores[slot] })
    }
    candidates.push({ hits, complete: coversAllRows || count < topK.k, floorScore })
  }
  return candidates
}
