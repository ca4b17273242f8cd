//! The batch's one error type: a malformed batch, refused before anything is written. Messages
//! name arguments as the Node binding's callers spell them (`keyOfItem`, `sealedEnds`, ...).

use std::fmt;

/// Which flat buffer of a batch an `ends` array describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    Plain,
    Sealed,
    Aad,
}

impl Buffer {
    fn name(self) -> &'static str {
        match self {
            Buffer::Plain => "plain",
            Buffer::Sealed => "sealed",
            Buffer::Aad => "aad",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchError {
    /// `keys` is not a whole number of 32-byte keys.
    KeysNotWhole { bytes: usize },
    /// `keyOfItem` does not have one entry per item.
    KeyOfItemCount { entries: usize, items: usize },
    /// An item names a key past the end of `keys`.
    KeyOutOfRange { item: usize, key: u32, keys: usize },
    /// Item `item` of `buffer` ends before it starts or past the buffer.
    EndOutOfOrder {
        buffer: Buffer,
        item: usize,
        end: usize,
        length: usize,
    },
    /// Opening: `aadEnds` or `opened` does not have one entry per item.
    OpenCounts {
        items: usize,
        aad_ends: usize,
        opened: usize,
    },
    /// Opening: `out` is not the plaintexts' total length.
    OpenOutput { expected: usize, got: usize },
    /// Sealing: `aadEnds` or `nonces` does not have one entry per item.
    SealCounts {
        items: usize,
        aad_ends: usize,
        nonce_bytes: usize,
    },
    /// Sealing: `out` is not the sealed blobs' total length.
    SealOutput { expected: usize, got: usize },
    /// Sealing: AES-GCM refuses a plaintext this long (over 64 GiB).
    TooLong { item: usize },
}

impl fmt::Display for BatchError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::KeysNotWhole { bytes } => {
                write!(formatter, "keys must hold 32-byte keys end to end, got {bytes} bytes")
            }
            BatchError::KeyOfItemCount { entries, items } => {
                write!(formatter, "keyOfItem has {entries} entries for {items} items")
            }
            BatchError::KeyOutOfRange { item, key, keys } => {
                write!(formatter, "keyOfItem[{item}] = {key} but keys holds {keys} keys")
            }
            BatchError::EndOutOfOrder {
                buffer,
                item,
                end,
                length,
            } => write!(
                formatter,
                "{}Ends[{item}] = {end} is out of order or past the buffer ({length} bytes)",
                buffer.name()
            ),
            BatchError::OpenCounts {
                items,
                aad_ends,
                opened,
            } => write!(
                formatter,
                "aadEnds and opened need {items} entries, got {aad_ends} and {opened}"
            ),
            BatchError::OpenOutput { expected, got } => write!(
                formatter,
                "out must hold the plaintexts (each item's bytes - 28) = {expected} bytes, got {got}"
            ),
            BatchError::SealCounts {
                items,
                aad_ends,
                nonce_bytes,
            } => write!(
                formatter,
                "aadEnds needs {items} entries and nonces {} bytes, got {aad_ends} and {nonce_bytes}",
                crate::NONCE_BYTES * items
            ),
            BatchError::SealOutput { expected, got } => write!(
                formatter,
                "out must be plain bytes + 28 per item = {expected} bytes, got {got}"
            ),
            BatchError::TooLong { item } => write!(formatter, "item {item} is too long to seal"),
        }
    }
}

impl std::error::Error for BatchError {}
