//! AVX-512 VNNI kernels (`vpdpbusd` on 512-bit registers, masked loads for the tails).

use std::arch::x86_64::*;

use super::encoded_probes::{INTERLEAVED_PROBES, INTERLEAVED_WORD};
use super::tile_x86::{bias_16_lanes, for_each_word, reduce_16_zmm};
use super::{stream_read_tail, BlockGate, Isa, Kernels, ProbeEncoding};

pub(crate) static KERNELS: Kernels = Kernels {
    isa: Isa::Avx512Vnni,
    dot: dot_raw,
    tile_16x1: dot_tile_i8_avx512vnni::<16, 1>,
    tile_8x2: dot_tile_i8_avx512vnni::<8, 2>,
    tile_4x4: dot_tile_i8_avx512vnni::<4, 4>,
    tile_16x16: Some(dot_tile_interleaved_avx512vnni),
    probe_encoding: ProbeEncoding::Int8,
    stream_read: stream_read_raw,
};

const LANE: usize = 64;

/// Exact dot product of the common prefix of `a` and `b` (see the contract in `kernel`).
///
/// # Safety
/// The CPU supports AVX-512 F, BW and VNNI.
pub unsafe fn dot_i8_avx512vnni(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: the CPU features are the caller's promise; both slices hold the length passed.
    unsafe { dot_raw(a.as_ptr(), b.as_ptr(), a.len().min(b.len())) }
}

/// A plain load when every byte is wanted, a masked (fault-suppressing) one otherwise.
///
/// # Safety
/// The bytes selected by `mask` are readable; the CPU supports AVX-512 F and BW.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load(mask: __mmask64, pointer: *const i8) -> __m512i {
    if mask == !0 {
        // SAFETY: all 64 bytes are readable (caller).
        unsafe { _mm512_loadu_si512(pointer.cast()) }
    } else {
        // SAFETY: the selected bytes are readable (caller); the others are not accessed.
        unsafe { _mm512_maskz_loadu_epi8(mask, pointer) }
    }
}

fn tail_mask(remaining: usize) -> __mmask64 {
    if remaining >= LANE {
        !0
    } else {
        (1u64 << remaining) - 1
    }
}

/// `a . b = |a| . (sign(a) * b)`: `|a| <= 127` is a valid u8 operand and `-b` cannot overflow
/// because `b != -128`, so `vpdpbusd` (u8 x i8, wrapping i32) is exact.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dot_raw(a: *const i8, b: *const i8, length: usize) -> i32 {
    let zero = _mm512_setzero_si512();
    let mut accumulator = zero;
    let mut offset = 0;
    while offset < length {
        let mask = tail_mask(length - offset);
        // SAFETY: the mask covers only bytes below `length`; masked-out bytes are not accessed
        // (AVX-512 masked loads suppress faults), and both pointers are valid for `length` bytes.
        let (a_vector, b_vector) = unsafe {
            (
                _mm512_maskz_loadu_epi8(mask, a.add(offset)),
                _mm512_maskz_loadu_epi8(mask, b.add(offset)),
            )
        };
        let negative = _mm512_movepi8_mask(a_vector);
        let signed_b = _mm512_mask_sub_epi8(b_vector, negative, zero, b_vector);
        accumulator = _mm512_dpbusd_epi32(accumulator, _mm512_abs_epi8(a_vector), signed_b);
        offset += LANE;
    }
    _mm512_reduce_add_epi32(accumulator)
}

