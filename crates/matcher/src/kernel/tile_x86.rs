//! Horizontal reductions shared by the x86 tiles: many accumulators into one register with a
//! shuffle/add tree (about three instructions per accumulator instead of ~ten for a full
//! per-accumulator reduction). The result is in a permuted lane order documented per function.

use std::arch::x86_64::*;

use super::encoded_probes::INTERLEAVED_WORD;

/// Sums each of 16 zmm accumulators (16 i32 lanes each). The sum of accumulator `i` lands in
/// lane `4 * (i % 4) + i / 4` of the result. Wrapping i32 arithmetic throughout.
#[target_feature(enable = "avx512f")]
pub(crate) fn reduce_16_zmm(accumulators: &[__m512i; 16]) -> __m512i {
    // 16 -> 8: 128-bit lanes 0,1 hold partials of accumulator 2i, lanes 2,3 of 2i + 1.
    let halves: [__m512i; 8] = std::array::from_fn(|index| {
        let (a, b) = (accumulators[2 * index], accumulators[2 * index + 1]);
        _mm512_add_epi32(
            _mm512_shuffle_i64x2::<0x44>(a, b),
            _mm512_shuffle_i64x2::<0xEE>(a, b),
        )
    });
    // 8 -> 4: 128-bit lane k holds the four partials of accumulator 4j + k.
    let quarters: [__m512i; 4] = std::array::from_fn(|index| {
        let (a, b) = (halves[2 * index], halves[2 * index + 1]);
        _mm512_add_epi32(
            _mm512_shuffle_i64x2::<0x88>(a, b),
            _mm512_shuffle_i64x2::<0xDD>(a, b),
        )
    });
    // 4 -> 2: in 128-bit lane k, two partials of accumulator 8m + k, then two of 8m + 4 + k.
    let pairs: [__m512i; 2] = std::array::from_fn(|index| {
        let (a, b) = (quarters[2 * index], quarters[2 * index + 1]);
        _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b))
    });
    // 2 -> 1: 128-bit lane k = [acc k, acc 4 + k, acc 8 + k, acc 12 + k].
    let (a, b) = (_mm512_castsi512_ps(pairs[0]), _mm512_castsi512_ps(pairs[1]));
    _mm512_add_epi32(
        _mm512_castps_si512(_mm512_shuffle_ps::<0x88>(a, b)),
        _mm512_castps_si512(_mm512_shuffle_ps::<0xDD>(a, b)),
    )
}

/// Sums each of 8 ymm accumulators (8 i32 lanes each). The sum of accumulator `i` lands in lane
/// `4 * (i % 2) + i / 2` of the result. Wrapping i32 arithmetic throughout.
#[target_feature(enable = "avx2")]
pub(crate) fn reduce_8_ymm(accumulators: &[__m256i; 8]) -> __m256i {
    // 8 -> 4: 128-bit lane k holds the four partials of accumulator 2i + k.
    let halves: [__m256i; 4] = std::array::from_fn(|index| {
        let (a, b) = (accumulators[2 * index], accumulators[2 * index + 1]);
        _mm256_add_epi32(
            _mm256_permute2x128_si256::<0x20>(a, b),
            _mm256_permute2x128_si256::<0x31>(a, b),
        )
    });
    // 4 -> 2: in 128-bit lane k, two partials of accumulator 4m + k, then two of 4m + 2 + k.
    let pairs: [__m256i; 2] = std::array::from_fn(|index| {
        let (a, b) = (halves[2 * index], halves[2 * index + 1]);
        _mm256_add_epi32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b))
    });
    // 2 -> 1: 128-bit lane k = [acc k, acc 2 + k, acc 4 + k, acc 6 + k].
    let (a, b) = (_mm256_castsi256_ps(pairs[0]), _mm256_castsi256_ps(pairs[1]));
    _mm256_add_epi32(
        _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(a, b)),
        _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(a, b)),
    )
}

/// Writes the sums of 8 ymm accumulators, in accumulator order and minus `bias` lane by lane, to
/// `out` with one permute and one store. The caller reads them as vectors: element-wise stores
/// reloaded as a vector stall store forwarding (measured: a quarter of the scan at batch 16).
///
/// # Safety
/// `out` is valid for 8 `i32` writes; the CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_sums_8_ymm(accumulators: &[__m256i; 8], bias: __m256i, out: *mut i32) {
    // Accumulator `j` sits in lane `4 * (j % 2) + j / 2` of the reduction.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let sums = _mm256_permutevar8x32_epi32(reduce_8_ymm(accumulators), order);
    // SAFETY: the caller's promise.
    unsafe { _mm256_storeu_si256(out.cast(), _mm256_sub_epi32(sums, bias)) };
}

