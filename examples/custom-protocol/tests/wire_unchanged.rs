//! skirmish's wire, pinned: what `skirmish decode captures/custom.pcap --json` prints for every
//! datagram, and what every committed fuzz corpus input decodes to (as a datagram; as the
//! `Arbitrary` packet `packet_roundtrip` writes; as the hostile packet `hostile_lengths`
//! builds), against `tests/golden/wire.txt`. Written by the hand-written serialize functions
//! before the protocol moved to `#[derive(BitPacked)]`: the derived code must give the same
//! bytes, statuses, field paths, bits and values. `BITLENS_BLESS=1` writes the file again.

use arbitrary::{Arbitrary, Unstructured};
use bitlens_codec::fuzzing::hostile_case;
use bitlens_codec::packet::{Packet as _, trace_packet, write_packet};
use custom_protocol::{MTU, Packet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn here() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn crc(bytes: &[u8]) -> String {
    format!("{:08x}", crc32fast::hash(bytes))
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    v.sort();
    v
}

/// One line per datagram of `decode --json`: its frame and the CRC32 of its JSON line.
fn capture_lines(out: &mut String) {
    let o = Command::new(env!("CARGO_BIN_EXE_skirmish"))
        .args(["decode", "captures/custom.pcap", "--json"])
        .current_dir(here().join("../.."))
        .output()
        .expect("skirmish runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).expect("UTF-8 JSON");
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(out, "custom.pcap frame {} {}", i + 1, crc(line.as_bytes()));
    }
}

/// One line per corpus file: the datagram's verdict and trace, the written `Arbitrary` packet,
/// the hostile packet.
fn corpus_lines(out: &mut String) {
    for target in ["packet_read", "packet_roundtrip", "hostile_lengths"] {
        for file in files(&here().join("fuzz/corpus").join(target)) {
            let data = std::fs::read(&file).expect("a corpus file");
            let (packet, trace) = trace_packet::<Packet>(&data);
            let verdict = match (&packet, &trace.error) {
                (Some(p), _) => format!("ok type {}", p.packet_type()),
                (None, Some(e)) => format!("{} at {}", e.kind().name(), e.field()),
                (None, None) => "refused".to_owned(),
            };
            let json = serde_json::to_string(&trace.fields).expect("a trace serializes");
            let mut buf = [0u8; MTU];
            let written = match Packet::arbitrary(&mut Unstructured::new(&data)) {
                Ok(mut p) => match write_packet(&mut p, &mut buf) {
                    Ok(n) => crc(&buf[..n]),
                    Err(e) => e.kind().name().to_owned(),
                },
                Err(_) => "no value".to_owned(),
            };
            let hostile = hostile_case::<Packet>(&data).map_or("none".to_owned(), |h| {
                format!("{}={} {}", h.path, h.raw, crc(&h.bytes))
            });
            let _ = writeln!(
                out,
                "{target}/{} read {verdict} trace {} written {written} hostile {hostile}",
                file.file_name().expect("a name").to_string_lossy(),
                crc(json.as_bytes()),
            );
        }
    }
}

#[test]
fn the_wire_is_what_the_hand_written_code_wrote() {
    let mut now = String::new();
    capture_lines(&mut now);
    corpus_lines(&mut now);
    let golden = here().join("tests/golden/wire.txt");
    if std::env::var_os("BITLENS_BLESS").is_some() {
        std::fs::write(&golden, &now).expect("writes the golden file");
    }
    let want = std::fs::read_to_string(&golden).expect("tests/golden/wire.txt");
    let diff: Vec<String> = want
        .lines()
        .zip(now.lines())
        .filter(|(w, n)| w != n)
        .map(|(w, n)| format!("want {w}\n got {n}"))
        .take(10)
        .collect();
    assert!(diff.is_empty(), "the wire changed:\n{}", diff.join("\n"));
    assert_eq!(want.lines().count(), now.lines().count());
}
