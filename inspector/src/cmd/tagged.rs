//! `tagged FILE [--json]`: dump a tagged document (seed 001) without knowing its type,
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

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::common::{Context, Exit, Rejected};
use bitlens_codec::float_text::f64_text;
use bitlens_tagged::raw::{self, RawField, RawFields, RawValue};
use clap::Parser;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// Dump a tagged document (save file) without knowing its type, like `protoc --decode_raw`
/// (exit status 1 when the document is malformed).
#[derive(Parser, Debug)]
pub struct TaggedArgs {
    /// The document to dump.
    pub file: PathBuf,
    /// Print `{"fields": [...]}` JSON instead of the indented text tree.
    #[arg(long)]
    pub json: bool,
}

/// The subcommand: the field tree on stdout.
///
/// # Errors
/// As [`run`].
pub fn command(args: TaggedArgs, _: &Context<'_>) -> anyhow::Result<Exit> {
    run(&args.file, args.json, &mut crate::files::stdout())?;
    Ok(Exit::Ok)
}

/// Largest integer a JSON number holds exactly (2^53); larger values are written as strings.
const JSON_EXACT_MAX: u64 = 1 << 53;

/// Reads the document at `path` and writes its field tree to `out`, as text or JSON.
///
/// The document's own fields are checked before anything is written, so a malformed document
/// writes nothing; the tree is then written as it is walked ([`raw`] is lazy), so memory is the
/// file and a few buffers whatever the size of the output (a 1 MiB document nested 60 deep is
/// 790 MB of JSON).
///
/// # Errors
/// The file cannot be read, or `out` fails (file errors); a [`Rejected`] document that is
/// malformed: the message names the file, the byte offset and the field id, on one line.
pub fn run(path: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    super::common::must_exist(path)?;
    let bytes = super::common::read_input(path)?;
    let fields = raw::parse_document(&bytes)
        .map_err(|e| Rejected::new(format!("{}: {e}", path.display())))?;
    let mut out = BufWriter::with_capacity(1 << 16, out);
    if json {
        write_json(fields, &mut out)?;
    } else {
        write_text(&mut out, fields, 0)?;
    }
    out.flush()?;
    Ok(())
}

/// Writes the JSON form of a document's fields, pretty-printed, and a newline.
///
/// # Errors
/// When `out` fails.
pub fn write_json<W: Write>(fields: RawFields<'_>, mut out: W) -> io::Result<()> {
    // A concrete writer (a `BufWriter` in `run`), not `dyn Write`: the pretty printer writes
    // each level of indentation with its own call.
    let mut ser = serde_json::Serializer::pretty(&mut out);
    Document(fields).serialize(&mut ser)?;
    out.write_all(b"\n")
}

/// `{"fields": [...]}`.
struct Document<'a>(RawFields<'a>);

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("fields", &Fields(self.0.clone()))?;
        map.end()
    }
}

/// A struct's fields as a JSON array, each walked as it is written.
struct Fields<'a>(RawFields<'a>);

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for field in self.0.clone() {
            seq.serialize_element(&Field(&field))?;
        }
        seq.end()
    }
}

/// One field as a JSON object, its keys in alphabetical order (as a `serde_json::Map`, which
/// the first version of this output was built from, lists them).
struct Field<'f, 'a>(&'f RawField<'a>);

impl Serialize for Field<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut map = s.serialize_map(None)?;
        match &f.value {
            RawValue::Byte(b) => {
                map.serialize_entry("id", &Number(f.id))?;
                map.serialize_entry("value", b)?;
            }
            RawValue::Varint(x) => {
                map.serialize_entry("id", &Number(f.id))?;
                map.serialize_entry("value", &Number(*x))?;
            }
            RawValue::Octet(octet) => {
                map.serialize_entry("hex", &Hex(octet, ""))?;
                map.serialize_entry("id", &Number(f.id))?;
            }
            RawValue::Sized { bytes, fields } => {
                if let Some(fields) = fields {
                    map.serialize_entry("fields", &Fields(fields.clone()))?;
                }
                map.serialize_entry("hex", &Hex(bytes, ""))?;
                map.serialize_entry("id", &Number(f.id))?;
                map.serialize_entry("len", &bytes.len())?;
            }
        }
        map.serialize_entry("wire", f.wire.name())?;
        map.end()
    }
}

