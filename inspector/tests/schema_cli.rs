//! `bitlens encode` and `bitlens decode-bytes` with the demo schema.

use bitlens::cmd::{decode_bytes, encode};
use bitlens_codec::demo::{self, DemoPacket};
use bitlens_codec::packet::write_packet;
use bitlens_codec::schema::Schema;
use std::path::PathBuf;

fn demo_schema() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../captures/demo.schema.toml")
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-schema-cli-{}", std::process::id()));
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
        assert!(decode_bytes::run(&demo_schema(), &path, false, &mut out).expect("runs"));
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
    assert!(!decode_bytes::run(&demo_schema(), &path, false, &mut out).expect("runs"));
    let text = String::from_utf8(out).expect("utf8");
    assert!(
        text.contains("rejected: bit 0 (field \"crc32\"): CRC32 mismatch"),
        "{text}"
    );
}
