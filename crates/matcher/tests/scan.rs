//! The batched scan equals a brute-force scalar scan: top-k, ties by row, dead rows skipped,
//! strides with padding, sub-ranges, and batch results identical to single-probe results.

mod support;

use palmvein_matcher::{
    available_isas, scan_top_k_with, CoreError, GalleryView, ProbeBatch, TopKOutput,
};
use support::scan_fixture::{run, Fixture};
use support::{norm_squared, Random};

#[test]
fn scan_equals_brute_force_for_every_isa() {
    let mut random = Random::new(11);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for &(dimension, stride, row_count) in &[
            (256, 256, 300),
            (128, 160, 77),
            (37, 40, 50),
            (512, 512, 33),
            (65, 65, 16),
            (1, 3, 20),
        ] {
            let fixture = Fixture::new(&mut random, row_count, dimension, stride);
            for probe_count in [1usize, 2, 3, 4, 5, 7, 9, 16, 21, 32] {
                let probes: Vec<i8> = (0..probe_count)
                    .flat_map(|_| fixture.probe_near_a_row(&mut random))
                    .collect();
                for k in [1usize, 3, 10, row_count + 5] {
                    for range in [
                        0..row_count,
                        3..row_count - 1,
                        5..5,
                        17.min(row_count)..row_count,
                    ] {
                        let (rows, scores) =
                            run(kernels, &fixture.view(), range.clone(), &probes, k).unwrap();
                        let context = format!("{isa} d={dimension} stride={stride} probes={probe_count} k={k} range={range:?}");
                        fixture.assert_top_k(range, &probes, k, (&rows, &scores), &context);
                    }
                }
            }
        }
    }
}

#[test]
fn batch_results_are_identical_to_single_probe_results() {
    let mut random = Random::new(12);
    let fixture = Fixture::new(&mut random, 500, 256, 256);
    // 19: one interleaved chunk of 16 probes, then a remainder of 3.
    let probes = random.vector(19 * 256);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        let (batch_rows, batch_scores) = run(kernels, &fixture.view(), 0..500, &probes, 8).unwrap();
        for (probe, vector) in probes.chunks(256).enumerate() {
            let (rows, scores) = run(kernels, &fixture.view(), 0..500, vector, 8).unwrap();
            assert_eq!(
                batch_rows[probe * 8..probe * 8 + 8],
                rows[..],
                "{isa} probe {probe}"
            );
            assert_eq!(
                batch_scores[probe * 8..probe * 8 + 8],
                scores[..],
                "{isa} probe {probe}"
            );
        }
    }
}

#[test]
fn ties_rank_by_row_and_dead_rows_never_appear() {
    let dimension = 64;
    let row = vec![90i8; dimension];
    let mut rows = Vec::new();
    for _ in 0..40 {
        rows.extend_from_slice(&row);
    }
    let norms = vec![norm_squared(&row); 40];
    let live: Vec<u8> = (0..40).map(|index| u8::from(index % 3 != 1)).collect();
    let gallery = GalleryView {
        rows: &rows,
        stride_in_bytes: dimension,
        dimension,
        norms_squared: &norms,
        live: &live,
    };
    for isa in available_isas() {
        let (found, scores) = run(isa.kernels().unwrap(), &gallery, 0..40, &row, 6).unwrap();
        assert_eq!(found, vec![0, 2, 3, 5, 6, 8], "{isa}");
        assert!(scores.iter().all(|&score| score == 1.0), "{isa} {scores:?}");
    }
}

#[test]
fn a_scan_with_no_live_rows_fills_minus_one_and_zero() {
    let rows = vec![5i8; 32 * 20];
    let norms = vec![800u32; 20];
    let live = vec![0u8; 20];
    let gallery = GalleryView {
        rows: &rows,
        stride_in_bytes: 32,
        dimension: 32,
        norms_squared: &norms,
        live: &live,
    };
    let (found, scores) = run(
        palmvein_matcher::active_kernels(),
        &gallery,
        0..20,
        &[1i8; 64],
        3,
    )
    .unwrap();
    assert_eq!(found, vec![-1; 6]);
    assert_eq!(scores, vec![0.0; 6]);
}

#[test]
#[allow(clippy::reversed_empty_ranges)] // 5..4 is the invalid range under test
fn scan_arguments_are_validated_with_precise_errors() {
    let rows = vec![1i8; 100];
    let norms = vec![10u32; 10];
    let live = vec![1u8; 10];
    let gallery = GalleryView {
        rows: &rows,
        stride_in_bytes: 10,
        dimension: 8,
        norms_squared: &norms,
        live: &live,
    };
    let kernels = palmvein_matcher::active_kernels();
    let probe = [1i8; 8];
    let error = |gallery: &GalleryView, range, probes: &[i8], k| {
        run(kernels, gallery, range, probes, k).unwrap_err()
    };
    assert_eq!(
        error(
            &GalleryView {
                dimension: 0,
                ..gallery
            },
            0..1,
            &[],
            1
        ),
        CoreError::Dimension { dimension: 0 }
    );
    assert_eq!(
        error(
            &GalleryView {
                stride_in_bytes: 7,
                ..gallery
            },
            0..1,
            &probe,
            1
        ),
        CoreError::Stride {
            stride_in_bytes: 7,
            dimension: 8
        }
    );
    assert_eq!(
        error(&gallery, 5..4, &probe, 1),
        CoreError::RowRange {
            row_start: 5,
            row_end: 4
        }
    );
    // Row 9 ends at byte 98 <= 100: fine; a view one row shorter is not.
    assert!(run(kernels, &gallery, 0..10, &probe, 1).is_ok());
    let short = GalleryView {
        rows: &rows[..97],
        ..gallery
    };
    assert_eq!(
        error(&short, 0..10, &probe, 1),
        CoreError::GalleryTooShort {
            row_end: 10,
            needed_bytes: 98,
            length: 97
        }
    );
    assert_eq!(
        error(
            &GalleryView {
                live: &live[..9],
                ..gallery
            },
            0..10,
            &probe,
            1
        ),
        CoreError::PerRowTooShort {
            argument: "live",
            row_end: 10,
            length: 9
        }
    );
    assert_eq!(
        error(&gallery, 0..10, &probe[..7], 1),
        CoreError::ProbesLength {
            length: 7,
            probe_count: 1,
            dimension: 8
        }
    );
    let mut bad = [1i8; 16];
    bad[11] = i8::MIN;
    assert_eq!(
        error(&gallery, 0..10, &bad, 1),
        CoreError::ProbeValue {
            probe: 1,
            element: 3
        }
    );
    assert_eq!(error(&gallery, 0..10, &probe, 0), CoreError::K { k: 0 });
    assert_eq!(
        error(&gallery, 0..10, &probe, 1025),
        CoreError::K { k: 1025 }
    );
    let probe_norms = [64u32];
    let batch = ProbeBatch {
        vectors: &probe,
        norms_squared: &probe_norms,
        score_floors: &[],
    };
    let (mut out_rows, mut out_scores) = (vec![0; 2], vec![0.0; 3]);
    let result = scan_top_k_with(
        kernels,
        &gallery,
        0..10,
        &batch,
        3,
        &mut TopKOutput {
            rows: &mut out_rows,
            scores: &mut out_scores,
        },
    );
    assert_eq!(
        result,
        Err(CoreError::OutputTooShort {
            argument: "outRows",
            needed: 3,
            length: 2
        })
    );
    assert!(CoreError::OutputTooShort {
        argument: "outRows",
        needed: 3,
        length: 2
    }
    .to_string()
    .contains("outRows is too short"));
}
