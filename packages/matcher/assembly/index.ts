// The int8 cosine scan compiled to WASM SIMD (v128): the fallback when the native addon cannot
// load. Same export names and argument order as the napi addon, except that every array is a
// byte offset into the imported shared memory (the gallery's `WebAssembly.Memory`), plus an
// explicit probe count where the addon reads it from the typed array's length.
//
// Numerical contract (identical in the Rust kernels and the TypeScript reference):
// - elements are int8 in [-127, 127]; -128 never occurs (the TypeScript boundary rejects it);
// - a dot product accumulates in i32: |dot| <= d * 127^2 = 8,258,048 at d = 512, no overflow;
// - inside one 16-byte step two i8*i8 products are summed in an i16 lane before widening:
//   2 * 127^2 = 32,258 < 32,767, which is exactly why -128 (2 * 128^2 = 32,768) is excluded;
// - score = max(dot, 0) / sqrt(probeNormSq * rowNormSq) in f64 (0 when the product is 0);
//   the product is below 2^53 so it is exact, and sqrt and / are correctly rounded in IEEE 754,
//   so every backend produces the same bits;
// - ranking: higher score first, equal score -> lower row first (rows are visited in ascending
//   order and a new row only displaces on a strictly greater score).
// Layout: row r starts at gallery + r * strideInBytes; normsSquared is u32 per row, live is u8
// per row (0 = dead), both indexed by the same r. Outputs hold probeCount * k entries, best
// first; unused slots have row -1 and score 0.

const FILTER_MARGIN: f64 = 1.0 - 1e-9

// @ts-ignore: decorator
@inline
function dotInt8(a: usize, b: usize, length: i32): i32 {
  let accumulator0 = i32x4.splat(0)
  let accumulator1 = i32x4.splat(0)
  let index = 0
  // Two independent accumulators over 32 bytes hide the add latency.
  for (; index + 32 <= length; index += 32) {
    const a0 = v128.load(a + <usize>index)
    const b0 = v128.load(b + <usize>index)
    const a1 = v128.load(a + <usize>index, 16)
    const b1 = v128.load(b + <usize>index, 16)
    const pairs0 = i16x8.add(i16x8.extmul_low_i8x16_s(a0, b0), i16x8.extmul_high_i8x16_s(a0, b0))
    const pairs1 = i16x8.add(i16x8.extmul_low_i8x16_s(a1, b1), i16x8.extmul_high_i8x16_s(a1, b1))
    accumulator0 = i32x4.add(accumulator0, i32x4.extadd_pairwise_i16x8_s(pairs0))
    accumulator1 = i32x4.add(accumulator1, i32x4.extadd_pairwise_i16x8_s(pairs1))
  }
  for (; index + 16 <= length; index += 16) {
    const a0 = v128.load(a + <usize>index)
    const b0 = v128.load(b + <usize>index)
    const pairs0 = i16x8.add(i16x8.extmul_low_i8x16_s(a0, b0), i16x8.extmul_high_i8x16_s(a0, b0))
    accumulator0 = i32x4.add(accumulator0, i32x4.extadd_pairwise_i16x8_s(pairs0))
  }
  const total = i32x4.add(accumulator0, accumulator1)
  let sum = i32x4.extract_lane(total, 0) + i32x4.extract_lane(total, 1) +
    i32x4.extract_lane(total, 2) + i32x4.extract_lane(total, 3)
  for (; index < length; index++) {
    sum += <i32>load<i8>(a + <usize>index) * <i32>load<i8>(b + <usize>index)
  }
  return sum
}

/** Dot product of two int8 vectors of `length` elements at byte offsets `a` and `b`. */
export function dotI8(a: usize, b: usize, length: i32): i32 {
  return dotInt8(a, b, length)
}

/**
 * Reads `length` bytes at `offset` as fast as the engine allows and returns a checksum so the
 * loads cannot be optimised away: the memory-bandwidth floor the scan is compared against.
 */
