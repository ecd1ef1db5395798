//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) through the harness of each fuzz
//! target, on stable: the same code on the same bytes as `cargo fuzz run <target>`.
//! Written by `bitlens fuzz-init --packet custom_protocol::Packet`; seed a target's corpus with
//! `bitlens seeds CAPTURE --port PORT fuzz/corpus/<target>`.

use bitlens_codec::fuzzing;
use std::path::Path;

type P = custom_protocol::Packet;

/// A harness, as a fuzz target calls it.
type Harness = fn(&[u8]);

const TARGETS: &[(&str, Harness)] = &[
    ("packet_read", fuzzing::packet_read::<P>),
    ("packet_roundtrip", fuzzing::packet_roundtrip::<P>),
    ("hostile_lengths", fuzzing::hostile_lengths::<P>),
];

#[test]
fn fuzz_corpus_replays_through_the_harnesses() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for (target, harness) in TARGETS {
        let n = fuzzing::replay_corpus(&corpus.join(target), harness);
        eprintln!("{target}: {n} corpus files replayed");
    }
}
