//! AVX2 kernels on 256-bit registers. The single dot and the one-probe tile use `vpmaddubsw` +
//! `vpmaddwd`; the tiles of several probes read them widened to i16 once per scan and use
//! `vpmaddwd` alone (see `half`).

use std::arch::x86_64::*;

use super::dot_ymm::{dot_ymm, YmmDotStep};
use super::encoded_probes::{split_offset, ProbeEncoding, SPLIT_STEP, WIDE_STEP};
use super::tile_x86::{store_sums_8_ymm, stream_read_avx2};
use super::{Isa, Kernels};

pub(crate) static KERNELS: Kernels = Kernels {
    isa: Isa::Avx2,
    dot: dot_raw,
    tile_16x1: dot_tile_16x1_avx2,
    tile_8x2: dot_tile_i8_avx2::<8, 2, 4>,
    tile_4x4: dot_tile_i8_avx2::<4, 4, 2>,
    tile_16x16: None,
    probe_encoding: ProbeEncoding::Int16,
    stream_read: stream_read_avx2,
};

/// Exact dot product of the common prefix of `a` and `b` (see the contract in `kernel`).
///
/// # Safety
/// The CPU supports AVX2.
pub unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: the CPU feature is the caller's promise; both slices hold the length passed.
    unsafe { dot_raw(a.as_ptr(), b.as_ptr(), a.len().min(b.len())) }
}

/// AVX2's step of the single dot: `vpmaddubsw(|a|, sign(b, a))` adds pairs of products into i16,
/// at most `2 * 127 * 127 = 32258`, so it never saturates (no `-128`); `vpmaddwd` by ones
/// widens the pairs into i32.
struct Avx2;

impl YmmDotStep for Avx2 {
    #[inline(always)]
    unsafe fn multiply_add(accumulator: __m256i, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the caller's promise of AVX2.
        unsafe {
            let pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(a), _mm256_sign_epi8(b, a));
            _mm256_add_epi32(accumulator, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn dot_raw(a: *const i8, b: *const i8, length: usize) -> i32 {
    // SAFETY: compiled for the ISA here, which the caller promises; pointers forwarded.
    unsafe { dot_ymm::<Avx2>(a, b, length) }
}

/// The one-probe tile, as two halves of 8 rows. Each 32-byte step is `vpsignb` of the row by the
/// probe, `vpmaddubsw` with `|p|` and `vpmaddwd` by ones (see `Avx2::multiply_add`), with `|p|` made
/// once per scan: 4 instructions per 32 pairs, where the widened form needs 6 (two widenings, two
/// `vpmaddwd`, two adds) and one probe amortizes no widening. Forced AVX2 on Zen 5, one probe
/// over 1M x 256 on one thread (`npm run bench:matcher`): 10.70 ms widened, 1.37x the time to read
/// the rows; 8.39 ms this way, 1.09x.
///
/// # Safety
/// See [`super::TileFn`]; the CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn dot_tile_16x1_avx2(
    rows: &[*const i8; 16],
    probes: &[*const i8; 1],
    _probe_sums: &[i32; 1],
    dimension: usize,
) -> [[i32; 1]; 16] {
    // SAFETY: an Int16 probe holds its `|p|` and `p` bytes at these offsets (encoded_probes).
    let (magnitudes, values) = unsafe {
        let magnitudes = probes[0].add(split_offset(dimension));
        (
            magnitudes,
            magnitudes.add(dimension.div_ceil(SPLIT_STEP) * SPLIT_STEP),
        )
    };
    let mut dots = [[0i32; 1]; 16];
    for (half, out) in rows.chunks_exact(8).zip(dots.chunks_exact_mut(8)) {
        let half: &[*const i8; 8] = half.try_into().expect("16 rows are two halves of 8");
        // SAFETY: forwarded caller contract; `out` is 8 contiguous i32.
        unsafe { one_probe_half(half, magnitudes, values, dimension, out.as_mut_ptr().cast()) };
    }
    dots
}

/// Writes the 8 rows' dots with the probe to `out`, reading 4 rows side by side (as `half`).
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn one_probe_half(
    rows: &[*const i8; 8],
    magnitudes: *const i8,
    values: *const i8,
    dimension: usize,
    out: *mut i32,
) {
    let mut accumulators = [_mm256_setzero_si256(); 8];
    let full = dimension - dimension % SPLIT_STEP;
    // SAFETY (the loads): every row holds `row_offset + SPLIT_STEP` bytes, the probe's byte
    // forms `probe_offset + SPLIT_STEP` (rounded up with zeros).
    let step = |accumulators: &mut [__m256i; 8],
                rows: &[*const i8; 4],
                first: usize,
                row_offset: usize,
                probe_offset: usize| unsafe {
        let magnitude = _mm256_loadu_si256(magnitudes.add(probe_offset).cast());
        let value = _mm256_loadu_si256(values.add(probe_offset).cast());
        for (index, &row) in rows.iter().enumerate() {
            let row = _mm256_loadu_si256(row.add(row_offset).cast());
            let pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(row, value));
            accumulators[first + index] = _mm256_add_epi32(
                accumulators[first + index],
                _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)),
            );
        }
    };
    for first in [0, 4] {
        let pass: [*const i8; 4] = std::array::from_fn(|index| rows[first + index]);
        let mut offset = 0;
        while offset < full {
            step(&mut accumulators, &pass, first, offset, offset);
            offset += SPLIT_STEP;
        }
        if full < dimension {
            let tail = dimension - full;
            let copies: [[i8; SPLIT_STEP]; 4] = std::array::from_fn(|index| {
                let mut copy = [0i8; SPLIT_STEP];
                // SAFETY: `full + tail == dimension` bytes are valid behind the row pointer.
                copy[..tail].copy_from_slice(unsafe {
                    std::slice::from_raw_parts(pass[index].add(full), tail)
                });
                copy
            });
            let padded: [*const i8; 4] = std::array::from_fn(|index| copies[index].as_ptr());
            step(&mut accumulators, &padded, first, 0, full);
        }
    }
    // SAFETY: the caller passes room for 8 sums.
    unsafe { store_sums_8_ymm(&accumulators, _mm256_setzero_si256(), out) };
}

