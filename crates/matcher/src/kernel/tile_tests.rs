//! Every ISA's scan tiles (16x1, 8x2, 4x4) equal the scalar oracle pair by pair, including the
//! biased-row trick at the extremes and dimension tails of every width.

use super::scalar::dot_i8_scalar;
use super::{available_isas, EncodedProbes, Kernels};

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
    let encoded = EncodedProbes::new(kernels.probe_encoding, &vectors, dimension);
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

fn check_all_shapes(kernels: &Kernels, make: &mut dyn FnMut(usize, usize) -> Vec<i8>) {
    for &dimension in DIMENSIONS {
        let rows: Vec<Vec<i8>> = (0..16).map(|index| make(dimension, index)).collect();
        let probes: Vec<Vec<i8>> = (0..4).map(|index| make(dimension, 100 + index)).collect();
        check::<16, 1>(kernels, kernels.tile_16x1, &rows, &probes, dimension);
        check::<8, 2>(kernels, kernels.tile_8x2, &rows, &probes, dimension);
        check::<4, 4>(kernels, kernels.tile_4x4, &rows, &probes, dimension);
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
