//! Batches for the tests: deterministic bytes (no RNG crate), items laid end to end.

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};

/// Deterministic bytes (splitmix64), different for each `seed`.
pub fn bytes(seed: u64, length: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..length)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut mixed = state;
            mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (mixed ^ (mixed >> 31)) as u8
        })
        .collect()
}

/// Parts end to end, with their ends.
pub fn flat(parts: &[Vec<u8>]) -> (Vec<u8>, Vec<u32>) {
    let mut ends = Vec::with_capacity(parts.len());
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend_from_slice(part);
        ends.push(bytes.len() as u32);
    }
    (bytes, ends)
}

/// Splits a flat buffer back into its parts.
pub fn split(bytes: &[u8], ends: &[u32]) -> Vec<Vec<u8>> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let part = bytes[start..end as usize].to_vec();
            start = end as usize;
            part
        })
        .collect()
}

/// A batch of `n` items of varied lengths (0 to 300 bytes) under three keys, used in runs and
/// alternately (so a key is expanded again after another one), each with its own context.
pub struct Sample {
    pub keys: Vec<u8>,
    pub key_of_item: Vec<u32>,
    pub plains: Vec<Vec<u8>>,
    pub aads: Vec<Vec<u8>>,
    pub nonces: Vec<u8>,
}

impl Sample {
    pub fn new(n: usize) -> Sample {
        Sample {
            keys: bytes(1, 32 * 3),
            key_of_item: (0..n as u32)
                .map(|index| {
                    if index < n as u32 / 2 {
                        index / 2 % 3
                    } else {
                        index % 3
                    }
                })
                .collect(),
            plains: (0..n)
                .map(|index| bytes(100 + index as u64, index * 37 % 301))
                .collect(),
            aads: (0..n)
                .map(|index| format!("template:{index}:left:reference").into_bytes())
                .collect(),
            nonces: bytes(2, 12 * n),
        }
    }

    pub fn key(&self, index: usize) -> &[u8] {
        let key = self.key_of_item[index] as usize;
        &self.keys[32 * key..32 * key + 32]
    }

    pub fn nonce(&self, index: usize) -> &[u8] {
        &self.nonces[12 * index..12 * index + 12]
    }

    /// Item `index` sealed on its own by the `aes-gcm` crate: nonce ‖ ciphertext ‖ tag.
    pub fn sealed_alone(&self, index: usize) -> Vec<u8> {
        let cipher = Aes256Gcm::new_from_slice(self.key(index)).unwrap();
        let payload = Payload {
            msg: &self.plains[index],
            aad: &self.aads[index],
        };
        let mut blob = self.nonce(index).to_vec();
        blob.extend(
            cipher
                .encrypt(Nonce::from_slice(self.nonce(index)), payload)
                .unwrap(),
        );
        blob
    }
}
