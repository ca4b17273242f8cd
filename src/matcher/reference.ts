// The pure TypeScript scan: the oracle the tests hold the SIMD backends to, and the last
// fallback backend ('js'). Same signature as the napi addon's exports, same numerical contract
// (see assembly/index.ts): integer dot products, score = max(dot, 0) / sqrt(pn * rn) in f64,
// higher score first, equal score -> lower row first.

/** Dot product of two int8 vectors of equal length (exact in double arithmetic). */
export function dotI8(a: Int8Array, b: Int8Array): number {
  let sum = 0
  for (let index = 0; index < a.length; index++) sum += a[index] * b[index]
  return sum
}

/** The cosine score of the numerical contract; shared by every TypeScript caller. */
export function cosineScore(dot: number, probeNormSquared: number, rowNormSquared: number): number {
  const product = probeNormSquared * rowNormSquared
  return product === 0 ? 0 : (dot > 0 ? dot : 0) / Math.sqrt(product)
}

export function scanTopK(
  gallery: Int8Array, strideInBytes: number, dimension: number, rowStart: number, rowEnd: number,
  normsSquared: Uint32Array, live: Uint8Array, probes: Int8Array, probeNormsSquared: Uint32Array, k: number,
  outRows: Int32Array, outScores: Float64Array,
): void {
  const probeCount = probeNormsSquared.length
  outRows.fill(-1, 0, probeCount * k)
  outScores.fill(0, 0, probeCount * k)
  if (k <= 0) return
  for (let row = rowStart; row < rowEnd; row++) {
    if (live[row] === 0) continue
    const rowAt = row * strideInBytes
    const rowNormSquared = normsSquared[row]
    for (let probe = 0; probe < probeCount; probe++) {
      const probeAt = probe * dimension
      let dot = 0
      for (let index = 0; index < dimension; index++) dot += gallery[rowAt + index] * probes[probeAt + index]
      const first = probe * k
      const last = first + k - 1
      const full = outRows[last] >= 0
      if (full && dot <= 0) continue
      const score = cosineScore(dot, probeNormsSquared[probe], rowNormSquared)
      if (full && score <= outScores[last]) continue
      let position = last
      while (position > first && (outRows[position - 1] < 0 || outScores[position - 1] < score)) {
        outRows[position] = outRows[position - 1]
        outScores[position] = outScores[position - 1]
        position--
      }
      outRows[position] = row
      outScores[position] = score
    }
  }
}

/** Reads every byte once; the JavaScript memory-bandwidth floor when no faster reader loads. */
export function streamRead(buffer: Int8Array): number {
  const words = new Int32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength >>> 2)
  let sum = 0
  for (let index = 0; index < words.length; index++) sum = (sum + words[index]) | 0
  return sum
}
