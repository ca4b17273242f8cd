//! The numerical contract at the top of `kernel`, one test per statement.

mod support;

use palmvein_matcher::kernel::scalar::dot_i8_scalar;
use palmvein_matcher::kernel::MAX_DIMENSION;
use palmvein_matcher::{
    available_isas, scan_top_k_with, score, CoreError, GalleryView, ProbeBatch, TopKOutput,
};
use support::{norm_squared, Random, AWKWARD_LENGTHS};

/// Statement 1: probes holding -128 are refused; a -128 in the gallery is memory-safe and
/// panic-free on every ISA (results unspecified).
#[test]
fn statement_1_minus_128_is_refused_in_probes_and_harmless_in_the_gallery() {
    let rows = vec![i8::MIN; 64 * 20];
    let norms = vec![u32::MAX; 20];
    let live = vec![1u8; 20];
    let gallery = GalleryView {
        rows: &rows,
        stride_in_bytes: 64,
        dimension: 64,
        norms_squared: &norms,
        live: &live,
    };
    let probe = [-127i8; 64];
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        let (mut out_rows, mut out_scores) = (vec![0; 5], vec![0.0; 5]);
        let batch = ProbeBatch {
            vectors: &probe,
            norms_squared: &[1],
            score_floors: &[],
        };
        let mut output = TopKOutput {
            rows: &mut out_rows,
            scores: &mut out_scores,
        };
        assert!(
            scan_top_k_with(kernels, &gallery, 0..20, &batch, 5, &mut output).is_ok(),
            "{isa}"
        );
        let _ = kernels.dot_i8(&rows[..100], &rows[..100]);
        let mut bad = probe;
        bad[63] = i8::MIN;
        let batch = ProbeBatch {
            vectors: &bad,
            norms_squared: &[1],
            score_floors: &[],
        };
        let mut output = TopKOutput {
            rows: &mut out_rows,
            scores: &mut out_scores,
        };
        assert_eq!(
            scan_top_k_with(kernels, &gallery, 0..20, &batch, 5, &mut output),
            Err(CoreError::ProbeValue {
                probe: 0,
                element: 63
            })
        );
    }
}

/// Statement 2: i32 accumulators; the largest dimension at the extremes is exact, and the bound
/// 16129 * 4096 is far below i32::MAX.
#[test]
fn statement_2_the_largest_dot_is_exact_in_i32() {
    assert_eq!(MAX_DIMENSION, 4096);
    let bound: i64 = 127 * 127 * MAX_DIMENSION as i64;
    assert_eq!(bound, 66_064_384);
    assert!(bound < i64::from(i32::MAX));
    assert_eq!(i64::from(i32::MAX) / (127 * 127), 133_144);
    let (plus, minus) = (vec![127i8; MAX_DIMENSION], vec![-127i8; MAX_DIMENSION]);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        assert_eq!(i64::from(kernels.dot_i8(&plus, &plus)), bound, "{isa}");
        assert_eq!(i64::from(kernels.dot_i8(&minus, &minus)), bound, "{isa}");
        assert_eq!(i64::from(kernels.dot_i8(&plus, &minus)), -bound, "{isa}");
    }
}

/// Statement 3: every ISA equals the scalar kernel for every length, random and extreme.
#[test]
fn statement_3_every_isa_equals_scalar() {
    let mut random = Random::new(31);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for &length in AWKWARD_LENGTHS {
            let (a, b) = (random.vector(length), random.vector(length));
            assert_eq!(
                kernels.dot_i8(&a, &b),
                dot_i8_scalar(&a, &b),
                "{isa} length {length}"
            );
        }
    }
}

