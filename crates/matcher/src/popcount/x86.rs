//! x86 popcount kernels. Both reduce a row to four u64 partial counts, then pack four rows'
//! partials into 16-bit fields of one register (a row's distance is at most 4096 bits), so one
//! horizontal fold yields four distances.

use std::arch::x86_64::*;

/// Four rows' partials (`[u64; 4]` lanes each, every lane below 2^16) folded to their sums.
#[inline]
#[target_feature(enable = "avx2")]
fn fold_four(partials: [__m256i; 4]) -> [u32; 4] {
    let packed = _mm256_or_si256(
        _mm256_or_si256(partials[0], _mm256_slli_epi64::<16>(partials[1])),
        _mm256_or_si256(
            _mm256_slli_epi64::<32>(partials[2]),
            _mm256_slli_epi64::<48>(partials[3]),
        ),
    );
    let halves = _mm_add_epi64(
        _mm256_castsi256_si128(packed),
        _mm256_extracti128_si256::<1>(packed),
    );
    let total = _mm_add_epi64(halves, _mm_unpackhi_epi64(halves, halves));
    let fields = _mm_cvtsi128_si64(total) as u64;
    std::array::from_fn(|index| ((fields >> (16 * index)) & 0xFFFF) as u32)
}

#[inline]
#[target_feature(enable = "avx2")]
fn fold_one(partial: __m256i) -> u32 {
    let halves = _mm_add_epi64(
        _mm256_castsi256_si128(partial),
        _mm256_extracti128_si256::<1>(partial),
    );
    let total = _mm_add_epi64(halves, _mm_unpackhi_epi64(halves, halves));
    _mm_cvtsi128_si64(total) as u32
}

/// `row ^ probe` over `bytes` (a multiple of 8) in 32-, 16- and 8-byte steps, each step's
/// difference handed to `count` zero-extended to 256 bits; returns the summed partials.
#[inline(always)]
unsafe fn row_partials(
    row: *const u8,
    probe: *const u8,
    bytes: usize,
    count: impl Fn(__m256i) -> __m256i,
) -> __m256i {
    // SAFETY (whole body): the caller's contract makes `bytes` bytes readable behind both
    // pointers; every load below stays below `bytes`. The callers enable AVX2.
    unsafe {
        let mut sum = _mm256_setzero_si256();
        let mut offset = 0;
        while offset + 32 <= bytes {
            let difference = _mm256_xor_si256(
                _mm256_loadu_si256(row.add(offset).cast()),
                _mm256_loadu_si256(probe.add(offset).cast()),
            );
            sum = _mm256_add_epi64(sum, count(difference));
            offset += 32;
        }
        if offset + 16 <= bytes {
            let difference = _mm_xor_si128(
                _mm_loadu_si128(row.add(offset).cast()),
                _mm_loadu_si128(probe.add(offset).cast()),
            );
            sum = _mm256_add_epi64(sum, count(_mm256_zextsi128_si256(difference)));
            offset += 16;
        }
        if offset + 8 <= bytes {
            let difference = _mm_xor_si128(
                _mm_loadl_epi64(row.add(offset).cast()),
                _mm_loadl_epi64(probe.add(offset).cast()),
            );
            sum = _mm256_add_epi64(sum, count(_mm256_zextsi128_si256(difference)));
        }
        sum
    }
}

/// Four u64 partial popcounts of 32 bytes: `vpshufb` looks up the count of each nibble, and
/// `vpsadbw` sums the byte counts into the four u64 lanes.
#[inline(always)]
unsafe fn nibble_counts(bits: __m256i) -> __m256i {
    // SAFETY: only called from AVX2 functions.
    unsafe {
        let table = _mm256_setr_epi8(
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2,
            3, 3, 4,
        );
        let low_nibble = _mm256_set1_epi8(0x0F);
        let low = _mm256_shuffle_epi8(table, _mm256_and_si256(bits, low_nibble));
        let high = _mm256_shuffle_epi8(
            table,
            _mm256_and_si256(_mm256_srli_epi16::<4>(bits), low_nibble),
        );
        _mm256_sad_epu8(_mm256_add_epi8(low, high), _mm256_setzero_si256())
    }
}

/// # Safety
/// See [`super::HammingFn`]; the CPU supports AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn hamming_avx2(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    bytes: usize,
    out: *mut u32,
) {
    // SAFETY: forwarded caller contract; AVX2 is enabled here.
    unsafe {
        let first = match bytes {
            32 => eight_rows_avx2::<1>(rows, stride, count, probe, out),
            64 => eight_rows_avx2::<2>(rows, stride, count, probe, out),
            _ => 0,
        };
        rows_from(first, rows, stride, count, probe, bytes, out, |bits| {
            nibble_counts(bits)
        })
    }
}

