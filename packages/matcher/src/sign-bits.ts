// The sign bits of a vector, the rows' stage-1 form in a two-stage search: bit `j % 8` of byte
// `j / 8` is set when component j is negative; zero padding up to a multiple of 8 bytes (the
// kernels read whole 64-bit words, and zero bits on both sides add nothing to a distance).

/** Bytes of sign bits per vector at `dimension`. */
export function signBytesFor(dimension: number): number {
  return Math.ceil(dimension / 64) * 8
}

/** Writes the sign bits of `vector` into `out` at `offset` (`signBytesFor(vector.length)` bytes). */
export function writeSignBits(vector: Int8Array, out: Uint8Array, offset = 0): void {
  const length = vector.length
  const used = Math.ceil(length / 8)
  // Branch-free: a component's sign is bit 31 of its 32-bit form. A test per component mispredicted
  // on half of them (random signs) and took 1.1 µs a row, a tenth of a million-member boot.
  for (let byte = 0; byte < used; byte++) {
    const base = byte * 8
    let bits = 0
    if (base + 8 <= length) {
      bits =
        (vector[base] >>> 31) |
        ((vector[base + 1] >>> 31) << 1) |
        ((vector[base + 2] >>> 31) << 2) |
        ((vector[base + 3] >>> 31) << 3) |
        ((vector[base + 4] >>> 31) << 4) |
        ((vector[base + 5] >>> 31) << 5) |
        ((vector[base + 6] >>> 31) << 6) |
        ((vector[base + 7] >>> 31) << 7)
    } else {
      for (let bit = 0; base + bit < length; bit++) bits |= (vector[base + bit] >>> 31) << bit
    }
    out[offset + byte] = bits
  }
  out.fill(0, offset + used, offset + signBytesFor(length))
}

/** The sign bits of `count` packed vectors of `dimension` components. */
export function packSignBits(vectors: Int8Array, dimension: number, count: number): Uint8Array {
  const bytes = signBytesFor(dimension)
  const out = new Uint8Array(count * bytes)
  for (let index = 0; index < count; index++) writeSignBits(vectors.subarray(index * dimension, (index + 1) * dimension), out, index * bytes)
  return out
}
