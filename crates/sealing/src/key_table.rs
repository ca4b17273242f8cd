//! The batch's keys (32 bytes each, end to end) and which one each item uses.

use aes_gcm::{Aes256Gcm, KeyInit};

use crate::error::BatchError;
use crate::KEY_BYTES;

pub(crate) struct KeyTable<'a> {
    keys: &'a [u8],
    key_of_item: &'a [u32],
}

impl<'a> KeyTable<'a> {
    /// Checks that `keys` is whole keys and that each of `items` items names one of them.
    pub(crate) fn new(
        keys: &'a [u8],
        key_of_item: &'a [u32],
        items: usize,
    ) -> Result<Self, BatchError> {
        if !keys.len().is_multiple_of(KEY_BYTES) {
            return Err(BatchError::KeysNotWhole { bytes: keys.len() });
        }
        if key_of_item.len() != items {
            return Err(BatchError::KeyOfItemCount {
                entries: key_of_item.len(),
                items,
            });
        }
        let count = keys.len() / KEY_BYTES;
        if let Some(item) = key_of_item.iter().position(|&key| key as usize >= count) {
            return Err(BatchError::KeyOutOfRange {
                item,
                key: key_of_item[item],
                keys: count,
            });
        }
        Ok(KeyTable { keys, key_of_item })
    }

    /// Runs `apply` on every item with its cipher; a key shared by consecutive items is expanded
    /// once (the boot opens a member's wrapped data key and reference under one master key).
    pub(crate) fn each<E>(
        &self,
        mut apply: impl FnMut(usize, &Aes256Gcm) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut current: Option<(u32, Aes256Gcm)> = None;
        for (index, &key) in self.key_of_item.iter().enumerate() {
            if current.as_ref().map(|(held, _)| *held) != Some(key) {
                let bytes = &self.keys[key as usize * KEY_BYTES..][..KEY_BYTES];
                let cipher = Aes256Gcm::new_from_slice(bytes).expect("checked: 32-byte key");
                current = Some((key, cipher));
            }
            apply(index, &current.as_ref().expect("set above").1)?;
        }
        Ok(())
    }
}
