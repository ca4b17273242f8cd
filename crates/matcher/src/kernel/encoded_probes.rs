//! Probes in the form a table's tiles read them, made once per scan. AVX2 widens each probe to
//! i16 here so that its tiles multiply with one `vpmaddwd` per 16 pairs, and splits it into
//! `|p|` and `p` bytes for its one-probe tile, so no tile redoes the per-probe half of the work
//! (widening, `abs`) for every row.

use std::marker::PhantomData;

/// How a kernel table's tiles read a probe (see [`super::TileFn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProbeEncoding {
    /// The probe's own `i8` elements, `dimension` of them.
    Int8,
    /// `i16` elements, the dimension rounded up to [`WIDE_STEP`] with zeros, so a tile reads
    /// whole steps without a tail case for the probe; then, at byte [`split_offset`], `|p|` as
    /// bytes and `p` itself, each rounded up to [`SPLIT_STEP`] bytes with zeros.
    Int16,
}

/// Elements per step of a tile that reads [`ProbeEncoding::Int16`] probes.
pub(crate) const WIDE_STEP: usize = 16;

/// Bytes per step of a tile that reads the `|p|` and `p` bytes of a [`ProbeEncoding::Int16`]
/// probe.
pub(crate) const SPLIT_STEP: usize = 32;

/// Where a [`ProbeEncoding::Int16`] probe's `|p|` bytes start, in bytes from the probe's pointer;
/// its `p` bytes follow at `split_offset + dimension.div_ceil(SPLIT_STEP) * SPLIT_STEP`.
pub(crate) fn split_offset(dimension: usize) -> usize {
    2 * dimension.div_ceil(WIDE_STEP) * WIDE_STEP
}

/// The batch's probes encoded for one kernel table; `pointers()[p]` is probe `p`.
pub(crate) struct EncodedProbes<'a> {
    pointers: Vec<*const i8>,
    // Owns the widened copies the pointers may point into (moving a Vec keeps its heap block).
    _wide: Vec<i16>,
    _probes: PhantomData<&'a [i8]>,
}

impl<'a> EncodedProbes<'a> {
    /// `vectors` holds whole probes of `dimension >= 1` elements (`validate_scan` checked both).
    pub(crate) fn new(encoding: ProbeEncoding, vectors: &'a [i8], dimension: usize) -> Self {
        let probes = vectors.chunks_exact(dimension);
        match encoding {
            ProbeEncoding::Int8 => EncodedProbes {
                pointers: probes.map(<[i8]>::as_ptr).collect(),
                _wide: Vec::new(),
                _probes: PhantomData,
            },
            ProbeEncoding::Int16 => {
                let split = dimension.div_ceil(SPLIT_STEP) * SPLIT_STEP;
                // In i16 elements: the widened probe, then 2 * split bytes of |p| and p.
                let padded = split_offset(dimension) / 2;
                let stride = padded + split;
                let mut wide = vec![0i16; stride * probes.len()];
                for (target, probe) in wide.chunks_exact_mut(stride).zip(probes) {
                    let (widened, bytes) = target.split_at_mut(padded);
                    for (element, &value) in widened.iter_mut().zip(probe) {
                        *element = i16::from(value);
                    }
                    // SAFETY: any i16 storage is valid as twice as many bytes (alignment 1).
                    let bytes = unsafe {
                        std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<u8>(), 2 * split)
                    };
                    let (magnitudes, values) = bytes.split_at_mut(split);
                    for ((magnitude, value), &element) in
                        magnitudes.iter_mut().zip(values.iter_mut()).zip(probe)
                    {
                        *magnitude = element.unsigned_abs();
                        *value = element as u8;
                    }
                }
                EncodedProbes {
                    pointers: wide
                        .chunks_exact(stride)
                        .map(|probe| probe.as_ptr().cast::<i8>())
                        .collect(),
                    _wide: wide,
                    _probes: PhantomData,
                }
            }
        }
    }

    pub(crate) fn pointers(&self) -> &[*const i8] {
        &self.pointers
    }
}
