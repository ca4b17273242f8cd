//! Scan a gallery slice for a batch of probes, keeping the top k rows per probe.
//!
//! Rows are taken in tiles of 16 (16 x 256 bytes = 4 KB, well inside L1). Each tile is read
//! from memory once and then scored against every probe of the batch from cache, in register
//! blocks of 16 (row, probe) pairs: 16 rows x 1 probe, 8 x 2 or 4 x 4; where the kernels have
//! it, each whole chunk of 16 probes takes the whole tile at once from probes interleaved by
//! 4-byte words (no horizontal sums). So a batch of probes costs one pass over the gallery, not
//! one per probe.
//!
//! Most rows cannot enter a full top-k list. Before the square root and the division, a row is
//! dropped unless `max(dot, 0)^2 >= worst^2 * probe_norm * row_norm * (1 - 1e-9)`. All these
//! integers are below 2^53, so `dot^2` and the norm product are exact in f64; the margin is far
//! larger than the few ulps of rounding on the right-hand side, so a dropped row's exact score
//! is below the worst kept one: the filter never changes the result. It relies on rows being
//! offered in ascending order (an equal score never displaces a lower row index).
//!
//! A block of dots meets a cheaper test first, in f32 so that it vectorises 8 lanes wide:
//! `dot >= sqrt(gate) * ROOT_MARGIN * sqrt(row_norm)`. Its six roundings to f32 (the dot, the
//! norm, two square roots, two products) are each within 2^-24 relative, under 4e-7 together and
//! inside `ROOT_MARGIN`'s 1e-6, so every row that passes the exact test above passes this one: it
//! only skips blocks early.

use std::ops::Range;

use crate::kernel::{active_kernels, EncodedProbes, Isa, Kernels};
use crate::prefetch::{prefetch_bytes, prefetch_plan, PrefetchPlan};
use crate::scan_tile::{score_tile, ProbeState, Tile, TILE_ROWS};
use crate::CoreError;

use crate::scan_arguments::check_per_row;
pub use crate::scan_arguments::validate_scan;
pub use crate::scan_view::{score, GalleryView, ProbeBatch, TopKOutput, MAX_K};

/// [`scan_top_k_with`] on the active kernels.
pub fn scan_top_k(
    gallery: &GalleryView,
    row_range: Range<usize>,
    probes: &ProbeBatch,
    k: usize,
    output: &mut TopKOutput,
) -> Result<(), CoreError> {
    scan_top_k_with(active_kernels(), gallery, row_range, probes, k, output)
}

/// Scores rows `row_range` of the gallery against every probe and writes each probe's top k.
pub fn scan_top_k_with(
    kernels: &Kernels,
    gallery: &GalleryView,
    row_range: Range<usize>,
    probes: &ProbeBatch,
    k: usize,
    output: &mut TopKOutput,
) -> Result<(), CoreError> {
    validate_scan(
        gallery,
        &row_range,
        probes,
        k,
        (output.rows.len(), output.scores.len()),
    )?;
    check_per_row("live", gallery.live.len(), row_range.end)?;
    let dimension = gallery.dimension;
    let mut states: Vec<ProbeState> = probes
        .norms_squared
        .iter()
        .enumerate()
        .map(|(probe, &norm)| {
            let floor = probes.score_floors.get(probe).copied().unwrap_or(0.0);
            ProbeState::new(k, norm, floor)
        })
        .collect();
    let encoded = EncodedProbes::new(kernels, probes.vectors, dimension);
    let probe_sums: Vec<i32> = probes
        .vectors
        .chunks_exact(dimension)
        .map(|probe| probe.iter().map(|&value| i32::from(value)).sum())
        .collect();

    let tiles = TileScan {
        kernels,
        gallery,
        probes: &encoded,
        probe_sums: &probe_sums,
        prefetch: scan_prefetch(kernels, probes.count()),
    };
    // The loop around the kernels (gates, norms, top-k offers) is compiled for the kernels' ISA
    // too: measured on Zen 5, the baseline-x86-64 build of it cost as much as the dot products.
    #[cfg(target_arch = "x86_64")]
    match kernels.isa {
        // SAFETY: `kernels` belongs to an available ISA, so its features are present.
        Isa::Avx512Vnni => unsafe { tiles.scan_avx512(row_range, &mut states) },
        Isa::AvxVnni | Isa::Avx2 => unsafe { tiles.scan_avx2(row_range, &mut states) },
        _ => tiles.scan(row_range, &mut states),
    }
    #[cfg(not(target_arch = "x86_64"))]
    tiles.scan(row_range, &mut states);

    for (probe, state) in states.into_iter().enumerate() {
        let slots = probe * k..(probe + 1) * k;
        let (rows, scores) = (&mut output.rows[slots.clone()], &mut output.scores[slots]);
        rows.fill(-1);
        scores.fill(0.0);
        for (slot, candidate) in state.top.into_sorted().into_iter().enumerate() {
            rows[slot] = candidate.row as i32;
            scores[slot] = candidate.score;
        }
    }
    Ok(())
}

