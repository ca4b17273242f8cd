//! Stage 1 and 2 of the two-stage search: every popcount kernel available here equals the
//! scalar oracle, and the candidate lists and pair scores equal a brute force.

mod support;

use palmvein_matcher::kernel::scalar::dot_i8_scalar;
use palmvein_matcher::popcount::{hamming_scalar, sign_bits_into, sign_bytes};
use palmvein_matcher::{
    available_isas, available_popcount_isas, nearest_by_sign_bits_with, score, score_pairs_with,
    CandidatesOutput, CoreError, GalleryView, PopcountIsa, ProbeBatch, SignBitsView,
};
use support::{norm_squared, Random};

fn random_bytes(random: &mut Random, length: usize) -> Vec<u8> {
    (0..length).map(|_| random.next_u64() as u8).collect()
}

#[test]
fn scalar_and_the_cpu_s_popcount_isas_are_available() {
    let isas = available_popcount_isas();
    assert_eq!(isas.last(), Some(&PopcountIsa::Scalar));
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            assert!(isas.contains(&PopcountIsa::Avx2));
        }
        if std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            assert!(isas.contains(&PopcountIsa::Vpopcntdq));
        }
    }
    for isa in available_isas() {
        assert!(PopcountIsa::for_isa(isa).is_available(), "{isa}");
    }
}

#[test]
fn every_popcount_kernel_equals_the_oracle_for_every_length_count_and_stride() {
    let mut random = Random::new(7);
    for isa in available_popcount_isas() {
        let kernel = isa.kernel().unwrap();
        for bytes in (8..=512).step_by(8) {
            for (count, extra_stride) in [
                (0, 0),
                (1, 0),
                (3, 8),
                (4, 0),
                (5, 24),
                (8, 0),
                (9, 40),
                (11, 0),
                (17, 8),
                (33, 0),
            ] {
                let stride = bytes + extra_stride;
                // The buffer ends right after the last row's bits: nothing past it is read.
                let rows = random_bytes(&mut random, count.max(1) * stride - (stride - bytes));
                let probe = random_bytes(&mut random, bytes);
                let mut out = vec![u32::MAX; count];
                kernel.distances(&rows, stride, &probe, &mut out);
                for (row, &distance) in out.iter().enumerate() {
                    assert_eq!(
                        distance,
                        hamming_scalar(&rows[row * stride..][..bytes], &probe),
                        "{isa} bytes {bytes} count {count} row {row}"
                    );
                }
            }
        }
    }
}

#[test]
fn every_popcount_kernel_is_exact_at_the_extremes() {
    for isa in available_popcount_isas() {
        let kernel = isa.kernel().unwrap();
        for bytes in [8usize, 16, 24, 32, 40, 64, 128, 504, 512] {
            let (ones, zeros) = (vec![0xFFu8; bytes * 5], vec![0u8; bytes]);
            let mut out = vec![0; 5];
            kernel.distances(&ones, bytes, &zeros, &mut out);
            assert_eq!(out, vec![8 * bytes as u32; 5], "{isa} bytes {bytes}");
            kernel.distances(&ones, bytes, &ones[..bytes], &mut out);
            assert_eq!(out, vec![0; 5], "{isa} bytes {bytes}");
        }
    }
}

#[test]
fn sign_bits_set_a_bit_per_negative_element_and_pad_with_zeros() {
    assert_eq!(sign_bytes(1), 8);
    assert_eq!(sign_bytes(64), 8);
    assert_eq!(sign_bytes(65), 16);
    assert_eq!(sign_bytes(256), 32);
    let mut bits = vec![0xAA; 8];
    sign_bits_into(&[-1, 0, 1, -127, 5, 6, 7, -8, -9], &mut bits);
    assert_eq!(bits, vec![0b1000_1001, 1, 0, 0, 0, 0, 0, 0]);
}

struct Fixture {
    bits: Vec<u8>,
    live: Vec<u8>,
    stride: usize,
    bytes: usize,
}

