//! Every ISA available on this machine equals the scalar oracle exactly.

mod support;

use palmvein_matcher::kernel::scalar::dot_i8_scalar;
use palmvein_matcher::{available_isas, Isa};
use support::{Random, AWKWARD_LENGTHS};

#[test]
fn scalar_and_some_simd_isa_are_available() {
    let isas = available_isas();
    assert_eq!(isas.last(), Some(&Isa::Scalar));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        assert!(isas.contains(&Isa::Avx2), "{isas:?}");
    }
}

#[test]
fn dot_equals_scalar_on_random_inputs_of_awkward_lengths() {
    let mut random = Random::new(1);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for &length in AWKWARD_LENGTHS {
            for _ in 0..8 {
                let (a, b) = (random.vector(length), random.vector(length));
                assert_eq!(
                    kernels.dot_i8(&a, &b),
                    dot_i8_scalar(&a, &b),
                    "{isa} length {length}"
                );
            }
        }
    }
}

#[test]
fn dot_equals_scalar_at_the_extremes() {
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for &length in AWKWARD_LENGTHS {
            for (x, y) in [
                (127i8, 127i8),
                (-127, -127),
                (127, -127),
                (-127, 127),
                (0, -127),
            ] {
                let (a, b) = (vec![x; length], vec![y; length]);
                let expected = i32::from(x) * i32::from(y) * length as i32;
                assert_eq!(dot_i8_scalar(&a, &b), expected);
                assert_eq!(
                    kernels.dot_i8(&a, &b),
                    expected,
                    "{isa} {x} x {y} length {length}"
                );
            }
            // Alternating signs defeat any pairwise cancellation the kernels might rely on.
            let a: Vec<i8> = (0..length)
                .map(|index| if index % 2 == 0 { 127 } else { -127 })
                .collect();
            let b: Vec<i8> = (0..length)
                .map(|index| if index % 3 == 0 { -127 } else { 127 })
                .collect();
            assert_eq!(
                kernels.dot_i8(&a, &b),
                dot_i8_scalar(&a, &b),
                "{isa} alternating length {length}"
            );
        }
    }
}

#[test]
fn dot_reads_nothing_outside_unaligned_subslices() {
    let mut random = Random::new(2);
    let buffer = random.vector(5000);
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for offset in 0..67 {
            for &length in &[1usize, 63, 64, 65, 255, 256, 1025] {
                let (a, b) = (
                    &buffer[offset..offset + length],
                    &buffer[2 * offset + 7..2 * offset + 7 + length],
                );
                assert_eq!(
                    kernels.dot_i8(a, b),
                    dot_i8_scalar(a, b),
                    "{isa} offset {offset} length {length}"
                );
            }
        }
    }
}

/// The checksum's definition: xor of the little-endian 64-bit words, the last zero-padded.
fn checksum_oracle(bytes: &[u8]) -> u64 {
    bytes.chunks(8).fold(0, |checksum, chunk| {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        checksum ^ u64::from_le_bytes(word)
    })
}

#[test]
fn stream_read_checksum_equals_scalar_for_every_isa() {
    let mut random = Random::new(3);
    let bytes: Vec<u8> = (0..10_000).map(|_| random.next_u64() as u8).collect();
    let scalar = Isa::Scalar.kernels().unwrap();
    for isa in available_isas() {
        let kernels = isa.kernels().unwrap();
        for &length in AWKWARD_LENGTHS.iter().chain(&[4097, 9999, 10_000]) {
            for offset in [0usize, 1, 7] {
                let slice = &bytes[offset..offset + length.min(10_000 - offset)];
                assert_eq!(
                    kernels.stream_read(slice),
                    scalar.stream_read(slice),
                    "{isa} length {length}"
                );
                // Read in blocks (with prefetch) as one read: no block skipped or read twice.
                assert_eq!(
                    kernels.stream_read(slice),
                    checksum_oracle(slice),
                    "{isa} length {length}"
                );
            }
        }
    }
    // The checksum depends on every byte.
    let mut changed = bytes.clone();
    changed[9_998] ^= 1;
    assert_ne!(scalar.stream_read(&bytes), scalar.stream_read(&changed));
}
