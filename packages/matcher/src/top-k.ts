// Per-probe top-k lists as flat arrays (probeCount * k, best first, row -1 = unused), and the
// merge that combines lists from segments or workers into one global list with the scan's own
// order: higher score first, equal score -> lower row first.

export interface TopK {
  probeCount: number
  k: number
  rows: Int32Array
  scores: Float64Array
}

export function emptyTopK(probeCount: number, k: number): TopK {
  return { probeCount, k, rows: new Int32Array(probeCount * k).fill(-1), scores: new Float64Array(probeCount * k) }
}

/** Lists of consecutive probes (a worker's share each), one after the other as one. */
export function concatTopK(parts: readonly TopK[], k: number): TopK {
  const probeCount = parts.reduce((sum, part) => sum + part.probeCount, 0)
  const joined = { probeCount, k, rows: new Int32Array(probeCount * k), scores: new Float64Array(probeCount * k) }
  let offset = 0
  for (const part of parts) {
    joined.rows.set(part.rows, offset)
    joined.scores.set(part.scores, offset)
    offset += part.rows.length
  }
  return joined
}

/** Merges `part` (rows offset by `baseRow`) into `into`, both with the same shape. */
export function mergeTopKInto(into: TopK, part: TopK, baseRow = 0): void {
  const { k } = into
  const mergedRows = new Int32Array(k)
  const mergedScores = new Float64Array(k)
  for (let probe = 0; probe < into.probeCount; probe++) {
    const first = probe * k
    let left = first
    let right = probe * part.k
    const rightEnd = right + part.k
    let count = 0
    while (count < k) {
      const leftRow = left < first + k ? into.rows[left] : -1
      const rightRow = right < rightEnd ? part.rows[right] : -1
      if (leftRow < 0 && rightRow < 0) break
      let takeLeft: boolean
      if (rightRow < 0) takeLeft = true
      else if (leftRow < 0) takeLeft = false
      else {
        const leftScore = into.scores[left]
        const rightScore = part.scores[right]
        takeLeft = leftScore > rightScore || (leftScore === rightScore && leftRow < rightRow + baseRow)
      }
      if (takeLeft) {
        mergedRows[count] = leftRow
        mergedScores[count] = into.scores[left++]
      } else {
        mergedRows[count] = rightRow + baseRow
        mergedScores[count] = part.scores[right++]
      }
      count++
    }
    into.rows.fill(-1, first, first + k)
    into.scores.fill(0, first, first + k)
    into.rows.set(mergedRows.subarray(0, count), first)
    into.scores.set(mergedScores.subarray(0, count), first)
  }
}
