//! A gallery fixture for the scan tests, its brute-force top k, and one scan call.

use palmvein_matcher::kernel::scalar::dot_i8_scalar;
use palmvein_matcher::{
    scan_top_k_with, score, CoreError, GalleryView, Kernels, ProbeBatch, TopKOutput,
};

use super::{norm_squared, Random};

pub struct Fixture {
    pub rows: Vec<i8>,
    pub stride: usize,
    pub dimension: usize,
    pub norms: Vec<u32>,
    pub live: Vec<u8>,
}

impl Fixture {
    /// `row_count` rows; every 7th row duplicates an earlier one (equal scores), ~1/5 are dead,
    /// padding bytes hold -128 so that reading them would show.
    pub fn new(random: &mut Random, row_count: usize, dimension: usize, stride: usize) -> Fixture {
        let mut rows = vec![i8::MIN; row_count * stride];
        let mut vectors: Vec<Vec<i8>> = Vec::new();
        for row in 0..row_count {
            let vector = if row % 7 == 6 {
                vectors[random.below(row)].clone()
            } else {
                random.vector(dimension)
            };
            rows[row * stride..row * stride + dimension].copy_from_slice(&vector);
            vectors.push(vector);
        }
        let norms = vectors.iter().map(|vector| norm_squared(vector)).collect();
        let live = (0..row_count)
            .map(|_| u8::from(random.below(5) != 0) * (1 + random.below(200) as u8))
            .collect();
        Fixture {
            rows,
            stride,
            dimension,
            norms,
            live,
        }
    }

    /// A probe near a random row (a quarter of its elements replaced): high scores and real
    /// competition for the top slots.
    pub fn probe_near_a_row(&self, random: &mut Random) -> Vec<i8> {
        let row = random.below(self.norms.len());
        let base = &self.rows[row * self.stride..row * self.stride + self.dimension];
        base.iter()
            .map(|&value| {
                if random.below(4) == 0 {
                    random.element()
                } else {
                    value
                }
            })
            .collect()
    }

    /// Asserts that a scan's output over `range` (all probes, `k` slots each) holds each probe's
    /// brute-force top k: the same rows and bit-identical scores, not approximately equal ones.
    pub fn assert_top_k(
        &self,
        range: std::ops::Range<usize>,
        probes: &[i8],
        k: usize,
        (rows, scores): (&[i32], &[f64]),
        context: &str,
    ) {
        let bits = |values: &[f64]| {
            values
                .iter()
                .map(|value| value.to_bits())
                .collect::<Vec<_>>()
        };
        for (probe, vector) in probes.chunks(self.dimension).enumerate() {
            let (expected_rows, expected_scores) = self.brute_force(range.clone(), vector, k);
            let slots = probe * k..(probe + 1) * k;
            let context = format!("{context} probe={probe}");
            assert_eq!(rows[slots.clone()], expected_rows[..], "{context}");
            assert_eq!(bits(&scores[slots]), bits(&expected_scores), "{context}");
        }
    }

    pub fn view(&self) -> GalleryView<'_> {
        GalleryView {
            rows: &self.rows,
            stride_in_bytes: self.stride,
            dimension: self.dimension,
            norms_squared: &self.norms,
            live: &self.live,
        }
    }

    pub fn brute_force(
        &self,
        range: std::ops::Range<usize>,
        probe: &[i8],
        k: usize,
    ) -> (Vec<i32>, Vec<f64>) {
        let mut scored: Vec<(f64, usize)> = range
            .filter(|&row| self.live[row] != 0)
            .map(|row| {
                let vector = &self.rows[row * self.stride..row * self.stride + self.dimension];
                (
                    score(
                        dot_i8_scalar(vector, probe),
                        norm_squared(probe),
                        self.norms[row],
                    ),
                    row,
                )
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(k);
        let mut rows: Vec<i32> = scored.iter().map(|&(_, row)| row as i32).collect();
        let mut scores: Vec<f64> = scored.iter().map(|&(score, _)| score).collect();
        rows.resize(k, -1);
        scores.resize(k, 0.0);
        (rows, scores)
    }
}

pub fn run(
    kernels: &Kernels,
    gallery: &GalleryView,
    range: std::ops::Range<usize>,
    probes: &[i8],
    k: usize,
) -> Result<(Vec<i32>, Vec<f64>), CoreError> {
    run_above(kernels, gallery, range, probes, k, &[])
}

/// [`run`] with score floors (see `ProbeBatch::score_floors`).
pub fn run_above(
    kernels: &Kernels,
    gallery: &GalleryView,
    range: std::ops::Range<usize>,
    probes: &[i8],
    k: usize,
    score_floors: &[f64],
) -> Result<(Vec<i32>, Vec<f64>), CoreError> {
    let norms: Vec<u32> = probes
        .chunks(gallery.dimension.max(1))
        .map(norm_squared)
        .collect();
    let (mut rows, mut scores) = (vec![7; norms.len() * k], vec![7.0; norms.len() * k]);
    let batch = ProbeBatch {
        vectors: probes,
        norms_squared: &norms,
        score_floors,
    };
    scan_top_k_with(
        kernels,
        gallery,
        range,
        &batch,
        k,
        &mut TopKOutput {
            rows: &mut rows,
            scores: &mut scores,
        },
    )?;
    Ok((rows, scores))
}