/// The tile loop of one scan, with what it reads.
struct TileScan<'a> {
    kernels: &'a Kernels,
    gallery: &'a GalleryView<'a>,
    probes: &'a EncodedProbes<'a>,
    probe_sums: &'a [i32],
    /// `None`: the batch is compute-bound, hardware prefetching keeps up.
    prefetch: Option<PrefetchPlan>,
}

impl TileScan<'_> {
    /// # Safety
    /// The CPU supports AVX-512 F, BW and VL.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn scan_avx512(&self, row_range: Range<usize>, states: &mut [ProbeState]) {
        self.scan(row_range, states)
    }

    /// # Safety
    /// The CPU supports AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn scan_avx2(&self, row_range: Range<usize>, states: &mut [ProbeState]) {
        self.scan(row_range, states)
    }

    #[inline(always)]
    fn scan(&self, row_range: Range<usize>, states: &mut [ProbeState]) {
        let mut tile_start = row_range.start;
        while tile_start < row_range.end {
            let tile_rows = TILE_ROWS.min(row_range.end - tile_start);
            if let Some(plan) = self.prefetch {
                let ahead = (tile_start + plan.rows_ahead).min(row_range.end);
                let ahead_end = (ahead + tile_rows).min(row_range.end);
                if ahead < ahead_end {
                    let stride = self.gallery.stride_in_bytes;
                    let bytes = ahead * stride..(ahead_end - 1) * stride + self.gallery.dimension;
                    prefetch_bytes(self.gallery.rows.as_ptr(), bytes, plan.into_l1);
                }
            }
            // Plain loops over fixed-size arrays (they vectorise): element-wise closures here were
            // not inlined, and their scalar stores, reloaded as vectors, stalled store forwarding.
            let mut live = [false; TILE_ROWS];
            let mut row_norms = [0u32; TILE_ROWS];
            if tile_rows == TILE_ROWS {
                let range = tile_start..tile_start + TILE_ROWS;
                let flags: &[u8; TILE_ROWS] = self.gallery.live[range.clone()]
                    .try_into()
                    .expect("a full tile");
                let norms: &[u32; TILE_ROWS] = self.gallery.norms_squared[range]
                    .try_into()
                    .expect("a full tile");
                for index in 0..TILE_ROWS {
                    live[index] = flags[index] != 0;
                    row_norms[index] = if flags[index] != 0 { norms[index] } else { 0 };
                }
            } else {
                for index in 0..tile_rows {
                    live[index] = self.gallery.live[tile_start + index] != 0;
                    if live[index] {
                        row_norms[index] = self.gallery.norms_squared[tile_start + index];
                    }
                }
            }
            if live.contains(&true) {
                // Rows past the end of a short tile repeat its first row (valid memory); their dots
                // are ignored because they are not live.
                let base = self.gallery.rows.as_ptr();
                let mut rows = [base; TILE_ROWS];
                for (index, row) in rows.iter_mut().enumerate() {
                    let at = tile_start + if index < tile_rows { index } else { 0 };
                    // SAFETY: `validate_scan` checked that every row below `row_range.end` lies
                    // inside `self.gallery.rows` (its start, and `dimension` bytes after it).
                    *row = unsafe { base.add(at * self.gallery.stride_in_bytes) };
                }
                // Within a few f32 ulps (see the module comment).
                let mut row_norm_roots = [0f32; TILE_ROWS];
                for (root, &norm) in row_norm_roots.iter_mut().zip(&row_norms) {
                    *root = (norm as f32).sqrt();
                }
                let tile = Tile {
                    first_row: tile_start,
                    rows: &rows,
                    live: &live,
                    norms: &row_norms,
                    norm_roots: &row_norm_roots,
                };
                score_tile(
                    self.kernels,
                    &tile,
                    self.probes,
                    self.probe_sums,
                    states,
                    self.gallery.dimension,
                );
            }
            tile_start += tile_rows;
        }
    }
}

/// The plan a scan with these kernels and this many probes follows; `None`: no software prefetch.
fn scan_prefetch(kernels: &Kernels, probes: usize) -> Option<PrefetchPlan> {
    let plan = prefetch_plan();
    let below_batch = match kernels.isa() {
        Isa::Avx512Vnni => plan.avx512_below_batch,
        Isa::Avx2 => plan.avx2_below_batch,
        _ => usize::MAX,
    };
    (probes < below_batch).then_some(plan)
}