/// The scan's tile: rows are biased to unsigned once per chunk (`row ^ 0x80 = row + 128`) and
/// shared by every probe, so each (row, probe) pair costs one `vpdpbusd` per 64 bytes; the bias
/// is removed at the end by subtracting `128 * sum(probe)`.
///
/// # Safety
/// See [`super::TileFn`]; the CPU supports AVX-512 F, BW and VNNI.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dot_tile_i8_avx512vnni<const R: usize, const P: usize>(
    rows: &[*const i8; R],
    probes: &[*const i8; P],
    probe_sums: &[i32; P],
    dimension: usize,
) -> [[i32; P]; R] {
    const { assert!(R * P == 16) };
    let bias = _mm512_set1_epi8(i8::MIN);
    let mut accumulators = [[_mm512_setzero_si512(); P]; R];
    // Chunk-major (one 64-byte column of all R rows, then the next): measured faster than
    // row-by-row order on the single-probe scan. Full chunks use plain loads, the tail masked
    // ones.
    let mut step = |mask: __mmask64, offset: usize| {
        let mut probe_vectors = [_mm512_setzero_si512(); P];
        for (vector, probe) in probe_vectors.iter_mut().zip(probes) {
            // SAFETY: the mask covers only bytes below `dimension`, for which the pointer is
            // valid; masked-out bytes are not accessed (AVX-512 masked loads suppress faults).
            *vector = unsafe { load(mask, probe.add(offset)) };
        }
        for (row_accumulators, row) in accumulators.iter_mut().zip(rows) {
            // SAFETY: as above, for the row pointer.
            let row_vector = unsafe { load(mask, row.add(offset)) };
            // Masked-out bytes become 0 ^ 0x80 = 128, multiplied by a masked-out probe byte 0.
            let row_unsigned = _mm512_xor_si512(row_vector, bias);
            for (accumulator, probe_vector) in row_accumulators.iter_mut().zip(&probe_vectors) {
                *accumulator = _mm512_dpbusd_epi32(*accumulator, row_unsigned, *probe_vector);
            }
        }
    };
    let full = dimension - dimension % LANE;
    let mut offset = 0;
    while offset < full {
        step(!0, offset);
        offset += LANE;
    }
    if full < dimension {
        step(tail_mask(dimension - full), full);
    }
    let flat: [__m512i; 16] = std::array::from_fn(|index| accumulators[index / P][index % P]);
    // Accumulator `j` sits in lane `4 * (j % 4) + j / 4` of the reduction; one permute puts the
    // dots in order and one store writes them all (element-wise stores, reloaded as vectors by
    // the caller, stalled store forwarding). Lane j is probe j % P, whose bias comes off.
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let sums = _mm512_permutexvar_epi32(order, reduce_16_zmm(&flat));
    // SAFETY: P is 1, 2 or 4 (R * P == 16).
    let dots = _mm512_sub_epi32(sums, unsafe { bias_16_lanes(probe_sums) });
    let mut out = [[0i32; P]; R];
    // SAFETY: `out` is R * P = 16 contiguous i32.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), dots) };
    out
}

/// The batch tile: 16 rows x 16 interleaved probes (word `w` of probe `p` at byte `64 w + 4 p`).
/// Here the probes are the unsigned side (`probe ^ 0x80 = probe + 128`, once per word for all
/// rows) and a row's word is the signed one, broadcast from memory inside the `vpdpbusd`
/// (`{1to16}`): one instruction adds a row word into all 16 probes' dots (lane `p` of accumulator
/// `r`), with no broadcast shuffle or bias `xor` per row word (those held it at 17.4 ms for a
/// batch of 16 over 1M rows on Zen 5; 15.3 without), and no horizontal sums. `128 * sum(row)`
/// comes off at the end; the row sums take one `vpdpbusd` by ones per 64 bytes of each row.
///
/// # Safety
/// See [`super::InterleavedTileFn`] (the probe sums are not needed here); the CPU supports
/// AVX-512 F, BW and VNNI.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dot_tile_interleaved_avx512vnni(
    rows: &[*const i8; 16],
    probes: *const i8,
    _probe_sums: &[i32; INTERLEAVED_PROBES],
    dimension: usize,
    gate: &BlockGate,
    dots: &mut [[i32; INTERLEAVED_PROBES]; 16],
) -> u16 {
    const WORD: usize = INTERLEAVED_WORD;
    const STEP: usize = WORD * INTERLEAVED_PROBES;
    // SAFETY: every row pointer is valid for `dimension` bytes (caller).
    let row_sums = unsafe { row_sums_16(rows, dimension) };
    let mut accumulators = [_mm512_setzero_si512(); 16];
    // SAFETY: each row pointer is valid for `dimension` bytes, every offset passed is of a word
    // inside them, and the interleaved probes hold `dimension.div_ceil(WORD)` steps.
    unsafe {
        for_each_word(rows, dimension, |rows, offset, word| {
            interleaved_step(&mut accumulators, probes.add(STEP * word), rows, offset)
        })
    };
    // SAFETY: the gate roots are 16 f32.
    let gate_roots = unsafe { _mm512_loadu_ps(gate.gate_roots.as_ptr()) };
    let mut passing = 0u16;
    for (row, (row_dots, accumulator)) in dots.iter_mut().zip(accumulators).enumerate() {
        // Wrapping `* 128`, as in the contract's bound.
        let dot = _mm512_sub_epi32(accumulator, _mm512_set1_epi32(row_sums[row] << 7));
        // SAFETY: each row of `dots` is 16 i32.
        unsafe { _mm512_storeu_si512(row_dots.as_mut_ptr().cast(), dot) };
        let limit = _mm512_mul_ps(gate_roots, _mm512_set1_ps(gate.norm_roots[row]));
        let passes = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(_mm512_cvtepi32_ps(dot), limit);
        passing |= u16::from(passes != 0) << row;
    }
    passing
}

