//! Every ISA's scan tiles (16x1, 8x2, 4x4, and 16x16 on interleaved probes where a table has it)
//! equal the scalar oracle pair by pair, including the biased-row trick at the extremes and
//! dimension tails of every width; the 16x16 tile's row mask answers as the scan's f32 test does.

use super::scalar::dot_i8_scalar;
use super::{available_isas, BlockGate, EncodedProbes, Kernels};

struct Random(u64);

impl Random {
    fn element(&mut self) -> i8 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (((self.0 >> 33) % 255) as i32 - 127) as i8
    }
}

const DIMENSIONS: &[usize] = &[
    1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128, 129, 256, 300, 512, 1023, 4096,
];

fn check<const R: usize, const P: usize>(
    kernels: &Kernels,
    tile: super::TileFn<R, P>,
    rows: &[Vec<i8>],
    probes: &[Vec<i8>],
    dimension: usize,
) {
    let row_pointers: [*const i8; R] = std::array::from_fn(|index| rows[index].as_ptr());
    let vectors: Vec<i8> = probes[..P].concat();
    let encoded = EncodedProbes::new(kernels, &vectors, dimension);
    let probe_pointers: [*const i8; P] = std::array::from_fn(|index| encoded.pointers()[index]);
    let sums: [i32; P] =
        std::array::from_fn(|index| probes[index].iter().map(|&value| i32::from(value)).sum());
    // SAFETY: the ISA is available (from `available_isas`), every row has `dimension` elements,
    // the probes are in the table's encoding, and `sums` are the probes' element sums.
    let dots = unsafe { tile(&row_pointers, &probe_pointers, &sums, dimension) };
    for (row, row_dots) in dots.iter().enumerate() {
        for (probe, &dot) in row_dots.iter().enumerate() {
            assert_eq!(
                dot,
                dot_i8_scalar(&rows[row], &probes[probe]),
                "{} tile {R}x{P} dimension {dimension} row {row} probe {probe}",
                kernels.isa
            );
        }
    }
}

/// The interleaved 16x16 tile: its dots, and its gate against the scan's f32 test, with gates
/// that let nothing through, everything, and exactly one pair.
fn check_interleaved(kernels: &Kernels, rows: &[Vec<i8>], probes: &[Vec<i8>], dimension: usize) {
    let Some(tile) = kernels.tile_16x16 else {
        return;
    };
    let row_pointers: [*const i8; 16] = std::array::from_fn(|index| rows[index].as_ptr());
    let vectors: Vec<i8> = probes[..16].concat();
    let encoded = EncodedProbes::new(kernels, &vectors, dimension);
    let interleaved = encoded
        .interleaved_16(0)
        .expect("a table with the tile interleaves");
    assert!(encoded.interleaved_16(1).is_none());
    let sums: [i32; 16] =
        std::array::from_fn(|index| probes[index].iter().map(|&value| i32::from(value)).sum());
    let expected: Vec<Vec<i32>> = rows[..16]
        .iter()
        .map(|row| {
            probes[..16]
                .iter()
                .map(|probe| dot_i8_scalar(row, probe))
                .collect()
        })
        .collect();
    let norm_roots: [f32; 16] = std::array::from_fn(|index| 1.0 + index as f32 / 8.0);
    let mut one = [f32::MAX; 16];
    // Row 5 passes for probe 9 exactly (its dot equals the limit), other rows as their dots say.
    one[9] = expected[5][9] as f32 / norm_roots[5];
    // The scan's f32 test, row by row.
    let passing = |gate_roots: &[f32; 16]| -> u16 {
        (0..16)
            .filter(|&row| {
                (0..16)
                    .any(|probe| expected[row][probe] as f32 >= gate_roots[probe] * norm_roots[row])
            })
            .fold(0, |mask, row| mask | 1 << row)
    };
    assert_ne!(passing(&one), 0);
    for gate_roots in [[f32::MAX; 16], [f32::MIN; 16], one] {
        let gate = BlockGate {
            gate_roots: &gate_roots,
            norm_roots: &norm_roots,
        };
        let mut dots = [[0i32; 16]; 16];
        // SAFETY: the ISA is available, rows hold `dimension` elements, the chunk interleaves
        // these 16 probes and `sums` are their element sums.
        let passed = unsafe {
            tile(
                &row_pointers,
                interleaved,
                &sums,
                dimension,
                &gate,
                &mut dots,
            )
        };
        let context = format!("{} tile 16x16 dimension {dimension}", kernels.isa);
        assert_eq!(passed, passing(&gate_roots), "{context} gate");
        for (row, row_dots) in dots.iter().enumerate() {
            assert_eq!(row_dots[..], expected[row][..], "{context} row {row}");
        }
    }
}

fn check_all_shapes(kernels: &Kernels, make: &mut dyn FnMut(usize, usize) -> Vec<i8>) {
    for &dimension in DIMENSIONS {
        let rows: Vec<Vec<i8>> = (0..16).map(|index| make(dimension, index)).collect();
        let probes: Vec<Vec<i8>> = (0..16).map(|index| make(dimension, 100 + index)).collect();
        check::<16, 1>(kernels, kernels.tile_16x1, &rows, &probes, dimension);
        check::<8, 2>(kernels, kernels.tile_8x2, &rows, &probes, dimension);
        check::<4, 4>(kernels, kernels.tile_4x4, &rows, &probes, dimension);
        check_interleaved(kernels, &rows, &probes, dimension);
    }
}

#[test]
fn tiles_equal_scalar_on_random_inputs() {
    let mut random = Random(7);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        check_all_shapes(kernels, &mut |dimension, _| {
            (0..dimension).map(|_| random.element()).collect()
        });
    }
}

#[test]
fn tiles_equal_scalar_at_the_extremes() {
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        // Rows and probes each all +127 or all -127, so every sign combination is a pair.
        check_all_shapes(kernels, &mut |dimension, index| {
            vec![if index % 3 == 0 { -127 } else { 127 }; dimension]
        });
        check_all_shapes(kernels, &mut |dimension, index| {
            vec![if index % 2 == 0 { 127 } else { -127 }; dimension]
        });
    }
}

#[test]
fn random_elements_cover_the_symmetric_range_only() {
    let mut random = Random(9);
    let values: Vec<i8> = (0..100_000).map(|_| random.element()).collect();
    assert_eq!(values.iter().min(), Some(&-127));
    assert_eq!(values.iter().max(), Some(&127));
}
