//! Node-API binding of the two-stage search's kernels: stage 1 (nearest rows by Hamming distance
//! over sign bits) and stage 2 (exact scores of chosen (row, probe) pairs). Same borrowing and
//! error rules as the exact scan in `lib.rs`.

use napi::bindgen_prelude::{
    Float64ArraySlice, Int32ArraySlice, Int8ArraySlice, Uint32ArraySlice, Uint8ArraySlice, Unknown,
};
use napi::Error;
use napi_derive::napi;
use palmvein_matcher::{GalleryView, ProbeBatch};

use crate::{bytes_of, check_outputs, integer, typed_array, BindingResult};

/// Stage 1 of a two-stage search over one piece of a gallery: per probe, merges the live rows of
/// `[rowStart, rowEnd)` (row `r` at `bits[r * bitsStride ..][..signBytes]`, written as `baseRow + r`)
/// into the list at `[p * c, (p + 1) * c)` of the `c` rows nearest in Hamming distance over their
/// sign bits: nearest first, ties by lower row, `-1` / `u32::MAX` in unused slots. A gallery in
/// pieces passes the same lists, empty at first, to every piece.
#[napi(
    js_name = "mergeNearestBySignBits",
    ts_args_type = "bits: Uint8Array, bitsStride: number, signBytes: number, rowStart: number, rowEnd: number, \
                    baseRow: number, live: Uint8Array, probeBits: Uint8Array, c: number, outRows: Int32Array, \
                    outDistances: Uint32Array"
)]
#[allow(clippy::too_many_arguments)]
pub fn merge_nearest_by_sign_bits(
    bits: Unknown<'_>,
    bits_stride: f64,
    sign_bytes: f64,
    row_start: f64,
    row_end: f64,
    base_row: f64,
    live: Unknown<'_>,
    probe_bits: Unknown<'_>,
    c: f64,
    out_rows: Unknown<'_>,
    out_distances: Unknown<'_>,
) -> napi::Result<()> {
    let run = || -> BindingResult<()> {
        let bits: Uint8ArraySlice = typed_array("bits", "a Uint8Array", bits)?;
        let live: Uint8ArraySlice = typed_array("live", "a Uint8Array", live)?;
        let probe_bits: Uint8ArraySlice = typed_array("probeBits", "a Uint8Array", probe_bits)?;
        let mut out_rows: Int32ArraySlice = typed_array("outRows", "an Int32Array", out_rows)?;
        let mut out_distances: Uint32ArraySlice =
            typed_array("outDistances", "a Uint32Array", out_distances)?;
        let stride = integer("bitsStride", bits_stride, 1, u32::MAX as usize)?;
        let bytes = integer("signBytes", sign_bytes, 1, u32::MAX as usize)?;
        let row_start = integer("rowStart", row_start, 0, i32::MAX as usize)?;
        let row_end = integer("rowEnd", row_end, 0, i32::MAX as usize)?;
        let base_row = integer("baseRow", base_row, 0, i32::MAX as usize)?;
        let c = integer("c", c, 1, palmvein_matcher::MAX_CANDIDATES)?;
        check_outputs(
            &[
                ("outRows", bytes_of(&out_rows)),
                ("outDistances", bytes_of(&out_distances)),
            ],
            &[
                ("bits", bytes_of(&bits)),
                ("live", bytes_of(&live)),
                ("probeBits", bytes_of(&probe_bits)),
            ],
        )?;
        let view = palmvein_matcher::SignBitsView {
            bits: &bits,
            stride,
            bytes,
            live: &live,
        };
        // SAFETY: the outputs are disjoint from every input and from each other (checked above).
        let mut output = unsafe {
            palmvein_matcher::CandidatesOutput {
                rows: out_rows.as_mut(),
                distances: out_distances.as_mut(),
            }
        };
        palmvein_matcher::nearest_by_sign_bits(
            &view,
            row_start..row_end,
            base_row,
            &probe_bits,
            c,
            &mut output,
        )?;
        Ok(())
    };
    run().map_err(Error::from)
}

/// Stage 2 of a two-stage search: `outScores[i]` = the exact score of row `pairRows[i]` for probe
/// `pairProbes[i]` (same contract as `scanTopK`'s scores).
#[napi(
    js_name = "scorePairs",
    ts_args_type = "gallery: Int8Array, strideInBytes: number, dimension: number, normsSquared: Uint32Array, \
                    pairRows: Int32Array, pairProbes: Uint32Array, probes: Int8Array, probeNormsSquared: Uint32Array, \
                    outScores: Float64Array"
)]
#[allow(clippy::too_many_arguments)]
pub fn score_pairs(
    gallery: Unknown<'_>,
    stride_in_bytes: f64,
    dimension: f64,
    norms_squared: Unknown<'_>,
    pair_rows: Unknown<'_>,
    pair_probes: Unknown<'_>,
    probes: Unknown<'_>,
    probe_norms_squared: Unknown<'_>,
    out_scores: Unknown<'_>,
) -> napi::Result<()> {
    let run = || -> BindingResult<()> {
        let gallery: Int8ArraySlice = typed_array("gallery", "an Int8Array", gallery)?;
        let norms_squared: Uint32ArraySlice =
            typed_array("normsSquared", "a Uint32Array", norms_squared)?;
        let pair_rows: Int32ArraySlice = typed_array("pairRows", "an Int32Array", pair_rows)?;
        let pair_probes: Uint32ArraySlice =
            typed_array("pairProbes", "a Uint32Array", pair_probes)?;
        let probes: Int8ArraySlice = typed_array("probes", "an Int8Array", probes)?;
        let probe_norms_squared: Uint32ArraySlice =
            typed_array("probeNormsSquared", "a Uint32Array", probe_norms_squared)?;
        let mut out_scores: Float64ArraySlice =
            typed_array("outScores", "a Float64Array", out_scores)?;
        let dimension = integer(
            "dimension",
            dimension,
            1,
            palmvein_matcher::kernel::MAX_DIMENSION,
        )?;
        let stride_in_bytes = integer("strideInBytes", stride_in_bytes, 1, u32::MAX as usize)?;
        check_outputs(
            &[("outScores", bytes_of(&out_scores))],
            &[
                ("gallery", bytes_of(&gallery)),
                ("normsSquared", bytes_of(&norms_squared)),
                ("pairRows", bytes_of(&pair_rows)),
                ("pairProbes", bytes_of(&pair_probes)),
                ("probes", bytes_of(&probes)),
                ("probeNormsSquared", bytes_of(&probe_norms_squared)),
            ],
        )?;
        // Liveness is stage 1's business; stage 2 scores the rows it is given (and has no flags).
        let view = GalleryView {
            rows: &gallery,
            stride_in_bytes,
            dimension,
            norms_squared: &norms_squared,
            live: &[],
        };
        let batch = ProbeBatch {
            vectors: &probes,
            norms_squared: &probe_norms_squared,
            score_floors: &[],
        };
        // SAFETY: `outScores` is disjoint from every input (checked above).
        let scores = unsafe { out_scores.as_mut() };
        palmvein_matcher::score_pairs(&view, &pair_rows, &pair_probes, &batch, scores)?;
        Ok(())
    };
    run().map_err(Error::from)
}

/// The popcount kernel stage 1 runs on: 'avx512vpopcntdq' | 'avx2' | 'neon' | 'scalar'.
#[napi(js_name = "activePopcountIsa")]
pub fn active_popcount_isa() -> &'static str {
    palmvein_matcher::active_hamming_kernel().isa().name()
}
