//! AVX-VNNI kernels (VEX-encoded `vpdpbusd` on 256-bit registers), for CPUs that have VNNI
//! without AVX-512 and as a comparison point on those that have both.

use std::arch::x86_64::*;

use super::dot_ymm::{dot_ymm, YmmDotStep};
use super::encoded_probes::{INTERLEAVED_PROBES, INTERLEAVED_WORD};
use super::tile_x86::{bias_8_lanes, for_each_word, store_sums_8_ymm, stream_read_avx2};
use super::{BlockGate, Isa, Kernels, ProbeEncoding};

pub(crate) static KERNELS: Kernels = Kernels {
    isa: Isa::AvxVnni,
    dot: dot_raw,
    tile_16x1: dot_tile_i8_avxvnni::<16, 1, 8>,
    tile_8x2: dot_tile_i8_avxvnni::<8, 2, 4>,
    tile_4x4: dot_tile_i8_avxvnni::<4, 4, 2>,
    tile_16x16: Some(dot_tile_interleaved_avxvnni),
    probe_encoding: ProbeEncoding::Int8,
    stream_read: stream_read_avx2,
};

const LANE: usize = 32;

/// Exact dot product of the common prefix of `a` and `b` (see the contract in `kernel`).
///
/// # Safety
/// The CPU supports AVX2 and AVX-VNNI.
pub unsafe fn dot_i8_avxvnni(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: the CPU feature is the caller's promise; both slices hold the length passed.
    unsafe { dot_raw(a.as_ptr(), b.as_ptr(), a.len().min(b.len())) }
}

/// AVX-VNNI's step of the single dot, `a . b = |a| . (sign(a) * b)`: `vpdpbusd` (u8 x i8, wrapping i32) is exact
/// because `|a| <= 127` and `-b` cannot overflow (no `-128`).
struct AvxVnni;

impl YmmDotStep for AvxVnni {
    #[inline(always)]
    unsafe fn multiply_add(accumulator: __m256i, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: the caller's promise of AVX2 and AVX-VNNI.
        unsafe { _mm256_dpbusd_avx_epi32(accumulator, _mm256_abs_epi8(a), _mm256_sign_epi8(b, a)) }
    }
}

/// One 32-byte step of the tile: `vpdpbusd(row ^ 0x80, probe)` adds `(row + 128) * probe`; the
/// caller removes `128 * sum(probe)` at the end. The biased row is shared by every probe.
#[inline]
#[target_feature(enable = "avx2,avxvnni")]
fn multiply_add_biased(accumulator: __m256i, row_unsigned: __m256i, probe: __m256i) -> __m256i {
    _mm256_dpbusd_avx_epi32(accumulator, row_unsigned, probe)
}

#[target_feature(enable = "avx2,avxvnni")]
unsafe fn dot_raw(a: *const i8, b: *const i8, length: usize) -> i32 {
    // SAFETY: compiled for the ISA here, which the caller promises; pointers forwarded.
    unsafe { dot_ymm::<AvxVnni>(a, b, length) }
}

/// The scan's tile (rows biased to unsigned, see `multiply_add_biased`), as two halves of `RH`
/// rows x `P` probes (8 accumulators fit the 16 ymm registers); a dimension tail is zero-padded
/// into stack copies and run as one more step.
///
/// # Safety
/// See [`super::TileFn`]; the CPU supports AVX2 and AVX-VNNI.
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn dot_tile_i8_avxvnni<const R: usize, const P: usize, const RH: usize>(
    rows: &[*const i8; R],
    probes: &[*const i8; P],
    probe_sums: &[i32; P],
    dimension: usize,
) -> [[i32; P]; R] {
    const { assert!(R == 2 * RH && RH * P == 8) };
    let low: [*const i8; RH] = std::array::from_fn(|index| rows[index]);
    let high: [*const i8; RH] = std::array::from_fn(|index| rows[RH + index]);
    // The biased rows add 128 * sum(probe) to every dot; lane j of a half's output is probe j % P.
    // SAFETY: P is 1, 2 or 4 (RH * P == 8).
    let bias = unsafe { bias_8_lanes(probe_sums) };
    let mut dots = [[0i32; P]; R];
    let (low_dots, high_dots) = dots.split_at_mut(RH);
    // SAFETY: forwarded caller contract; each half of `dots` is RH * P = 8 contiguous i32.
    unsafe {
        half::<RH, P>(&low, probes, dimension, bias, low_dots.as_mut_ptr().cast());
        half::<RH, P>(
            &high,
            probes,
            dimension,
            bias,
            high_dots.as_mut_ptr().cast(),
        );
    }
    dots
}

