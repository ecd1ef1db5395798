//! `bitlens tagged FILE [--json]`: dump a tagged document (seed 001) without knowing its type,
//! like `protoc --decode_raw`.
//!
//! The walk itself is the codec's [`bitlens_tagged::raw`]; this module only renders it.
//! Text form, one field per line, nested sized fields indented:
//!
//! ```text
//! 0 sized (4 bytes): "Ayla"
//! 1 varint: 17
//! 3 octet: 00 00 00 00 00 00 29 40 (f64 12.5)
//! 4 sized (14 bytes) {
//!   0 sized (5 bytes) {
//! ...
//! ```
//!
//! JSON form: `{"fields": [FIELD, ...]}`, FIELD = `{"id", "wire", ...}` with `value` for byte and
//! varint (a number, or a decimal string above 2^53), `hex` for octet (the 8 bytes in wire
//! order), `len` and `hex` for sized, plus `fields` when the bytes parse as a struct.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use bitlens_tagged::raw::{self, RawField, RawValue};
use serde_json::{Map, Value, json};

/// Largest integer a JSON number holds exactly (2^53); larger values are written as strings.
const JSON_EXACT_MAX: u64 = 1 << 53;

/// Reads the document at `path` and writes its field tree to `out`, as text or JSON.
///
/// The whole output is built before anything is written, so a malformed document writes nothing.
///
/// # Errors
/// The file cannot be read, or the document is malformed: the message names the file, the byte
/// offset and the field id, on one line.
pub fn run(path: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let bytes = super::common::read_input(path)?;
    let fields = raw::parse_document(&bytes).with_context(|| path.display().to_string())?;
    let text = if json {
        let mut s = serde_json::to_string_pretty(&json_document(&fields))?;
        s.push('\n');
        s
    } else {
        let mut s = String::new();
        text_fields(&mut s, &fields, 0);
        s
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The JSON form of a document's fields.
pub fn json_document(fields: &[RawField<'_>]) -> Value {
    json!({ "fields": json_fields(fields) })
}

fn json_number(x: u64) -> Value {
    if x <= JSON_EXACT_MAX {
        Value::from(x)
    } else {
        Value::from(x.to_string())
    }
}

fn json_fields(fields: &[RawField<'_>]) -> Value {
    Value::Array(
        fields
            .iter()
            .map(|field| {
                let mut obj = Map::new();
                obj.insert("id".into(), json_number(field.id));
                obj.insert("wire".into(), field.wire.name().into());
                match &field.value {
                    RawValue::Byte(b) => {
                        obj.insert("value".into(), Value::from(*b));
                    }
                    RawValue::Varint(x) => {
                        obj.insert("value".into(), json_number(*x));
                    }
                    RawValue::Octet(octet) => {
                        obj.insert("hex".into(), hex(octet, "").into());
                    }
                    RawValue::Sized { bytes, fields } => {
                        obj.insert("len".into(), Value::from(bytes.len()));
                        obj.insert("hex".into(), hex(bytes, "").into());
                        if let Some(fields) = fields {
                            obj.insert("fields".into(), json_fields(fields));
                        }
                    }
                }
                Value::Object(obj)
            })
            .collect(),
    )
}

fn hex(bytes: &[u8], sep: &str) -> String {
    let mut s = String::with_capacity(bytes.len() * (2 + sep.len()));
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Printable text: valid UTF-8 with no control characters but newline and tab.
fn as_text(bytes: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(bytes).ok()?;
    s.chars()
        .all(|c| !c.is_control() || c == '\n' || c == '\t')
        .then_some(s)
}

fn text_fields(s: &mut String, fields: &[RawField<'_>], indent: usize) {
    for field in fields {
        let _ = write!(
            s,
            "{:indent$}{} {}",
            "",
            field.id,
            field.wire,
            indent = indent
        );
        match &field.value {
            RawValue::Byte(b) => {
                let _ = writeln!(s, ": {b}");
            }
            RawValue::Varint(x) => {
                let _ = writeln!(s, ": {x}");
            }
            RawValue::Octet(octet) => {
                let _ = writeln!(
                    s,
                    ": {} (f64 {:?})",
                    hex(octet, " "),
                    f64::from_le_bytes(*octet)
                );
            }
            RawValue::Sized { bytes, fields } => {
                let _ = write!(s, " ({} bytes)", bytes.len());
                match (fields, as_text(bytes)) {
                    (Some(fields), _) => {
                        let _ = writeln!(s, " {{");
                        text_fields(s, fields, indent + 2);
                        let _ = writeln!(s, "{:indent$}}}", "", indent = indent);
                    }
                    (None, Some(text)) => {
                        let _ = writeln!(s, ": {text:?}");
                    }
                    (None, None) => {
                        let _ = writeln!(s, ": {}", hex(bytes, " "));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_numbers_become_strings() {
        assert_eq!(json_number(1 << 53), json!(9007199254740992u64));
        assert_eq!(json_number((1 << 53) + 1), json!("9007199254740993"));
    }

    #[test]
    fn seed_bar_as_json_and_text() {
        let doc = [0x07, 0x02, 0x80, 0x01, 0x00, 0xFF, 0x00, 0x06];
        let fields = raw::parse_document(&doc).unwrap();
        assert_eq!(
            json_document(&fields),
            json!({"fields": [
                {"id": 0, "wire": "varint", "value": 129},
                {"id": 1, "wire": "byte", "value": 255},
                {"id": 2, "wire": "byte", "value": 6},
            ]})
        );
        let mut s = String::new();
        text_fields(&mut s, &fields, 0);
        assert_eq!(s, "0 varint: 129\n1 byte: 255\n2 byte: 6\n");
    }
}
