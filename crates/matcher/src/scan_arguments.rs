//! The checks of a scan's arguments (slice bounds, dimension, k, output lengths), made once so
//! the kernels in `scan` run without further checks.

use std::ops::Range;

use crate::kernel::MAX_DIMENSION;
use crate::scan_view::{GalleryView, ProbeBatch, MAX_K};
use crate::CoreError;

/// Checks every argument of a scan but the live flags (stage 2 of a two-stage search scores the
/// rows it is given and has none; the exact scan checks them with [`check_per_row`]); the kernels
/// then run without further checks.
pub fn validate_scan(
    gallery: &GalleryView,
    row_range: &Range<usize>,
    probes: &ProbeBatch,
    k: usize,
    output_lengths: (usize, usize),
) -> Result<(), CoreError> {
    let GalleryView {
        dimension,
        stride_in_bytes,
        ..
    } = *gallery;
    if dimension == 0 || dimension > MAX_DIMENSION {
        return Err(CoreError::Dimension { dimension });
    }
    if stride_in_bytes < dimension {
        return Err(CoreError::Stride {
            stride_in_bytes,
            dimension,
        });
    }
    let Range {
        start: row_start,
        end: row_end,
    } = *row_range;
    if row_start > row_end {
        return Err(CoreError::RowRange { row_start, row_end });
    }
    if row_end > row_start {
        // The last row needs only `dimension` bytes, not a whole stride.
        let needed_bytes = (row_end - 1)
            .checked_mul(stride_in_bytes)
            .and_then(|bytes| bytes.checked_add(dimension));
        if needed_bytes.is_none_or(|needed| needed > gallery.rows.len())
            || row_end > i32::MAX as usize
        {
            return Err(CoreError::GalleryTooShort {
                row_end,
                needed_bytes: needed_bytes.unwrap_or(usize::MAX),
                length: gallery.rows.len(),
            });
        }
    }
    check_per_row("normsSquared", gallery.norms_squared.len(), row_end)?;
    let probe_count = probes.count();
    if probe_count.checked_mul(dimension) != Some(probes.vectors.len()) {
        return Err(CoreError::ProbesLength {
            length: probes.vectors.len(),
            probe_count,
            dimension,
        });
    }
    if let Some(position) = probes.vectors.iter().position(|&value| value == i8::MIN) {
        return Err(CoreError::ProbeValue {
            probe: position / dimension,
            element: position % dimension,
        });
    }
    if !probes.score_floors.is_empty() && probes.score_floors.len() != probe_count {
        return Err(CoreError::ScoreFloorsLength {
            length: probes.score_floors.len(),
            probe_count,
        });
    }
    if k == 0 || k > MAX_K {
        return Err(CoreError::K { k });
    }
    check_outputs(
        probe_count * k,
        [
            ("outRows", output_lengths.0),
            ("outScores", output_lengths.1),
        ],
    )
}

/// A per-row argument covers the rows below `row_end`.
pub(crate) fn check_per_row(
    argument: &'static str,
    length: usize,
    row_end: usize,
) -> Result<(), CoreError> {
    if length < row_end {
        return Err(CoreError::PerRowTooShort {
            argument,
            row_end,
            length,
        });
    }
    Ok(())
}

/// Every output `(argument, length)` holds at least `needed` entries (a scan's and a stage-1
/// search's result arrays).
pub(crate) fn check_outputs(
    needed: usize,
    outputs: [(&'static str, usize); 2],
) -> Result<(), CoreError> {
    for (argument, length) in outputs {
        if length < needed {
            return Err(CoreError::OutputTooShort {
                argument,
                needed,
                length,
            });
        }
    }
    Ok(())
}