/// Writes the `RH x P` dots, minus `bias`, to `out`, row-major. Probes are the outer loop inside
/// a step and the function is not inlined, as in the AVX2 tile: otherwise LLVM kept probe
/// vectors live and spilled accumulators to the stack (a store-forwarding wait in the loop).
#[inline(never)]
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn half<const RH: usize, const P: usize>(
    rows: &[*const i8; RH],
    probes: &[*const i8; P],
    dimension: usize,
    bias: __m256i,
    out: *mut i32,
) {
    let unsigned = _mm256_set1_epi8(i8::MIN);
    let mut accumulators = [[_mm256_setzero_si256(); P]; RH];
    let full = dimension - dimension % LANE;
    let mut offset = 0;
    while offset < full {
        // SAFETY: `offset + LANE <= dimension`, and each row pointer is valid for `dimension`.
        let row_vectors: [__m256i; RH] = std::array::from_fn(|index| unsafe {
            _mm256_xor_si256(_mm256_loadu_si256(rows[index].add(offset).cast()), unsigned)
        });
        for (probe_index, probe) in probes.iter().enumerate() {
            // SAFETY: as above, for the probe pointer.
            let probe_vector = unsafe { _mm256_loadu_si256(probe.add(offset).cast()) };
            for (row_index, row_unsigned) in row_vectors.iter().enumerate() {
                let accumulator = &mut accumulators[row_index][probe_index];
                *accumulator = multiply_add_biased(*accumulator, *row_unsigned, probe_vector);
            }
        }
        offset += LANE;
    }
    if full < dimension {
        let tail = dimension - full;
        let padded = |pointer: *const i8| {
            let mut copy = [0i8; LANE];
            // SAFETY: `full + tail == dimension` bytes are valid behind the pointer.
            copy[..tail]
                .copy_from_slice(unsafe { std::slice::from_raw_parts(pointer.add(full), tail) });
            copy
        };
        let probe_tails: [[i8; LANE]; P] = std::array::from_fn(|index| padded(probes[index]));
        for (row_accumulators, row) in accumulators.iter_mut().zip(rows) {
            let row_tail = padded(*row);
            // SAFETY: the copies are LANE bytes long.
            let row_vector = unsafe { _mm256_loadu_si256(row_tail.as_ptr().cast()) };
            // Padding bytes become 0 ^ 0x80 = 128, multiplied by a padding probe byte 0.
            let row_unsigned = _mm256_xor_si256(row_vector, unsigned);
            for (accumulator, probe_tail) in row_accumulators.iter_mut().zip(&probe_tails) {
                // SAFETY: as above.
                let probe_vector = unsafe { _mm256_loadu_si256(probe_tail.as_ptr().cast()) };
                *accumulator = multiply_add_biased(*accumulator, row_unsigned, probe_vector);
            }
        }
    }
    let flat: [__m256i; 8] = std::array::from_fn(|index| accumulators[index / P][index % P]);
    // SAFETY: the caller passes room for RH * P = 8 sums.
    unsafe { store_sums_8_ymm(&flat, bias, out) };
}

/// The batch tile: 16 rows x 16 interleaved probes (word `w` of probe `p` at byte `64 w + 4 p`),
/// in blocks of 6, 6 and 4 rows (12 accumulators hide `vpdpbusd`'s latency; 8 measured slower).
/// A row's 4-byte word is broadcast and biased to unsigned once, and each `vpdpbusd` adds it into
/// 8 probes' dots: lane `j` of accumulator `[r][h]` is row `r` against probe `8 h + j`. So there
/// is no horizontal sum per (row, probe) pair: with the filter and the tile bookkeeping those
/// took about a third of the row-major 4x4 tiles' time at batch 16 (measured on Zen 5).
///
/// # Safety
/// See [`super::InterleavedTileFn`]; the CPU supports AVX2 and AVX-VNNI.
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn dot_tile_interleaved_avxvnni(
    rows: &[*const i8; 16],
    probes: *const i8,
    probe_sums: &[i32; INTERLEAVED_PROBES],
    dimension: usize,
    gate: &BlockGate,
    dots: &mut [[i32; INTERLEAVED_PROBES]; 16],
) -> u16 {
    // SAFETY: `probe_sums` is 16 i32, two 32-byte loads.
    let biases = unsafe {
        [
            _mm256_loadu_si256(probe_sums.as_ptr().cast()),
            _mm256_loadu_si256(probe_sums.as_ptr().add(8).cast()),
        ]
    }
    .map(|sums| _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32::<7>(sums)));
    let (first, rest) = dots.split_at_mut(6);
    let (second, third) = rest.split_at_mut(6);
    // SAFETY: forwarded caller contract; each block gets its rows and their part of `dots`.
    let passes = unsafe {
        [
            interleaved_block::<6>(rows, 0, probes, biases, dimension, gate, first),
            interleaved_block::<6>(rows, 6, probes, biases, dimension, gate, second),
            interleaved_block::<4>(rows, 12, probes, biases, dimension, gate, third),
        ]
    };
    passes[0] | passes[1] | passes[2]
}

