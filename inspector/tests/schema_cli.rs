//! `bitlens encode` and `bitlens decode-bytes` with the demo schema.

use bitlens::cmd::{decode_bytes, encode};
use bitlens_codec::packet::write_packet;
use bitlens_schema::Schema;
use bitlens_testkit::demo::{self, DemoPacket};
use std::path::PathBuf;

fn demo_schema() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../captures/demo.schema.toml")
}

/// A file in cargo's per-target scratch folder (`target/tmp`), not the system's temp folder,
/// where a folder per test process used to stay behind.
fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("schema-cli");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("temp file");
    p
}

#[test]
fn encode_gives_the_compiled_bytes() {
    let json = br#"{"health": 87, "meow_count": 12, "home_base": 42, "name": "Mittens",
        "mice": [3, 17, 4095], "location": {"x": -12345, "y": 0, "z": 19999},
        "rotation": [0, 0, 0, 1]}"#;
    let path = tmp("cat.json", json);
    let bytes = encode::run(&demo_schema(), "RoboCat", &path).expect("encodes");
    let mut cat = DemoPacket::RoboCat(demo::RoboCat {
        health: 87,
        meow_count: 12,
        home_base: bitlens_codec::link::NetworkId::new(42),
        name: "Mittens".into(),
        mice: vec![3, 17, 4095],
        location: [-12345, 0, 19999],
        rotation: [0.0, 0.0, 0.0, 1.0],
    });
    let mut buf = [0u8; demo::MTU];
    let n = write_packet(&mut cat, &mut buf).expect("writes");
    assert_eq!(bytes, &buf[..n]);
}

#[test]
fn encode_errors_name_the_field() {
    let path = tmp("bad.json", br#"{"x": 1, "y": 2}"#);
    let e = encode::run(&demo_schema(), "PacketA", &path).unwrap_err();
    assert_eq!(e.to_string(), "z: missing");
    let path = tmp("bad2.json", br#"{"health": 140}"#);
    let e = encode::run(&demo_schema(), "Nope", &path).unwrap_err();
    assert!(
        e.to_string().starts_with("no packet type named \"Nope\""),
        "{e}"
    );
}

#[test]
fn decode_bytes_shows_fields_and_verdict() {
    let schema = Schema::load(&demo_schema()).expect("loads");
    for mut p in demo::samples() {
        let mut buf = [0u8; demo::MTU];
        let n = write_packet(&mut p, &mut buf).expect("writes");
        let path = tmp("p.bin", &buf[..n]);
        let mut out = Vec::new();
        assert!(
            decode_bytes::run_with_schema(&demo_schema(), &path, false, &mut out).expect("runs")
        );
        let text = String::from_utf8(out).expect("utf8");
        assert!(
            text.contains("end of packet = 0x9908ace2  check ok"),
            "{text}"
        );
        assert!(
            text.lines().last().unwrap_or("").starts_with("accepted: "),
            "{text}"
        );
        let json = decode_bytes::decode(&schema, &buf[..n], true).expect("json");
        let doc: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(doc["accepted"], true);
        // The JSON value encodes back to the same bytes.
        let name = doc["packet_type"].as_str().expect("type");
        let again = encode::encode(&schema, name, &doc["value"]).expect("re-encodes");
        assert_eq!(again, &buf[..n]);
    }
    let mut bad = vec![0u8; 12];
    bad[0] = 1;
    let path = tmp("bad.bin", &bad);
    let mut out = Vec::new();
    assert!(!decode_bytes::run_with_schema(&demo_schema(), &path, false, &mut out).expect("runs"));
    let text = String::from_utf8(out).expect("utf8");
    assert!(
        text.contains("rejected: bit 0 (field \"crc32\"): CRC32 mismatch"),
        "{text}"
    );
}

fn bitlens(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_bitlens"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("runs bitlens")
}

#[test]
fn check_decodes_every_datagram_with_the_schema_batches_included() {
    let out = bitlens(&[
        "check",
        "captures/demo.pcap",
        "--schema",
        "captures/demo.schema.toml",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("decoders: 40000=schema 40001=schema-batch"),
        "{text}"
    );
    assert!(
        text.contains("2000 of 2000 datagrams with a decoder decoded, 0 with problems"),
        "{text}"
    );
    let batches = text
        .lines()
        .find(|l| l.starts_with("Batch"))
        .expect("a Batch row");
    let counts: Vec<&str> = batches.split_whitespace().collect();
    assert_ne!(counts[1], "0", "{batches}");
    assert!(counts[2..].iter().all(|c| *c == "0"), "{batches}");
}

#[test]
fn batch_messages_decode_the_same_with_and_without_the_schema() {
    let lines = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = bitlens(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .filter(|v: &serde_json::Value| v.get("messages").is_some())
            .collect()
    };
    let compiled = lines(&["decode", "--json", "captures/demo.pcap"]);
    let schema = lines(&[
        "decode",
        "--json",
        "captures/demo.pcap",
        "--schema",
        "captures/demo.schema.toml",
    ]);
    assert!(!compiled.is_empty());
    assert_eq!(compiled.len(), schema.len());
    for (c, s) in compiled.iter().zip(&schema) {
        assert_eq!(c["decoder"], "batch");
        assert_eq!(s["decoder"], "schema-batch");
        assert_eq!(c["status"], s["status"]);
        assert_eq!(c["messages"], s["messages"], "frame {}", c["frame"]);
    }
    // And with the override spelled out.
    let explicit = lines(&[
        "decode",
        "--json",
        "captures/demo.pcap",
        "--schema",
        "captures/demo.schema.toml",
        "--decode",
        "40001=schema-batch",
    ]);
    assert_eq!(explicit.len(), schema.len());
}
