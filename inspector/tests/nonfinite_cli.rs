//! Issue 21, section 5: f32/f64 NaN (with payloads) and infinities, through the real `bitlens`
//! binary (`encode`, `decode-bytes`, `decode --json`, `decode --fields`) and the TUI: printed as
//! SCHEMA.md says ("nan", "inf", "-inf", "nan:0x<bits>"), never `null`, and encode then decode
//! keeps every bit, -0 included. The 128-bit and fixed-point fields ride along: their JSON is
//! exact too.

mod common;

use bitlens::Dissectors;
use bitlens::capture::write::{SynthDatagram, WriteFormat, to_bytes};
use bitlens::capture::{Capture, Timestamp};
use bitlens::tui::{App, Key, ui};
use bitlens_schema::Schema;
use bitlens_testkit::{batch_demo, demo};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

const SCHEMA: &str = r#"
[protocol]
name = "floats"
id = 0x464C5431
mtu = 1200
packets = ["Sample"]

[struct.Sample]
fields = [
  { name = "a", type = "f32" },
  { name = "b", type = "f32" },
  { name = "c", type = "f32" },
  { name = "d", type = "f32" },
  { name = "e", type = "f32" },
  { name = "x", type = "f64" },
  { name = "y", type = "f64" },
  { name = "z", type = "f64" },
  { name = "w", type = "array", max_len = 4, element = "f32" },
  { name = "big", type = "u128" },
  { name = "q", type = "fixed", integer_bits = 64, fraction_bits = 64, min = -10, max = 10 },
]
"#;

/// Every special value, with payloads, -0 and a subnormal beside them.
const VALUE: &str = r#"{
  "a": "nan", "b": "inf", "c": "-inf", "d": "nan:0xffc00001", "e": -0.0,
  "x": "nan:0x7ff0000000000001", "y": "-inf", "z": -0.0,
  "w": ["nan:0x7f800001", 1e-45, "inf", -0.0],
  "big": "340282366920938463463374607431768211455",
  "q": "-0.0000000000000000000542101086242752217003726400434970855712890625"
}"#;

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nonfinite-cli");
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, bytes).expect("temp file");
    p
}

fn bitlens(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    common::bitlens(args)
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf8")
}