/// A JSON number, or a decimal string above 2^53.
struct Number(u64);

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 <= JSON_EXACT_MAX {
            s.serialize_u64(self.0)
        } else {
            s.collect_str(&self.0)
        }
    }
}

/// Bytes as lower-case hex digits with `sep` between bytes, written in pieces (a sized value
/// may be the whole document): `Display`, and a JSON string.
struct Hex<'b>(&'b [u8], &'static str);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // 64 bytes a piece: two digits and a separator each.
        let mut buf = [0u8; 192];
        for (i, chunk) in self.0.chunks(64).enumerate() {
            let mut n = 0;
            for (k, &b) in chunk.iter().enumerate() {
                if (i > 0 || k > 0) && !self.1.is_empty() {
                    buf[n..n + self.1.len()].copy_from_slice(self.1.as_bytes());
                    n += self.1.len();
                }
                // Two digits into two bytes: encoding cannot fail.
                let _ = hex::encode_to_slice([b], &mut buf[n..n + 2]);
                n += 2;
            }
            // Hex digits and the separators used here are ASCII.
            f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Printable text: valid UTF-8 with no control characters but newline and tab.
fn as_text(bytes: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(bytes).ok()?;
    s.chars()
        .all(|c| !c.is_control() || c == '\n' || c == '\t')
        .then_some(s)
}

/// Writes `n` spaces (`{:n$}` would write them one `write_char` at a time).
fn spaces<W: Write>(out: &mut W, mut n: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = &[b' '; 64];
    while n > 0 {
        let k = n.min(SPACES.len());
        out.write_all(&SPACES[..k])?;
        n -= k;
    }
    Ok(())
}

/// Writes the text form of `fields`, nested fields indented by two more spaces a level.
fn write_text<W: Write>(out: &mut W, fields: RawFields<'_>, indent: usize) -> io::Result<()> {
    for field in fields {
        spaces(out, indent)?;
        write!(out, "{} {}", field.id, field.wire)?;
        match field.value {
            RawValue::Byte(b) => writeln!(out, ": {b}")?,
            RawValue::Varint(x) => writeln!(out, ": {x}")?,
            RawValue::Octet(octet) => {
                // Finite values in Rust's shortest round-trip form; NaN and infinities spelled
                // as every other bitlens output spells them ("nan", "inf", "nan:0x...").
                let x = f64::from_le_bytes(octet);
                match f64_text(x) {
                    Some(text) => writeln!(out, ": {} (f64 {text})", Hex(&octet, " "))?,
                    None => writeln!(out, ": {} (f64 {x:?})", Hex(&octet, " "))?,
                }
            }
            RawValue::Sized { bytes, fields } => {
                write!(
                    out,
                    " ({})",
                    crate::words::count(bytes.len() as u64, "byte")
                )?;
                match (fields, as_text(bytes)) {
                    (Some(fields), _) => {
                        writeln!(out, " {{")?;
                        write_text(out, fields, indent + 2)?;
                        spaces(out, indent)?;
                        writeln!(out, "}}")?;
                    }
                    (None, Some(text)) => writeln!(out, ": {text:?}")?,
                    (None, None) => writeln!(out, ": {}", Hex(bytes, " "))?,
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitlens_tagged::varint::write_varint;
    use serde_json::{Map, Value, json};

    /// The JSON form as the first version built it, whole, as a `serde_json::Value`: the
    /// streamed output must be the same bytes.
    fn json_value(fields: RawFields<'_>) -> Value {
        let number = |x: u64| {
            if x <= JSON_EXACT_MAX {
                Value::from(x)
            } else {
                Value::from(x.to_string())
            }
        };
        let hex = |b: &[u8]| hex::encode(b);
        Value::Array(
            fields
                .map(|field| {
                    let mut obj = Map::new();
                    obj.insert("id".into(), number(field.id));
                    obj.insert("wire".into(), field.wire.name().into());
                    match &field.value {
                        RawValue::Byte(b) => {
                            obj.insert("value".into(), Value::from(*b));
                        }
                        RawValue::Varint(x) => {
                            obj.insert("value".into(), number(*x));
                        }
                        RawValue::Octet(octet) => {
                            obj.insert("hex".into(), hex(octet).into());
                        }
                        RawValue::Sized { bytes, fields } => {
                            obj.insert("len".into(), Value::from(bytes.len()));
                            obj.insert("hex".into(), hex(bytes).into());
                            if let Some(fields) = fields {
                                obj.insert("fields".into(), json_value(fields.clone()));
                            }
                        }
                    }
                    Value::Object(obj)
                })
                .collect(),
        )
    }

    fn streamed(doc: &[u8]) -> String {
        let mut out = Vec::new();
        write_json(raw::parse_document(doc).unwrap(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn text(doc: &[u8]) -> String {
        let mut out = Vec::new();
        write_text(&mut out, raw::parse_document(doc).unwrap(), 0).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn doc_of(body: &[u8]) -> Vec<u8> {
        let mut doc = Vec::new();
        write_varint(&mut doc, body.len() as u64);
        doc.extend_from_slice(body);
        doc
    }

    #[test]
    fn large_numbers_become_strings() {
        // Field 0 varint 2^53, field 1 varint 2^53 + 1, then an id past 2^53.
        let mut body = vec![0x02];
        write_varint(&mut body, 1 << 53);
        body.push(0x02);
        write_varint(&mut body, (1 << 53) + 1);
        write_varint(&mut body, (1 << 55) << 2);
        body.push(7);
        let v: Value = serde_json::from_str(&streamed(&doc_of(&body))).unwrap();
        assert_eq!(v["fields"][0]["value"], json!(9007199254740992u64));
        assert_eq!(v["fields"][1]["value"], json!("9007199254740993"));
        assert_eq!(v["fields"][2]["id"], json!("36028797018963970"));
    }

    #[test]
    fn seed_bar_as_json_and_text() {
        let doc = [0x07, 0x02, 0x80, 0x01, 0x00, 0xFF, 0x00, 0x06];
        let v: Value = serde_json::from_str(&streamed(&doc)).unwrap();
        assert_eq!(
            v,
            json!({"fields": [
                {"id": 0, "wire": "varint", "value": 129},
                {"id": 1, "wire": "byte", "value": 255},
                {"id": 2, "wire": "byte", "value": 6},
            ]})
        );
        assert_eq!(text(&doc), "0 varint: 129\n1 byte: 255\n2 byte: 6\n");
    }

    /// The streamed JSON is, byte for byte, what `serde_json::to_string_pretty` made of the
    /// whole tree: on the example save, on structs nested past the depth limit, on an empty
    /// document, and on octets, strings, byte strings and a 300-byte value (several hex pieces).
    #[test]
    fn streamed_json_is_the_whole_tree_pretty_printed() {
        let save = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures/savegame.tagged"),
        )
        .unwrap();
        let mut deep = vec![0x00, 0x2A];
        for _ in 0..70 {
            let mut outer = vec![0x03];
            write_varint(&mut outer, deep.len() as u64);
            outer.extend_from_slice(&deep);
            deep = outer;
        }
        let mut mixed = vec![0x01];
        mixed.extend_from_slice(&1.5f64.to_le_bytes());
        mixed.extend_from_slice(&[0x03, 3, b'a', b'"', b'\n', 0x03, 2, 0xFF, 0x00, 0x03, 0]);
        mixed.push(0x03);
        write_varint(&mut mixed, 300);
        mixed.extend((0..300u32).map(|i| (i * 7) as u8));
        for doc in [save, doc_of(&deep), doc_of(&[]), doc_of(&mixed)] {
            let whole = json!({"fields": json_value(raw::parse_document(&doc).unwrap())});
            let want = serde_json::to_string_pretty(&whole).unwrap() + "\n";
            assert_eq!(streamed(&doc), want);
        }
    }

    #[test]
    fn text_shows_strings_bytes_and_octets() {
        let mut body = vec![0x01];
        body.extend_from_slice(&1.5f64.to_le_bytes());
        body.extend_from_slice(&[0x03, 4, b'A', b'y', b'l', b'a', 0x03, 2, 0xFF, 0x00]);
        assert_eq!(
            text(&doc_of(&body)),
            "0 octet: 00 00 00 00 00 00 f8 3f (f64 1.5)\n1 sized (4 bytes): \"Ayla\"\n\
             2 sized (2 bytes): ff 00\n"
        );
    }
}
