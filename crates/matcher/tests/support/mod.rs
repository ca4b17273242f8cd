//! Deterministic random inputs for the tests (SplitMix64; no external crates).
#![allow(dead_code)]

pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Random {
        Random(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    /// A symmetric int8 value in [-127, 127].
    pub fn element(&mut self) -> i8 {
        (self.below(255) as i32 - 127) as i8
    }

    pub fn vector(&mut self, length: usize) -> Vec<i8> {
        (0..length).map(|_| self.element()).collect()
    }
}

pub fn norm_squared(vector: &[i8]) -> u32 {
    vector
        .iter()
        .map(|&value| (i32::from(value) * i32::from(value)) as u32)
        .sum()
}

/// Lengths that straddle every lane width (16, 32, 64) and the largest dimension.
pub const AWKWARD_LENGTHS: &[usize] = &[
    0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 127, 128, 129, 191, 255, 256,
    257, 511, 512, 513, 1023, 1024, 1025, 4095, 4096,
];

pub mod scan_fixture;
