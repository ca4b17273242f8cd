//! How far ahead of the exact scan, and into which cache, rows are asked for. The hardware
//! prefetchers alone leave the one-probe scan well above the time to read the gallery (on Zen 5,
//! 1M x 256: 16.7 ms without software prefetch against a 6.5 ms read), and the best distance
//! and cache level differ by CPU:
//! - AMD family 1Ah (Zen 5), measured: 16 rows ahead into L1 (T0), one probe 7.3-9.2 ms, against
//!   10.1-10.7 ms for 64 rows into L2; farther into L1 (32, 64 rows) was slower.
//! - AMD family 19h (Zen 4 measured; Zen 3 shares the family): the same plan took one probe from
//!   22.2 to 12.9 ms (AVX-512 VNNI, 1 thread; the read alone 14-16 ms) and from 26.9 to 17.3 ms on
//!   AVX2; 8 and 32 rows ahead measured within noise of 16.
//! - elsewhere (measured on an AVX-512 Xeon): 64 rows ahead into L2 (T2); into L1 or farther
//!   (128, 512 rows) was slower there.

use std::ops::Range;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PrefetchPlan {
    /// Rows between the tile being scored and the tile being asked for.
    pub rows_ahead: usize,
    /// T0 (into L1) instead of T2 (into L2).
    pub into_l1: bool,
}

const DEFAULT_PLAN: PrefetchPlan = PrefetchPlan {
    rows_ahead: 64,
    into_l1: false,
};
const AMD_L1_PLAN: PrefetchPlan = PrefetchPlan {
    rows_ahead: 16,
    into_l1: true,
};

/// The plan for this CPU (read once).
pub(crate) fn prefetch_plan() -> PrefetchPlan {
    static PLAN: OnceLock<PrefetchPlan> = OnceLock::new();
    *PLAN.get_or_init(|| {
        if is_amd_zen3_or_later() {
            AMD_L1_PLAN
        } else {
            DEFAULT_PLAN
        }
    })
}

#[cfg(target_arch = "x86_64")]
fn is_amd_zen3_or_later() -> bool {
    use std::arch::x86_64::__cpuid;
    let vendor = __cpuid(0);
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6E65, 0x444D_4163);
    let signature = __cpuid(1).eax;
    // Family = base family (bits 8-11) + extended family (bits 20-27) when the base is 0xF.
    let family = ((signature >> 8) & 0xF)
        + if (signature >> 8) & 0xF == 0xF {
            (signature >> 20) & 0xFF
        } else {
            0
        };
    amd && family >= 0x19
}

#[cfg(not(target_arch = "x86_64"))]
fn is_amd_zen3_or_later() -> bool {
    false
}

/// Asks for the cache lines of `bytes` (offsets into `base`) ahead of use, in one pass.
#[inline]
pub(crate) fn prefetch_bytes(base: *const i8, bytes: Range<usize>, into_l1: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T2};
        let mut line = bytes.start & !63;
        while line < bytes.end {
            // SAFETY: a prefetch is a hint that never faults; `wrapping_add` keeps the address
            // computation itself free of undefined behaviour. SSE is baseline on x86_64.
            unsafe {
                if into_l1 {
                    _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(line))
                } else {
                    _mm_prefetch::<_MM_HINT_T2>(base.wrapping_add(line))
                }
            };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, bytes, into_l1);
}
