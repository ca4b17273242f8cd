//! Sealing and opening batches: the blobs are AES-256-GCM's (the specification's answers, and
//! the same as sealing each item alone), they round-trip, and an item whose key, nonce, data,
//! ciphertext or tag does not match is refused alone.

mod support;

use palmvein_sealing::{
    open_batch, opened_length, seal_batch, sealed_length, Batch, Items, OVERHEAD,
};
use support::{flat, split, Sample};

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap())
        .collect()
}

fn seal(sample: &Sample) -> (Vec<u8>, Vec<u32>) {
    let (plain, plain_ends) = flat(&sample.plains);
    let (aad, aad_ends) = flat(&sample.aads);
    let items = Items {
        bytes: &plain,
        ends: &plain_ends,
    };
    let mut out = vec![0u8; sealed_length(&items)];
    let batch = Batch {
        keys: &sample.keys,
        key_of_item: &sample.key_of_item,
        items,
        aad: Items {
            bytes: &aad,
            ends: &aad_ends,
        },
    };
    seal_batch(&batch, &sample.nonces, &mut out).unwrap();
    let sealed_ends = plain_ends
        .iter()
        .enumerate()
        .map(|(index, end)| end + (OVERHEAD * (index + 1)) as u32)
        .collect();
    (out, sealed_ends)
}

struct Opened {
    plains: Vec<Vec<u8>>,
    opened: Vec<u8>,
    failures: u32,
}

fn open(keys: &[u8], key_of_item: &[u32], blobs: &[Vec<u8>], aads: &[Vec<u8>]) -> Opened {
    let (sealed, sealed_ends) = flat(blobs);
    let (aad, aad_ends) = flat(aads);
    let items = Items {
        bytes: &sealed,
        ends: &sealed_ends,
    };
    let mut out = vec![0xAAu8; opened_length(&items)];
    let mut opened = vec![0xAAu8; blobs.len()];
    let batch = Batch {
        keys,
        key_of_item,
        items,
        aad: Items {
            bytes: &aad,
            ends: &aad_ends,
        },
    };
    let failures = open_batch(&batch, &mut out, &mut opened).unwrap();
    let plain_ends: Vec<u32> = blobs
        .iter()
        .scan(0u32, |end, blob| {
            *end += blob.len().saturating_sub(OVERHEAD) as u32;
            Some(*end)
        })
        .collect();
    Opened {
        plains: split(&out, &plain_ends),
        opened,
        failures,
    }
}

#[test]
fn seals_as_the_gcm_specification_says() {
    // McGrew and Viega, "The Galois/Counter Mode of Operation", test cases 13 and 14: AES-256,
    // zero key and zero nonce, an empty plaintext and one zero block, no associated data.
    let sample = Sample {
        keys: vec![0; 32],
        key_of_item: vec![0, 0],
        plains: vec![vec![], vec![0; 16]],
        aads: vec![vec![], vec![]],
        nonces: vec![0; 24],
    };
    let (sealed, ends) = seal(&sample);
    let blobs = split(&sealed, &ends);
    assert_eq!(blobs[0][12..], hex("530f8afbc74536b9a963b4f1c4cb738b"));
    assert_eq!(
        blobs[1][12..],
        hex("cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919")
    );
}

#[test]
fn a_batch_seals_each_item_as_sealing_it_alone_does() {
    let sample = Sample::new(40);
    let (sealed, ends) = seal(&sample);
    let blobs = split(&sealed, &ends);
    for (index, blob) in blobs.iter().enumerate() {
        assert_eq!(*blob, sample.sealed_alone(index), "item {index}");
    }
}

#[test]
fn what_a_batch_seals_a_batch_opens() {
    let sample = Sample::new(40);
    let (sealed, ends) = seal(&sample);
    let result = open(
        &sample.keys,
        &sample.key_of_item,
        &split(&sealed, &ends),
        &sample.aads,
    );
    assert_eq!(result.failures, 0);
    assert_eq!(result.opened, vec![1; 40]);
    assert_eq!(result.plains, sample.plains);
}

#[test]
fn a_batch_opens_items_sealed_alone() {
    let sample = Sample::new(25);
    let blobs: Vec<Vec<u8>> = (0..25).map(|index| sample.sealed_alone(index)).collect();
    let result = open(&sample.keys, &sample.key_of_item, &blobs, &sample.aads);
    assert_eq!(result.failures, 0);
    assert_eq!(result.plains, sample.plains);
}

#[test]
fn refuses_each_item_whose_key_nonce_data_ciphertext_or_tag_does_not_match_and_opens_the_others() {
    let sample = Sample::new(12);
    let mut blobs: Vec<Vec<u8>> = (0..12).map(|index| sample.sealed_alone(index)).collect();
    let mut aads = sample.aads.clone();
    let mut key_of_item = sample.key_of_item.clone();
    // Item 0 is empty: only its nonce and tag can be changed.
    blobs[1][0] ^= 1; // nonce
    let last = blobs[3].len() - 1;
    blobs[3][last] ^= 0x80; // tag
    blobs[5][12] ^= 1; // first ciphertext byte
    aads[7] = b"template:7:right:reference".to_vec(); // moved to another row
    key_of_item[9] = (key_of_item[9] + 1) % 3; // another key
    let result = open(&sample.keys, &key_of_item, &blobs, &aads);
    let refused = [1, 3, 5, 7, 9];
    assert_eq!(result.failures, refused.len() as u32);
    for index in 0..12 {
        if refused.contains(&index) {
            assert_eq!(result.opened[index], 0, "item {index} refused");
            assert!(
                result.plains[index].iter().all(|&byte| byte == 0),
                "item {index} zeroed"
            );
        } else {
            assert_eq!(result.opened[index], 1, "item {index} opened");
            assert_eq!(result.plains[index], sample.plains[index]);
        }
    }
}

#[test]
fn refuses_an_item_shorter_than_nonce_and_tag_and_opens_its_neighbours() {
    let sample = Sample::new(4);
    let blobs = vec![
        sample.sealed_alone(0), // an empty plaintext: exactly nonce and tag, it opens
        vec![],
        vec![7; OVERHEAD - 1],
        sample.sealed_alone(3),
    ];
    let result = open(&sample.keys, &sample.key_of_item, &blobs, &sample.aads);
    assert_eq!(result.opened, vec![1, 0, 0, 1]);
    assert_eq!(result.failures, 2);
    assert_eq!(
        result.plains,
        vec![vec![], vec![], vec![], sample.plains[3].clone()]
    );
}

#[test]
fn an_empty_batch_is_empty() {
    let sample = Sample::new(0);
    let (sealed, _) = seal(&sample);
    assert!(sealed.is_empty());
    let result = open(&[0; 32], &[], &[], &[]);
    assert_eq!((result.failures, result.opened.len()), (0, 0));
}
