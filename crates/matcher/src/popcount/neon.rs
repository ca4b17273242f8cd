//! NEON popcount kernel: `vcnt` counts the bits of each byte, `vaddlv` sums them.

use std::arch::aarch64::*;

/// # Safety
/// See [`super::HammingFn`]; NEON is baseline on aarch64.
#[target_feature(enable = "neon")]
pub(super) unsafe fn hamming_neon(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    bytes: usize,
    out: *mut u32,
) {
    // SAFETY (whole body): the caller's contract makes `bytes` bytes (a multiple of 8) readable
    // behind every row and the probe, and `out` writable for `count` entries.
    unsafe {
        for index in 0..count {
            let row = rows.add(index * stride);
            let mut distance = 0u32;
            let mut offset = 0;
            while offset + 16 <= bytes {
                let difference = veorq_u8(vld1q_u8(row.add(offset)), vld1q_u8(probe.add(offset)));
                distance += u32::from(vaddlvq_u8(vcntq_u8(difference)));
                offset += 16;
            }
            if offset + 8 <= bytes {
                let difference = veor_u8(vld1_u8(row.add(offset)), vld1_u8(probe.add(offset)));
                distance += u32::from(vaddlv_u8(vcnt_u8(difference)));
            }
            *out.add(index) = distance;
        }
    }
}
