//! NEON kernels (aarch64): `smull`/`smull2` (i8 x i8 -> i16, exact) and `sadalp` (pairwise add
//! into i32). Baseline NEON, so every aarch64 CPU runs them.

use std::arch::aarch64::*;

use super::{scalar::dot_i8_scalar, stream_read_tail, Isa, Kernels, ProbeEncoding};

pub(crate) static KERNELS: Kernels = Kernels {
    isa: Isa::Neon,
    dot: dot_raw,
    tile_16x1: dot_tile_i8_neon::<16, 1>,
    tile_8x2: dot_tile_i8_neon::<8, 2>,
    tile_4x4: dot_tile_i8_neon::<4, 4>,
    tile_16x16: None,
    probe_encoding: ProbeEncoding::Int8,
    stream_read: stream_read_raw,
};

const LANE: usize = 16;

/// Exact dot product of the common prefix of `a` and `b` (see the contract in `kernel`).
///
/// # Safety
/// The CPU supports NEON (every aarch64 CPU does).
pub unsafe fn dot_i8_neon(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: the CPU feature is the caller's promise; both slices hold the length passed.
    unsafe { dot_raw(a.as_ptr(), b.as_ptr(), a.len().min(b.len())) }
}

#[inline]
#[target_feature(enable = "neon")]
fn multiply_add(accumulator: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    let low = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    let high = vmull_high_s8(a, b);
    vpadalq_s16(vpadalq_s16(accumulator, low), high)
}

#[target_feature(enable = "neon")]
unsafe fn dot_raw(a: *const i8, b: *const i8, length: usize) -> i32 {
    let mut accumulator = vdupq_n_s32(0);
    let mut offset = 0;
    while offset + LANE <= length {
        // SAFETY: `offset + LANE <= length` and both pointers are valid for `length` bytes.
        let (a_vector, b_vector) = unsafe { (vld1q_s8(a.add(offset)), vld1q_s8(b.add(offset))) };
        accumulator = multiply_add(accumulator, a_vector, b_vector);
        offset += LANE;
    }
    // SAFETY: `offset <= length`; both pointers are valid for `length` bytes.
    let (a_rest, b_rest) = unsafe {
        (
            std::slice::from_raw_parts(a.add(offset), length - offset),
            std::slice::from_raw_parts(b.add(offset), length - offset),
        )
    };
    // `vaddvq_s32` wraps like the scalar accumulator.
    vaddvq_s32(accumulator).wrapping_add(dot_i8_scalar(a_rest, b_rest))
}

/// # Safety
/// See [`super::TileFn`]; the CPU supports NEON.
#[target_feature(enable = "neon")]
unsafe fn dot_tile_i8_neon<const R: usize, const P: usize>(
    rows: &[*const i8; R],
    probes: &[*const i8; P],
    _probe_sums: &[i32; P],
    dimension: usize,
) -> [[i32; P]; R] {
    let mut dots = [[0i32; P]; R];
    for (row, out) in rows.iter().zip(&mut dots) {
        for (probe, dot) in probes.iter().zip(out.iter_mut()) {
            // SAFETY: every pointer is valid for `dimension` bytes (caller's contract).
            *dot = unsafe { dot_raw(*row, *probe, dimension) };
        }
    }
    dots
}

/// # Safety
/// The CPU supports NEON; `bytes` is valid for `length` bytes of reads.
#[target_feature(enable = "neon")]
unsafe fn stream_read_raw(bytes: *const u8, length: usize) -> u64 {
    let mut folds = [vdupq_n_u64(0); 4];
    let mut offset = 0;
    while offset + 4 * LANE <= length {
        for (index, fold) in folds.iter_mut().enumerate() {
            // SAFETY: `offset + 4 * LANE <= length`.
            let vector =
                unsafe { vreinterpretq_u64_u8(vld1q_u8(bytes.add(offset + index * LANE))) };
            *fold = veorq_u64(*fold, vector);
        }
        offset += 4 * LANE;
    }
    let folded = veorq_u64(veorq_u64(folds[0], folds[1]), veorq_u64(folds[2], folds[3]));
    // SAFETY: `offset <= length`; the rest of the buffer is valid for reads.
    let rest = unsafe { std::slice::from_raw_parts(bytes.add(offset), length - offset) };
    stream_read_tail(rest) ^ vgetq_lane_u64::<0>(folded) ^ vgetq_lane_u64::<1>(folded)
}
