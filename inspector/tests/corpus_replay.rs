//! Replays `corpus/capture_ingest/` through `bitlens::capture::fuzz_ingest` and
//! `corpus/pipeline/` through `bitlens::fuzzing::fuzz_pipeline`, the harnesses of the
//! `capture_ingest` and `pipeline` fuzz targets, on stable; the mapping check is shared with the codec's replay
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
const TARGETS: &[(&str, Harness)] = &[
    ("capture_ingest", fuzz_ingest),
    ("pipeline", bitlens::fuzzing::fuzz_pipeline),
    ("netcode", bitlens_netcode::fuzzing::fuzz_netcode),
    ("yojimbo", bitlens_yojimbo::fuzzing::yojimbo),
];

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
    write_pipeline_seeds();
    write_netcode_seeds();
}

/// `netcode`: the datagrams of captures/netcode.pcap (a renetcode session with faults), whole
/// and one by one, with the server's key, the protocol id, a key log, and none of them.
fn write_netcode_seeds() {
    use bitlens_netcode::fuzzing::{FUZZ_CLIENT, join};
    let capture = bitlens::capture::Capture::open(replay::root().join("captures/netcode.pcap"))
        .expect("captures/netcode.pcap");
    let client = SocketAddr::from(FUZZ_CLIENT);
    let all: Vec<(bool, &[u8])> = capture
        .datagrams()
        .iter()
        .map(|d| (d.src == client, capture.payload(d)))
        .collect();
    for (selector, name) in [
        (3u8, "key_protocol_id"),
        (1, "key"),
        (0, "no_key"),
        (4, "keylog"),
    ] {
        write_seed(
            "netcode",
            &format!("session_{name}.bin"),
            &join(selector, &all),
        );
    }
    for (i, d) in all.iter().enumerate() {
        let kind = d.1.first().map_or(0, |p| p & 0x0f);
        // Each packet alone: the request decrypts; the others are of an unknown client.
        write_seed(
            "netcode",
            &format!("frame{:02}_type{kind}.bin", i + 1),
            &join(3, &[*d]),
        );
    }
    write_seed("netcode", "empty.bin", &[]);
}

/// `pipeline`: the first byte picks the dissector (0 demo packets, 1 demo batches, 2 and 3 the
/// demo schema's packets and batches, 4 and 5 every.schema.toml's; +0x80 re-signs the CRC
/// first), the rest is a UDP payload: the demo's sample packets and batch, and every datagram of
/// every.pcap on its dissector.
fn write_pipeline_seeds() {
    let with = |selector: u8, payload: &[u8]| {
        let mut v = vec![selector];
        v.extend_from_slice(payload);
        v
    };
    for (name, bytes) in sample_packets() {
        let name = name.to_lowercase();
        write_seed("pipeline", &format!("demo_{name}.bin"), &with(0, &bytes));
        write_seed("pipeline", &format!("schema_{name}.bin"), &with(2, &bytes));
    }
    let batch = bitlens_testkit::batch_demo::sample_batch();
    write_seed("pipeline", "demo_batch.bin", &with(1, &batch));
    write_seed("pipeline", "schema_batch.bin", &with(3, &batch));
    let every = bitlens::capture::Capture::open(replay::root().join("captures/every.pcap"))
        .expect("every.pcap opens");
    let (mut packets, mut batches) = (0, 0);
    for d in every.datagrams() {
        let payload = every.payload(d);
        // every.schema.toml's packets are on 40000, its batches on 40001.
        let (selector, n) = match d.dst.port() {
            40000 => (4, &mut packets),
            40001 => (5, &mut batches),
            _ => continue,
        };
        *n += 1;
        if *n <= 40 {
            let name = format!("every_{selector}_{}.bin", d.frame);
            write_seed("pipeline", &name, &with(selector, payload));
        }
    }
}