/// The tiles of two and four probes, as two halves of `RH` rows x `P` probes (8 accumulators, the
/// row vectors and one probe vector fit the 16 ymm registers). Probes are [`ProbeEncoding::Int16`].
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
    const { assert!(R == 2 * RH && RH * P == 8 && P >= 2) };
    let probes: [*const i16; P] = std::array::from_fn(|index| probes[index].cast::<i16>());
    let low: [*const i8; RH] = std::array::from_fn(|index| rows[index]);
    let high: [*const i8; RH] = std::array::from_fn(|index| rows[RH + index]);
    let mut dots = [[0i32; P]; R];
    let (low_dots, high_dots) = dots.split_at_mut(RH);
    // SAFETY: forwarded caller contract; each half of `dots` is RH * P = 8 contiguous i32.
    unsafe {
        half::<RH, P>(&low, &probes, dimension, low_dots.as_mut_ptr().cast());
        half::<RH, P>(&high, &probes, dimension, high_dots.as_mut_ptr().cast());
    }
    dots
}

/// Writes the `RH x P` dots to `out`, row-major. Each step widens 16 elements of every row to i16
/// and multiplies them with each probe's widened elements by `vpmaddwd` (products at most 16129,
/// pairs at most 32258 in i32: exact). That is one multiply per 16 pairs and no `abs`/`sign` per
/// row x probe, where the i8 form (`vpmaddubsw` then `vpmaddwd` by ones) needs two multiplies per
/// 32 pairs plus a `sign`. Not inlined: inlined twice into the tile, LLVM kept the first half's
/// accumulators in memory (see `multiply_step` for the other way they spilled).
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn half<const RH: usize, const P: usize>(
    rows: &[*const i8; RH],
    probes: &[*const i16; P],
    dimension: usize,
    out: *mut i32,
) {
    let mut accumulators = [[_mm256_setzero_si256(); P]; RH];
    // At most 4 rows are read side by side (with two probes or more, a half has at most 4 rows).
    // Reading 8 rows at once measured 18.5-19 ms for one probe over 1M rows on Zen 1, 4 at once
    // 17.0-17.7 ms.
    let pass_rows = 0..RH;
    let full = dimension - dimension % WIDE_STEP;
    let mut offset = 0;
    while offset < full {
        // SAFETY: `offset + WIDE_STEP <= dimension`: every row holds `dimension` bytes, every
        // probe at least that many elements.
        unsafe {
            multiply_step(
                &mut accumulators,
                rows,
                pass_rows.clone(),
                offset,
                probes,
                offset,
            )
        };
        offset += WIDE_STEP;
    }
    if full < dimension {
        let tail = dimension - full;
        let copies: [[i8; WIDE_STEP]; RH] = std::array::from_fn(|index| {
            let mut copy = [0i8; WIDE_STEP];
            // SAFETY: `full + tail == dimension` bytes are valid behind the row pointer.
            copy[..tail].copy_from_slice(unsafe {
                std::slice::from_raw_parts(rows[index].add(full), tail)
            });
            copy
        });
        let padded: [*const i8; RH] = std::array::from_fn(|index| copies[index].as_ptr());
        // SAFETY: the copies are WIDE_STEP bytes; a probe holds `dimension` rounded up to
        // WIDE_STEP elements, zeros past `dimension`.
        unsafe { multiply_step(&mut accumulators, &padded, pass_rows, 0, probes, full) };
    }
    let flat: [__m256i; 8] = std::array::from_fn(|index| accumulators[index / P][index % P]);
    // SAFETY: the caller passes room for RH * P = 8 sums.
    unsafe { store_sums_8_ymm(&flat, _mm256_setzero_si256(), out) };
}