/// Statement 4: the pair sums that would saturate `vpmaddubsw` cannot occur, and the worst cases
/// of each trick (every pair at +-127 * +-127, all sign patterns) are exact on every ISA.
#[test]
fn statement_4_the_simd_tricks_are_exact_at_their_worst_case() {
    assert!(2 * 127 * 127 < i32::from(i16::MAX));
    assert!(
        2 * 128 * 128 > i32::from(i16::MAX),
        "-128 is excluded precisely because of this"
    );
    // Biased row (row + 128 in [1, 255]) times probe, four per vpdpbusd lane, over 4096 / 4 lanes.
    assert!(4i64 * 255 * 127 * (MAX_DIMENSION as i64 / 4) < i64::from(i32::MAX));
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for pattern in 0..16u32 {
            let sign = |bit: u32, index: usize| {
                if (pattern >> bit) & 1 == 1 && index.is_multiple_of(2) {
                    -127i8
                } else {
                    127
                }
            };
            let a: Vec<i8> = (0..256)
                .map(|index| sign(0, index) * if (pattern >> 1) & 1 == 1 { -1 } else { 1 })
                .collect();
            let b: Vec<i8> = (0..256)
                .map(|index| sign(2, index) * if (pattern >> 3) & 1 == 1 { -1 } else { 1 })
                .collect();
            assert_eq!(
                kernels.dot_i8(&a, &b),
                dot_i8_scalar(&a, &b),
                "{isa} pattern {pattern}"
            );
        }
    }
}

/// Statement 5: strides are in bytes and padding is never read (it holds -128 and random bytes
/// here); the view may end right after the last row's `dimension` bytes.
#[test]
fn statement_5_layout_strides_in_bytes_padding_never_read() {
    let mut random = Random::new(51);
    let (dimension, stride, count) = (100, 131, 40);
    let vectors: Vec<Vec<i8>> = (0..count).map(|_| random.vector(dimension)).collect();
    let mut padded = Vec::new();
    let mut compact = Vec::new();
    for vector in &vectors {
        padded.extend_from_slice(vector);
        padded.extend((0..stride - dimension).map(|index| {
            if index.is_multiple_of(2) {
                i8::MIN
            } else {
                random.element()
            }
        }));
        compact.extend_from_slice(vector);
    }
    padded.truncate((count - 1) * stride + dimension);
    let norms: Vec<u32> = vectors.iter().map(|vector| norm_squared(vector)).collect();
    let live = vec![1u8; count];
    let probes: Vec<i8> = random.vector(3 * dimension);
    let probe_norms: Vec<u32> = probes.chunks(dimension).map(norm_squared).collect();
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        let mut results = Vec::new();
        for (rows, stride_in_bytes) in [(&padded, stride), (&compact, dimension)] {
            let gallery = GalleryView {
                rows,
                stride_in_bytes,
                dimension,
                norms_squared: &norms,
                live: &live,
            };
            let (mut out_rows, mut out_scores) = (vec![0; 3 * 7], vec![0.0; 3 * 7]);
            let batch = ProbeBatch {
                vectors: &probes,
                norms_squared: &probe_norms,
                score_floors: &[],
            };
            let mut output = TopKOutput {
                rows: &mut out_rows,
                scores: &mut out_scores,
            };
            scan_top_k_with(kernels, &gallery, 0..count, &batch, 7, &mut output).unwrap();
            results.push((out_rows, out_scores));
        }
        assert_eq!(results[0], results[1], "{isa}");
    }
}

/// Statement 6: the score formula, its clamps, and exactness of its integer inputs in f64.
#[test]
fn statement_6_score_formula() {
    assert_eq!(score(50, 100, 100), 0.5);
    assert_eq!(score(-50, 100, 100), 0.0);
    assert_eq!(score(0, 100, 100), 0.0);
    assert_eq!(score(7, 0, 100), 0.0);
    assert_eq!(score(7, 100, 0), 0.0);
    assert_eq!(
        score(3, 2, 8).to_bits(),
        (3.0f64 / (2.0f64 * 8.0).sqrt()).to_bits()
    );
    let largest_norm: u64 = 127 * 127 * MAX_DIMENSION as u64;
    assert!(largest_norm < u64::from(u32::MAX));
    assert!(largest_norm * largest_norm < 1u64 << 53);
    let norm = largest_norm as u32;
    assert_eq!(score(norm as i32, norm, norm), 1.0);
}
