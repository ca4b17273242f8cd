//! AES-256-GCM over many small blobs in one call: the boot opens two of them per gallery row (the
//! member's wrapped data key, then its reference) and an import seals seven per member. Through
//! `node:crypto` each costs ~4 µs of object set-up for ~300 bytes of work; here a batch shares one
//! call, and a key used by neighbouring items is expanded once. AES-NI/CLMUL (or ARMv8 AES/PMULL)
//! are detected at run time by the RustCrypto crates.
//!
//! Blob format, the same as `keyring.ts`: nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes), with the
//! associated data passed beside it. Items are laid end to end in flat buffers; `ends[i]` is where
//! item `i` ends (it starts where item `i - 1` ends).

use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use napi::bindgen_prelude::{Uint32ArraySlice, Uint8ArraySlice, Unknown};
use napi::Error;
use napi_derive::napi;

use crate::{bytes_of, check_outputs, typed_array, BindingError, BindingResult};

const KEY_BYTES: usize = 32;
const NONCE_BYTES: usize = 12;
const TAG_BYTES: usize = 16;
/// What sealing adds to a plaintext.
const OVERHEAD: usize = NONCE_BYTES + TAG_BYTES;

/// Item `index`'s range in a flat buffer of `length` bytes, from `ends`.
fn item_range(
    name: &str,
    ends: &[u32],
    index: usize,
    length: usize,
) -> BindingResult<std::ops::Range<usize>> {
    let start = if index == 0 {
        0
    } else {
        ends[index - 1] as usize
    };
    let end = ends[index] as usize;
    if start > end || end > length {
        return Err(BindingError::Argument(format!(
            "{name}Ends[{index}] = {end} is out of order or past the buffer ({length} bytes)"
        )));
    }
    Ok(start..end)
}

/// The keys (32 bytes each) and which one each item uses.
struct KeyTable<'a> {
    keys: &'a [u8],
    key_of_item: &'a [u32],
}

impl KeyTable<'_> {
    fn check(&self, items: usize) -> BindingResult<()> {
        if !self.keys.len().is_multiple_of(KEY_BYTES) {
            return Err(BindingError::Argument(format!(
                "keys must hold 32-byte keys end to end, got {} bytes",
                self.keys.len()
            )));
        }
        if self.key_of_item.len() != items {
            return Err(BindingError::Argument(format!(
                "keyOfItem has {} entries for {items} items",
                self.key_of_item.len()
            )));
        }
        let count = self.keys.len() / KEY_BYTES;
        if let Some(index) = self
            .key_of_item
            .iter()
            .position(|&key| key as usize >= count)
        {
            return Err(BindingError::Argument(format!(
                "keyOfItem[{index}] = {} but keys holds {count} keys",
                self.key_of_item[index]
            )));
        }
        Ok(())
    }

    /// Runs `apply` on every item with its cipher; a key shared by consecutive items is expanded once.
    fn each(
        &self,
        mut apply: impl FnMut(usize, &Aes256Gcm) -> BindingResult<()>,
    ) -> BindingResult<()> {
        let mut current: Option<(u32, Aes256Gcm)> = None;
        for (index, &key) in self.key_of_item.iter().enumerate() {
            if current.as_ref().map(|(held, _)| *held) != Some(key) {
                let bytes = &self.keys[key as usize * KEY_BYTES..][..KEY_BYTES];
                current = Some((key, Aes256Gcm::new_from_slice(bytes).expect("32-byte key")));
            }
            apply(index, &current.as_ref().expect("set above").1)?;
        }
        Ok(())
    }
}

