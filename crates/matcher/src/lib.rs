//! palmvein's 1:N matcher core: exact int8 dot-product kernels per ISA, dispatched once, and a
//! batched top-k scan over a gallery slice. No Node-API here: `packages/matcher/napi` binds it.
//!
//! The numerical contract is at the top of [`kernel`].

pub mod error;
pub mod kernel;
pub mod popcount;
mod prefetch;
pub mod scan;
mod scan_arguments;
mod scan_tile;
mod scan_view;
pub mod top_k;
pub mod two_stage;

pub use error::CoreError;
pub use kernel::{active_isa, active_kernels, available_isas, set_isa, Isa, Kernels};
pub use popcount::{available_popcount_isas, HammingKernel, PopcountIsa};
pub use scan::{scan_top_k, scan_top_k_with, score, GalleryView, ProbeBatch, TopKOutput, MAX_K};
pub use two_stage::{
    active_hamming_kernel, nearest_by_sign_bits, nearest_by_sign_bits_with, score_pairs,
    score_pairs_with, CandidatesOutput, SignBitsView, MAX_CANDIDATES,
};

/// Exact dot product with the active kernels; the vectors must have the same length.
pub fn dot_i8(a: &[i8], b: &[i8]) -> Result<i32, CoreError> {
    if a.len() != b.len() {
        return Err(CoreError::LengthMismatch {
            left: a.len(),
            right: b.len(),
        });
    }
    Ok(active_kernels().dot_i8(a, b))
}

/// The memory-bandwidth floor with the active kernels (see [`Kernels::stream_read`]).
pub fn stream_read(bytes: &[u8]) -> u64 {
    active_kernels().stream_read(bytes)
}

/// Forces an ISA by name (tests, benchmarks).
pub fn set_isa_by_name(name: &str) -> Result<Isa, CoreError> {
    let isa = Isa::from_name(name).ok_or_else(|| CoreError::UnknownIsa {
        name: name.to_owned(),
    })?;
    set_isa(isa)
}
