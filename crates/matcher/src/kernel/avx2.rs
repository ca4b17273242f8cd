//! AVX2 kernels on 256-bit registers. The single dot uses `vpmaddubsw` + `vpmaddwd`; the scan
//! tiles read probes widened to i16 once per scan and use `vpmaddwd` alone (see `half`).

use std::arch::x86_64::*;

use super::encoded_probes::{ProbeEncoding, WIDE_STEP};
use super::tile_x86::{reduce_8_ymm, stream_read_avx2, ymm_lanes_in_accumulator_order};
use super::{scalar::dot_i8_scalar, Isa, Kernels};

pub(crate) static KERNELS: Kernels = Kernels {
    isa: Isa::Avx2,
    dot: dot_raw,
    tile_16x1: dot_tile_i8_avx2::<16, 1, 8>,
    tile_8x2: dot_tile_i8_avx2::<8, 2, 4>,
    tile_4x4: dot_tile_i8_avx2::<4, 4, 2>,
    probe_encoding: ProbeEncoding::Int16,
    // Measured on Zen 4: from 4 probes the tiles are compute-bound and software prefetches cost
    // more than they hide (batch 4: 28 -> 24 ms, batch 16: 78 -> 71 ms per 1M rows).
    prefetch_below_batch: 4,
    stream_read: stream_read_avx2,
};

const LANE: usize = 32;

/// Exact dot product of the common prefix of `a` and `b` (see the contract in `kernel`).
///
/// # Safety
/// The CPU supports AVX2.
pub unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: the CPU feature is the caller's promise; both slices hold the length passed.
    unsafe { dot_raw(a.as_ptr(), b.as_ptr(), a.len().min(b.len())) }
}

/// One 32-byte step of `a . b`: `vpmaddubsw(|a|, sign(b, a))` adds pairs of products into i16,
/// at most `2 * 127 * 127 = 32258`, so it never saturates (no `-128`); `vpmaddwd` by ones
/// widens the pairs into i32.
#[inline]
#[target_feature(enable = "avx2")]
fn multiply_add(accumulator: __m256i, a: __m256i, b: __m256i) -> __m256i {
    let pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(a), _mm256_sign_epi8(b, a));
    _mm256_add_epi32(accumulator, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
}

#[target_feature(enable = "avx2")]
unsafe fn dot_raw(a: *const i8, b: *const i8, length: usize) -> i32 {
    let mut accumulator = _mm256_setzero_si256();
    let mut offset = 0;
    while offset + LANE <= length {
        // SAFETY: `offset + LANE <= length` and both pointers are valid for `length` bytes.
        let (a_vector, b_vector) = unsafe {
            (
                _mm256_loadu_si256(a.add(offset).cast()),
                _mm256_loadu_si256(b.add(offset).cast()),
            )
        };
        accumulator = multiply_add(accumulator, a_vector, b_vector);
        offset += LANE;
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 writable bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), accumulator) };
    // SAFETY: `offset <= length`; both pointers are valid for `length` bytes.
    let (a_rest, b_rest) = unsafe {
        (
            std::slice::from_raw_parts(a.add(offset), length - offset),
            std::slice::from_raw_parts(b.add(offset), length - offset),
        )
    };
    lanes
        .iter()
        .fold(dot_i8_scalar(a_rest, b_rest), |sum, lane| {
            sum.wrapping_add(*lane)
        })
}

/// The scan's tile, as two halves of `RH` rows x `P` probes (8 accumulators, the row vectors and
/// one probe vector fit the 16 ymm registers). Probes are [`ProbeEncoding::Int16`].
///
/// # Safety
/// See [`super::TileFn`]; the CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn dot_tile_i8_avx2<const R: usize, const P: usize, const RH: usize>(
    rows: &[*const i8; R],
    probes: &[*const i8; P],
    _probe_sums: &[i32; P],
    dimension: usize,
) -> [[i32; P]; R] {
    const { assert!(R == 2 * RH && RH * P == 8) };
    let probes: [*const i16; P] = std::array::from_fn(|index| probes[index].cast::<i16>());
    let low: [*const i8; RH] = std::array::from_fn(|index| rows[index]);
    let high: [*const i8; RH] = std::array::from_fn(|index| rows[RH + index]);
    // SAFETY: forwarded caller contract.
    let (low, high) = unsafe {
        (
            half::<RH, P>(&low, &probes, dimension),
            half::<RH, P>(&high, &probes, dimension),
        )
    };
    std::array::from_fn(|row| if row < RH { low[row] } else { high[row - RH] })
}

