//! `bitlens tagged` on the example save file and on broken documents, through the real binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

fn savegame() -> PathBuf {
    common::root().join("captures/savegame.tagged")
}

fn bitlens(args: &[&str], file: &Path) -> Output {
    common::command()
        .arg("tagged")
        .arg(file)
        .args(args)
        .output()
        .expect("bitlens runs")
}

fn field(fields: &serde_json::Value, id: u64) -> &serde_json::Value {
    fields
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no field {id} in {fields}"))
}

#[test]
fn text_dump_of_the_example_save() {
    let out = bitlens(&[], &savegame());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("0 sized (4 bytes): \"Ayla\"\n1 varint: 17\n"),
        "{text}"
    );
    assert!(text.contains("6 varint: 1152921504606846976\n"), "{text}");
    assert!(text.contains("8 byte: 255\n"), "{text}");
    assert!(
        text.contains("9 sized (10 bytes): \"north gate\"\n"),
        "{text}"
    );
}

#[test]
fn json_dump_of_the_example_save() {
    let out = bitlens(&["--json"], &savegame());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fields = &doc["fields"];
    assert_eq!(
        field(fields, 0),
        &serde_json::json!({"id": 0, "wire": "sized", "len": 4, "hex": "41796c61"})
    );
    assert_eq!(
        field(fields, 1),
        &serde_json::json!({"id": 1, "wire": "varint", "value": 17})
    );
    // 2^60 playtime: above 2^53, so a decimal string.
    assert_eq!(field(fields, 6)["value"], "1152921504606846976");
    assert_eq!(
        field(fields, 8),
        &serde_json::json!({"id": 8, "wire": "byte", "value": 255})
    );
    // The inventory is an array of structs: one sized field holding the elements.
    let inventory = field(fields, 4);
    assert_eq!(inventory["wire"], "sized");
    assert!(inventory["len"].as_u64().unwrap() > 0);
    assert_eq!(
        inventory["hex"].as_str().unwrap().len(),
        2 * inventory["len"].as_u64().unwrap() as usize
    );
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("bitlens-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn malformed_document_fails_with_offset_and_no_output() {
    let mut bytes = std::fs::read(savegame()).unwrap();
    bytes.truncate(bytes.len() - 3);
    // Keep the root length consistent, so the error is inside a field.
    bytes[0] -= 3;
    let path = temp_file("truncated.tagged", &bytes);
    for args in [&[][..], &["--json"][..]] {
        let out = bitlens(args, &path);
        assert!(!out.status.success());
        assert!(
            out.stdout.is_empty(),
            "partial output: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("truncated.tagged: byte 87 (field 9): sized length 10 exceeds the 7 bytes that remain"), "{err}");
    }
    std::fs::remove_file(path).ok();
}

/// Octet fields holding NaN and infinities print as every bitlens output spells them, not as
/// Rust's `NaN`.
#[test]
fn non_finite_octets_print_as_bitlens_spells_them() {
    let values = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0xFFF8_0000_0000_0001),
        12.5,
        -0.0,
    ];
    // A document of octet fields 0, 1, 2, ...: each header is delta 0, wire type 1.
    let mut doc = vec![(values.len() * 9) as u8];
    for v in values {
        doc.push(0x01);
        doc.extend_from_slice(&v.to_le_bytes());
    }
    let path = temp_file("nonfinite.tagged", &doc);
    let out = bitlens(&[], &path);
    std::fs::remove_file(&path).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let shown: Vec<&str> = text
        .lines()
        .map(|l| l.split(" (f64 ").nth(1).unwrap().trim_end_matches(')'))
        .collect();
    assert_eq!(
        shown,
        [
            "nan",
            "inf",
            "-inf",
            "nan:0xfff8000000000001",
            "12.5",
            "-0.0"
        ],
        "{text}"
    );
}

#[test]
fn missing_file_fails() {
    let out = bitlens(&[], Path::new("/nonexistent/save.tagged"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/save.tagged"));
}
