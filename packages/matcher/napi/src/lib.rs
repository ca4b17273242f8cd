//! Node-API binding of the matcher core (and, in `sealing.rs`, of `palmvein-sealing`'s AES-GCM
//! batches): validate, borrow the typed arrays (zero-copy, views with a byteOffset into a
//! SharedArrayBuffer included), call the pure crates, map errors. Synchronous only: piscina
//! already provides the threads.
//!
//! Lifetime of a borrow: a typed array's memory is borrowed for the duration of one call and
//! never retained. The gallery may sit in a SharedArrayBuffer that other threads can write; the
//! TypeScript side must not write rows a scan is reading (it appends and compacts between scans).

// napi-derive registers the exports only outside cfg(test), so the test build that
// `cargo test --lib --tests` makes of this crate (it has no tests) saw every export as unused.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::{
    Float64ArraySlice, FromNapiValue, Int32ArraySlice, Int8ArraySlice, Uint32ArraySlice,
    Uint8ArraySlice, Unknown,
};
use napi::{Error, JsValue, Status};
use napi_derive::napi;
use palmvein_matcher::{CoreError, GalleryView, ProbeBatch, TopKOutput};

mod heap;
mod sealing;
mod two_stage;

/// The binding's errors: the core's, plus the JS-level checks on number arguments and memory.
pub(crate) enum BindingError {
    Core(CoreError),
    Argument(String),
}

impl From<CoreError> for BindingError {
    fn from(error: CoreError) -> BindingError {
        BindingError::Core(error)
    }
}

/// The one mapping to JS: a thrown `Error` with `code: 'InvalidArg'` and a precise message.
impl From<BindingError> for Error {
    fn from(error: BindingError) -> Error {
        let message = match error {
            BindingError::Core(error) => error.to_string(),
            BindingError::Argument(message) => message,
        };
        Error::new(Status::InvalidArg, message)
    }
}

pub(crate) type BindingResult<T> = Result<T, BindingError>;

/// A JS number that must be an integer in `[minimum, maximum]`.
pub(crate) fn integer(
    name: &str,
    value: f64,
    minimum: usize,
    maximum: usize,
) -> BindingResult<usize> {
    if value.fract() == 0.0 && value >= minimum as f64 && value <= maximum as f64 {
        Ok(value as usize)
    } else {
        Err(BindingError::Argument(format!(
            "{name} must be an integer in {minimum}..={maximum}, got {value}"
        )))
    }
}

/// Borrows a typed array argument, with an error naming the argument and the expected type
/// (napi's own conversion error does not say which argument was wrong).
pub(crate) fn typed_array<T: FromNapiValue>(
    name: &str,
    expected: &str,
    value: Unknown<'_>,
) -> BindingResult<T> {
    let raw = value.value();
    // SAFETY: `raw` is a live value of this call's environment; the conversion checks its type.
    unsafe { T::from_napi_value(raw.env, raw.value) }
        .map_err(|_| BindingError::Argument(format!("{name} must be {expected}")))
}

/// Byte range of a typed array's view.
pub(crate) fn bytes_of<T>(values: &[T]) -> std::ops::Range<usize> {
    let start = values.as_ptr() as usize;
    start..start + std::mem::size_of_val(values)
}

/// Outputs must not overlap each other or any input before they become `&mut` slices.
pub(crate) fn check_outputs(
    outputs: &[(&str, std::ops::Range<usize>)],
    inputs: &[(&str, std::ops::Range<usize>)],
) -> BindingResult<()> {
    check_disjoint(outputs)?;
    for input in inputs {
        for output in outputs {
            check_disjoint(&[output.clone(), input.clone()])?;
        }
    }
    Ok(())
}

pub(crate) fn check_disjoint(ranges: &[(&str, std::ops::Range<usize>)]) -> BindingResult<()> {
    for (index, (name, range)) in ranges.iter().enumerate() {
        for (other_name, other) in &ranges[index + 1..] {
            if range.start < other.end && other.start < range.end {
                return Err(BindingError::Argument(format!(
                    "{name} overlaps {other_name} in memory"
                )));
            }
        }
    }
    Ok(())
}

