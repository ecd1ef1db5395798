//! `bitlens encode` and `bitlens decode-bytes` with the demo schema.

mod common;

use bitlens::cmd::{decode_bytes, encode};
use bitlens_codec::packet::write_packet;
use bitlens_schema::Schema;
use bitlens_testkit::demo::{self, DemoPacket};
use common::bitlens;
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
    let bytes = encode::run(&demo_schema(), "RoboCat", &path, "bitlens").expect("encodes");
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
    let e = encode::run(&demo_schema(), "PacketA", &path, "bitlens").unwrap_err();
    // The one line names the file, then the JSON path (trial 2: it named only the path).
    assert_eq!(e.to_string(), format!("{}: z: missing", path.display()));
    assert!(e.is::<bitlens::Rejected>(), "still a rejection: {e}");
    let path = tmp("bad2.json", br#"{"health": 140}"#);
    let e = encode::run(&demo_schema(), "Nope", &path, "bitlens").unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}: no packet type named \"Nope\"",
            demo_schema().display()
        )),
        "{e}"
    );
    // A batch list, through the binary: the file, then the message and the path, exit 1.
    let path = tmp("bad-batch.json", br#"[{"type": "Ping", "body": {}}]"#);
    let schema = demo_schema();
    let o = bitlens(&[
        "encode".as_ref(),
        "--batch".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        "--json".as_ref(),
        path.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!("bitlens: {}: [0]: ", path.display())) && err.lines().count() == 1,
        "{err}"
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
            decode_bytes::run_with_schema(&demo_schema(), &path, false, &mut out, "bitlens")
                .expect("runs")
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
    assert!(
        !decode_bytes::run_with_schema(&demo_schema(), &path, false, &mut out, "bitlens")
            .expect("runs")
    );
    let text = String::from_utf8(out).expect("utf8");
    assert!(
        text.contains("rejected: bit 0 (field \"crc32\"): CRC32 mismatch"),
        "{text}"
    );
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

/// The demo's sample batch as `encode --batch` input: each message's type, stage and body, the
/// body as the schema batch reads it and serializes it to JSON.
fn sample_batch_json(schema: &Schema) -> serde_json::Value {
    let batch = bitlens_testkit::batch_demo::sample_batch();
    let b = schema
        .batch()
        .expect("the demo schema has a [batch] section");
    let messages: Vec<serde_json::Value> = bitlens_batch::read_batch(&batch)
        .expect("the sample batch reads")
        .map(|m| {
            let m = m.expect("a whole message");
            let body = b.decode(&m).expect("decodes").expect("a known type");
            serde_json::json!({
                "type": b.message_name(m.header.message_type).expect("named"),
                "stage": m.header.stage.0,
                "body": serde_json::to_value(&body).expect("serializes"),
            })
        })
        .collect();
    serde_json::Value::Array(messages)
}

#[test]
fn encode_batch_gives_the_compiled_batch() {
    let schema = Schema::load(&demo_schema()).expect("loads");
    let json = sample_batch_json(&schema);
    assert!(json.as_array().expect("a list").len() >= 3);
    let bytes = encode::encode_batch(&schema, &json).expect("encodes");
    assert_eq!(bytes, bitlens_testkit::batch_demo::sample_batch());
    // Stages by name, types by number: the same bytes.
    let b = schema.batch().expect("batch");
    let mut by_number = json.clone();
    for m in by_number.as_array_mut().expect("a list") {
        let name = m["type"].as_str().expect("a name").to_owned();
        m["type"] = b.message_type(&name).expect("a type").into();
        let stage = u8::try_from(m["stage"].as_u64().expect("a number")).expect("u8");
        m["stage"] = b.stage_name(stage).expect("a named stage").into();
    }
    assert_eq!(
        encode::encode_batch(&schema, &by_number).expect("encodes"),
        bytes
    );
}

#[test]
fn encode_batch_refusals_name_the_message() {
    let schema = Schema::load(&demo_schema()).expect("loads");
    let refuse = |json: serde_json::Value| -> String {
        let e = encode::encode_batch(&schema, &json).unwrap_err();
        assert!(e.is::<bitlens::Rejected>(), "rejected input: {e}");
        e.to_string()
    };
    let e = refuse(serde_json::json!({"type": "Ping"}));
    assert!(e.starts_with("expected a list of messages"), "{e}");
    let e = refuse(serde_json::json!([{"type": "Nope", "body": {}}]));
    assert!(e.starts_with("[0]: no batch message type \"Nope\""), "{e}");
    let mut good = sample_batch_json(&schema);
    good[1]["stage"] = "no-such-stage".into();
    let e = refuse(good.clone());
    assert_eq!(e, "[1].stage: no stage named \"no-such-stage\"");
    let mut good = sample_batch_json(&schema);
    good[0]["colour"] = 3.into();
    let e = refuse(good);
    assert_eq!(
        e,
        "[0].colour: no such key (a message has type, stage, body)"
    );
    // A body field missing, and a chat text over its maximum length: the writer's refusal.
    let chat = serde_json::json!([{"type": "ChatText", "body": {}}]);
    let e = refuse(chat);
    assert!(e.starts_with("[0]: ") && e.ends_with(": missing"), "{e}");
    let long = "x".repeat(10_000);
    let chat = serde_json::json!([{"type": "ChatText", "body": {"player": 1, "text": long}}]);
    let e = refuse(chat);
    assert!(e.starts_with("[0]: cannot encode the message: "), "{e}");
    // More messages than one datagram holds.
    let one = sample_batch_json(&schema)[0].clone();
    let many = serde_json::Value::Array(vec![one; 2000]);
    let e = refuse(many);
    assert!(e.contains("do not fit in one datagram of"), "{e}");
}

#[test]
fn the_binary_encodes_a_batch_that_decodes() {
    let schema = Schema::load(&demo_schema()).expect("loads");
    let json = tmp(
        "batch.json",
        sample_batch_json(&schema).to_string().as_bytes(),
    );
    let bin = common::BIN;
    let schema_arg = demo_schema();
    let out = std::process::Command::new(bin)
        .args(["encode", "--batch", "--schema"])
        .arg(&schema_arg)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, bitlens_testkit::batch_demo::sample_batch());
    let bytes = tmp("batch.bin", &out.stdout);
    let out = std::process::Command::new(bin)
        .args(["decode-bytes", "--json", "--as", "schema-batch", "--schema"])
        .arg(&schema_arg)
        .arg(&bytes)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["status"], "ok");
    // Its value is what encode --batch reads: the same bytes again.
    let again = encode::encode_batch(&schema, &v["value"]).expect("re-encodes");
    assert_eq!(again, bitlens_testkit::batch_demo::sample_batch());
    // A schema without [batch], and --type with --batch: usage errors (2).
    let plain = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/arena.schema.toml");
    for args in [
        vec![
            "--batch".into(),
            "--schema".into(),
            plain.clone(),
            "--json".into(),
            json.clone(),
        ],
        vec![
            "--batch".into(),
            "--type".into(),
            "Ping".into(),
            "--schema".into(),
            schema_arg.clone(),
            "--json".into(),
            json.clone(),
        ],
    ] {
        let out = std::process::Command::new(bin)
            .arg("encode")
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A schema with a counted array and raw bytes, for reads that run past the end.
const PAST_END_SCHEMA: &str = r#"
[protocol]
name = "pe"
id = 0x50455354
id_bits = 32
mtu = 200
packets = ["P", "Q"]

[struct.P]
fields = [
  { name = "a", type = "int", min = 0, max = 1000000 },
  { name = "list", type = "array", max_len = 63, element = { type = "int", min = 0, max = 255 } },
]

[struct.Q]
fields = [
  { name = "a", type = "int", min = 0, max = 2047 },
  { name = "blob", type = "bytes", len = 8 },
  { name = "name", type = "string", max_len = 100 },
]
"#;

#[test]
fn past_end_is_at_the_fields_first_bit_and_marked_where_the_read_stopped() {
    // Issue 29.9: the error named the bit after the length (61 for one at 55) or before the
    // padding (44 for bytes at 48), and no view marked the field.
    let path = tmp("past_end.schema.toml", PAST_END_SCHEMA.as_bytes());
    let schema = Schema::load(&path).expect("loads");
    let cut = |body: &[u8]| {
        let mut data = vec![0u8; 4];
        data.extend_from_slice(body);
        bitlens_codec::fuzzing::with_valid_crc(schema.protocol(), &data).unwrap_or(data)
    };
    // P: type 0 at bit 32, a = 5 (20 bits) at 33, list.len = 3 (6 bits) at 53; three elements
    // of 8 bits do not fit in the 5 bits left.
    let p = cut(&[0x0a, 0x00, 0x60, 0x08]);
    let text = decode_bytes::decode(&schema, &p, false).expect("decodes");
    assert!(
        text.contains("bit   53   +6    len = 3  0..=63  <- FAILED: read stopped here\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "rejected: bit 53 (field \"list.len\"): read past end: needs 24 bits, 5 remain\n"
        ),
        "{text}"
    );
    // Q: type 1, a = 5 (11 bits) at 33, padding at 44, blob's 8 bytes from 48: one byte left.
    let q = cut(&[0x0b, 0x00, 0x01]);
    let text = decode_bytes::decode(&schema, &q, false).expect("decodes");
    assert!(
        text.contains("bit   48   +8  blob  <- FAILED: read stopped here\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "rejected: bit 48 (field \"blob\"): read past end: needs 64 bits, 8 remain\n"
        ),
        "{text}"
    );
    // The JSON lists what was read (as the Wireshark export shows it); the error says the rest.
    let json = decode_bytes::decode(&schema, &q, true).expect("json");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let paths: Vec<&str> = doc["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| f["path"].as_str().expect("path"))
        .collect();
    assert_eq!(paths, ["packet_type", "a"]);
    // A string's bytes, after its length: at the first byte boundary.
    let q = cut(&[0x0b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x05]);
    let text = decode_bytes::decode(&schema, &q, false).expect("decodes");
    assert!(
        text.contains("bit  120   +0    utf8  <- FAILED: read stopped here\n"),
        "{text}"
    );
    assert!(
        text.contains("rejected: bit 120 (field \"name.utf8\")"),
        "{text}"
    );
    // The compiled demo protocol in `decode --fields` and `--json`: a cut RoboCat's mice.
    let o = bitlens(&["decode", "--fields", "captures/faults.pcap"]);
    let fields = String::from_utf8_lossy(&o.stdout);
    assert!(
        fields.contains("    len = 29  [bit 128, 6 bits, 0..=32]  <- read stopped here\n"),
        "{fields}"
    );
    let o = bitlens(&["decode", "--json", "captures/faults.pcap"]);
    let json = String::from_utf8_lossy(&o.stdout);
    assert!(
        json.contains(r#""error":{"kind":"past_end","bit":128,"field":"mice.len""#),
        "{json}"
    );
}

#[test]
fn a_batch_strings_length_and_bytes_have_their_own_paths() {
    // Issue 29.9: a batch message's string traced its length and its bytes both as `name`, so
    // an object keyed by path had the key twice. Compiled and schema batches alike.
    for args in [
        &["decode", "--json", "captures/demo.pcap"][..],
        &[
            "decode",
            "--json",
            "--schema",
            "captures/demo.schema.toml",
            "captures/demo.pcap",
        ][..],
    ] {
        let o = bitlens(args);
        let mut strings = 0;
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let doc: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            for m in doc["messages"].as_array().into_iter().flatten() {
                let paths: Vec<&str> = m["fields"]
                    .as_array()
                    .expect("fields")
                    .iter()
                    .map(|f| f["path"].as_str().expect("path"))
                    .collect();
                let mut unique = paths.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), paths.len(), "{args:?}: {paths:?}");
                if let Some(i) = paths.iter().position(|p| *p == "name.len") {
                    assert_eq!(paths.get(i + 1), Some(&"name"), "{paths:?}");
                    strings += 1;
                }
            }
        }
        assert!(strings > 10, "{args:?}: {strings} strings");
    }
}

#[test]
fn batch_values_carry_their_declared_ranges() {
    // Issue 29.9: a batch message's ranged values (`health` max 100, `mice`'s elements max 4095,
    // the ids' 1..=65535) were traced with `min/max: null`; a bit-packed field carries its range.
    // Compiled and schema batches alike; raw bytes (`location`, a pod array) and text have none.
    let want = |path: &str| -> Option<(i64, i64)> {
        match path {
            "network_id" => Some((1, 65535)),
            "health" => Some((0, 100)),
            "meow_count" => Some((0, 1_000_000)),
            "home_base" => Some((0, 65535)),
            "name.len" => Some((0, 127)),
            "mice" => Some((0, 32)),
            p if p.starts_with("mice[") => Some((0, 4095)),
            _ => None,
        }
    };
    for args in [
        &["decode", "--json", "captures/demo.pcap"][..],
        &[
            "decode",
            "--json",
            "--schema",
            "captures/demo.schema.toml",
            "captures/demo.pcap",
        ][..],
    ] {
        let o = bitlens(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut elements = 0;
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let doc: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            let messages = doc["messages"].as_array().into_iter().flatten();
            for m in messages.filter(|m| m["name"] == "SpawnRoboCat" && m["status"] == "ok") {
                for f in m["fields"].as_array().expect("fields") {
                    let path = f["path"].as_str().expect("path");
                    let range = match (f["min"].as_i64(), f["max"].as_i64()) {
                        (Some(a), Some(b)) => Some((a, b)),
                        _ => None,
                    };
                    assert_eq!(range, want(path), "{args:?} frame {}: {f}", doc["frame"]);
                    elements += usize::from(path.starts_with("mice["));
                }
            }
        }
        assert!(elements > 10, "{args:?}: {elements} mice");
    }
}
