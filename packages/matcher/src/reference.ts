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
  return product === 0 ? 0 : Math.max(dot, 0) / Math.sqrt(product)
}

export function scanTopK(
  gallery: Int8Array,
  strideInBytes: number,
  dimension: number,
  rowStart: number,
  rowEnd: number,
  normsSquared: Uint32Array,
  live: Uint8Array,
  probes: Int8Array,
  probeNormsSquared: Uint32Array,
  k: number,
  outRows: Int32Array,
  outScores: Float64Array,
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

/** Bits set in a 32-bit word (SWAR). */
function popcount32(word: number): number {
  word -= (word >>> 1) & 0x55555555
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333)
  return (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

/** Hamming distance of `bytes` bytes (a multiple of 8) at `aAt` in `a` and `bAt` in `b`. */
export function hammingDistance(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, bytes: number): number {
  let distance = 0
  for (let index = 0; index < bytes; index++) distance += popcount32(a[aAt + index] ^ b[bAt + index])
  return distance
}

/** Stage 1 of a two-stage search: the addon's `mergeNearestBySignBits`, the oracle of the SIMD ones. */
export function mergeNearestBySignBits(
  bits: Uint8Array,
  bitsStride: number,
  signBytes: number,
  rowStart: number,
  rowEnd: number,
  baseRow: number,
  live: Uint8Array,
  probeBits: Uint8Array,
  c: number,
  outRows: Int32Array,
  outDistances: Uint32Array,
): void {
  const probeCount = probeBits.length / signBytes
  // Unused slots (row -1) hold 0xFFFFFFFF, above every distance, so insertion passes them by.
  for (let slot = 0; slot < probeCount * c; slot++) if (outRows[slot] < 0) outDistances[slot] = 0xffffffff
  for (let row = rowStart; row < rowEnd; row++) {
    if (live[row] === 0) continue
    const absolute = baseRow + row
    for (let probe = 0; probe < probeCount; probe++) {
      const distance = hammingDistance(bits, row * bitsStride, probeBits, probe * signBytes, signBytes)
      const first = probe * c
      if (!nearer(distance, absolute, outDistances[first + c - 1], outRows[first + c - 1])) continue
      let position = first + c - 1
      while (position > first && nearer(distance, absolute, outDistances[position - 1], outRows[position - 1])) {
        outDistances[position] = outDistances[position - 1]
        outRows[position] = outRows[position - 1]
        position--
      }
      outDistances[position] = distance
      outRows[position] = absolute
    }
  }
}

/** Stage 1's order: nearer first, then lower row; an unused slot (row -1) is last. */
function nearer(distance: number, row: number, slotDistance: number, slotRow: number): boolean {
  return slotRow < 0 || distance < slotDistance || (distance === slotDistance && row < slotRow)
}

/** Stage 2: the exact score of row `pairRows[i]` for probe `pairProbes[i]`. */
export function scorePairs(
  gallery: Int8Array,
  strideInBytes: number,
  dimension: number,
  normsSquared: Uint32Array,
  pairRows: Int32Array,
  pairProbes: Uint32Array,
  probes: Int8Array,
  probeNormsSquared: Uint32Array,
  outScores: Float64Array,
): void {
  for (let pair = 0; pair < pairRows.length; pair++) {
    const rowAt = pairRows[pair] * strideInBytes
    const probeAt = pairProbes[pair] * dimension
    let dot = 0
    for (let index = 0; index < dimension; index++) dot += gallery[rowAt + index] * probes[probeAt + index]
    outScores[pair] = cosineScore(dot, probeNormsSquared[pairProbes[pair]], normsSquared[pairRows[pair]])
  }
}
