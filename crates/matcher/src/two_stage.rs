//! The two stages of a two-stage search. Stage 1 ([`nearest_by_sign_bits`]) reads only the sign
//! bits of each row (d/8 bytes instead of d) and keeps, per probe, the `c` rows nearest in
//! Hamming distance; stage 2 ([`score_pairs`]) scores chosen (row, probe) pairs with the exact
//! int8 cosine, so every score a two-stage search reports is the exact one.
//!
//! Stage 1 reads rows in tiles of [`TILE_ROWS`] (8 KB of bits at d = 256, inside L1) and runs
//! every probe of the batch over a tile before the next: one pass over the bits serves the batch.

use std::ops::Range;

use crate::kernel::{active_isa, active_kernels, Kernels, MAX_DIMENSION};
use crate::popcount::{HammingKernel, PopcountIsa};
use crate::scan::{score, GalleryView, ProbeBatch};
use crate::scan_arguments::{check_outputs, check_per_row};
use crate::CoreError;

/// Largest `c` of one stage-1 scan.
pub const MAX_CANDIDATES: usize = 65536;

const TILE_ROWS: usize = 256;
/// Rows whose distances are tested against the gate together.
const GROUP: usize = 16;

/// Sign bits of a gallery slice: row `r`'s bits are `bits[r * stride ..][..bytes]`; `live` (0 =
/// dead) is indexed by absolute row.
#[derive(Clone, Copy)]
pub struct SignBitsView<'a> {
    pub bits: &'a [u8],
    pub stride: usize,
    pub bytes: usize,
    pub live: &'a [u8],
}

/// Per probe `p`, slots `[p * c, (p + 1) * c)`: a list of kept rows, nearest first (ties: lower
/// row first), `-1` and `u32::MAX` in unused slots. Stage 1 merges a piece of the gallery into
/// the lists it is given, so a caller scanning a gallery in pieces passes the same lists to every
/// piece (starting empty) and each piece skips the rows that cannot enter them.
pub struct CandidatesOutput<'a> {
    pub rows: &'a mut [i32],
    pub distances: &'a mut [u32],
}

/// The popcount kernel of the active dot-product ISA.
pub fn active_hamming_kernel() -> HammingKernel {
    let isa = PopcountIsa::for_isa(active_isa());
    isa.kernel()
        .or_else(|| PopcountIsa::Scalar.kernel())
        .expect("the scalar popcount kernel is always available")
}

fn validate_bits(
    view: &SignBitsView,
    row_range: &Range<usize>,
    probe_bits: &[u8],
    c: usize,
    output_lengths: (usize, usize),
) -> Result<usize, CoreError> {
    let SignBitsView { stride, bytes, .. } = *view;
    if bytes == 0 || !bytes.is_multiple_of(8) || bytes > stride || bytes > MAX_DIMENSION / 8 {
        return Err(CoreError::SignBytes { bytes, stride });
    }
    let Range { start, end } = *row_range;
    if start > end {
        return Err(CoreError::RowRange {
            row_start: start,
            row_end: end,
        });
    }
    if end > start {
        let needed = (end - 1)
            .checked_mul(stride)
            .and_then(|at| at.checked_add(bytes));
        if needed.is_none_or(|needed| needed > view.bits.len()) || end > i32::MAX as usize {
            return Err(CoreError::GalleryTooShort {
                row_end: end,
                needed_bytes: needed.unwrap_or(usize::MAX),
                length: view.bits.len(),
            });
        }
    }
    check_per_row("live", view.live.len(), end)?;
    if !probe_bits.len().is_multiple_of(bytes) {
        return Err(CoreError::ProbeBitsLength {
            length: probe_bits.len(),
            bytes,
        });
    }
    if c == 0 || c > MAX_CANDIDATES {
        return Err(CoreError::Candidates { c });
    }
    let probe_count = probe_bits.len() / bytes;
    check_outputs(
        probe_count * c,
        [
            ("outRows", output_lengths.0),
            ("outDistances", output_lengths.1),
        ],
    )?;
    Ok(probe_count)
}

/// [`nearest_by_sign_bits_with`] on the active popcount kernel.
pub fn nearest_by_sign_bits(
    view: &SignBitsView,
    row_range: Range<usize>,
    base_row: usize,
    probe_bits: &[u8],
    c: usize,
    output: &mut CandidatesOutput,
) -> Result<(), CoreError> {
    nearest_by_sign_bits_with(
        active_hamming_kernel(),
        view,
        row_range,
        base_row,
        probe_bits,
        c,
        output,
    )
}

