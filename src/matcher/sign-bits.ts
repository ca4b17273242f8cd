// The sign bits of a vector, the rows' stage-1 form in a two-stage search: bit `j % 8` of byte
// `j / 8` is set when component j is negative; zero padding up to a multiple of 8 bytes (the
// kernels read whole 64-bit words, and zero bits on both sides add nothing to a distance).

/** Bytes of sign bits per vector at `dimension`. */
export function signBytesFor(dimension: number): number {
  return Math.ceil(dimension / 64) * 8
}

/** Writes the sign bits of `vector` into `out` at `offset` (`signBytesFor(vector.length)` bytes). */
export function writeSignBits(vector: Int8Array, out: Uint8Array, offset = 0): void {
  out.fill(0, offset, offset + signBytesFor(vector.length))
  for (let index = 0; index < vector.length; index++) {
    if (vector[index] < 0) out[offset + (index >>> 3)] |= 1 << (index & 7)
  }
}

/** The sign bits of `count` packed vectors of `dimension` components. */
export function packSignBits(vectors: Int8Array, dimension: number, count: number): Uint8Array {
  const bytes = signBytesFor(dimension)
  const out = new Uint8Array(count * bytes)
  for (let index = 0; index < count; index++) writeSignBits(vectors.subarray(index * dimension, (index + 1) * dimension), out, index * bytes)
  return out
}
