//! The binding of `palmvein-sealing` (AES-256-GCM over many small blobs in one call; its format,
//! checks and errors are that crate's): borrow the typed arrays, check that the outputs overlap
//! nothing before they become `&mut`, and turn its errors into JS ones.

use std::ops::Range;

use napi::bindgen_prelude::{Uint32ArraySlice, Uint8ArraySlice, Unknown};
use napi::Error;
use napi_derive::napi;
use palmvein_sealing::{open_batch, seal_batch, Batch, BatchError, Items};

use crate::{bytes_of, check_outputs, typed_array, BindingError, BindingResult};

impl From<BatchError> for BindingError {
    fn from(error: BatchError) -> BindingError {
        BindingError::Argument(error.to_string())
    }
}

/// The typed arrays every batch has, borrowed for one call: keys, the key of each item, the items
/// (plaintexts or blobs) and their associated data, each flat with its ends.
struct BatchArrays<'env> {
    names: [&'static str; 2],
    keys: Uint8ArraySlice<'env>,
    key_of_item: Uint32ArraySlice<'env>,
    items: Uint8ArraySlice<'env>,
    item_ends: Uint32ArraySlice<'env>,
    aad: Uint8ArraySlice<'env>,
    aad_ends: Uint32ArraySlice<'env>,
}

impl<'env> BatchArrays<'env> {
    /// `names`: the items' argument and its ends' (`plain`, `plainEnds` or `sealed`, `sealedEnds`).
    fn borrow(names: [&'static str; 2], arguments: [Unknown<'env>; 6]) -> BindingResult<Self> {
        let [keys, key_of_item, items, item_ends, aad, aad_ends] = arguments;
        Ok(BatchArrays {
            names,
            keys: typed_array("keys", "a Uint8Array", keys)?,
            key_of_item: typed_array("keyOfItem", "a Uint32Array", key_of_item)?,
            items: typed_array(names[0], "a Uint8Array", items)?,
            item_ends: typed_array(names[1], "a Uint32Array", item_ends)?,
            aad: typed_array("aad", "a Uint8Array", aad)?,
            aad_ends: typed_array("aadEnds", "a Uint32Array", aad_ends)?,
        })
    }

    /// The memory each input covers, named, for [`check_outputs`].
    fn inputs(&self) -> Vec<(&'static str, Range<usize>)> {
        vec![
            ("keys", bytes_of(&self.keys)),
            ("keyOfItem", bytes_of(&self.key_of_item)),
            (self.names[0], bytes_of(&self.items)),
            (self.names[1], bytes_of(&self.item_ends)),
            ("aad", bytes_of(&self.aad)),
            ("aadEnds", bytes_of(&self.aad_ends)),
        ]
    }

    fn batch(&self) -> Batch<'_> {
        Batch {
            keys: &self.keys,
            key_of_item: &self.key_of_item,
            items: Items {
                bytes: &self.items,
                ends: &self.item_ends,
            },
            aad: Items {
                bytes: &self.aad,
                ends: &self.aad_ends,
            },
        }
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
        let arrays = BatchArrays::borrow(
            ["sealed", "sealedEnds"],
            [keys, key_of_item, sealed, sealed_ends, aad, aad_ends],
        )?;
        let mut out: Uint8ArraySlice = typed_array("out", "a Uint8Array", out)?;
        let mut opened: Uint8ArraySlice = typed_array("opened", "a Uint8Array", opened)?;
        check_outputs(
            &[("out", bytes_of(&out)), ("opened", bytes_of(&opened))],
            &arrays.inputs(),
        )?;
        // SAFETY: both outputs are disjoint from every input and from each other (checked above).
        let (out, opened) = unsafe { (out.as_mut(), opened.as_mut()) };
        Ok(open_batch(&arrays.batch(), out, opened)?)
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
        let arrays = BatchArrays::borrow(
            ["plain", "plainEnds"],
            [keys, key_of_item, plain, plain_ends, aad, aad_ends],
        )?;
        let nonces: Uint8ArraySlice = typed_array("nonces", "a Uint8Array", nonces)?;
        let mut out: Uint8ArraySlice = typed_array("out", "a Uint8Array", out)?;
        let mut inputs = arrays.inputs();
        inputs.push(("nonces", bytes_of(&nonces)));
        check_outputs(&[("out", bytes_of(&out))], &inputs)?;
        // SAFETY: `out` is disjoint from every input (checked above).
        let out = unsafe { out.as_mut() };
        Ok(seal_batch(&arrays.batch(), &nonces, out)?)
    };
    run().map_err(Error::from)
}