/// Scans rows `[rowStart, rowEnd)` for every probe; writes each probe's top k (best first; ties
/// by lower row; `-1` / `0` in unused slots) to `outRows` / `outScores` at `[p * k, (p + 1) * k)`.
/// `scoreFloors` (optional, one per probe): rows scoring below their probe's floor may be left out
/// (a caller scanning chunk by chunk passes the k-th best score it holds so far).
#[napi(
    js_name = "scanTopK",
    ts_args_type = "gallery: Int8Array, strideInBytes: number, dimension: number, rowStart: number, rowEnd: number, \
                    normsSquared: Uint32Array, live: Uint8Array, probes: Int8Array, probeNormsSquared: Uint32Array, \
                    k: number, outRows: Int32Array, outScores: Float64Array, scoreFloors?: Float64Array"
)]
#[allow(clippy::too_many_arguments)]
pub fn scan_top_k(
    gallery: Unknown<'_>,
    stride_in_bytes: f64,
    dimension: f64,
    row_start: f64,
    row_end: f64,
    norms_squared: Unknown<'_>,
    live: Unknown<'_>,
    probes: Unknown<'_>,
    probe_norms_squared: Unknown<'_>,
    k: f64,
    out_rows: Unknown<'_>,
    out_scores: Unknown<'_>,
    score_floors: Option<Unknown<'_>>,
) -> napi::Result<()> {
    let run = || -> BindingResult<()> {
        let gallery: Int8ArraySlice = typed_array("gallery", "an Int8Array", gallery)?;
        let score_floors: Option<Float64ArraySlice> = score_floors
            .map(|floors| typed_array("scoreFloors", "a Float64Array", floors))
            .transpose()?;
        let score_floors: &[f64] = score_floors.as_deref().unwrap_or(&[]);
        let norms_squared: Uint32ArraySlice =
            typed_array("normsSquared", "a Uint32Array", norms_squared)?;
        let live: Uint8ArraySlice = typed_array("live", "a Uint8Array", live)?;
        let probes: Int8ArraySlice = typed_array("probes", "an Int8Array", probes)?;
        let probe_norms_squared: Uint32ArraySlice =
            typed_array("probeNormsSquared", "a Uint32Array", probe_norms_squared)?;
        let mut out_rows: Int32ArraySlice = typed_array("outRows", "an Int32Array", out_rows)?;
        let mut out_scores: Float64ArraySlice =
            typed_array("outScores", "a Float64Array", out_scores)?;
        let dimension = integer(
            "dimension",
            dimension,
            1,
            palmvein_matcher::kernel::MAX_DIMENSION,
        )?;
        let stride_in_bytes = integer("strideInBytes", stride_in_bytes, 1, u32::MAX as usize)?;
        let row_start = integer("rowStart", row_start, 0, i32::MAX as usize)?;
        let row_end = integer("rowEnd", row_end, 0, i32::MAX as usize)?;
        let k = integer("k", k, 1, palmvein_matcher::MAX_K)?;
        check_outputs(
            &[
                ("outRows", bytes_of(&out_rows)),
                ("outScores", bytes_of(&out_scores)),
            ],
            &[
                ("gallery", bytes_of(&gallery)),
                ("normsSquared", bytes_of(&norms_squared)),
                ("live", bytes_of(&live)),
                ("probes", bytes_of(&probes)),
                ("probeNormsSquared", bytes_of(&probe_norms_squared)),
                ("scoreFloors", bytes_of(score_floors)),
            ],
        )?;
        let view = GalleryView {
            rows: &gallery,
            stride_in_bytes,
            dimension,
            norms_squared: &norms_squared,
            live: &live,
        };
        let batch = ProbeBatch {
            vectors: &probes,
            norms_squared: &probe_norms_squared,
            score_floors,
        };
        // SAFETY: the output views are disjoint from every input view and from each other
        // (checked above), and nothing else in this call holds them; the JS caller is
        // synchronous-blocked for the whole call (shared-memory writers: see the module comment).
        let mut output = unsafe {
            TopKOutput {
                rows: out_rows.as_mut(),
                scores: out_scores.as_mut(),
            }
        };
        palmvein_matcher::scan_top_k(&view, row_start..row_end, &batch, k, &mut output)?;
        Ok(())
    };
    run().map_err(Error::from)
}