/// Stage 1 over one piece: per probe (`probe_bits` holds `bytes` per probe), merges the live rows
/// of `row_range` into the probe's list of the `c` rows nearest in Hamming distance. The piece's
/// row `r` is written as `base_row + r`.
pub fn nearest_by_sign_bits_with(
    kernel: HammingKernel,
    view: &SignBitsView,
    row_range: Range<usize>,
    base_row: usize,
    probe_bits: &[u8],
    c: usize,
    output: &mut CandidatesOutput,
) -> Result<(), CoreError> {
    let probe_count = validate_bits(
        view,
        &row_range,
        probe_bits,
        c,
        (output.rows.len(), output.distances.len()),
    )?;
    if base_row
        .checked_add(row_range.end)
        .is_none_or(|end| end > i32::MAX as usize)
    {
        return Err(CoreError::RowRange {
            row_start: base_row.saturating_add(row_range.start),
            row_end: base_row.saturating_add(row_range.end),
        });
    }
    let mut selections: Vec<Selection> = (0..probe_count)
        .map(|probe| Selection::new(c, kept_keys(output, probe * c..(probe + 1) * c)))
        .collect();
    let scan = BitsScan {
        kernel,
        view,
        probe_bits,
        base_row,
    };
    // The loop around the popcount kernel is compiled for its ISA too (as in `scan`).
    #[cfg(target_arch = "x86_64")]
    match kernel.isa() {
        // SAFETY: the kernel belongs to an available ISA, so its features are present.
        PopcountIsa::Vpopcntdq => unsafe { scan.run_avx512(row_range, &mut selections) },
        PopcountIsa::Avx2 => unsafe { scan.run_avx2(row_range, &mut selections) },
        _ => scan.run(row_range, &mut selections),
    }
    #[cfg(not(target_arch = "x86_64"))]
    scan.run(row_range, &mut selections);
    for (probe, selection) in selections.into_iter().enumerate() {
        let slots = probe * c..(probe + 1) * c;
        selection.write(
            &mut output.rows[slots.clone()],
            &mut output.distances[slots],
        );
    }
    Ok(())
}

/// A candidate as one sortable key: `distance << 32 | absolute row`.
fn key(distance: u32, row: usize) -> u64 {
    u64::from(distance) << 32 | row as u64
}

/// The keys of a list's used slots, in the list's order.
fn kept_keys(output: &CandidatesOutput, slots: Range<usize>) -> Vec<u64> {
    output.rows[slots.clone()]
        .iter()
        .zip(&output.distances[slots])
        .take_while(|(&row, _)| row >= 0)
        .map(|(&row, &distance)| key(distance, row as usize))
        .collect()
}

/// One probe's selection of the `c` smallest keys: the kept list it was given and the piece's
/// rows that passed the gate. A heap would pay a log-c sift per row entering; here a row entering
/// is an append, and when the appended rows reach `c` one linear selection halves them and
/// tightens the gate, so the cost per row entering stays a few nanoseconds.
struct Selection {
    c: usize,
    kept: Vec<u64>,
    found: Vec<u64>,
    /// Only keys below it can enter: the worst kept key once `c` are known.
    gate: u64,
}

impl Selection {
    fn new(c: usize, kept: Vec<u64>) -> Selection {
        let gate = if kept.len() == c {
            kept[c - 1]
        } else {
            u64::MAX
        };
        Selection {
            c,
            kept,
            found: Vec::with_capacity(2 * c),
            gate,
        }
    }

    #[inline(always)]
    fn offer(&mut self, key: u64) {
        self.found.push(key);
        if self.found.len() == 2 * self.c {
            self.shrink();
        }
    }

    /// Keeps the `c` smallest found keys; the largest of them becomes the gate if it is tighter.
    fn shrink(&mut self) {
        let (_, &mut worst, _) = self.found.select_nth_unstable(self.c - 1);
        self.found.truncate(self.c);
        self.gate = self.gate.min(worst);
    }

    /// The `c` smallest keys of the kept list and the found rows, nearest first, into the slots.
    fn write(mut self, rows: &mut [i32], distances: &mut [u32]) {
        self.found.sort_unstable();
        let (mut kept, mut found) = (self.kept.iter().peekable(), self.found.iter().peekable());
        for (row, distance) in rows.iter_mut().zip(distances.iter_mut()) {
            let next = match (kept.peek(), found.peek()) {
                (Some(&&a), Some(&&b)) if a <= b => kept.next(),
                (Some(_), None) => kept.next(),
                _ => found.next(),
            };
            (*row, *distance) = next.map_or((-1, u32::MAX), |&key| {
                ((key & 0xFFFF_FFFF) as i32, (key >> 32) as u32)
            });
        }
    }
}

/// The stage-1 loop of one scan, with what it reads.
struct BitsScan<'a> {
    kernel: HammingKernel,
    view: &'a SignBitsView<'a>,
    probe_bits: &'a [u8],
    base_row: usize,
}

