//! The scan's f32 block filter only skips blocks: rows the exact order keeps always get through,
//! at near-ties f32 cannot tell apart and for all-zero rows while a list is not full.

mod support;

use palmvein_matcher::available_isas;
use support::scan_fixture::{run, Fixture};
use support::{norm_squared, Random};

/// Rows a few parts in 10^7 apart in score at the largest dimension, where f32 cannot tell them
/// apart: the scan's f32 block filter lets every row through that the exact order keeps.
#[test]
fn near_ties_at_the_largest_dimension_keep_their_exact_order() {
    let mut random = Random::new(13);
    let dimension = 4096;
    // A quarter of the elements are -1, 0 or 1: nudging one of those by 1 moves a score by about
    // 1e-7 relative; nudging a larger one, by about 1e-5.
    let base: Vec<i8> = (0..dimension)
        .map(|_| match random.below(4) {
            0 => random.below(3) as i8 - 1,
            _ => (random.below(200) as i32 - 100) as i8,
        })
        .collect();
    let small: Vec<usize> = (0..dimension)
        .filter(|&index| base[index].abs() <= 1)
        .collect();
    let nudged = |random: &mut Random| {
        let mut vector = base.clone();
        for _ in 0..1 + random.below(3) {
            let index = if random.below(5) == 0 {
                random.below(dimension)
            } else {
                small[random.below(small.len())]
            };
            vector[index] += if random.below(2) == 0 { 1 } else { -1 };
        }
        vector
    };
    let row_count = 240;
    let vectors: Vec<Vec<i8>> = (0..row_count).map(|_| nudged(&mut random)).collect();
    let fixture = Fixture {
        rows: vectors.concat(),
        stride: dimension,
        dimension,
        norms: vectors.iter().map(|vector| norm_squared(vector)).collect(),
        live: vec![1; row_count],
    };
    let probes: Vec<i8> = (0..17).flat_map(|_| nudged(&mut random)).collect();
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        // 16 and 17: the interleaved 16-probe tiles, with a remainder.
        for probe_count in [1usize, 2, 4, 16, 17] {
            let batch = &probes[..probe_count * dimension];
            for k in [1usize, 5, 17] {
                let (rows, scores) = run(kernels, &fixture.view(), 0..row_count, batch, k).unwrap();
                let context = format!("{isa} probes={probe_count} k={k}");
                fixture.assert_top_k(0..row_count, batch, k, (&rows, &scores), &context);
            }
        }
    }
}

#[test]
fn all_zero_rows_still_fill_the_list_with_score_zero() {
    let dimension = 64;
    let fixture = Fixture {
        rows: vec![0; dimension * 40],
        stride: dimension,
        dimension,
        norms: vec![0; 40],
        live: vec![1; 40],
    };
    let probes: Vec<i8> = (0..16 * dimension)
        .map(|index| (index % 11) as i8 - 5)
        .collect();
    for isa in available_isas() {
        for probe_count in [1usize, 2, 4, 16] {
            let batch = &probes[..probe_count * dimension];
            let (found, scores) =
                run(isa.kernels().unwrap(), &fixture.view(), 0..40, batch, 3).unwrap();
            assert_eq!(
                found,
                [0, 1, 2].repeat(probe_count),
                "{isa} probes={probe_count}"
            );
            assert_eq!(
                scores,
                vec![0.0; 3 * probe_count],
                "{isa} probes={probe_count}"
            );
        }
    }
}
