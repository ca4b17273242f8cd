//! The core's one error type. Messages name arguments as the Node binding's callers spell them.

use std::fmt;

use crate::kernel::{Isa, MAX_DIMENSION};
use crate::scan::MAX_K;
use crate::two_stage::MAX_CANDIDATES;

#[derive(Clone, Debug, PartialEq)]
pub enum CoreError {
    UnknownIsa {
        name: String,
    },
    IsaUnavailable {
        isa: Isa,
        available: Vec<Isa>,
    },
    LengthMismatch {
        left: usize,
        right: usize,
    },
    Dimension {
        dimension: usize,
    },
    Stride {
        stride_in_bytes: usize,
        dimension: usize,
    },
    RowRange {
        row_start: usize,
        row_end: usize,
    },
    GalleryTooShort {
        row_end: usize,
        needed_bytes: usize,
        length: usize,
    },
    PerRowTooShort {
        argument: &'static str,
        row_end: usize,
        length: usize,
    },
    ProbesLength {
        length: usize,
        probe_count: usize,
        dimension: usize,
    },
    ProbeValue {
        probe: usize,
        element: usize,
    },
    ScoreFloorsLength {
        length: usize,
        probe_count: usize,
    },
    K {
        k: usize,
    },
    OutputTooShort {
        argument: &'static str,
        needed: usize,
        length: usize,
    },
    SignBytes {
        bytes: usize,
        stride: usize,
    },
    ProbeBitsLength {
        length: usize,
        bytes: usize,
    },
    Candidates {
        c: usize,
    },
    PairsLength {
        rows: usize,
        probes: usize,
        scores: usize,
    },
    PairRow {
        index: usize,
        row: i64,
    },
    PairProbe {
        index: usize,
        probe: usize,
        probe_count: usize,
    },
}

impl fmt::Display for CoreError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |isas: &[Isa]| {
            isas.iter()
                .map(|isa| isa.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            CoreError::UnknownIsa { name } => {
                write!(formatter, "unknown ISA {name:?}; expected one of {}", names(&Isa::ALL))
            }
            CoreError::IsaUnavailable { isa, available } => {
                write!(formatter, "ISA \"{isa}\" is not available on this CPU; available: {}", names(available))
            }
            CoreError::LengthMismatch { left, right } => {
                write!(formatter, "vectors differ in length: a has {left} elements, b has {right}")
            }
            CoreError::Dimension { dimension } => {
                write!(formatter, "dimension must be in 1..={MAX_DIMENSION}, got {dimension}")
            }
            CoreError::Stride { stride_in_bytes, dimension } => write!(
                formatter,
                "strideInBytes ({stride_in_bytes}) must be at least the dimension ({dimension})"
            ),
            CoreError::RowRange { row_start, row_end } => {
                write!(formatter, "rowStart ({row_start}) must not exceed rowEnd ({row_end})")
            }
            CoreError::GalleryTooShort { row_end, needed_bytes, length } => write!(
                formatter,
                "gallery is too short: rows up to rowEnd {row_end} need {needed_bytes} bytes, the view has {length}"
            ),
            CoreError::PerRowTooShort { argument, row_end, length } => write!(
                formatter,
                "{argument} is too short: rowEnd is {row_end}, it has {length} entries"
            ),
            CoreError::ScoreFloorsLength { length, probe_count } => write!(
                formatter,
                "scoreFloors has {length} elements; expected none or one per probe ({probe_count})"
            ),
            CoreError::ProbesLength { length, probe_count, dimension } => write!(
                formatter,
                "probes has {length} elements; expected probeCount ({probe_count}, the length of \
                 probeNormsSquared) x dimension ({dimension}) = {}",
                probe_count.saturating_mul(*dimension)
            ),
            CoreError::ProbeValue { probe, element } => write!(
                formatter,
                "probe {probe} has -128 at element {element}; templates are symmetric int8 in [-127, 127]"
            ),
            CoreError::K { k } => write!(formatter, "k must be in 1..={MAX_K}, got {k}"),
            CoreError::OutputTooShort { argument, needed, length } => write!(
                formatter,
                "{argument} is too short: probeCount x k = {needed}, it has {length} entries"
            ),
            CoreError::SignBytes { bytes, stride } => write!(
                formatter,
                "signBytes ({bytes}) must be a positive multiple of 8, at most {} and at most the bits stride ({stride})",
                MAX_DIMENSION / 8
            ),
            CoreError::ProbeBitsLength { length, bytes } => write!(
                formatter,
                "probeBits has {length} bytes, not a multiple of signBytes ({bytes})"
            ),
            CoreError::Candidates { c } => {
                write!(formatter, "candidates must be in 1..={MAX_CANDIDATES}, got {c}")
            }
            CoreError::PairsLength { rows, probes, scores } => write!(
                formatter,
                "pairRows ({rows}) and pairProbes ({probes}) must have the same length, and outScores ({scores}) at least as many"
            ),
            CoreError::PairRow { index, row } => {
                write!(formatter, "pairRows[{index}] is {row}; rows are non-negative")
            }
            CoreError::PairProbe { index, probe, probe_count } => write!(
                formatter,
                "pairProbes[{index}] is {probe}; there are {probe_count} probes"
            ),
        }
    }
}

impl std::error::Error for CoreError {}
