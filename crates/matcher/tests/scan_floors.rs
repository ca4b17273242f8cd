//! Score floors (`ProbeBatch::score_floors`): a gallery scanned slice by slice, each slice
//! starting from the k-th best score found so far, then merged, equals one scan of the whole;
//! a slice leaves out rows below its floor; a floor per probe or none.

mod support;

use palmvein_matcher::{available_isas, CoreError};
use support::scan_fixture::{run_above, Fixture};
use support::Random;

const DIMENSION: usize = 64;
const ROWS: usize = 400;

/// 17 probes (a chunk of 16 and one more), each near a gallery row.
fn probes_near_rows(random: &mut Random, fixture: &Fixture) -> Vec<i8> {
    (0..17)
        .flat_map(|_| fixture.probe_near_a_row(random))
        .collect()
}

#[test]
fn slices_scanned_above_the_running_floor_merge_to_the_whole_scan() {
    let mut random = Random::new(21);
    let fixture = Fixture::new(&mut random, ROWS, DIMENSION, DIMENSION);
    let probes = probes_near_rows(&mut random, &fixture);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for k in [1usize, 4, 10] {
            let mut merged: Vec<Vec<(f64, i32)>> = vec![Vec::new(); 17];
            for slice in [0..90, 90..91, 91..250, 250..ROWS] {
                let floors: Vec<f64> = merged
                    .iter()
                    .map(|list| if list.len() == k { list[k - 1].0 } else { 0.0 })
                    .collect();
                let (rows, scores) =
                    run_above(kernels, &fixture.view(), slice, &probes, k, &floors).unwrap();
                for (probe, list) in merged.iter_mut().enumerate() {
                    for slot in probe * k..(probe + 1) * k {
                        if rows[slot] >= 0 {
                            list.push((scores[slot], rows[slot]));
                        }
                    }
                    list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    list.truncate(k);
                }
            }
            for (probe, vector) in probes.chunks(DIMENSION).enumerate() {
                let (expected_rows, expected_scores) = fixture.brute_force(0..ROWS, vector, k);
                let rows: Vec<i32> = merged[probe].iter().map(|&(_, row)| row).collect();
                let bits: Vec<u64> = merged[probe]
                    .iter()
                    .map(|&(score, _)| score.to_bits())
                    .collect();
                let expected_bits: Vec<u64> = expected_scores
                    .iter()
                    .map(|score| score.to_bits())
                    .collect();
                let context = format!("{isa} k={k} probe={probe}");
                assert_eq!(rows, expected_rows, "{context}");
                assert_eq!(bits, expected_bits, "{context}");
            }
        }
    }
}

#[test]
fn a_slice_leaves_out_rows_below_the_floor_of_its_probe() {
    let mut random = Random::new(22);
    let fixture = Fixture::new(&mut random, ROWS, DIMENSION, DIMENSION);
    let probes = probes_near_rows(&mut random, &fixture);
    let k = 10;
    // Each probe's floor: its 3rd best score over the whole gallery (probe 0: no floor).
    let floors: Vec<f64> = probes
        .chunks(DIMENSION)
        .enumerate()
        .map(|(probe, vector)| {
            if probe == 0 {
                0.0
            } else {
                fixture.brute_force(0..ROWS, vector, 3).1[2]
            }
        })
        .collect();
    for isa in available_isas() {
        let (rows, scores) = run_above(
            isa.kernels().unwrap(),
            &fixture.view(),
            0..ROWS,
            &probes,
            k,
            &floors,
        )
        .unwrap();
        for (probe, vector) in probes.chunks(DIMENSION).enumerate() {
            let slots = probe * k..(probe + 1) * k;
            let (expected_rows, expected_scores) = fixture.brute_force(0..ROWS, vector, k);
            // At least 3 (more where rows tie with the 3rd: every 7th row is a duplicate).
            let kept = expected_scores
                .iter()
                .take_while(|&&score| score >= floors[probe])
                .count();
            let context = format!("{isa} probe={probe}");
            // The rows at or above the floor, in order, then nothing.
            assert_eq!(
                rows[slots.start..slots.start + kept],
                expected_rows[..kept],
                "{context}"
            );
            assert!(
                rows[slots.start + kept..slots.end]
                    .iter()
                    .all(|&row| row == -1),
                "{context}"
            );
            assert!(
                scores[slots]
                    .iter()
                    .take(kept)
                    .all(|&score| score >= floors[probe]),
                "{context}"
            );
        }
    }
}

#[test]
fn floors_are_none_or_one_per_probe() {
    let mut random = Random::new(23);
    let fixture = Fixture::new(&mut random, 20, DIMENSION, DIMENSION);
    let probes = random.vector(2 * DIMENSION);
    for isa in available_isas() {
        assert_eq!(
            run_above(
                isa.kernels().unwrap(),
                &fixture.view(),
                0..20,
                &probes,
                3,
                &[0.5]
            ),
            Err(CoreError::ScoreFloorsLength {
                length: 1,
                probe_count: 2
            }),
            "{isa}"
        );
    }
}