/// Opens `sealed` items (nonce ‖ ciphertext ‖ tag, ends in `sealedEnds`) with their keys and
/// associated data. The plaintexts go to `out` end to end, item `i`'s `max(0, length - 28)` bytes
/// after item `i - 1`'s; `opened[i]` is 1 when it opened, 0 when it is shorter than nonce and tag or
/// the key, the data or the tag did not match (its plaintext bytes are then zero). Returns how many
/// failed.
#[napi(
    js_name = "gcmOpenBatch",
    ts_args_type = "keys: Uint8Array, keyOfItem: Uint32Array, sealed: Uint8Array, sealedEnds: Uint32Array, \
                    aad: Uint8Array, aadEnds: Uint32Array, out: Uint8Array, opened: Uint8Array"
)]
#[allow(clippy::too_many_arguments)]
pub fn gcm_open_batch(
    keys: Unknown<'_>,
    key_of_item: Unknown<'_>,
    sealed: Unknown<'_>,
    sealed_ends: Unknown<'_>,
    aad: Unknown<'_>,
    aad_ends: Unknown<'_>,
    out: Unknown<'_>,
    opened: Unknown<'_>,
) -> napi::Result<u32> {
    let run = || -> BindingResult<u32> {
        let keys: Uint8ArraySlice = typed_array("keys", "a Uint8Array", keys)?;
        let key_of_item: Uint32ArraySlice = typed_array("keyOfItem", "a Uint32Array", key_of_item)?;
        let sealed: Uint8ArraySlice = typed_array("sealed", "a Uint8Array", sealed)?;
        let sealed_ends: Uint32ArraySlice =
            typed_array("sealedEnds", "a Uint32Array", sealed_ends)?;
        let aad: Uint8ArraySlice = typed_array("aad", "a Uint8Array", aad)?;
        let aad_ends: Uint32ArraySlice = typed_array("aadEnds", "a Uint32Array", aad_ends)?;
        let mut out: Uint8ArraySlice = typed_array("out", "a Uint8Array", out)?;
        let mut opened: Uint8ArraySlice = typed_array("opened", "a Uint8Array", opened)?;
        let items = sealed_ends.len();
        let table = KeyTable {
            keys: &keys,
            key_of_item: &key_of_item,
        };
        table.check(items)?;
        if aad_ends.len() != items || opened.len() != items {
            return Err(BindingError::Argument(format!(
                "aadEnds and opened need {items} entries, got {} and {}",
                aad_ends.len(),
                opened.len()
            )));
        }
        let mut plain_total = 0usize;
        for index in 0..items {
            plain_total += item_range("sealed", &sealed_ends, index, sealed.len())?
                .len()
                .saturating_sub(OVERHEAD);
        }
        if out.len() != plain_total {
            return Err(BindingError::Argument(format!(
                "out must hold the plaintexts (each item's bytes - 28) = {plain_total} bytes, got {}",
                out.len()
            )));
        }
        check_outputs(
            &[("out", bytes_of(&out)), ("opened", bytes_of(&opened))],
            &[
                ("keys", bytes_of(&keys)),
                ("keyOfItem", bytes_of(&key_of_item)),
                ("sealed", bytes_of(&sealed)),
                ("sealedEnds", bytes_of(&sealed_ends)),
                ("aad", bytes_of(&aad)),
                ("aadEnds", bytes_of(&aad_ends)),
            ],
        )?;
        // SAFETY: both outputs are disjoint from every input and from each other (checked above).
        let (out, opened) = unsafe { (out.as_mut(), opened.as_mut()) };
        let mut failures = 0u32;
        let mut out_at = 0usize;
        table.each(|index, cipher| {
            let blob = &sealed[item_range("sealed", &sealed_ends, index, sealed.len())?];
            let data = &aad[item_range("aad", &aad_ends, index, aad.len())?];
            if blob.len() < OVERHEAD {
                // Not a blob this format makes: refused like a wrong tag.
                opened[index] = 0;
                failures += 1;
                return Ok(());
            }
            let plain = &mut out[out_at..out_at + blob.len() - OVERHEAD];
            out_at += plain.len();
            plain.copy_from_slice(&blob[NONCE_BYTES..blob.len() - TAG_BYTES]);
            let nonce = Nonce::from_slice(&blob[..NONCE_BYTES]);
            let tag = Tag::from_slice(&blob[blob.len() - TAG_BYTES..]);
            let ok = cipher
                .decrypt_in_place_detached(nonce, data, plain, tag)
                .is_ok();
            if !ok {
                plain.fill(0);
                failures += 1;
            }
            opened[index] = u8::from(ok);
            Ok(())
        })?;
        Ok(failures)
    };
    run().map_err(Error::from)
}

