//! The scalar kernels: the oracle every SIMD path must equal exactly.

use super::{stream_read_tail, Isa, Kernels, ProbeEncoding};

pub(crate) static KERNELS: Kernels = Kernels {
    isa: Isa::Scalar,
    dot: dot_raw,
    tile_16x1: dot_tile_i8_scalar::<16, 1>,
    tile_8x2: dot_tile_i8_scalar::<8, 2>,
    tile_4x4: dot_tile_i8_scalar::<4, 4>,
    tile_16x16: None,
    probe_encoding: ProbeEncoding::Int8,
    stream_read: stream_read_raw,
};

/// Exact dot product of the common prefix of `a` and `b`, accumulated in wrapping `i32`
/// (exact up to 133 144 elements, see the contract).
pub fn dot_i8_scalar(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).fold(0i32, |accumulator, (&x, &y)| {
        accumulator.wrapping_add(i32::from(x) * i32::from(y))
    })
}

/// # Safety
/// Both pointers are valid for `length` bytes of reads.
unsafe fn dot_raw(a: *const i8, b: *const i8, length: usize) -> i32 {
    // SAFETY: guaranteed by the caller.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(a, length),
            std::slice::from_raw_parts(b, length),
        )
    };
    dot_i8_scalar(a, b)
}

/// # Safety
/// See [`super::TileFn`].
unsafe fn dot_tile_i8_scalar<const R: usize, const P: usize>(
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
/// `bytes` is valid for `length` bytes of reads.
unsafe fn stream_read_raw(bytes: *const u8, length: usize) -> u64 {
    // SAFETY: guaranteed by the caller.
    stream_read_tail(unsafe { std::slice::from_raw_parts(bytes, length) })
}
