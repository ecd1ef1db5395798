//! The `yojimbo` fuzz target's harness on stable: the committed corpus (`corpus/yojimbo`)
//! replayed, and a few thousand deterministic pseudo-random inputs in both modes.

use std::path::Path;

use bitlens_yojimbo::fuzzing;

/// xorshift64*, deterministic.
fn inputs(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut x = seed;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    (0..count)
        .map(|_| {
            let len = (next() % 300) as usize;
            (0..len).map(|_| next() as u8).collect()
        })
        .collect()
}

#[test]
fn corpus_replays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/yojimbo");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus/yojimbo exists") {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let r = std::panic::catch_unwind(|| fuzzing::yojimbo(&data));
        assert!(r.is_ok(), "corpus file {} fails", path.display());
        n += 1;
    }
    assert!(n >= 8, "only {n} corpus files");
}

#[test]
fn generated_packets_round_trip_under_every_configuration() {
    for (i, data) in inputs(0x9e37_79b9_7f4a_7c15, 3000).iter().enumerate() {
        let mut input = vec![(i as u8 % 3) << 1 | 1];
        input.extend_from_slice(data);
        fuzzing::yojimbo(&input);
    }
}

#[test]
fn hostile_bytes_never_panic_under_every_configuration() {
    for (i, data) in inputs(0x1234_5678_9abc_def1, 3000).iter().enumerate() {
        let mut input = vec![(i as u8 % 3) << 1];
        input.extend_from_slice(data);
        fuzzing::yojimbo(&input);
    }
}
