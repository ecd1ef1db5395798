//! Property tests of message batches: both fuzz harnesses on random inputs, mutations of valid
//! batches, every prefix of a valid batch, and the committed corpora.

use bitlens_batch::{BatchErrorKind, read_batch};
use bitlens_codec::dissect::Status;
use bitlens_testkit::batch_demo::{MTU, dissect, sample_batch};
use bitlens_testkit::fuzzing::batch::{batch_read, batch_roundtrip, seed_batches};
use proptest::prelude::*;
use std::path::Path;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn roundtrip_arbitrary_message_sequences(data in proptest::collection::vec(any::<u8>(), 0..4096)) {
        batch_roundtrip(&data);
    }

    #[test]
    fn read_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..1500)) {
        batch_read(&data);
    }

    #[test]
    fn read_arbitrary_bytes_with_a_consistent_batch_header(
        mut data in proptest::collection::vec(any::<u8>(), 2..1500),
    ) {
        // Past the batch header, so the message walk itself is exercised.
        let n = data.len() as u16;
        data[..2].copy_from_slice(&n.to_le_bytes());
        batch_read(&data);
    }

    #[test]
    fn read_mutated_valid_batches(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut data = sample_batch();
        for (at, x) in flips {
            let i = 2 + at % (data.len() - 2);
            data[i] ^= x;
        }
        batch_read(&data);
    }
}

#[test]
fn every_prefix_of_a_valid_batch_is_rejected() {
    let data = sample_batch();
    assert!(data.len() <= MTU);
    batch_read(&data);
    for n in 0..data.len() {
        let e = read_batch(&data[..n]).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                BatchErrorKind::PastEnd { .. } | BatchErrorKind::BatchLength { .. }
            ),
            "{e}"
        );
        assert_eq!(dissect(&data[..n]).status, Status::Error);
    }
}

#[test]
fn seed_batches_pass_the_harness() {
    for (name, data) in seed_batches() {
        batch_read(&data);
        let clean = dissect(&data).status == Status::Ok;
        assert_eq!(
            clean,
            name.starts_with("valid")
                || name.starts_with("single")
                || name.starts_with("empty")
                || name.starts_with("unknown"),
            "{name}"
        );
    }
}

fn replay(target: &str, harness: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let data = std::fs::read(entry.path()).unwrap();
        harness(&data);
    }
}

#[test]
fn corpus_batch_read() {
    replay("batch_read", batch_read);
}

#[test]
fn corpus_batch_roundtrip() {
    replay("batch_roundtrip", batch_roundtrip);
}

/// Regenerates the seed files of `corpus/batch_read/`: `BITLENS_WRITE_SEEDS=1 cargo test`.
#[test]
fn write_seed_corpus() {
    if std::env::var_os("BITLENS_WRITE_SEEDS").is_none() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let read = root.join("batch_read");
    std::fs::create_dir_all(&read).unwrap();
    for (name, data) in seed_batches() {
        std::fs::write(read.join(format!("{name}.bin")), data).unwrap();
    }
    let rt = root.join("batch_roundtrip");
    std::fs::create_dir_all(&rt).unwrap();
    // Roundtrip inputs are arbitrary bytes; these steer it to many messages and channel changes.
    let patterns: [(&str, Vec<u8>); 3] = [
        (
            "many_small_messages",
            (0..2048u32).map(|i| (i * 37 % 251) as u8).collect(),
        ),
        (
            "channel_changes",
            (0..1024u32).map(|i| (i * 13 % 7) as u8).collect(),
        ),
        (
            "long_chat_texts",
            std::iter::repeat_n([2u8, 200, 0x61, 0x62], 400)
                .flatten()
                .collect(),
        ),
    ];
    for (name, data) in patterns {
        std::fs::write(rt.join(format!("{name}.bin")), data).unwrap();
    }
}