/// The d = 256 and d = 512 cases with AVX2 (`HALVES` × 32 bytes of bits a row), 8 rows per step:
/// each row's nibble counts leave four u64 partials (`vpsadbw`), and an unpack/permute tree sums
/// eight rows' partials at once instead of folding each group of four rows horizontally. Returns
/// the rows done (a multiple of 8).
///
/// # Safety
/// See [`super::HammingFn`] with `bytes == 32 * HALVES`; the CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn eight_rows_avx2<const HALVES: usize>(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    out: *mut u32,
) -> usize {
    // SAFETY (whole body): every row below `count` holds 32 * HALVES readable bytes at
    // `row * stride`, the probe as many; `out` takes `count` entries.
    unsafe {
        let mut probe_bits = [_mm256_setzero_si256(); HALVES];
        for (half, bits) in probe_bits.iter_mut().enumerate() {
            *bits = _mm256_loadu_si256(probe.add(32 * half).cast());
        }
        // Plain loops only: an iterator adapter would call this closure from a function compiled
        // without AVX2 (see `rows_from`).
        let partials = |row: usize| {
            let mut sum = _mm256_setzero_si256();
            let mut half = 0;
            while half < HALVES {
                sum = _mm256_add_epi64(
                    sum,
                    nibble_counts(_mm256_xor_si256(
                        _mm256_loadu_si256(rows.add(row * stride + 32 * half).cast()),
                        probe_bits[half],
                    )),
                );
                half += 1;
            }
            sum
        };
        // Rows r..r+4 as u64 sums in lanes [r, r + 1 | r + 2, r + 3].
        let four = |row: usize| {
            let (a, b, c, d) = (
                partials(row),
                partials(row + 1),
                partials(row + 2),
                partials(row + 3),
            );
            // [a0 + a1, b0 + b1 | a2 + a3, b2 + b3], and the same for c, d.
            let ab = _mm256_add_epi64(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
            let cd = _mm256_add_epi64(_mm256_unpacklo_epi64(c, d), _mm256_unpackhi_epi64(c, d));
            _mm256_add_epi64(
                _mm256_permute2x128_si256::<0x20>(ab, cd),
                _mm256_permute2x128_si256::<0x31>(ab, cd),
            )
        };
        // Sums are below 2^16: the upper four rows go to the high halves of the u64 lanes, and one
        // permute puts the eight u32 in row order.
        let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        let mut row = 0;
        while row + 8 <= count {
            let packed = _mm256_or_si256(four(row), _mm256_slli_epi64::<32>(four(row + 4)));
            _mm256_storeu_si256(
                out.add(row).cast(),
                _mm256_permutevar8x32_epi32(packed, order),
            );
            row += 8;
        }
        row
    }
}

/// Distances of rows `first..count`, four at a time through [`fold_four`], with `popcount`
/// turning 32 bytes into four u64 partial counts.
///
/// # Safety
/// See [`super::HammingFn`]; the callers enable AVX2 (and what `popcount` needs).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_from(
    first: usize,
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    bytes: usize,
    out: *mut u32,
    popcount: impl Fn(__m256i) -> __m256i + Copy,
) {
    // No closures here: a closure is a function of its own, compiled without the target features
    // of the kernel this is inlined into, so every intrinsic in it became a call (d = 512 ran at
    // 3 GB/s instead of at memory speed). Closures the kernels define inherit their features.
    // SAFETY (whole body): forwarded caller contract.
    unsafe {
        let at = |row: usize| rows.add(row * stride);
        let mut row = first;
        while row + 4 <= count {
            let distances = fold_four([
                row_partials(at(row), probe, bytes, popcount),
                row_partials(at(row + 1), probe, bytes, popcount),
                row_partials(at(row + 2), probe, bytes, popcount),
                row_partials(at(row + 3), probe, bytes, popcount),
            ]);
            std::ptr::copy_nonoverlapping(distances.as_ptr(), out.add(row), 4);
            row += 4;
        }
        while row < count {
            *out.add(row) = fold_one(row_partials(at(row), probe, bytes, popcount));
            row += 1;
        }
    }
}

/// # Safety
/// See [`super::HammingFn`]; the CPU supports AVX-512 VPOPCNTDQ and VL (and so AVX2).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512vpopcntdq")]
pub(super) unsafe fn hamming_vpopcntdq(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    bytes: usize,
    out: *mut u32,
) {
    // SAFETY: forwarded caller contract; the features are enabled here.
    unsafe {
        let first = match bytes {
            32 => eight_rows_of_32_bytes(rows, stride, count, probe, out),
            64 => eight_rows_of_64_bytes(rows, stride, count, probe, out),
            _ => 0,
        };
        rows_from(first, rows, stride, count, probe, bytes, out, |bits| {
            _mm256_popcnt_epi64(bits)
        })
    }
}

/// Two registers of u64 words to one whose 128-bit lane k holds [a's pair k summed, b's pair k
/// summed]. Inlined into the AVX-512 kernels (a plain function, unlike a closure, takes on the
/// target features of its caller).
#[inline(always)]
unsafe fn sum_pairs(a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: only called from AVX-512 F functions.
    unsafe { _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b)) }
}