fn fixture(random: &mut Random, rows: usize, dimension: usize) -> Fixture {
    let bytes = sign_bytes(dimension);
    let stride = bytes + 8;
    let vectors: Vec<Vec<i8>> = (0..rows)
        .map(|row| {
            if row % 9 == 4 {
                vec![-3; dimension]
            } else {
                random.vector(dimension)
            }
        })
        .collect();
    let mut bits = vec![0u8; rows * stride];
    for (row, vector) in vectors.iter().enumerate() {
        sign_bits_into(vector, &mut bits[row * stride..][..bytes]);
        bits[row * stride + bytes..(row + 1) * stride].fill(0xFF); // padding is never read
    }
    let live = (0..rows).map(|row| u8::from(row % 7 != 3)).collect();
    Fixture {
        bits,
        live,
        stride,
        bytes,
    }
}

#[test]
fn stage_one_keeps_the_c_nearest_live_rows_per_probe_in_order() {
    let mut random = Random::new(11);
    for dimension in [64usize, 100, 256, 512] {
        let f = fixture(&mut random, 700, dimension);
        let view = SignBitsView {
            bits: &f.bits,
            stride: f.stride,
            bytes: f.bytes,
            live: &f.live,
        };
        let probes: Vec<Vec<i8>> = (0..5).map(|_| random.vector(dimension)).collect();
        let mut probe_bits = vec![0u8; probes.len() * f.bytes];
        for (probe, vector) in probes.iter().enumerate() {
            sign_bits_into(vector, &mut probe_bits[probe * f.bytes..][..f.bytes]);
        }
        for isa in available_popcount_isas() {
            for (range, c) in [(0..700, 10), (33..650, 64), (100..110, 32), (5..5, 3)] {
                // The range in two pieces, the later one first (so rows of equal distance and lower
                // row arrive after the list holds higher ones), merged into the same lists.
                let middle = (range.start + range.end) / 2;
                let base_row = 1000;
                let mut rows = vec![-1; probes.len() * c];
                let mut distances = vec![u32::MAX; probes.len() * c];
                for piece in [middle..range.end, range.start..middle] {
                    let mut output = CandidatesOutput {
                        rows: &mut rows,
                        distances: &mut distances,
                    };
                    nearest_by_sign_bits_with(
                        isa.kernel().unwrap(),
                        &view,
                        piece,
                        base_row,
                        &probe_bits,
                        c,
                        &mut output,
                    )
                    .unwrap();
                }
                for probe in 0..probes.len() {
                    let bits = &probe_bits[probe * f.bytes..][..f.bytes];
                    let mut expected: Vec<(u32, i32)> = range
                        .clone()
                        .filter(|&row| f.live[row] != 0)
                        .map(|row| {
                            (
                                hamming_scalar(&f.bits[row * f.stride..][..f.bytes], bits),
                                (base_row + row) as i32,
                            )
                        })
                        .collect();
                    expected.sort_unstable();
                    expected.truncate(c);
                    expected.resize(c, (u32::MAX, -1));
                    let got: Vec<(u32, i32)> = (0..c)
                        .map(|slot| (distances[probe * c + slot], rows[probe * c + slot]))
                        .collect();
                    assert_eq!(
                        got, expected,
                        "{isa} d {dimension} range {range:?} c {c} probe {probe}"
                    );
                }
            }
        }
    }
}

