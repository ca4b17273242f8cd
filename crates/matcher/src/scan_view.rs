//! What a scan reads and writes: the gallery slice, the probe batch, the top-k output, and the
//! score of a row for a probe. A leaf the scan, its argument checks and its tiles all share.

/// Largest k of one scan.
pub const MAX_K: usize = 1024;

/// A gallery slice: row `r` is `rows[r * stride_in_bytes ..][..dimension]`; norms and the live
/// mask (0 = dead) are indexed by absolute row.
#[derive(Clone, Copy)]
pub struct GalleryView<'a> {
    pub rows: &'a [i8],
    pub stride_in_bytes: usize,
    pub dimension: usize,
    pub norms_squared: &'a [u32],
    pub live: &'a [u8],
}

/// A batch of probes: probe `p` is `vectors[p * dimension ..][..dimension]`.
#[derive(Clone, Copy)]
pub struct ProbeBatch<'a> {
    pub vectors: &'a [i8],
    pub norms_squared: &'a [u32],
    /// Empty, or one per probe: the scan may leave out rows scoring below their probe's floor.
    /// A caller scanning a gallery slice by slice passes the k-th best score it holds so far, so
    /// each slice's lists start with the filter of the whole scan's instead of refilling from
    /// nothing (a floor that is not positive, NaN included, is no floor).
    pub score_floors: &'a [f64],
}

impl ProbeBatch<'_> {
    pub fn count(&self) -> usize {
        self.norms_squared.len()
    }
}

/// Per probe `p`, slots `[p * k, (p + 1) * k)`: best first, `-1` and `0.0` in unused slots.
pub struct TopKOutput<'a> {
    pub rows: &'a mut [i32],
    pub scores: &'a mut [f64],
}

/// The score of a row for a probe (the contract's statement 6), the same in every backend.
#[inline]
pub fn score(dot: i32, probe_norm_squared: u32, row_norm_squared: u32) -> f64 {
    let product = f64::from(probe_norm_squared) * f64::from(row_norm_squared);
    if product == 0.0 {
        0.0
    } else {
        f64::from(dot.max(0)) / product.sqrt()
    }
}