/// Adds one step's products, holding the fewer of rows and probes in registers and streaming the
/// other one vector at a time, so 8 accumulators + the few + one fit the 16 registers. Holding all
/// 4 probes of the 4x4 tile spilled an accumulator, and the loop then waited on store forwarding
/// (batch 16 over 1M rows: 98 ms, 78 without the spill).
///
/// # Safety
/// Every row pointer is valid for `row_offset + WIDE_STEP` bytes, every probe for
/// `probe_offset + WIDE_STEP` elements; the CPU supports AVX2.
#[inline(always)]
unsafe fn multiply_step<const RH: usize, const P: usize>(
    accumulators: &mut [[__m256i; P]; RH],
    rows: &[*const i8; RH],
    pass_rows: std::ops::Range<usize>,
    row_offset: usize,
    probes: &[*const i16; P],
    probe_offset: usize,
) {
    // SAFETY (the loads below): the caller's promise.
    let row = |index: usize| unsafe {
        _mm256_cvtepi8_epi16(_mm_loadu_si128(rows[index].add(row_offset).cast()))
    };
    let probe =
        |pointer: *const i16| unsafe { _mm256_loadu_si256(pointer.add(probe_offset).cast()) };
    // SAFETY: the caller's promise of AVX2.
    let add = |accumulator: &mut __m256i, row: __m256i, probe: __m256i| unsafe {
        *accumulator = _mm256_add_epi32(*accumulator, _mm256_madd_epi16(row, probe));
    };
    if pass_rows.len() > P {
        let probe_vectors: [__m256i; P] = probes.map(probe);
        for row_index in pass_rows {
            let row_vector = row(row_index);
            for (accumulator, probe_vector) in
                accumulators[row_index].iter_mut().zip(&probe_vectors)
            {
                add(accumulator, row_vector, *probe_vector);
            }
        }
    } else {
        // Here the pass is every row of the half (at most 4), so all of them are loaded once.
        debug_assert_eq!(pass_rows.len(), RH);
        let row_vectors: [__m256i; RH] = std::array::from_fn(row);
        for (probe_index, &pointer) in probes.iter().enumerate() {
            let probe_vector = probe(pointer);
            for row_index in pass_rows.clone() {
                add(
                    &mut accumulators[row_index][probe_index],
                    row_vectors[row_index],
                    probe_vector,
                );
            }
        }
    }
}