#[test]
fn stage_one_refuses_bad_arguments() {
    let (bits, live) = (vec![0u8; 64], vec![1u8; 2]);
    let kernel = PopcountIsa::Scalar.kernel().unwrap();
    let (mut rows, mut distances) = (vec![0; 4], vec![0; 4]);
    let mut run_at =
        |base_row: usize, bytes: usize, range: std::ops::Range<usize>, probe: &[u8], c: usize| {
            let view = SignBitsView {
                bits: &bits,
                stride: 32,
                bytes,
                live: &live,
            };
            let mut output = CandidatesOutput {
                rows: &mut rows,
                distances: &mut distances,
            };
            nearest_by_sign_bits_with(kernel, &view, range, base_row, probe, c, &mut output)
        };
    // Rows are written as i32: a piece whose rows would pass i32::MAX is refused.
    assert_eq!(
        run_at(i32::MAX as usize - 1, 32, 0..2, &[0; 32], 1),
        Err(CoreError::RowRange {
            row_start: i32::MAX as usize - 1,
            row_end: i32::MAX as usize + 1
        })
    );
    let mut run = |bytes: usize, range: std::ops::Range<usize>, probe: &[u8], c: usize| {
        run_at(0, bytes, range, probe, c)
    };
    assert_eq!(
        run(12, 0..2, &[0; 12], 1),
        Err(CoreError::SignBytes {
            bytes: 12,
            stride: 32
        })
    );
    assert_eq!(
        run(40, 0..2, &[0; 40], 1),
        Err(CoreError::SignBytes {
            bytes: 40,
            stride: 32
        })
    );
    assert!(matches!(
        run(32, 0..3, &[0; 32], 1),
        Err(CoreError::GalleryTooShort { .. })
    ));
    assert_eq!(
        run(32, 0..2, &[0; 31], 1),
        Err(CoreError::ProbeBitsLength {
            length: 31,
            bytes: 32
        })
    );
    assert_eq!(
        run(32, 0..2, &[0; 32], 0),
        Err(CoreError::Candidates { c: 0 })
    );
    assert!(matches!(
        run(32, 0..2, &[0; 32], 5),
        Err(CoreError::OutputTooShort { .. })
    ));
    assert_eq!(run(32, 0..2, &[0; 64], 2), Ok(()));
}

#[test]
fn stage_two_scores_pairs_exactly_on_every_isa() {
    let mut random = Random::new(13);
    let (dimension, stride, count) = (100, 128, 50);
    let vectors: Vec<Vec<i8>> = (0..count).map(|_| random.vector(dimension)).collect();
    let mut rows = vec![0i8; count * stride];
    for (row, vector) in vectors.iter().enumerate() {
        rows[row * stride..][..dimension].copy_from_slice(vector);
    }
    let norms: Vec<u32> = vectors.iter().map(|vector| norm_squared(vector)).collect();
    // Stage 2 takes no live flags: it scores the rows it is given.
    let gallery = GalleryView {
        rows: &rows,
        stride_in_bytes: stride,
        dimension,
        norms_squared: &norms,
        live: &[],
    };
    let probes = random.vector(3 * dimension);
    let probe_norms: Vec<u32> = probes.chunks(dimension).map(norm_squared).collect();
    let batch = ProbeBatch {
        vectors: &probes,
        norms_squared: &probe_norms,
        score_floors: &[],
    };
    let pair_rows = [0, 49, 7, 7, 20];
    let pair_probes = [0u32, 2, 1, 0, 2];
    for isa in available_isas() {
        let mut scores = vec![0.0; 5];
        score_pairs_with(
            isa.kernels().unwrap(),
            &gallery,
            &pair_rows,
            &pair_probes,
            &batch,
            &mut scores,
        )
        .unwrap();
        for (index, (&row, &probe)) in pair_rows.iter().zip(&pair_probes).enumerate() {
            let probe_vector = &probes[probe as usize * dimension..][..dimension];
            let expected = score(
                dot_i8_scalar(&vectors[row as usize], probe_vector),
                probe_norms[probe as usize],
                norms[row as usize],
            );
            assert_eq!(
                scores[index].to_bits(),
                expected.to_bits(),
                "{isa} pair {index}"
            );
        }
        let mut scores = vec![0.0; 5];
        let kernels = isa.kernels().unwrap();
        assert!(matches!(
            score_pairs_with(kernels, &gallery, &[50], &[0], &batch, &mut scores),
            Err(CoreError::GalleryTooShort { .. })
        ));
        assert!(matches!(
            score_pairs_with(kernels, &gallery, &[-1], &[0], &batch, &mut scores),
            Err(CoreError::PairRow { .. })
        ));
        assert!(matches!(
            score_pairs_with(kernels, &gallery, &[1], &[3], &batch, &mut scores),
            Err(CoreError::PairProbe { .. })
        ));
        assert!(matches!(
            score_pairs_with(kernels, &gallery, &[1, 2], &[0], &batch, &mut scores),
            Err(CoreError::PairsLength { .. })
        ));
    }
}
