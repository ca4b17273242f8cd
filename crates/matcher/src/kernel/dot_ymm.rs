//! The single dot product of the 256-bit ISAs (AVX2, AVX-VNNI), written once, memchr's way: the
//! loop is generic over the one step that differs ([`YmmDotStep`]) and `#[inline(always)]`, and
//! each ISA's entry point carries the `#[target_feature]`, so the whole loop, intrinsics included,
//! is compiled for that ISA inside it (no call per step: a `#[target_feature]` function is not
//! inlined into one without the feature, hence no feature on the pieces).

use std::arch::x86_64::*;

use super::scalar::dot_i8_scalar;

const LANE: usize = 32;

/// One 32-byte step of `a . b`, added into 8 i32 lanes (exact within the kernel contract).
pub(crate) trait YmmDotStep {
    /// # Safety
    /// The CPU supports the implementation's ISA, and the caller is compiled for it (see the
    /// module comment).
    unsafe fn multiply_add(accumulator: __m256i, a: __m256i, b: __m256i) -> __m256i;
}

/// Exact dot product of `length` bytes at `a` and `b`: 32-byte steps of `S`, then the scalar
/// kernel on the tail.
///
/// # Safety
/// As [`YmmDotStep::multiply_add`] for `S` (call it from a `#[target_feature]` entry of that ISA);
/// both pointers are valid for `length` bytes of reads.
#[inline(always)]
pub(crate) unsafe fn dot_ymm<S: YmmDotStep>(a: *const i8, b: *const i8, length: usize) -> i32 {
    // SAFETY: AVX is part of every ISA here (the caller's promise).
    let mut accumulator = unsafe { _mm256_setzero_si256() };
    let mut offset = 0;
    while offset + LANE <= length {
        // SAFETY: `offset + LANE <= length` and both pointers are valid for `length` bytes; the
        // ISA is the caller's promise.
        accumulator = unsafe {
            S::multiply_add(
                accumulator,
                _mm256_loadu_si256(a.add(offset).cast()),
                _mm256_loadu_si256(b.add(offset).cast()),
            )
        };
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