export function streamRead(offset: usize, length: i32): i32 {
  let sum0 = i32x4.splat(0)
  let sum1 = i32x4.splat(0)
  let sum2 = i32x4.splat(0)
  let sum3 = i32x4.splat(0)
  let index = 0
  for (; index + 64 <= length; index += 64) {
    const at = offset + <usize>index
    sum0 = i32x4.add(sum0, v128.load(at))
    sum1 = i32x4.add(sum1, v128.load(at, 16))
    sum2 = i32x4.add(sum2, v128.load(at, 32))
    sum3 = i32x4.add(sum3, v128.load(at, 48))
  }
  const total = i32x4.add(i32x4.add(sum0, sum1), i32x4.add(sum2, sum3))
  let sum = i32x4.extract_lane(total, 0) ^ i32x4.extract_lane(total, 1) ^
    i32x4.extract_lane(total, 2) ^ i32x4.extract_lane(total, 3)
  for (; index < length; index++) sum += <i32>load<i8>(offset + <usize>index)
  return sum
}

/**
 * Scans rows [rowStart, rowEnd) for `probeCount` probes and keeps each probe's best `k` rows.
 * See the contract at the top of this file; the caller guarantees that every offset and range
 * lies inside the memory (the TypeScript boundary validates, the kernel does not).
 */
export function scanTopK(
  gallery: usize, strideInBytes: i32, dimension: i32, rowStart: i32, rowEnd: i32,
  normsSquared: usize, live: usize, probes: usize, probeNormsSquared: usize, probeCount: i32,
  k: i32, outRows: usize, outScores: usize,
): void {
  const slots = probeCount * k
  for (let slot = 0; slot < slots; slot++) {
    store<i32>(outRows + (<usize>slot << 2), -1)
    store<f64>(outScores + (<usize>slot << 3), 0.0)
  }
  if (k <= 0) return
  for (let row = rowStart; row < rowEnd; row++) {
    if (load<u8>(live + <usize>row) == 0) continue
    const rowAt = gallery + <usize>row * <usize>strideInBytes
    const rowNormSquared = <f64>load<u32>(normsSquared + (<usize>row << 2))
    for (let probe = 0; probe < probeCount; probe++) {
      const dot = dotInt8(rowAt, probes + <usize>probe * <usize>dimension, dimension)
      const first = probe * k
      const lastRowAt = outRows + (<usize>(first + k - 1) << 2)
      const full = load<i32>(lastRowAt) >= 0
      // A full list already holds scores >= 0 from lower rows, and a tie never displaces.
      if (full && dot <= 0) continue
      const product = <f64>load<u32>(probeNormsSquared + (<usize>probe << 2)) * rowNormSquared
      const worst = load<f64>(outScores + (<usize>(first + k - 1) << 3))
      // Cheap rejection before sqrt and division (as in the Rust scan): dot^2 and the product
      // are exact integers below 2^53, and the 1e-9 margin dwarfs the rounding of the right
      // side, so a row dropped here scores strictly below `worst`: results do not change.
      if (full && <f64>dot * <f64>dot < worst * worst * product * FILTER_MARGIN) continue
      const score = product == 0.0 ? 0.0 : <f64>max(dot, 0) / Math.sqrt(product)
      if (full && score <= worst) continue
      // Insertion into the sorted list: shift worse entries down one slot.
      let position = first + k - 1
      while (position > first) {
        const previous = position - 1
        const previousRow = load<i32>(outRows + (<usize>previous << 2))
        if (previousRow >= 0 && load<f64>(outScores + (<usize>previous << 3)) >= score) break
        store<i32>(outRows + (<usize>position << 2), previousRow)
        store<f64>(outScores + (<usize>position << 3), load<f64>(outScores + (<usize>previous << 3)))
        position = previous
      }
      store<i32>(outRows + (<usize>position << 2), row)
      store<f64>(outScores + (<usize>position << 3), score)
    }
  }
}

// @ts-ignore: decorator
@inline
function hamming(a: usize, b: usize, bytes: i32): i32 {
  // i8x16.popcnt counts each byte's bits; pairwise widening into i16 lanes cannot overflow
  // (at most 16 bits per lane per step, 32 steps at the largest dimension).
  let counts = i16x8.splat(0)
  let index = 0
  for (; index + 16 <= bytes; index += 16) {
    const difference = v128.xor(v128.load(a + <usize>index), v128.load(b + <usize>index))
    counts = i16x8.add(counts, i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(difference)))
  }
  const wide = i32x4.extadd_pairwise_i16x8_u(counts)
  let sum = i32x4.extract_lane(wide, 0) + i32x4.extract_lane(wide, 1) +
    i32x4.extract_lane(wide, 2) + i32x4.extract_lane(wide, 3)
  for (; index + 8 <= bytes; index += 8) {
    sum += <i32>popcnt<u64>(load<u64>(a + <usize>index) ^ load<u64>(b + <usize>index))
  }
  return sum
}