/// Whether any field of the JSON document's `value` or `fields` is `null`.
fn doc_has_null_value(text: &str) -> bool {
    let doc: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let values = doc["value"].as_object().expect("a value").values();
    let fields = doc["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| &f["value"]);
    values.chain(fields).any(serde_json::Value::is_null)
}

fn encode(schema: &Path, json: &str) -> Vec<u8> {
    // One file per call: the tests run in parallel, and two of them may encode the same text
    // (the same name would let one read the other's half-written file).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("value-{:016x}-{call}.json", fxhash(json));
    let j = file(&name, json.as_bytes());
    let out = bitlens(&[
        &"encode",
        &"--schema",
        &schema,
        &"--type",
        &"Sample",
        &"--json",
        &j,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The packet's float fields as bit patterns, read straight from the wire: after the 32-bit CRC,
/// a..e (f32), x..z (f64), then w's 3-bit count and elements.
fn wire_bits(packet: &[u8]) -> (Vec<u32>, Vec<u64>) {
    use bitlens_codec::{ReadStream, Stream};
    let mut r = ReadStream::new(packet);
    r.bits("crc", &mut 0, 32).unwrap();
    let mut f = vec![];
    for _ in 0..5 {
        let mut x = 0.0f32;
        r.f32("f", &mut x).unwrap();
        f.push(x.to_bits());
    }
    let mut d = vec![];
    for _ in 0..3 {
        let mut x = 0.0f64;
        r.f64("d", &mut x).unwrap();
        d.push(x.to_bits());
    }
    let mut n = 0;
    r.int("len", &mut n, 0, 4).unwrap();
    for _ in 0..n {
        let mut x = 0.0f32;
        r.f32("w", &mut x).unwrap();
        f.push(x.to_bits());
    }
    (f, d)
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

const F32_BITS: [u32; 9] = [
    0x7fc00000, 0x7f800000, 0xff800000, 0xffc00001, 0x80000000, 0x7f800001, 0x00000001, 0x7f800000,
    0x80000000,
];
const F64_BITS: [u64; 3] = [0x7ff0000000000001, 0xfff0000000000000, 0x8000000000000000];

#[test]
fn encode_then_decode_bytes_keeps_every_bit() {
    let schema = file("floats-a.toml", SCHEMA.as_bytes());
    let packet = encode(&schema, VALUE);
    assert_eq!(wire_bits(&packet), (F32_BITS.to_vec(), F64_BITS.to_vec()));
    let bin = file("a.bin", &packet);

    // decode-bytes --json: the value and the fields spell them out.
    let text = stdout(&bitlens(&[
        &"decode-bytes",
        &"--schema",
        &schema,
        &bin,
        &"--json",
    ]));
    assert!(!doc_has_null_value(&text), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(doc["accepted"], true);
    let v = &doc["value"];
    assert_eq!(
        [&v["a"], &v["b"], &v["c"], &v["d"], &v["e"]].map(ToString::to_string),
        [
            "\"nan\"",
            "\"inf\"",
            "\"-inf\"",
            "\"nan:0xffc00001\"",
            "-0.0"
        ]
    );
    assert_eq!(v["x"], "nan:0x7ff0000000000001");
    assert_eq!(v["w"].to_string(), r#"["nan:0x7f800001",1e-45,"inf",-0.0]"#);
    assert_eq!(v["big"], "340282366920938463463374607431768211455");
    let field = |path: &str| {
        doc["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("no field {path}"))["value"]
            .clone()
    };
    assert_eq!(field("a"), "nan");
    assert_eq!(field("y"), "-inf");
    assert_eq!(field("w[0]"), "nan:0x7f800001");
    assert_eq!(field("big"), "340282366920938463463374607431768211455");
    // The Q64.64 value -2^-64: f64 holds it exactly, so a number.
    assert_eq!(field("q"), serde_json::json!(-5.421010862427522e-20));

    // The decoded value, given back to encode, gives the same bytes.
    let again = encode(&schema, &v.to_string());
    assert_eq!(again, packet);

    // The text form.
    let text = stdout(&bitlens(&[&"decode-bytes", &"--schema", &schema, &bin]));
    for want in [
        " a = nan\n",
        " b = inf\n",
        " c = -inf\n",
        " d = nan:0xffc00001\n",
        " x = nan:0x7ff0000000000001\n",
        " q = -0.0000000000000000000542101086242752217003726400434970855712890625 (-1)",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }

    // null is not a float: a value that does not fit the schema is rejected input (exit
    // status 1, the rule of every subcommand).
    let j = file("null.json", VALUE.replace("\"nan\",", "null,").as_bytes());
    let out = bitlens(&[
        &"encode",
        &"--schema",
        &schema,
        &"--type",
        &"Sample",
        &"--json",
        &j,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a: expected a number"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn capture_bytes(packet: &[u8]) -> Vec<u8> {
    let d = SynthDatagram::new(
        Timestamp::from_nanos(1_700_000_000_000_000_000),
        "10.0.0.1:50000".parse().unwrap(),
        "10.0.0.2:40000".parse().unwrap(),
        packet.to_vec(),
    );
    to_bytes(WriteFormat::PcapEthernet { nanos: true }, &[d]).expect("writes a capture")
}

#[test]
fn decode_json_and_fields_spell_them_out() {
    let schema = file("floats-b.toml", SCHEMA.as_bytes());
    let packet = encode(&schema, VALUE);
    let pcap = file("floats.pcap", &capture_bytes(&packet));
    let text = stdout(&bitlens(&[
        &"decode",
        &pcap,
        &"--schema",
        &schema,
        &"--json",
    ]));
    let doc: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(doc["status"], "ok");
    let values: Vec<String> = doc["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}={}", f["path"].as_str().unwrap(), f["value"]))
        .collect();
    for want in [
        "a=\"nan\"",
        "b=\"inf\"",
        "c=\"-inf\"",
        "d=\"nan:0xffc00001\"",
        "e=-0.0",
        "x=\"nan:0x7ff0000000000001\"",
        "z=-0.0",
        "w[0]=\"nan:0x7f800001\"",
        "big=\"340282366920938463463374607431768211455\"",
        "q=-5.421010862427522e-20",
    ] {
        assert!(values.iter().any(|v| v == want), "{want} in {values:?}");
    }
    let text = stdout(&bitlens(&[
        &"decode",
        &pcap,
        &"--schema",
        &schema,
        &"--fields",
    ]));
    assert!(
        text.contains(" d = nan:0xffc00001  [bit 128, 32 bits]"),
        "{text}"
    );
    assert!(text.contains(" y = -inf  [bit"), "{text}");
}

#[test]
fn the_tui_shows_them_as_schema_md_says() {
    let schema_path = file("floats-c.toml", SCHEMA.as_bytes());
    let packet = encode(&schema_path, VALUE);
    let capture = Capture::from_bytes("floats.pcap", capture_bytes(&packet)).unwrap();
    // The `bitlens` binary's defaults (the demo on 40000 and 40001), with the schema on top.
    let mut dissectors = Dissectors::new();
    dissectors.register(demo::PORT, Arc::new(demo::dissector()));
    dissectors.register(batch_demo::PORT, Arc::new(batch_demo::dissector()));
    dissectors.set_schema(Schema::from_toml(SCHEMA, "floats.toml").unwrap());
    let mut app = App::new(
        Arc::new(capture),
        Arc::new(dissectors),
        false,
        (120, 40),
        "bitlens",
    );
    app.summarize_all();
    app.handle_key(Key::Tab);
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ui::draw(&app, f)).unwrap();
    let buf = t.backend().buffer();
    let screen: String = (0..40)
        .map(|y| (0..120).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect();
    for want in [
        "a = nan ",
        "b = inf ",
        "c = -inf ",
        "d = nan:0xffc00001 ",
        "x = nan:0x7ff0000000000001 ",
        "[0] = nan:0x7f800001 ",
        "big = 340282366920938463463374607431768211455 ",
    ] {
        assert!(screen.contains(want), "{want:?} on\n{screen}");
    }
    assert!(
        !screen.contains("NaN") && !screen.contains("null"),
        "{screen}"
    );
}
