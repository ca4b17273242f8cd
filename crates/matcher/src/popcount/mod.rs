//! Hamming-distance kernels over sign bits, one per popcount ISA, for the first stage of a
//! two-stage search (see [`crate::two_stage`]).
//!
//! A row's sign bits hold bit `j % 8` of byte `j / 8` set when element `j` is negative; the
//! bits of a row are padded with zeros to `bytes`, a multiple of 8, and so are the probe's, so
//! the padding never adds to a distance. Every kernel returns exactly what the scalar oracle
//! returns (integer popcounts: no excuse for a difference).

use std::fmt;

use crate::kernel::Isa;

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod x86;

/// A popcount instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PopcountIsa {
    /// AVX-512 `vpopcntq` (VPOPCNTDQ + VL).
    Vpopcntdq,
    /// AVX2 `vpshufb` nibble counts summed by `vpsadbw`.
    Avx2,
    /// NEON `vcnt`.
    Neon,
    Scalar,
}

/// Distances of `count` rows, `stride` bytes apart from `rows`, to `probe`, over `bytes` bytes
/// each, written to `out[..count]`.
///
/// # Safety
/// The ISA is available; `bytes` is a multiple of 8; each row and the probe are valid for
/// `bytes` bytes of reads; `out` is valid for `count` writes.
pub type HammingFn = unsafe fn(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    bytes: usize,
    out: *mut u32,
);

impl PopcountIsa {
    pub const ALL: [PopcountIsa; 4] = [
        PopcountIsa::Vpopcntdq,
        PopcountIsa::Avx2,
        PopcountIsa::Neon,
        PopcountIsa::Scalar,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PopcountIsa::Vpopcntdq => "avx512vpopcntdq",
            PopcountIsa::Avx2 => "avx2",
            PopcountIsa::Neon => "neon",
            PopcountIsa::Scalar => "scalar",
        }
    }

    pub fn is_available(self) -> bool {
        match self {
            PopcountIsa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            PopcountIsa::Vpopcntdq => {
                std::arch::is_x86_feature_detected!("avx512vpopcntdq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("popcnt")
            }
            #[cfg(target_arch = "x86_64")]
            PopcountIsa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "aarch64")]
            PopcountIsa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The kernel, when this CPU can run it.
    pub fn kernel(self) -> Option<HammingKernel> {
        let function: HammingFn = match self {
            #[cfg(target_arch = "x86_64")]
            PopcountIsa::Vpopcntdq => x86::hamming_vpopcntdq,
            #[cfg(target_arch = "x86_64")]
            PopcountIsa::Avx2 => x86::hamming_avx2,
            #[cfg(target_arch = "aarch64")]
            PopcountIsa::Neon => neon::hamming_neon,
            _ => hamming_scalar_raw,
        };
        self.is_available().then_some(HammingKernel {
            isa: self,
            function,
        })
    }

    /// The popcount kernel that goes with a dot-product ISA: the best this CPU has among those
    /// the ISA's family implies (forcing `avx2` forces the nibble counts, `scalar` the oracle).
    pub fn for_isa(isa: Isa) -> PopcountIsa {
        let preferred: &[PopcountIsa] = match isa {
            Isa::Avx512Vnni => &[PopcountIsa::Vpopcntdq, PopcountIsa::Avx2],
            Isa::AvxVnni | Isa::Avx2 => &[PopcountIsa::Avx2],
            Isa::Neon => &[PopcountIsa::Neon],
            Isa::Scalar => &[],
        };
        preferred
            .iter()
            .copied()
            .find(|candidate| candidate.is_available())
            .unwrap_or(PopcountIsa::Scalar)
    }
}

impl fmt::Display for PopcountIsa {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Popcount ISAs usable here, best first; always ends with `Scalar`.
pub fn available_popcount_isas() -> Vec<PopcountIsa> {
    PopcountIsa::ALL
        .into_iter()
        .filter(|isa| isa.is_available())
        .collect()
}

/// A checked popcount kernel: only handed out for an available ISA, so its methods are safe.
#[derive(Clone, Copy)]
pub struct HammingKernel {
    isa: PopcountIsa,
    function: HammingFn,
}

impl HammingKernel {
    pub fn isa(&self) -> PopcountIsa {
        self.isa
    }

    /// Distances of `out.len()` rows of `rows` (row `r` at `r * stride`) to `probe`, over the
    /// probe's length in bytes (a multiple of 8, at most `stride`).
    ///
    /// # Panics
    /// If the probe's length is not a multiple of 8, exceeds the stride, or the rows are short.
    pub fn distances(&self, rows: &[u8], stride: usize, probe: &[u8], out: &mut [u32]) {
        let bytes = probe.len();
        assert!(
            bytes.is_multiple_of(8) && bytes <= stride,
            "bytes {bytes} stride {stride}"
        );
        if let Some(last) = out.len().checked_sub(1) {
            assert!(last * stride + bytes <= rows.len(), "rows too short");
        }
        // SAFETY: checked above; the kernel belongs to an available ISA.
        unsafe {
            self.distances_unchecked(
                rows.as_ptr(),
                stride,
                out.len(),
                probe.as_ptr(),
                bytes,
                out.as_mut_ptr(),
            )
        }
    }

    /// # Safety
    /// See [`HammingFn`] (availability is this type's guarantee).
    #[inline]
    pub(crate) unsafe fn distances_unchecked(
        &self,
        rows: *const u8,
        stride: usize,
        count: usize,
        probe: *const u8,
        bytes: usize,
        out: *mut u32,
    ) {
        // SAFETY: forwarded caller contract.
        unsafe { (self.function)(rows, stride, count, probe, bytes, out) }
    }
}

/// The oracle: Hamming distance of two equally long bit strings.
pub fn hamming_scalar(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// # Safety
/// See [`HammingFn`].
unsafe fn hamming_scalar_raw(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    bytes: usize,
    out: *mut u32,
) {
    // SAFETY: the caller's contract.
    let probe = unsafe { std::slice::from_raw_parts(probe, bytes) };
    for index in 0..count {
        // SAFETY: the caller's contract.
        unsafe {
            let row = std::slice::from_raw_parts(rows.add(index * stride), bytes);
            *out.add(index) = hamming_scalar(row, probe);
        }
    }
}

/// Bytes of sign bits per row at `dimension`: one bit per element, rounded up to 8 bytes.
pub fn sign_bytes(dimension: usize) -> usize {
    dimension.div_ceil(64) * 8
}

/// Writes the sign bits of `vector` into `out` (bit set = negative element), zero padding.
pub fn sign_bits_into(vector: &[i8], out: &mut [u8]) {
    out.fill(0);
    for (index, &value) in vector.iter().enumerate() {
        if value < 0 {
            out[index / 8] |= 1 << (index % 8);
        }
    }
}