/** Hamming distance of two bit strings of `bytes` bytes (a multiple of 8) at `a` and `b`. */
export function hammingDistance(a: usize, b: usize, bytes: i32): i32 {
  return hamming(a, b, bytes)
}

/**
 * Stage 1 of a two-stage search over one piece (same contract as the addon's
 * `mergeNearestBySignBits`): merges the live rows of [rowStart, rowEnd), written as baseRow + row,
 * into each probe's list of the `c` rows nearest in Hamming distance over their sign bits:
 * nearest first, ties by lower row; unused slots hold row -1 and distance 0xFFFFFFFF.
 */
export function mergeNearestBySignBits(
  bits: usize, bitsStride: i32, signBytes: i32, rowStart: i32, rowEnd: i32, baseRow: i32, live: usize,
  probeBits: usize, probeCount: i32, c: i32, outRows: usize, outDistances: usize,
): void {
  const slots = probeCount * c
  if (c <= 0) return
  // Unused slots hold 0xFFFFFFFF, above every distance, so insertion passes them by.
  for (let slot = 0; slot < slots; slot++) {
    if (load<i32>(outRows + (<usize>slot << 2)) < 0) store<u32>(outDistances + (<usize>slot << 2), 0xFFFFFFFF)
  }
  for (let row = rowStart; row < rowEnd; row++) {
    if (load<u8>(live + <usize>row) == 0) continue
    const rowAt = bits + <usize>row * <usize>bitsStride
    const absolute = baseRow + row
    for (let probe = 0; probe < probeCount; probe++) {
      const distance = <u32>hamming(rowAt, probeBits + <usize>probe * <usize>signBytes, signBytes)
      const first = probe * c
      if (!nearer(distance, absolute, outRows, outDistances, first + c - 1)) continue
      let position = first + c - 1
      while (position > first) {
        const previous = position - 1
        if (!nearer(distance, absolute, outRows, outDistances, previous)) break
        store<u32>(outDistances + (<usize>position << 2), load<u32>(outDistances + (<usize>previous << 2)))
        store<i32>(outRows + (<usize>position << 2), load<i32>(outRows + (<usize>previous << 2)))
        position = previous
      }
      store<u32>(outDistances + (<usize>position << 2), distance)
      store<i32>(outRows + (<usize>position << 2), absolute)
    }
  }
}

/** Stage 1's order: whether (distance, row) goes before the list's slot; an unused slot is last. */
@inline
function nearer(distance: u32, row: i32, outRows: usize, outDistances: usize, slot: i32): bool {
  const slotRow = load<i32>(outRows + (<usize>slot << 2))
  const slotDistance = load<u32>(outDistances + (<usize>slot << 2))
  return slotRow < 0 || distance < slotDistance || (distance == slotDistance && row < slotRow)
}

/** Stage 2 (the addon's `scorePairs`): the exact score of row pairRows[i] for probe pairProbes[i]. */
export function scorePairs(
  gallery: usize, strideInBytes: i32, dimension: i32, normsSquared: usize, pairRows: usize,
  pairProbes: usize, pairCount: i32, probes: usize, probeNormsSquared: usize, outScores: usize,
): void {
  for (let pair = 0; pair < pairCount; pair++) {
    const row = load<i32>(pairRows + (<usize>pair << 2))
    const probe = load<u32>(pairProbes + (<usize>pair << 2))
    const dot = dotInt8(gallery + <usize>row * <usize>strideInBytes, probes + <usize>probe * <usize>dimension, dimension)
    const product = <f64>load<u32>(probeNormsSquared + (<usize>probe << 2)) * <f64>load<u32>(normsSquared + (<usize>row << 2))
    store<f64>(outScores + (<usize>pair << 3), product == 0.0 ? 0.0 : <f64>max(dot, 0) / Math.sqrt(product))
  }
}
