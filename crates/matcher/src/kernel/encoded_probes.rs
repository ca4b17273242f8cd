//! Probes in the form a table's tiles read them, made once per scan. AVX2 widens each probe to
//! i16 here so that its tiles multiply with one `vpmaddwd` per 16 pairs and never redo the
//! per-probe half of the work (`abs`/`sign`) for every row.

use std::marker::PhantomData;

/// How a kernel table's tiles read a probe (see [`super::TileFn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProbeEncoding {
    /// The probe's own `i8` elements, `dimension` of them.
    Int8,
    /// `i16` elements, the dimension rounded up to [`WIDE_STEP`] with zeros, so a tile reads
    /// whole steps without a tail case for the probe.
    Int16,
}

/// Elements per step of a tile that reads [`ProbeEncoding::Int16`] probes.
pub(crate) const WIDE_STEP: usize = 16;

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
                let padded = dimension.div_ceil(WIDE_STEP) * WIDE_STEP;
                let mut wide = vec![0i16; padded * probes.len()];
                for (target, probe) in wide.chunks_exact_mut(padded).zip(probes) {
                    for (element, &value) in target.iter_mut().zip(probe) {
                        *element = i16::from(value);
                    }
                }
                EncodedProbes {
                    pointers: wide
                        .chunks_exact(padded)
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