/// Lanes [x0 + x1, x2 + x3, y0 + y1, y2 + y3] of two registers' 128-bit lanes.
#[inline(always)]
unsafe fn fold_lanes(x: __m512i, y: __m512i) -> __m512i {
    // SAFETY: only called from AVX-512 F functions.
    unsafe {
        _mm512_add_epi64(
            _mm512_shuffle_i64x2::<0b10_00_10_00>(x, y),
            _mm512_shuffle_i64x2::<0b11_01_11_01>(x, y),
        )
    }
}

/// The d = 256 case (32 bytes of bits a row), 8 rows per step: two rows per zmm, `vpopcntq`,
/// then an unpack/shuffle tree sums each row's four words, about 3 instructions a row instead of
/// a horizontal reduction per row. Returns the rows done (a multiple of 8).
///
/// # Safety
/// See [`super::HammingFn`] with `bytes == 32`; the CPU supports AVX-512 F and VPOPCNTDQ.
#[target_feature(enable = "avx2,avx512f,avx512vpopcntdq")]
unsafe fn eight_rows_of_32_bytes(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    out: *mut u32,
) -> usize {
    // SAFETY (whole body): every row below `count` holds 32 readable bytes at `row * stride`, the
    // probe 32; `out` takes `count` entries.
    unsafe {
        let probe_half = _mm256_loadu_si256(probe.cast());
        let probe_twice = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(probe_half), probe_half);
        // Packed bits (the stores' layout): two rows are one 64-byte load.
        let packed = stride == 32;
        let pair = |row: usize| {
            let both = if packed {
                _mm512_loadu_si512(rows.add(row * 32).cast())
            } else {
                let low = _mm256_loadu_si256(rows.add(row * stride).cast());
                let high = _mm256_loadu_si256(rows.add((row + 1) * stride).cast());
                _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
            };
            _mm512_popcnt_epi64(_mm512_xor_si512(both, probe_twice))
        };
        let mut row = 0;
        while row + 8 <= count {
            // a = rows 0|1, b = 2|3, c = 4|5, d = 6|7; each 128-bit lane holds two words of a row.
            let (a, b, c, d) = (pair(row), pair(row + 2), pair(row + 4), pair(row + 6));
            // 128-bit lane k of ab holds half-sums of [row 0 or 1, row 2 or 3]: lanes 0 and 1
            // rows 0 and 2, lanes 2 and 3 rows 1 and 3.
            let (ab, cd) = (sum_pairs(a, b), sum_pairs(c, d));
            // Lanes [ab0 + ab1, ab2 + ab3, cd0 + cd1, cd2 + cd3]: rows (0, 2), (1, 3), (4, 6), (5, 7).
            let sums = fold_lanes(ab, cd);
            let ordered = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 1, 3, 4, 6, 5, 7), sums);
            _mm256_storeu_si256(out.add(row).cast(), _mm512_cvtepi64_epi32(ordered));
            row += 8;
        }
        row
    }
}

/// The d = 512 case (64 bytes of bits a row), 8 rows per step: one zmm per row, `vpopcntq`, then
/// an unpack/shuffle tree sums each row's eight words for eight rows at once (the generic loop
/// folds every row's partials horizontally). Returns the rows done (a multiple of 8).
///
/// # Safety
/// See [`super::HammingFn`] with `bytes == 64`; the CPU supports AVX-512 F and VPOPCNTDQ.
#[target_feature(enable = "avx2,avx512f,avx512vpopcntdq")]
unsafe fn eight_rows_of_64_bytes(
    rows: *const u8,
    stride: usize,
    count: usize,
    probe: *const u8,
    out: *mut u32,
) -> usize {
    // SAFETY (whole body): every row below `count` holds 64 readable bytes at `row * stride`, the
    // probe 64; `out` takes `count` entries.
    unsafe {
        let probe_bits = _mm512_loadu_si512(probe.cast());
        let words = |row: usize| {
            _mm512_popcnt_epi64(_mm512_xor_si512(
                _mm512_loadu_si512(rows.add(row * stride).cast()),
                probe_bits,
            ))
        };
        let mut row = 0;
        while row + 8 <= count {
            let ab = sum_pairs(words(row), words(row + 1));
            let cd = sum_pairs(words(row + 2), words(row + 3));
            let ef = sum_pairs(words(row + 4), words(row + 5));
            let gh = sum_pairs(words(row + 6), words(row + 7));
            // fold_lanes(ab, cd) = [ab01, ab23, cd01, cd23]; the second fold leaves lanes [ab, cd,
            // ef, gh], so the u64 words are the eight rows' distances in order.
            let sums = fold_lanes(fold_lanes(ab, cd), fold_lanes(ef, gh));
            _mm256_storeu_si256(out.add(row).cast(), _mm512_cvtepi64_epi32(sums));
            row += 8;
        }
        row
    }
}
