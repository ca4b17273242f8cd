//! Int8 dot-product kernels, one file per ISA, and the dispatch that picks one, once.
//!
//! # Numerical contract
//!
//! Each statement below is a test in `tests/contract.rs` (named after the statement).
//!
//! 1. **Elements** are `i8` in the symmetric range `[-127, 127]`; `-128` never occurs in a
//!    template. Probes are validated at the boundary; a `-128` in the gallery is outside the
//!    contract: every kernel stays memory-safe and panic-free, but ISAs may then disagree.
//! 2. **Products and accumulators.** A product of two elements is at most `127 * 127 = 16129`
//!    in magnitude. Every kernel accumulates in `i32` (wrapping, never saturating, never
//!    panicking). The largest dimension, 4096, gives `|dot| <= 16129 * 4096 = 66_064_384`, far
//!    below `i32::MAX`, so every dot product within the contract is exact; overflow would need
//!    more than `i32::MAX / 16129 = 133_144` elements.
//! 3. **Every ISA equals the scalar kernel exactly**, for every length (including 0, lane - 1,
//!    lane + 1) and the extremes (all `+127`, all `-127`): integer arithmetic leaves no excuse.
//! 4. **The SIMD tricks are exact because `-128` is excluded.**
//!    * AVX2 `vpmaddubsw` multiplies u8 by i8 and adds pairs into a *saturating* i16. We feed it
//!      `|a|` (at most 127 as u8) and `sign(a) * b` (`-b` cannot overflow since `b != -128`),
//!      so a pair sum is at most `2 * 16129 = 32258 < 32767`: it never saturates.
//!    * AVX-512 VNNI / AVX-VNNI `vpdpbusd` multiplies u8 by i8 and adds groups of four into a
//!      *wrapping* i32. Single dots use the same abs/sign split. The scan tiles instead bias the
//!      gallery row to unsigned (`row ^ 0x80 = row + 128`, in `[1, 255]`) and subtract
//!      `128 * sum(probe)` afterwards: per lane at most `4 * 255 * 127 * 4096 / 4`, exact in i32.
//!      The AVX-512 16x16 tile biases the probes instead and subtracts `128 * sum(row)`, the
//!      same bound.
//!    * NEON `smull` multiplies i8 by i8 into i16 (exact, at most 16129) and `sadalp` adds pairs
//!      into i32.
//! 5. **Layout.** A gallery is a row-major int8 matrix: row `r` starts at byte
//!    `r * stride_in_bytes` of the gallery slice and holds `dimension` elements;
//!    `stride_in_bytes >= dimension` (padding bytes are never read). Norms and the live mask are
//!    indexed by absolute row. Probes are contiguous: probe `p` is
//!    `probes[p * dimension .. (p + 1) * dimension]`. Strides are in bytes, never in elements.
//! 6. **Score** of a row for a probe, bit-identical in every backend:
//!    `max(dot, 0) as f64 / sqrt(probe_norm_sq as f64 * row_norm_sq as f64)`, and `0.0` where
//!    the norm product is 0. Squared norms are `u32` (at most `16129 * 4096`, exact in f64, and so
//!    is their product, below 2^53).

use std::fmt;

use crate::prefetch::{prefetch_bytes, prefetch_plan};
pub(crate) use encoded_probes::{EncodedProbes, ProbeEncoding};

mod dispatch;
pub(crate) mod encoded_probes;
pub mod scalar;

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512vnni;
#[cfg(target_arch = "x86_64")]
pub mod avxvnni;
#[cfg(target_arch = "x86_64")]
mod dot_ymm;
#[cfg(target_arch = "aarch64")]
pub mod neon;
#[cfg(target_arch = "x86_64")]
mod tile_x86;

pub use dispatch::{
    active_isa, active_kernels, available_isas, choose_isa, set_isa, ISA_ENVIRONMENT_VARIABLE,
};

/// Largest supported dimension (see the contract, statement 2).
pub const MAX_DIMENSION: usize = 4096;

/// An instruction set the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    Avx512Vnni,
    AvxVnni,
    Avx2,
    Neon,
    Scalar,
}

impl Isa {
    /// Every ISA, best first.
    pub const ALL: [Isa; 5] = [
        Isa::Avx512Vnni,
        Isa::AvxVnni,
        Isa::Avx2,
        Isa::Neon,
        Isa::Scalar,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512Vnni => "avx512vnni",
            Isa::AvxVnni => "avxvnni",
            Isa::Avx2 => "avx2",
            Isa::Neon => "neon",
            Isa::Scalar => "scalar",
        }
    }

    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|isa| isa.name() == name)
    }

    /// Whether this CPU (and this build) can run the ISA.
    pub fn is_available(self) -> bool {
        self.is_supported_by_cpu()
    }

    /// The kernel table of this ISA, when the CPU supports it.
    pub fn kernels(self) -> Option<&'static Kernels> {
        self.is_supported_by_cpu().then(|| self.table())
    }

    fn is_supported_by_cpu(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vnni => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::AvxVnni => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("avxvnni")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The table compiled for this ISA, without the CPU check (callers check first); an ISA not
    /// compiled into this build (NEON on x86, AVX on ARM) maps to the scalar table.
    pub(crate) fn table(self) -> &'static Kernels {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vnni => &avx512vnni::KERNELS,
            #[cfg(target_arch = "x86_64")]
            Isa::AvxVnni => &avxvnni::KERNELS,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => &avx2::KERNELS,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => &neon::KERNELS,
            _ => &scalar::KERNELS,
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Dots of a tile of `R` gallery rows against `P` probes: `result[r][p] = dot(rows[r], probes[p])`.
///
/// # Safety
/// The table's ISA is available; every row pointer is valid for `dimension` bytes of reads;
/// `probes[p]` points at probe `p` in the table's [`ProbeEncoding`], made by [`EncodedProbes`];
/// `probe_sums[p]` is the sum of the elements of probe `p`.
pub type TileFn<const R: usize, const P: usize> = unsafe fn(
    rows: &[*const i8; R],
    probes: &[*const i8; P],
    probe_sums: &[i32; P],
    dimension: usize,
) -> [[i32; P]; R];

/// The scan's block filter for an [`InterleavedTileFn`]: row `r` may enter probe `p`'s list only
/// if `dot as f32 >= gate_roots[p] * norm_roots[r]` (see the `scan` module).
pub struct BlockGate<'a> {
    pub gate_roots: &'a [f32; 16],
    pub norm_roots: &'a [f32; 16],
}