/// One word of the interleaved tile: the 16 probes' words, biased to unsigned, times each row's
/// word at `offset`, broadcast by the `vpdpbusd` itself.
///
/// # Safety
/// `probes` is valid for 64 bytes of reads and each row for 4 from `offset`; the CPU supports
/// AVX-512 F, BW and VNNI.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn interleaved_step(
    accumulators: &mut [__m512i; 16],
    probes: *const i8,
    rows: &[*const i8; 16],
    offset: usize,
) {
    // SAFETY: the caller's promise.
    let probe_vector = unsafe { _mm512_loadu_si512(probes.cast()) };
    let unsigned = _mm512_xor_si512(probe_vector, _mm512_set1_epi8(i8::MIN));
    for (accumulator, row) in accumulators.iter_mut().zip(rows) {
        // SAFETY: the caller's promise.
        let word = unsafe { std::ptr::read_unaligned(row.add(offset).cast::<i32>()) };
        *accumulator = _mm512_dpbusd_epi32(*accumulator, unsigned, _mm512_set1_epi32(word));
    }
}

/// The element sums of 16 rows: `vpdpbusd` of ones (u8) by the row (i8), masked tail loads.
///
/// # Safety
/// Every row pointer is valid for `dimension` bytes; the CPU supports AVX-512 F, BW and VNNI.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn row_sums_16(rows: &[*const i8; 16], dimension: usize) -> [i32; 16] {
    let ones = _mm512_set1_epi8(1);
    let mut sums = [_mm512_setzero_si512(); 16];
    let mut offset = 0;
    while offset < dimension {
        let mask = tail_mask(dimension - offset);
        for (sum, row) in sums.iter_mut().zip(rows) {
            // SAFETY: the mask covers only bytes below `dimension` (see `load`).
            let vector = unsafe { load(mask, row.add(offset)) };
            *sum = _mm512_dpbusd_epi32(*sum, ones, vector);
        }
        offset += LANE;
    }
    // Accumulator `j` sits in lane `4 * (j % 4) + j / 4` of the reduction.
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let reduced = _mm512_permutexvar_epi32(order, reduce_16_zmm(&sums));
    let mut out = [0i32; 16];
    // SAFETY: `out` is 16 writable i32.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), reduced) };
    out
}

/// # Safety
/// The CPU supports AVX-512 F; `bytes` is valid for `length` bytes of reads.
#[target_feature(enable = "avx512f")]
unsafe fn stream_read_raw(bytes: *const u8, length: usize) -> u64 {
    let mut folds = [_mm512_setzero_si512(); 4];
    let mut offset = 0;
    while offset + 4 * LANE <= length {
        for (index, fold) in folds.iter_mut().enumerate() {
            // SAFETY: `offset + 4 * LANE <= length`, so all 64 bytes are inside the buffer.
            let vector = unsafe { _mm512_loadu_si512(bytes.add(offset + index * LANE).cast()) };
            *fold = _mm512_xor_si512(*fold, vector);
        }
        offset += 4 * LANE;
    }
    while offset + LANE <= length {
        // SAFETY: `offset + LANE <= length`.
        let vector = unsafe { _mm512_loadu_si512(bytes.add(offset).cast()) };
        folds[0] = _mm512_xor_si512(folds[0], vector);
        offset += LANE;
    }
    let folded = _mm512_xor_si512(
        _mm512_xor_si512(folds[0], folds[1]),
        _mm512_xor_si512(folds[2], folds[3]),
    );
    let mut words = [0u64; 8];
    // SAFETY: `words` is 64 writable bytes.
    unsafe { _mm512_storeu_si512(words.as_mut_ptr().cast(), folded) };
    // SAFETY: `offset <= length`; the rest of the buffer is valid for reads.
    let rest = unsafe { std::slice::from_raw_parts(bytes.add(offset), length - offset) };
    words
        .iter()
        .fold(stream_read_tail(rest), |checksum, word| checksum ^ word)
}