/// Each step widens 16 elements of every row to i16 and multiplies them with each probe's
/// widened elements by `vpmaddwd` (products at most 16129, pairs at most 32258 in i32: exact).
/// That is one multiply per 16 pairs and no `abs`/`sign` per row x probe, where the i8 form
/// (`vpmaddubsw` then `vpmaddwd` by ones) needs two multiplies per 32 pairs plus a `sign`. Probes
/// are the outer loop inside a step: with rows outer, LLVM kept every probe vector live and
/// spilled an accumulator, and the loop then waited on store forwarding (78 -> 98 ms at batch 16).
// Not inlined: inlined twice into the tile, LLVM kept the first half's accumulators in memory.
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn half<const RH: usize, const P: usize>(
    rows: &[*const i8; RH],
    probes: &[*const i16; P],
    dimension: usize,
) -> [[i32; P]; RH] {
    let mut accumulators = [[_mm256_setzero_si256(); P]; RH];
    let full = dimension - dimension % WIDE_STEP;
    let mut offset = 0;
    while offset < full {
        // SAFETY: `offset + WIDE_STEP <= dimension`, and each row pointer is valid for `dimension`.
        let row_vectors = std::array::from_fn(|index| unsafe {
            _mm256_cvtepi8_epi16(_mm_loadu_si128(rows[index].add(offset).cast()))
        });
        // SAFETY: forwarded caller contract.
        unsafe { multiply_step(&mut accumulators, &row_vectors, probes, offset) };
        offset += WIDE_STEP;
    }
    if full < dimension {
        let tail = dimension - full;
        let row_vectors = std::array::from_fn(|index| {
            let mut copy = [0i8; WIDE_STEP];
            // SAFETY: `full + tail == dimension` bytes are valid behind the row pointer.
            copy[..tail].copy_from_slice(unsafe {
                std::slice::from_raw_parts(rows[index].add(full), tail)
            });
            // SAFETY: the copy is WIDE_STEP bytes long.
            unsafe { _mm256_cvtepi8_epi16(_mm_loadu_si128(copy.as_ptr().cast())) }
        });
        // SAFETY: forwarded caller contract.
        unsafe { multiply_step(&mut accumulators, &row_vectors, probes, full) };
    }
    let flat: [__m256i; 8] = std::array::from_fn(|index| accumulators[index / P][index % P]);
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 writable bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), reduce_8_ymm(&flat)) };
    let sums = ymm_lanes_in_accumulator_order(&lanes);
    std::array::from_fn(|row| std::array::from_fn(|probe| sums[row * P + probe]))
}

/// Adds one step's products: probes outer, so one probe vector is live at a time.
///
/// # Safety
/// Each Int16 probe holds at least `offset + WIDE_STEP` elements; the CPU supports AVX2.
#[inline(always)]
unsafe fn multiply_step<const RH: usize, const P: usize>(
    accumulators: &mut [[__m256i; P]; RH],
    row_vectors: &[__m256i; RH],
    probes: &[*const i16; P],
    offset: usize,
) {
    for (probe_index, probe) in probes.iter().enumerate() {
        // SAFETY: the caller's promise.
        let probe_vector = unsafe { _mm256_loadu_si256(probe.add(offset).cast()) };
        for (row_index, row_vector) in row_vectors.iter().enumerate() {
            let accumulator = &mut accumulators[row_index][probe_index];
            // SAFETY: the caller's promise of AVX2.
            *accumulator = unsafe {
                _mm256_add_epi32(*accumulator, _mm256_madd_epi16(*row_vector, probe_vector))
            };
        }
    }
}
