// A page of int8 rows checked and prepared in one pass for a bulk load (gallery.upsertRows): each
// row's squared norm and sign bits, refusing a -128 component or an all-zero row as upsert does.
// Word by word where the layout allows (dimension a multiple of 8, the vectors 4-byte aligned):
// a row a call with subarray views cost ~5 µs, most of a million-row boot's load.
import { normSquaredInt8 } from './quantize.js'
import { signBytesFor, writeSignBits } from './sign-bits.js'
import { TemplateError } from './template.js'

export interface PreparedRows {
  norms: Uint32Array
  signBits: Uint8Array
}

const outOfRange = (row: number) => new TemplateError('element_out_of_range', `row ${row} has a -128 component; int8 vectors are symmetric (-127..127)`)
const zero = (row: number) => new TemplateError('zero_vector', `row ${row} is all zeros`)

/** The norms and sign bits of `count` packed rows of `dimension` components; throws before anything when a row is not acceptable. */
export function prepareRows(vectors: Int8Array, dimension: number, count: number): PreparedRows {
  const signBytes = signBytesFor(dimension)
  const norms = new Uint32Array(count)
  const signBits = new Uint8Array(count * signBytes)
  if (dimension % 8 !== 0 || vectors.byteOffset % 4 !== 0) {
    for (let row = 0; row < count; row++) {
      const vector = vectors.subarray(row * dimension, (row + 1) * dimension)
      if (vector.includes(-128)) throw outOfRange(row)
      norms[row] = normSquaredInt8(vector)
      if (norms[row] === 0) throw zero(row)
      writeSignBits(vector, signBits, row * signBytes)
    }
    return { norms, signBits }
  }
  const words = new Int32Array(vectors.buffer, vectors.byteOffset, (count * dimension) / 4)
  const wordsPerRow = dimension / 4
  for (let row = 0; row < count; row++) {
    const from = row * wordsPerRow
    const bitsAt = row * signBytes
    let sum = 0
    let minus128 = 0
    for (let word = 0; word < wordsPerRow; word += 2) {
      const a = words[from + word]
      const b = words[from + word + 1]
      const a0 = (a << 24) >> 24
      const a1 = (a << 16) >> 24
      const a2 = (a << 8) >> 24
      const a3 = a >> 24
      const b0 = (b << 24) >> 24
      const b1 = (b << 16) >> 24
      const b2 = (b << 8) >> 24
      const b3 = b >> 24
      sum += a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3 + b0 * b0 + b1 * b1 + b2 * b2 + b3 * b3
      // A byte of 0x80 (-128): after xor with 0x80 it is the only zero byte the classic test finds.
      const ax = a ^ 0x80808080
      const bx = b ^ 0x80808080
      minus128 |= ((ax - 0x01010101) & ~ax & 0x80808080) | ((bx - 0x01010101) & ~bx & 0x80808080)
      // Bit j of the row's bits: component j's sign, bit 7 of its byte (little-endian words).
      signBits[bitsAt + (word >> 1)] =
        ((a >>> 7) & 1) | ((a >>> 14) & 2) | ((a >>> 21) & 4) | ((a >>> 28) & 8) | ((b >>> 3) & 16) | ((b >>> 10) & 32) | ((b >>> 17) & 64) | ((b >>> 24) & 128)
    }
    if (minus128 !== 0) throw outOfRange(row)
    if (sum === 0) throw zero(row)
    norms[row] = sum
  }
  return { norms, signBits }
}
