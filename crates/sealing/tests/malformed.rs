//! A malformed batch is refused with an error naming the argument (the Node binding's spelling),
//! before anything is written.

use palmvein_sealing::{open_batch, seal_batch, Batch, BatchError, Buffer, Items};

const UNTOUCHED: u8 = 0xAA;

struct Case<'a> {
    keys: &'a [u8],
    key_of_item: &'a [u32],
    items: &'a [u8],
    ends: &'a [u32],
    aad_ends: &'a [u32],
}

const KEY: [u8; 32] = [9; 32];
const AAD: [u8; 4] = *b"data";

impl Case<'_> {
    fn batch(&self) -> Batch<'_> {
        Batch {
            keys: self.keys,
            key_of_item: self.key_of_item,
            items: Items {
                bytes: self.items,
                ends: self.ends,
            },
            aad: Items {
                bytes: &AAD,
                ends: self.aad_ends,
            },
        }
    }

    fn seal(&self, nonce_bytes: usize, out_bytes: usize) -> BatchError {
        let mut out = vec![UNTOUCHED; out_bytes];
        let error = seal_batch(&self.batch(), &vec![0; nonce_bytes], &mut out).unwrap_err();
        assert!(out.iter().all(|&byte| byte == UNTOUCHED), "out untouched");
        error
    }

    fn open(&self, out_bytes: usize, opened_entries: usize) -> BatchError {
        let mut out = vec![UNTOUCHED; out_bytes];
        let mut opened = vec![UNTOUCHED; opened_entries];
        let error = open_batch(&self.batch(), &mut out, &mut opened).unwrap_err();
        assert!(out.iter().all(|&byte| byte == UNTOUCHED), "out untouched");
        assert!(
            opened.iter().all(|&byte| byte == UNTOUCHED),
            "opened untouched"
        );
        error
    }
}

/// One 8-byte plaintext under one key, which each test spoils in one way.
fn one_item() -> Case<'static> {
    Case {
        keys: &KEY,
        key_of_item: &[0],
        items: &[1; 8],
        ends: &[8],
        aad_ends: &[4],
    }
}

fn assert_error(error: BatchError, expected: BatchError, message: &str) {
    assert_eq!(error.to_string(), message);
    assert_eq!(error, expected);
}

#[test]
fn keys_must_be_whole_32_byte_keys() {
    let case = Case {
        keys: &KEY[..31],
        ..one_item()
    };
    let message = "keys must hold 32-byte keys end to end, got 31 bytes";
    assert_error(
        case.seal(12, 36),
        BatchError::KeysNotWhole { bytes: 31 },
        message,
    );
    assert_error(
        case.open(0, 1),
        BatchError::KeysNotWhole { bytes: 31 },
        message,
    );
}

#[test]
fn each_item_names_a_key_there_is() {
    let missing = Case {
        key_of_item: &[1],
        ..one_item()
    };
    assert_error(
        missing.seal(12, 36),
        BatchError::KeyOutOfRange {
            item: 0,
            key: 1,
            keys: 1,
        },
        "keyOfItem[0] = 1 but keys holds 1 keys",
    );
    let short = Case {
        key_of_item: &[],
        ..one_item()
    };
    assert_error(
        short.open(0, 1),
        BatchError::KeyOfItemCount {
            entries: 0,
            items: 1,
        },
        "keyOfItem has 0 entries for 1 items",
    );
}

#[test]
fn ends_must_rise_within_their_buffer() {
    let past = Case {
        ends: &[9],
        ..one_item()
    };
    assert_error(
        past.seal(12, 37),
        BatchError::EndOutOfOrder {
            buffer: Buffer::Plain,
            item: 0,
            end: 9,
            length: 8,
        },
        "plainEnds[0] = 9 is out of order or past the buffer (8 bytes)",
    );
    let falling = Case {
        items: &[0; 40],
        key_of_item: &[0, 0],
        ends: &[30, 20],
        aad_ends: &[0, 0],
        ..one_item()
    };
    assert_error(
        falling.open(2, 2),
        BatchError::EndOutOfOrder {
            buffer: Buffer::Sealed,
            item: 1,
            end: 20,
            length: 40,
        },
        "sealedEnds[1] = 20 is out of order or past the buffer (40 bytes)",
    );
    let data_past = Case {
        aad_ends: &[5],
        ..one_item()
    };
    assert_error(
        data_past.seal(12, 36),
        BatchError::EndOutOfOrder {
            buffer: Buffer::Aad,
            item: 0,
            end: 5,
            length: 4,
        },
        "aadEnds[0] = 5 is out of order or past the buffer (4 bytes)",
    );
}

#[test]
fn sealing_needs_a_nonce_and_data_per_item_and_room_for_the_blobs() {
    assert_error(
        one_item().seal(11, 36),
        BatchError::SealCounts {
            items: 1,
            aad_ends: 1,
            nonce_bytes: 11,
        },
        "aadEnds needs 1 entries and nonces 12 bytes, got 1 and 11",
    );
    assert_error(
        one_item().seal(12, 35),
        BatchError::SealOutput {
            expected: 36,
            got: 35,
        },
        "out must be plain bytes + 28 per item = 36 bytes, got 35",
    );
}

#[test]
fn opening_needs_data_and_a_flag_per_item_and_room_for_the_plaintexts() {
    let case = Case {
        items: &[0; 40],
        ends: &[40],
        ..one_item()
    };
    assert_error(
        case.open(12, 2),
        BatchError::OpenCounts {
            items: 1,
            aad_ends: 1,
            opened: 2,
        },
        "aadEnds and opened need 1 entries, got 1 and 2",
    );
    assert_error(
        case.open(11, 1),
        BatchError::OpenOutput {
            expected: 12,
            got: 11,
        },
        "out must hold the plaintexts (each item's bytes - 28) = 12 bytes, got 11",
    );
}