/// Dots of a tile of 16 gallery rows against 16 probes stored interleaved by 4-byte words (see
/// [`EncodedProbes::interleaved_16`]) into `dots[r][p]`; returns the rows with a pair that passes
/// `gate` (bit `r` for row `r`), tested in registers where the dots are laid out by probe already.
/// Only those rows are offered to the lists: offering all 256 pairs whenever one passed showed in
/// the profile of a batch of 16 over 1M rows.
///
/// # Safety
/// The table's ISA is available; every row pointer is valid for `dimension` bytes of reads;
/// `probes` points at 16 interleaved probes made by [`EncodedProbes`]; `probe_sums[p]` is the sum
/// of the elements of probe `p`.
pub type InterleavedTileFn = unsafe fn(
    rows: &[*const i8; 16],
    probes: *const i8,
    probe_sums: &[i32; 16],
    dimension: usize,
    gate: &BlockGate,
    dots: &mut [[i32; 16]; 16],
) -> u16;

/// The kernels of one ISA. Obtain one through [`Isa::kernels`] (which checks the CPU) or
/// [`active_kernels`]; the methods are then safe.
pub struct Kernels {
    pub(crate) isa: Isa,
    /// # Safety: the ISA is available; both pointers valid for `length` bytes.
    pub(crate) dot: unsafe fn(a: *const i8, b: *const i8, length: usize) -> i32,
    pub(crate) tile_16x1: TileFn<16, 1>,
    pub(crate) tile_8x2: TileFn<8, 2>,
    pub(crate) tile_4x4: TileFn<4, 4>,
    /// Where a table has it, each whole chunk of 16 probes uses it instead of the 4x4 tiles.
    pub(crate) tile_16x16: Option<InterleavedTileFn>,
    /// How the tiles read probes.
    pub(crate) probe_encoding: ProbeEncoding,
    /// # Safety: the ISA is available; the pointer is valid for `length` bytes.
    pub(crate) stream_read: unsafe fn(bytes: *const u8, length: usize) -> u64,
}

impl Kernels {
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Exact dot product of the common prefix of `a` and `b` (callers pass equal lengths).
    pub fn dot_i8(&self, a: &[i8], b: &[i8]) -> i32 {
        let length = a.len().min(b.len());
        // SAFETY: a `Kernels` is only handed out for an available ISA; both slices hold at least
        // `length` elements.
        unsafe { (self.dot)(a.as_ptr(), b.as_ptr(), length) }
    }

    /// The memory-bandwidth floor: one sequential read of every byte, folded into a checksum
    /// (xor of 64-bit words, zero-padded tail) so the reads cannot be elided. It asks for the
    /// bytes ahead as the exact scan does (its prefetch plan, rows of 256 bytes): without that,
    /// on Zen 4 the scan and FAISS's int8 scan both read faster than this "floor" did.
    pub fn stream_read(&self, bytes: &[u8]) -> u64 {
        const BLOCK: usize = 4096;
        let plan = prefetch_plan();
        let ahead = plan.rows_ahead * 256;
        let mut checksum = 0;
        for (index, block) in bytes.chunks(BLOCK).enumerate() {
            let start = (index * BLOCK + ahead).min(bytes.len());
            let end = (start + BLOCK).min(bytes.len());
            prefetch_bytes(bytes.as_ptr().cast(), start..end, plan.into_l1);
            // SAFETY: the ISA is available (see `dot_i8`); the block is valid for its length.
            // Blocks are whole 64-bit words but the last, so their xor is the whole read's.
            checksum ^= unsafe { (self.stream_read)(block.as_ptr(), block.len()) };
        }
        checksum
    }
}

/// The checksum every `stream_read` kernel returns: xor of the little-endian 64-bit words of the
/// buffer, the last partial word zero-padded. Simple enough that SIMD lanes fold into it exactly.
pub(crate) fn stream_read_tail(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let mut checksum = 0u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        word.copy_from_slice(chunk);
        checksum ^= u64::from_le_bytes(word);
    }
    let remainder = chunks.remainder();
    if !remainder.is_empty() {
        word = [0u8; 8];
        word[..remainder.len()].copy_from_slice(remainder);
        checksum ^= u64::from_le_bytes(word);
    }
    checksum
}

#[cfg(test)]
mod tile_tests;
