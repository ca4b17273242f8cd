//! Probes in the form a table's tiles read them, made once per scan. AVX2 widens each probe to
//! i16 here so that its tiles multiply with one `vpmaddwd` per 16 pairs, and splits it into
//! `|p|` and `p` bytes for its one-probe tile, so no tile redoes the per-probe half of the work
//! (widening, `abs`) for every row. Tables with a 16x16 tile also get the batch's whole chunks
//! of 16 probes interleaved by 4-byte words.

use std::marker::PhantomData;

use super::Kernels;

/// How a kernel table's tiles read a probe (see [`super::TileFn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProbeEncoding {
    /// The probe's own `i8` elements, `dimension` of them.
    Int8,
    /// `i16` elements, the dimension rounded up to [`WIDE_STEP`] with zeros, so a tile reads
    /// whole steps without a tail case for the probe; then, at byte [`split_offset`], `|p|` as
    /// bytes and `p` itself, each rounded up to [`SPLIT_STEP`] bytes with zeros. AVX2's.
    #[cfg(target_arch = "x86_64")]
    Int16,
}

/// Elements per step of a tile that reads [`ProbeEncoding::Int16`] probes.
#[cfg(target_arch = "x86_64")]
pub(crate) const WIDE_STEP: usize = 16;

/// Bytes per step of a tile that reads the `|p|` and `p` bytes of a [`ProbeEncoding::Int16`]
/// probe.
#[cfg(target_arch = "x86_64")]
pub(crate) const SPLIT_STEP: usize = 32;

/// Probes per interleaved chunk (see [`EncodedProbes::interleaved_16`]).
pub(crate) const INTERLEAVED_PROBES: usize = 16;

/// Bytes of a probe per interleaved word (the four that one `vpdpbusd` lane multiplies).
pub(crate) const INTERLEAVED_WORD: usize = 4;

/// Where a [`ProbeEncoding::Int16`] probe's `|p|` bytes start, in bytes from the probe's pointer;
/// its `p` bytes follow at `split_offset + dimension.div_ceil(SPLIT_STEP) * SPLIT_STEP`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn split_offset(dimension: usize) -> usize {
    2 * dimension.div_ceil(WIDE_STEP) * WIDE_STEP
}

/// The batch's probes encoded for one kernel table; `pointers()[p]` is probe `p`.
pub(crate) struct EncodedProbes<'a> {
    pointers: Vec<*const i8>,
    // Owns the widened copies the pointers may point into (moving a Vec keeps its heap block).
    _wide: Vec<i16>,
    /// Chunk `c` (probes `16 c ..`) at byte `c * chunk_bytes`: word `w` of its probe `p` at byte
    /// `64 w + 4 p`, the dimension zero-padded to whole words.
    interleaved: Vec<i8>,
    chunk_bytes: usize,
    _probes: PhantomData<&'a [i8]>,
}

impl<'a> EncodedProbes<'a> {
    /// `vectors` holds whole probes of `dimension >= 1` elements (`validate_scan` checked both).
    pub(crate) fn new(kernels: &Kernels, vectors: &'a [i8], dimension: usize) -> Self {
        let mut encoded = Self::per_probe(kernels.probe_encoding, vectors, dimension);
        if kernels.tile_16x16.is_some() {
            encoded.chunk_bytes =
                dimension.div_ceil(INTERLEAVED_WORD) * INTERLEAVED_WORD * INTERLEAVED_PROBES;
            encoded.interleaved = interleave(vectors, dimension, encoded.chunk_bytes);
        }
        encoded
    }

    fn per_probe(encoding: ProbeEncoding, vectors: &'a [i8], dimension: usize) -> Self {
        let probes = vectors.chunks_exact(dimension);
        match encoding {
            ProbeEncoding::Int8 => EncodedProbes {
                pointers: probes.map(<[i8]>::as_ptr).collect(),
                _wide: Vec::new(),
                interleaved: Vec::new(),
                chunk_bytes: 0,
                _probes: PhantomData,
            },
            #[cfg(target_arch = "x86_64")]
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
                    interleaved: Vec::new(),
                    chunk_bytes: 0,
                    _probes: PhantomData,
                }
            }
        }
    }

    pub(crate) fn pointers(&self) -> &[*const i8] {
        &self.pointers
    }

    /// Probes `16 chunk .. 16 chunk + 16` interleaved, for a table's `tile_16x16`; `None` when the
    /// table has none or the batch has no such whole chunk.
    pub(crate) fn interleaved_16(&self, chunk: usize) -> Option<*const i8> {
        let start = chunk * self.chunk_bytes;
        (self.chunk_bytes > 0 && start + self.chunk_bytes <= self.interleaved.len())
            .then(|| self.interleaved[start..].as_ptr())
    }
}

/// The whole chunks of 16 probes, interleaved by words (see [`EncodedProbes::interleaved_16`]).
fn interleave(vectors: &[i8], dimension: usize, chunk_bytes: usize) -> Vec<i8> {
    let chunks = vectors.len() / dimension / INTERLEAVED_PROBES;
    let mut interleaved = vec![0i8; chunks * chunk_bytes];
    let step = INTERLEAVED_WORD * INTERLEAVED_PROBES;
    for (chunk, target) in interleaved.chunks_exact_mut(chunk_bytes).enumerate() {
        let first = chunk * INTERLEAVED_PROBES * dimension;
        for (probe, vector) in vectors[first..first + INTERLEAVED_PROBES * dimension]
            .chunks_exact(dimension)
            .enumerate()
        {
            for (word, elements) in vector.chunks(INTERLEAVED_WORD).enumerate() {
                let at = step * word + INTERLEAVED_WORD * probe;
                target[at..at + elements.len()].copy_from_slice(elements);
            }
        }
    }
    interleaved
}
