// The one quantisation used everywhere in memory: L2-normalise, multiply by 127, round half
// away from zero, clamp to [-127, 127]. -128 never appears: the SIMD kernels sum two int8
// products in an int16 lane, which only -128 * -128 pairs could overflow.

/** Largest magnitude an in-memory component may have. */
export const INT8_LIMIT = 127

/** Quantises a float vector (any non-zero finite L2 norm) to the in-memory int8 form. */
export function quantizeFloat(vector: ArrayLike<number>, out = new Int8Array(vector.length)): Int8Array {
  let sumOfSquares = 0
  for (let index = 0; index < vector.length; index++) sumOfSquares += vector[index] * vector[index]
  const norm = Math.sqrt(sumOfSquares)
  if (!(norm > 0) || !Number.isFinite(norm)) throw new RangeError('vector must have a finite, non-zero norm')
  const scale = INT8_LIMIT / norm
  for (let index = 0; index < vector.length; index++) {
    const scaled = vector[index] * scale
    // Math.round rounds half towards +infinity; a negative half goes one further, away from zero.
    // (The test is exact and almost never true: a branch on each component's sign was mispredicted
    // half the time and made this loop most of an import thread's capture checks.)
    let rounded = Math.round(scaled)
    if (rounded - scaled === 0.5 && scaled < 0) rounded -= 1
    out[index] = rounded > INT8_LIMIT ? INT8_LIMIT : Math.max(rounded, -INT8_LIMIT)
  }
  return out
}

/** Squared integer L2 norm of an int8 vector (exact: at most 512 * 127^2 < 2^32). */
export function normSquaredInt8(vector: Int8Array): number {
  let sum = 0
  for (let index = 0; index < vector.length; index++) sum += vector[index] * vector[index]
  return sum
}

/** Index of the first -128 component, or -1: such vectors are refused at the boundary. */
export function findOutOfRangeInt8(vector: Int8Array): number {
  for (let index = 0; index < vector.length; index++) if (vector[index] === -128) return index
  return -1
}