/// Seals `plain` items (ends in `plainEnds`) with their keys, associated data and nonces (12 bytes
/// each, from the caller's CSPRNG). Item `i` goes to `out` at `plainStart(i) + 28 * i` as nonce ‖
/// ciphertext ‖ tag (so `out` is `plain.length + 28 * n` bytes).
#[napi(
    js_name = "gcmSealBatch",
    ts_args_type = "keys: Uint8Array, keyOfItem: Uint32Array, plain: Uint8Array, plainEnds: Uint32Array, \
                    aad: Uint8Array, aadEnds: Uint32Array, nonces: Uint8Array, out: Uint8Array"
)]
#[allow(clippy::too_many_arguments)]
pub fn gcm_seal_batch(
    keys: Unknown<'_>,
    key_of_item: Unknown<'_>,
    plain: Unknown<'_>,
    plain_ends: Unknown<'_>,
    aad: Unknown<'_>,
    aad_ends: Unknown<'_>,
    nonces: Unknown<'_>,
    out: Unknown<'_>,
) -> napi::Result<()> {
    let run = || -> BindingResult<()> {
        let keys: Uint8ArraySlice = typed_array("keys", "a Uint8Array", keys)?;
        let key_of_item: Uint32ArraySlice = typed_array("keyOfItem", "a Uint32Array", key_of_item)?;
        let plain: Uint8ArraySlice = typed_array("plain", "a Uint8Array", plain)?;
        let plain_ends: Uint32ArraySlice = typed_array("plainEnds", "a Uint32Array", plain_ends)?;
        let aad: Uint8ArraySlice = typed_array("aad", "a Uint8Array", aad)?;
        let aad_ends: Uint32ArraySlice = typed_array("aadEnds", "a Uint32Array", aad_ends)?;
        let nonces: Uint8ArraySlice = typed_array("nonces", "a Uint8Array", nonces)?;
        let mut out: Uint8ArraySlice = typed_array("out", "a Uint8Array", out)?;
        let items = plain_ends.len();
        let table = KeyTable {
            keys: &keys,
            key_of_item: &key_of_item,
        };
        table.check(items)?;
        if aad_ends.len() != items || nonces.len() != NONCE_BYTES * items {
            return Err(BindingError::Argument(format!(
                "aadEnds needs {items} entries and nonces {} bytes, got {} and {}",
                NONCE_BYTES * items,
                aad_ends.len(),
                nonces.len()
            )));
        }
        let plain_total = if items == 0 {
            0
        } else {
            plain_ends[items - 1] as usize
        };
        if out.len() != plain_total + OVERHEAD * items {
            return Err(BindingError::Argument(format!(
                "out must be plain bytes + 28 per item = {} bytes, got {}",
                plain_total + OVERHEAD * items,
                out.len()
            )));
        }
        check_outputs(
            &[("out", bytes_of(&out))],
            &[
                ("keys", bytes_of(&keys)),
                ("keyOfItem", bytes_of(&key_of_item)),
                ("plain", bytes_of(&plain)),
                ("plainEnds", bytes_of(&plain_ends)),
                ("aad", bytes_of(&aad)),
                ("aadEnds", bytes_of(&aad_ends)),
                ("nonces", bytes_of(&nonces)),
            ],
        )?;
        // SAFETY: `out` is disjoint from every input (checked above).
        let out = unsafe { out.as_mut() };
        table.each(|index, cipher| {
            let range = item_range("plain", &plain_ends, index, plain.len())?;
            let data = &aad[item_range("aad", &aad_ends, index, aad.len())?];
            let start = range.start + OVERHEAD * index;
            let blob = &mut out[start..start + range.len() + OVERHEAD];
            let nonce = &nonces[index * NONCE_BYTES..][..NONCE_BYTES];
            blob[..NONCE_BYTES].copy_from_slice(nonce);
            let body_end = NONCE_BYTES + range.len();
            blob[NONCE_BYTES..body_end].copy_from_slice(&plain[range]);
            let tag = cipher
                .encrypt_in_place_detached(
                    Nonce::from_slice(nonce),
                    data,
                    &mut blob[NONCE_BYTES..body_end],
                )
                .map_err(|_| BindingError::Argument(format!("item {index} is too long to seal")))?;
            blob[body_end..].copy_from_slice(&tag);
            Ok(())
        })
    };
    run().map_err(Error::from)
}
