//! AES-256-GCM over many small blobs in one call: palmvein's boot opens two of them per gallery
//! row (the member's wrapped data key, then its reference) and an import seals seven per member.
//! Through `node:crypto` each costs ~4 µs of object set-up for ~300 bytes of work; here a batch
//! shares one call, and a key used by neighbouring items is expanded once. AES-NI/CLMUL (or ARMv8
//! AES/PMULL) are detected at run time by the RustCrypto crates. The Node binding
//! (`packages/matcher/napi/src/sealing.rs`) only converts its arguments and errors.
//!
//! Blob format, the same as the service's `keyring.ts`: nonce (12 bytes) ‖ ciphertext ‖ tag
//! (16 bytes), with the associated data passed beside it. A malformed batch is refused before
//! anything is written.

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Nonce, Tag};

mod error;
mod items;
mod key_table;

pub use error::{BatchError, Buffer};
pub use items::Items;
use key_table::KeyTable;

pub const KEY_BYTES: usize = 32;
pub const NONCE_BYTES: usize = 12;
pub const TAG_BYTES: usize = 16;
/// What sealing adds to a plaintext: nonce and tag.
pub const OVERHEAD: usize = NONCE_BYTES + TAG_BYTES;

/// One batch: its keys (32 bytes each, end to end), the key each item uses, the items (plaintexts
/// to seal or blobs to open) and each item's associated data.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub keys: &'a [u8],
    pub key_of_item: &'a [u32],
    pub items: Items<'a>,
    pub aad: Items<'a>,
}

/// The plaintexts' total length once `sealed` is opened: each item's length less 28, none for an
/// item shorter than that.
pub fn opened_length(sealed: &Items) -> usize {
    (0..sealed.count())
        .map(|index| sealed.checked_range(index).len().saturating_sub(OVERHEAD))
        .sum()
}

/// Opens the batch's items (nonce ‖ ciphertext ‖ tag) with their keys and associated data. The
/// plaintexts go to `out` end to end ([`opened_length`] bytes), item `i`'s after item `i - 1`'s;
/// `opened[i]` is 1 when it opened, 0 when it is shorter than nonce and tag or the key, the data
/// or the tag did not match (its plaintext bytes are then zero). Returns how many failed.
pub fn open_batch(batch: &Batch, out: &mut [u8], opened: &mut [u8]) -> Result<u32, BatchError> {
    let items = batch.items.count();
    let table = KeyTable::new(batch.keys, batch.key_of_item, items)?;
    if batch.aad.count() != items || opened.len() != items {
        return Err(BatchError::OpenCounts {
            items,
            aad_ends: batch.aad.count(),
            opened: opened.len(),
        });
    }
    batch.items.check(Buffer::Sealed)?;
    batch.aad.check(Buffer::Aad)?;
    let expected = opened_length(&batch.items);
    if out.len() != expected {
        return Err(BatchError::OpenOutput {
            expected,
            got: out.len(),
        });
    }
    let mut failures = 0u32;
    let mut out_at = 0usize;
    table.each(|index, cipher| {
        let blob = batch.items.item(index);
        if blob.len() < OVERHEAD {
            // Not a blob this format makes: refused like a wrong tag.
            opened[index] = 0;
            failures += 1;
            return Ok(());
        }
        let (nonce, rest) = blob.split_at(NONCE_BYTES);
        let (body, tag) = rest.split_at(rest.len() - TAG_BYTES);
        let plain = &mut out[out_at..out_at + body.len()];
        out_at += body.len();
        plain.copy_from_slice(body);
        let ok = cipher
            .decrypt_in_place_detached(
                Nonce::from_slice(nonce),
                batch.aad.item(index),
                plain,
                Tag::from_slice(tag),
            )
            .is_ok();
        if !ok {
            plain.fill(0);
            failures += 1;
        }
        opened[index] = u8::from(ok);
        Ok::<(), BatchError>(())
    })?;
    Ok(failures)
}

/// The blobs' total length once `plain` is sealed: its bytes and 28 per item.
pub fn sealed_length(plain: &Items) -> usize {
    plain.ends.last().map_or(0, |&end| end as usize) + OVERHEAD * plain.count()
}

/// Seals the batch's items with their keys, associated data and `nonces` (12 bytes each, from the
/// caller's CSPRNG: a nonce must never repeat under a key). Item `i` goes to `out`
/// ([`sealed_length`] bytes) at its plaintext's start `+ 28 * i` as nonce ‖ ciphertext ‖ tag.
pub fn seal_batch(batch: &Batch, nonces: &[u8], out: &mut [u8]) -> Result<(), BatchError> {
    let items = batch.items.count();
    let table = KeyTable::new(batch.keys, batch.key_of_item, items)?;
    if batch.aad.count() != items || nonces.len() != NONCE_BYTES * items {
        return Err(BatchError::SealCounts {
            items,
            aad_ends: batch.aad.count(),
            nonce_bytes: nonces.len(),
        });
    }
    batch.items.check(Buffer::Plain)?;
    batch.aad.check(Buffer::Aad)?;
    let expected = sealed_length(&batch.items);
    if out.len() != expected {
        return Err(BatchError::SealOutput {
            expected,
            got: out.len(),
        });
    }
    table.each(|index, cipher| {
        let range = batch.items.checked_range(index);
        let start = range.start + OVERHEAD * index;
        let blob = &mut out[start..start + range.len() + OVERHEAD];
        let (nonce_out, rest) = blob.split_at_mut(NONCE_BYTES);
        let (body, tag_out) = rest.split_at_mut(range.len());
        let nonce = &nonces[index * NONCE_BYTES..][..NONCE_BYTES];
        nonce_out.copy_from_slice(nonce);
        body.copy_from_slice(batch.items.item(index));
        let tag = cipher
            .encrypt_in_place_detached(Nonce::from_slice(nonce), batch.aad.item(index), body)
            .map_err(|_| BatchError::TooLong { item: index })?;
        tag_out.copy_from_slice(&tag);
        Ok(())
    })
}
