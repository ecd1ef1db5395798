//! `captures/demo.schema.toml` through the schema interpreter agrees with the compiled demo
//! protocol on every input: bytes, verdicts, errors, trace paths, bits and values.

use bitlens_codec::packet::write_packet;
use bitlens_testkit::demo::{self, DemoPacket};
use bitlens_testkit::fuzzing::schema::{DEMO, same_bytes, same_verdict, schema_vs_compiled};
use proptest::prelude::*;

fn sample_bytes() -> Vec<Vec<u8>> {
    demo::samples()
        .into_iter()
        .map(|mut p| {
            let mut buf = [0u8; demo::MTU];
            let n = write_packet(&mut p, &mut buf).expect("sample writes");
            buf[..n].to_vec()
        })
        .collect()
}

#[test]
fn the_demo_schema_matches_the_compiled_protocol() {
    assert_eq!(DEMO.protocol(), &*demo::PROTOCOL);
}

#[test]
fn samples_agree() {
    for p in demo::samples() {
        same_bytes(&p);
    }
    for bytes in sample_bytes() {
        same_verdict(&bytes);
    }
}

#[test]
fn every_truncation_and_bit_flip_of_the_samples_agrees() {
    for bytes in sample_bytes() {
        for n in 0..bytes.len() {
            same_verdict(&bytes[..n]);
        }
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            same_verdict(&b);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        same_verdict(&longer);
    }
}

/// A corrupt body with a valid CRC: the interesting errors are past the CRC.
fn with_crc(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 4 {
        let c = bitlens_codec::packet::packet_crc(demo::PROTOCOL_ID, &bytes);
        bytes[..4].copy_from_slice(&c.to_le_bytes());
    }
    bytes
}

#[test]
fn bit_flips_behind_a_valid_crc_agree() {
    for bytes in sample_bytes() {
        for bit in 32..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            same_verdict(&with_crc(b));
        }
        for n in 4..bytes.len() {
            same_verdict(&with_crc(bytes[..n].to_vec()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_agree(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        schema_vs_compiled(&data);
        same_verdict(&with_crc(data));
    }

    #[test]
    fn arbitrary_packets_write_the_same_bytes(seed in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let mut u = arbitrary::Unstructured::new(&seed);
        if let Ok(p) = <DemoPacket as arbitrary::Arbitrary>::arbitrary(&mut u) {
            same_bytes(&p);
            let mut buf = [0u8; demo::MTU];
            if let Ok(n) = write_packet(&mut p.clone(), &mut buf) {
                same_verdict(&buf[..n]);
            }
        }
    }
}

fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/schema_vs_compiled")
}

/// Replays the committed corpus of the `schema_vs_compiled` fuzz target.
#[test]
fn corpus_replays() {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus_dir()).expect("corpus/schema_vs_compiled exists") {
        let data = std::fs::read(entry.expect("entry").path()).expect("reads");
        schema_vs_compiled(&data);
        n += 1;
    }
    assert!(n >= 6, "only {n} corpus files");
}

/// Regenerates the named seed files: `cargo test -p bitlens-codec --test schema_demo -- --ignored`.
#[test]
#[ignore = "writes corpus files"]
fn write_corpus_seeds() {
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).expect("mkdir");
    for (name, bytes) in bitlens_testkit::fuzzing::sample_packets() {
        std::fs::write(dir.join(format!("valid_{name}")), &bytes).expect("write");
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() / 2);
        std::fs::write(dir.join(format!("truncated_{name}")), with_crc(cut)).expect("write");
        let mut flipped = bytes.clone();
        flipped[5] ^= 0x10;
        std::fs::write(
            dir.join(format!("body_bit_flip_valid_crc_{name}")),
            with_crc(flipped),
        )
        .expect("write");
    }
}