/// Exact i32 dot product; `a` and `b` must have the same length.
#[napi(js_name = "dotI8", ts_args_type = "a: Int8Array, b: Int8Array")]
pub fn dot_i8(a: Unknown<'_>, b: Unknown<'_>) -> napi::Result<i32> {
    let run = || -> BindingResult<i32> {
        let a: Int8ArraySlice = typed_array("a", "an Int8Array", a)?;
        let b: Int8ArraySlice = typed_array("b", "an Int8Array", b)?;
        Ok(palmvein_matcher::dot_i8(&a, &b)?)
    };
    run().map_err(Error::from)
}

/// The ISA the kernels run on: 'avx512vnni' | 'avxvnni' | 'avx2' | 'neon' | 'scalar'.
#[napi(js_name = "activeIsa")]
pub fn active_isa() -> &'static str {
    palmvein_matcher::active_isa().name()
}

/// ISAs usable on this CPU, best first; always ends with 'scalar'.
#[napi(js_name = "availableIsas")]
pub fn available_isas() -> Vec<&'static str> {
    palmvein_matcher::available_isas()
        .into_iter()
        .map(|isa| isa.name())
        .collect()
}

/// Forces an ISA for this process (tests, benchmarks); throws for an unknown or unavailable one.
#[napi(js_name = "setIsa")]
pub fn set_isa(name: String) -> napi::Result<&'static str> {
    palmvein_matcher::set_isa_by_name(&name)
        .map(|isa| isa.name())
        .map_err(|error| Error::from(BindingError::from(error)))
}

/// The memory-bandwidth floor: reads every byte once with the active ISA's widest loads and
/// returns a 32-bit checksum so the reads cannot be elided.
#[napi(js_name = "streamRead", ts_args_type = "buffer: Int8Array")]
pub fn stream_read(buffer: Unknown<'_>) -> napi::Result<u32> {
    let buffer: Int8ArraySlice =
        typed_array("buffer", "an Int8Array", buffer).map_err(Error::from)?;
    // SAFETY: reinterpreting i8 as u8 keeps length, alignment and validity.
    let bytes = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), buffer.len()) };
    let checksum = palmvein_matcher::stream_read(bytes);
    Ok((checksum ^ (checksum >> 32)) as u32)
}

/// The core's limits, so the TypeScript side states each once: `maxK`, `maxDimension`, `maxCandidates`.
#[napi(
    js_name = "limits",
    ts_return_type = "{ maxK: number, maxDimension: number, maxCandidates: number }"
)]
pub fn limits() -> Limits {
    Limits {
        max_k: palmvein_matcher::MAX_K as u32,
        max_dimension: palmvein_matcher::kernel::MAX_DIMENSION as u32,
        max_candidates: palmvein_matcher::MAX_CANDIDATES as u32,
    }
}

#[napi(object)]
pub struct Limits {
    pub max_k: u32,
    pub max_dimension: u32,
    pub max_candidates: u32,
}

/// The ISA `PALMVEIN_MATCHER_ISA`'s value selects, by the core's one rule: an unknown or
/// unavailable name selects the best ISA and comes with a warning saying so.
#[napi(
    js_name = "chooseIsa",
    ts_return_type = "{ isa: string, warning?: string }"
)]
pub fn choose_isa(requested: Option<String>) -> IsaChoice {
    let (isa, warning) = palmvein_matcher::kernel::choose_isa(requested.as_deref());
    IsaChoice {
        isa: isa.name().to_owned(),
        warning,
    }
}

#[napi(object)]
pub struct IsaChoice {
    pub isa: String,
    pub warning: Option<String>,
}
