// Cuts the rows [0, rowEnd) of a chunked gallery into segments (never crossing a chunk) and
// groups them into one task per worker with near-equal row counts.
import type { Segment } from './kernel.js'

export interface ChunkLocation {
  rowsOffset: number
  normsOffset: number
  liveOffset: number
  bitsOffset: number
}

export function planSegments(chunks: readonly ChunkLocation[], chunkRows: number, rowEnd: number): Segment[] {
  const segments: Segment[] = []
  for (let index = 0; index * chunkRows < rowEnd; index++) {
    const chunk = chunks[index]
    segments.push({
      rowsOffset: chunk.rowsOffset,
      normsOffset: chunk.normsOffset,
      liveOffset: chunk.liveOffset,
      bitsOffset: chunk.bitsOffset,
      capacity: chunkRows,
      rowStart: 0,
      rowEnd: Math.min(chunkRows, rowEnd - index * chunkRows),
      baseRow: index * chunkRows,
    })
  }
  return segments
}

/** Splits segments into at most `parts` groups of about the same number of rows. */
export function splitSegments(segments: readonly Segment[], parts: number): Segment[][] {
  const totalRows = segments.reduce((sum, segment) => sum + segment.rowEnd - segment.rowStart, 0)
  const perPart = Math.ceil(totalRows / Math.max(1, parts))
  const groups: Segment[][] = []
  let current: Segment[] = []
  let currentRows = 0
  for (const segment of segments) {
    let start = segment.rowStart
    while (start < segment.rowEnd) {
      const take = Math.min(segment.rowEnd - start, perPart - currentRows)
      current.push({ ...segment, rowStart: start, rowEnd: start + take })
      start += take
      currentRows += take
      if (currentRows === perPart) {
        groups.push(current)
        current = []
        currentRows = 0
      }
    }
  }
  if (current.length) groups.push(current)
  return groups
}
