//! Replays `corpus/capture_ingest/` through `bitlens::capture::fuzz_ingest`, the harness of the
//! `capture_ingest` fuzz target, on stable; the mapping check is shared with the codec's replay
//! test (`codec/testkit/tests/support/replay.rs`).
//!
//! The named seed files are written by the ignored test `write_seeds`:
//! `cargo test -p bitlens --test corpus_replay -- --ignored write_seeds`.

#[path = "../../codec/testkit/tests/support/replay.rs"]
mod replay;

use std::net::SocketAddr;

use bitlens::capture::write::{PcapngResolution, SynthDatagram, WriteFormat, to_bytes};
use bitlens::capture::{Timestamp, fuzz_ingest};
use bitlens_testkit::fuzzing::sample_packets;
use replay::{Harness, write_seed};

/// The fuzz targets whose harness lives in this crate (see fuzz/README.md, "Adding a target").
const TARGETS: &[(&str, Harness)] = &[("capture_ingest", fuzz_ingest)];

#[test]
fn every_fuzz_target_has_a_corpus_and_a_replay() {
    let mapped: Vec<&str> = TARGETS.iter().map(|(t, _)| *t).collect();
    replay::check_mapping(&mapped);
}

#[test]
fn corpus_replays_through_the_harnesses() {
    for (target, harness) in TARGETS {
        let n = replay::replay(target, *harness);
        eprintln!("{target}: {n} corpus files replayed");
    }
}

#[test]
#[ignore = "writes the named seed files into corpus/; run by hand"]
fn write_seeds() {
    let data = replay::root().join("inspector/tests/data");
    for name in ["eth-ns.pcap", "sll2-lo.pcap", "merged.pcapng"] {
        let bytes = std::fs::read(data.join(name)).unwrap();
        write_seed("capture_ingest", &format!("valid_{name}.bin"), &bytes);
    }
    let samples = sample_packets();
    let v4 = |port| SocketAddr::from(([10, 0, 0, 1], port));
    let v6 = |port| SocketAddr::from(([0, 0, 0, 0, 0, 0, 0, 1], port));
    let time = Timestamp::from_nanos(1_700_000_000_123_456_789);
    let two: Vec<SynthDatagram<'_>> = samples
        .iter()
        .take(2)
        .map(|(_, b)| SynthDatagram::new(time, v4(5000), v4(40000), b.as_slice()))
        .collect();
    let formats = [
        (
            "pcap_ethernet_us",
            WriteFormat::PcapEthernet { nanos: false },
        ),
        (
            "pcapng_ethernet_ns",
            WriteFormat::PcapngEthernet {
                resolution: PcapngResolution::Nano,
                ts_offset_secs: 0,
            },
        ),
        (
            "pcapng_ethernet_pow2_offset",
            WriteFormat::PcapngEthernet {
                resolution: PcapngResolution::PowerOfTwo(20),
                ts_offset_secs: 1000,
            },
        ),
        (
            "pcap_sll2_loopback_ns",
            WriteFormat::PcapSll2Loopback { nanos: true },
        ),
        (
            "pcap_ethernet_loopback_us",
            WriteFormat::PcapEthernetLoopback { nanos: false },
        ),
    ];
    for (name, format) in formats {
        write_seed(
            "capture_ingest",
            &format!("written_{name}.bin"),
            &to_bytes(format, &two).unwrap(),
        );
    }
    let (_, robocat) = samples.last().unwrap();
    let special = [
        (
            "written_ipv6",
            vec![SynthDatagram::new(
                time,
                v6(5000),
                v6(40000),
                robocat.as_slice(),
            )],
        ),
        (
            "written_fragmented_ipv4",
            vec![SynthDatagram::new(time, v4(5000), v4(40000), robocat.as_slice()).fragmented(16)],
        ),
        (
            "written_truncated_snaplen_40",
            vec![SynthDatagram::new(time, v4(5000), v4(40000), robocat.as_slice()).truncated(40)],
        ),
    ];
    for (name, datagrams) in special {
        let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
        write_seed("capture_ingest", &format!("{name}.bin"), &bytes);
    }
    write_seed("capture_ingest", "empty.bin", &[]);
    // The selector byte picks the link type for the frame-only views: one UDP payload per link.
    write_seed("capture_ingest", "raw_bytes_robocat.bin", robocat);
}