/// Rows `first .. first + R` of the interleaved tile: writes their dots and returns the tile's
/// row mask of those with a pair that passes the gate.
///
/// # Safety
/// See [`dot_tile_interleaved_avxvnni`]; `dots` has R rows.
#[inline]
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn interleaved_block<const R: usize>(
    rows: &[*const i8; 16],
    first: usize,
    probes: *const i8,
    biases: [__m256i; 2],
    dimension: usize,
    gate: &BlockGate,
    dots: &mut [[i32; INTERLEAVED_PROBES]],
) -> u16 {
    const WORD: usize = INTERLEAVED_WORD;
    const STEP: usize = WORD * INTERLEAVED_PROBES;
    let rows: [*const i8; R] = std::array::from_fn(|index| rows[first + index]);
    // Starting at `-128 * sum(probe)` removes the bias with no work at the end.
    let mut accumulators = [biases; R];
    // SAFETY: each row pointer is valid for `dimension` bytes, every offset passed is of a word
    // inside them, and the interleaved probes hold `dimension.div_ceil(WORD)` steps.
    unsafe {
        for_each_word(&rows, dimension, |rows, offset, word| {
            interleaved_step(&mut accumulators, probes.add(STEP * word), rows, offset)
        })
    };
    let mut passing = 0u16;
    for (row, (row_dots, row_accumulators)) in dots.iter_mut().zip(&accumulators).enumerate() {
        let norm_root = _mm256_set1_ps(gate.norm_roots[first + row]);
        let mut row_passes = _mm256_setzero_ps();
        for (half, accumulator) in row_accumulators.iter().enumerate() {
            let dot = *accumulator;
            // SAFETY: each row of `dots` is 16 i32, and so are the gate roots; this reads and
            // writes 8 of them from `8 * half`.
            let gate_roots = unsafe {
                _mm256_storeu_si256(row_dots.as_mut_ptr().add(8 * half).cast(), dot);
                _mm256_loadu_ps(gate.gate_roots.as_ptr().add(8 * half))
            };
            let limit = _mm256_mul_ps(gate_roots, norm_root);
            let passes = _mm256_cmp_ps::<_CMP_GE_OQ>(_mm256_cvtepi32_ps(dot), limit);
            row_passes = _mm256_or_ps(row_passes, passes);
        }
        passing |= u16::from(_mm256_movemask_ps(row_passes) != 0) << (first + row);
    }
    passing
}

/// One word of the interleaved tile: each row's word at `offset` (4 elements) against 16 probes'
/// words, broadcast straight from the row (a word array in between went through the stack).
///
/// # Safety
/// `probes` is valid for 64 bytes of reads and each row for 4 from `offset`; the CPU supports
/// AVX2 and AVX-VNNI.
#[inline]
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn interleaved_step<const R: usize>(
    accumulators: &mut [[__m256i; 2]; R],
    probes: *const i8,
    rows: &[*const i8; R],
    offset: usize,
) {
    // SAFETY: the caller's promise.
    let probe_vectors = unsafe {
        [
            _mm256_loadu_si256(probes.cast()),
            _mm256_loadu_si256(probes.add(32).cast()),
        ]
    };
    let unsigned = _mm256_set1_epi8(i8::MIN);
    for (row_accumulators, row) in accumulators.iter_mut().zip(rows) {
        // SAFETY: the caller's promise.
        let word = unsafe { std::ptr::read_unaligned(row.add(offset).cast::<i32>()) };
        let word = _mm256_xor_si256(_mm256_set1_epi32(word), unsigned);
        for (accumulator, probe_vector) in row_accumulators.iter_mut().zip(probe_vectors) {
            *accumulator = multiply_add_biased(*accumulator, word, probe_vector);
        }
    }
}
