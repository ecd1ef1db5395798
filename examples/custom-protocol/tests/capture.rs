//! `captures/custom.pcap` and `captures/custom.labels.json` are what `session()` writes (run
//! with `BITLENS_BLESS=1` to rewrite them), and every datagram of the capture reads as its label
//! says: unlabelled ones decode, each labelled fault fails the way it is labelled.

use bitlens::capture::write::{WriteFormat, to_bytes};
use bitlens::capture::{Capture, Status};
use bitlens_codec::packet::{read_packet, trace_packet};
use custom_protocol::session::{labels_json, session};
use custom_protocol::{PORT, Packet};
use std::path::PathBuf;

fn captures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../captures")
}

/// Compares `bytes` with the committed file, or writes it with `BITLENS_BLESS=1`.
fn committed(name: &str, bytes: &[u8]) {
    let path = captures().join(name);
    if std::env::var_os("BITLENS_BLESS").is_some() {
        std::fs::write(&path, bytes).unwrap();
    }
    let on_disk = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        on_disk == bytes,
        "{} is not what session() writes: BITLENS_BLESS=1 cargo test -p custom-protocol --test capture",
        path.display()
    );
}

#[test]
fn the_committed_capture_is_the_session() {
    let (datagrams, labels) = session();
    let pcap = to_bytes(WriteFormat::PcapEthernet { nanos: false }, &datagrams).unwrap();
    committed("custom.pcap", &pcap);
    committed("custom.labels.json", labels_json(&labels).as_bytes());
}

#[test]
fn every_datagram_reads_as_labelled() {
    let (_, labels) = session();
    assert_eq!(labels.len(), 6, "{labels:?}");
    let capture = Capture::open(captures().join("custom.pcap")).unwrap();
    assert!(capture.damage().is_none());
    let mut seen = Vec::new();
    for d in capture.datagrams() {
        assert!(
            d.src.port() == PORT || d.dst.port() == PORT,
            "frame {}",
            d.frame
        );
        let payload = capture.payload(d);
        let label = labels.iter().find(|l| l.frame == d.frame);
        let Some(label) = label else {
            assert_eq!(d.status, Status::Whole, "frame {}", d.frame);
            if let Err(e) = read_packet::<Packet>(payload) {
                panic!("unlabelled frame {} fails: {e}", d.frame);
            }
            continue;
        };
        seen.push(label.fault);
        match label.expect {
            "truncated" => assert_eq!(d.status, Status::Truncated, "frame {}", d.frame),
            "desync" => {
                let (packet, trace) = trace_packet::<Packet>(payload);
                assert!(packet.is_none());
                let check = trace.fields.iter().find(|f| f.check_failed());
                assert_eq!(check.map(|f| f.path()), Some("header"), "frame {}", d.frame);
            }
            "error" => {
                let e = read_packet::<Packet>(payload).expect_err(label.fault);
                let kind = e.kind().name();
                assert!(
                    label.detail.ends_with(kind),
                    "frame {}: {e} vs {label:?}",
                    d.frame
                );
            }
            other => panic!("unknown expectation {other}"),
        }
    }
    let mut kinds: Vec<&str> = labels.iter().map(|l| l.fault).collect();
    kinds.sort_unstable();
    seen.sort_unstable();
    assert_eq!(seen, kinds, "every label names a frame of the capture");
}