impl BitsScan<'_> {
    /// # Safety
    /// The CPU supports AVX-512 F, BW and VL.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl")]
    unsafe fn run_avx512(&self, rows: Range<usize>, selections: &mut [Selection]) {
        self.run(rows, selections)
    }

    /// # Safety
    /// The CPU supports AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, rows: Range<usize>, selections: &mut [Selection]) {
        self.run(rows, selections)
    }

    /// Offers every live row of `row_range` to each probe's selection, tile by tile.
    #[inline(always)]
    fn run(&self, row_range: Range<usize>, selections: &mut [Selection]) {
        let mut distances = [0u32; TILE_ROWS];
        let mut tile_start = row_range.start;
        while tile_start < row_range.end {
            let tile_rows = TILE_ROWS.min(row_range.end - tile_start);
            let live = &self.view.live[tile_start..tile_start + tile_rows];
            if live.iter().any(|&flag| flag != 0) {
                for (probe, selection) in selections.iter_mut().enumerate() {
                    // SAFETY: `validate_bits` checked that rows below `row_range.end` hold `bytes` bytes
                    // at `row * stride`, the probe's bytes lie inside `probe_bits`, and `distances`
                    // holds TILE_ROWS >= tile_rows entries.
                    unsafe {
                        self.kernel.distances_unchecked(
                            self.view.bits.as_ptr().add(tile_start * self.view.stride),
                            self.view.stride,
                            tile_rows,
                            self.probe_bits.as_ptr().add(probe * self.view.bytes),
                            self.view.bytes,
                            distances.as_mut_ptr(),
                        )
                    };
                    // Rows past a short tile never pass the gate.
                    distances[tile_rows..].fill(u32::MAX);
                    // Once the lists are full almost no group of 16 holds a row below the gate: test
                    // the group's least key first (its minimum distance at its first row; fixed-size,
                    // so a few vector minimums), visit its rows only when that passes.
                    for (group, first) in distances.chunks_exact(GROUP).zip((0..).step_by(GROUP)) {
                        let group: &[u32; GROUP] = group.try_into().expect("chunks_exact");
                        let least = group
                            .iter()
                            .fold(u32::MAX, |least, &distance| least.min(distance));
                        let row = self.base_row + tile_start + first;
                        if key(least, row) >= selection.gate {
                            continue;
                        }
                        for (offset, &distance) in group.iter().enumerate() {
                            if first + offset < tile_rows
                                && key(distance, row + offset) < selection.gate
                                && live[first + offset] != 0
                            {
                                selection.offer(key(distance, row + offset));
                            }
                        }
                    }
                }
            }
            tile_start += tile_rows;
        }
    }
}

/// [`score_pairs_with`] on the active kernels.
pub fn score_pairs(
    gallery: &GalleryView,
    rows: &[i32],
    probe_of: &[u32],
    probes: &ProbeBatch,
    scores: &mut [f64],
) -> Result<(), CoreError> {
    score_pairs_with(active_kernels(), gallery, rows, probe_of, probes, scores)
}

/// Stage 2: `scores[i]` = the exact score of gallery row `rows[i]` for probe `probe_of[i]`.
pub fn score_pairs_with(
    kernels: &Kernels,
    gallery: &GalleryView,
    rows: &[i32],
    probe_of: &[u32],
    probes: &ProbeBatch,
    scores: &mut [f64],
) -> Result<(), CoreError> {
    let row_end = rows
        .iter()
        .map(|&row| row.max(0) as usize + 1)
        .max()
        .unwrap_or(0);
    crate::scan::validate_scan(
        gallery,
        &(0..row_end),
        probes,
        1,
        (probes.count(), probes.count()),
    )?;
    let pairs = rows.len();
    if probe_of.len() != pairs || scores.len() < pairs {
        return Err(CoreError::PairsLength {
            rows: pairs,
            probes: probe_of.len(),
            scores: scores.len(),
        });
    }
    if let Some(index) = rows.iter().position(|&row| row < 0) {
        return Err(CoreError::PairRow {
            index,
            row: rows[index] as i64,
        });
    }
    if let Some(index) = probe_of
        .iter()
        .position(|&probe| probe as usize >= probes.count())
    {
        return Err(CoreError::PairProbe {
            index,
            probe: probe_of[index] as usize,
            probe_count: probes.count(),
        });
    }
    let dimension = gallery.dimension;
    for ((&row, &probe), out) in rows.iter().zip(probe_of).zip(scores.iter_mut()) {
        let (row, probe) = (row as usize, probe as usize);
        let start = row * gallery.stride_in_bytes;
        let dot = kernels.dot_i8(
            &gallery.rows[start..start + dimension],
            &probes.vectors[probe * dimension..(probe + 1) * dimension],
        );
        *out = score(dot, probes.norms_squared[probe], gallery.norms_squared[row]);
    }
    Ok(())
}