/// `128 * probe_sums[lane % P]` in each of the 8 lanes (the VNNI tiles' row bias, see their
/// `multiply_add_biased`), read straight from the sums rather than built in memory lane by lane.
///
/// # Safety
/// The CPU supports AVX2; `P` is 1, 2 or 4.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bias_8_lanes<const P: usize>(probe_sums: &[i32; P]) -> __m256i {
    // SAFETY: `probe_sums` holds P i32, exactly what each branch reads.
    let repeated = unsafe {
        match P {
            1 => _mm256_set1_epi32(probe_sums[0]),
            2 => _mm256_set1_epi64x(std::ptr::read_unaligned(probe_sums.as_ptr().cast())),
            4 => _mm256_broadcastsi128_si256(_mm_loadu_si128(probe_sums.as_ptr().cast())),
            _ => unreachable!("tiles have 1, 2 or 4 probes"),
        }
    };
    // Wrapping `* 128`.
    _mm256_slli_epi32::<7>(repeated)
}

/// [`bias_8_lanes`] over the 16 lanes of a zmm.
///
/// # Safety
/// The CPU supports AVX-512 F; `P` is 1, 2 or 4.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn bias_16_lanes<const P: usize>(probe_sums: &[i32; P]) -> __m512i {
    // SAFETY: `probe_sums` holds P i32, exactly what each branch reads.
    let repeated = unsafe {
        match P {
            1 => _mm512_set1_epi32(probe_sums[0]),
            2 => _mm512_set1_epi64(std::ptr::read_unaligned(probe_sums.as_ptr().cast())),
            4 => _mm512_broadcast_i32x4(_mm_loadu_si128(probe_sums.as_ptr().cast())),
            _ => unreachable!("tiles have 1, 2 or 4 probes"),
        }
    };
    _mm512_slli_epi32::<7>(repeated)
}

/// Streams a buffer with AVX2 loads, folding it into the xor-of-words checksum.
///
/// # Safety
/// The CPU supports AVX2; `bytes` is valid for `length` bytes of reads.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn stream_read_avx2(bytes: *const u8, length: usize) -> u64 {
    const LANE: usize = 32;
    let mut folds = [_mm256_setzero_si256(); 4];
    let mut offset = 0;
    while offset + 4 * LANE <= length {
        for (index, fold) in folds.iter_mut().enumerate() {
            // SAFETY: `offset + 4 * LANE <= length`, so all 32 bytes are inside the buffer.
            let vector = unsafe { _mm256_loadu_si256(bytes.add(offset + index * LANE).cast()) };
            *fold = _mm256_xor_si256(*fold, vector);
        }
        offset += 4 * LANE;
    }
    while offset + LANE <= length {
        // SAFETY: `offset + LANE <= length`.
        let vector = unsafe { _mm256_loadu_si256(bytes.add(offset).cast()) };
        folds[0] = _mm256_xor_si256(folds[0], vector);
        offset += LANE;
    }
    let folded = _mm256_xor_si256(
        _mm256_xor_si256(folds[0], folds[1]),
        _mm256_xor_si256(folds[2], folds[3]),
    );
    let mut words = [0u64; 4];
    // SAFETY: `words` is 32 writable bytes.
    unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), folded) };
    // SAFETY: `offset <= length`; the rest of the buffer is valid for reads.
    let rest = unsafe { std::slice::from_raw_parts(bytes.add(offset), length - offset) };
    words
        .iter()
        .fold(super::stream_read_tail(rest), |checksum, word| {
            checksum ^ word
        })
}

/// Walks the rows of an interleaved tile word by word: `step(rows, offset, word)` for each whole
/// word (each row read at byte `offset`, the probes' word `word`), then once for a partial last
/// word with pointers to zero-padded copies of it (offset 0). The padding matches the
/// interleaved probes', so a padding position adds nothing: the AVX-VNNI tile multiplies the
/// row's biased padding (`0 ^ 0x80`) by the probe's 0, the AVX-512 one the row's 0 by the
/// probe's biased padding.
///
/// # Safety
/// Each row pointer is valid for `dimension` bytes of reads.
#[inline(always)]
pub(crate) unsafe fn for_each_word<const R: usize>(
    rows: &[*const i8; R],
    dimension: usize,
    mut step: impl FnMut(&[*const i8; R], usize, usize),
) {
    let full = dimension / INTERLEAVED_WORD;
    for word in 0..full {
        step(rows, INTERLEAVED_WORD * word, word);
    }
    let start = INTERLEAVED_WORD * full;
    let tail = dimension - start;
    if tail > 0 {
        let words: [[i8; INTERLEAVED_WORD]; R] = std::array::from_fn(|row| {
            let mut word = [0i8; INTERLEAVED_WORD];
            // SAFETY: `start + tail == dimension` bytes are valid behind the row pointer.
            word[..tail]
                .copy_from_slice(unsafe { std::slice::from_raw_parts(rows[row].add(start), tail) });
            word
        });
        step(&std::array::from_fn(|row| words[row].as_ptr()), 0, full);
    }
}
