//! `bitlens decode-bytes --schema FILE packet.bin [--json]`: decodes one raw packet with a schema,
//! field by field.
//!
//! Text form: one line per field, indented by depth, with its bit offset and width, value and
//! allowed range; check markers say `ok` or `MISMATCH`; the last line is the verdict:
//!
//! ```text
//! bit    0 +32  crc32 = 0x1c0b7e2a  check ok
//! bit   32  +3  packet_type = "RoboCat" (5)  0..=5
//! ...
//! accepted: RoboCat, 345 bits
//! ```
//!
//! JSON form: `{"packet_type", "accepted", "error", "value", "fields", "checks"}` where `value`
//! is the decoded body (when accepted), and `fields` and `checks` have the shape of
//! `bitlens decode --json`. A rejected packet also gets a one-line verdict on stderr naming the
//! file, the bit and the field, and exit status 1.

use super::common::{must_exist, read_input};
use bitlens_codec::trace::JsonInt;
use bitlens_codec::{FieldKind, Trace, TraceField, Value};
use bitlens_schema::{DynValue, Schema};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// Decodes the packet at `packet` with the schema at `schema` and writes the result to `out`.
/// Returns whether the packet was accepted.
///
/// # Errors
/// The schema or packet cannot be read, or `out` fails. A rejected packet is not an error: the
/// output says where and why it was rejected, and the result is `false`.
pub fn run(schema: &Path, packet: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<bool> {
    must_exist(schema)?;
    let schema = Schema::load(schema)?;
    let data = read_input(packet)?;
    let text = decode(&schema, &data, json)?;
    out.write_all(text.as_bytes())?;
    out.flush()?;
    match schema.read(&data) {
        Ok(_) => Ok(true),
        Err(e) => {
            // The one-line verdict for scripts, naming the file, the bit and the field.
            eprintln!("bitlens: {}: {e}", packet.display());
            Ok(false)
        }
    }
}

/// The JSON document, keys in alphabetical order. Serialized straight from the trace (not
/// through `serde_json::Value`, which would widen every `f32` to `f64` digits: `0.1` would print
/// as `0.10000000149011612`).
#[derive(Serialize)]
struct Doc<'a> {
    accepted: bool,
    checks: Vec<CheckJson<'a>>,
    error: Option<String>,
    fields: Vec<FieldJson<'a>>,
    packet_type: Option<&'a str>,
    value: Option<DynValue>,
}

/// A field in the shape `bitlens decode --json` uses.
#[derive(Serialize)]
struct FieldJson<'a> {
    bit: usize,
    bits: usize,
    max: Option<JsonInt>,
    min: Option<JsonInt>,
    path: &'a str,
    value: &'a Value,
}

/// A check marker (or the CRC) as `bitlens decode --json` lists it.
#[derive(Serialize)]
struct CheckJson<'a> {
    bit: usize,
    expected: u32,
    found: u32,
    label: &'a str,
    ok: bool,
}

/// The fields in the shape `bitlens decode --json` uses: `path`, `bit`, `bits`, `value`, `min`,
/// `max` (annotated scopes, such as strings and vectors, included).
fn json_fields(trace: &Trace) -> Vec<FieldJson<'_>> {
    trace
        .fields
        .iter()
        .filter(|f| {
            f.kind == FieldKind::Value || (f.kind == FieldKind::Scope && f.value != Value::None)
        })
        .map(|f| FieldJson {
            bit: f.bit,
            bits: f.bits,
            max: f.range.map(|r| JsonInt(r.1)),
            min: f.range.map(|r| JsonInt(r.0)),
            path: &f.path,
            value: &f.value,
        })
        .collect()
}

/// The check markers (and CRC) as `bitlens decode --json` lists them.
fn json_checks(trace: &Trace) -> Vec<CheckJson<'_>> {
    trace
        .fields
        .iter()
        .filter_map(|f| match &f.kind {
            FieldKind::Check {
                label,
                expected,
                found,
            } => Some(CheckJson {
                bit: f.bit,
                expected: *expected,
                found: *found,
                label,
                ok: expected == found,
            }),
            _ => None,
        })
        .collect()
}

/// The text or JSON rendering of one packet.
///
/// # Errors
/// Only if JSON serialization fails.
pub fn decode(schema: &Schema, data: &[u8], json: bool) -> anyhow::Result<String> {
    let (t, trace) = schema.trace(data);
    let type_name = t.and_then(|t| schema.protocol().type_name(t));
    if json {
        let doc = Doc {
            accepted: trace.error.is_none(),
            checks: json_checks(&trace),
            error: trace.error.as_ref().map(ToString::to_string),
            fields: json_fields(&trace),
            packet_type: type_name,
            value: schema.read(data).ok().map(|(_, v)| v),
        };
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        return Ok(s);
    }
    Ok(text(&trace, type_name))
}

fn text(trace: &Trace, type_name: Option<&str>) -> String {
    let mut s = String::new();
    for f in &trace.fields {
        line(&mut s, f);
    }
    match &trace.error {
        None => {
            let _ = writeln!(
                s,
                "accepted: {}, {} bits",
                type_name.unwrap_or("?"),
                trace.bits_read
            );
        }
        Some(e) => {
            let _ = writeln!(s, "rejected: {e}");
        }
    }
    s
}

fn line(s: &mut String, f: &TraceField) {
    let indent = "  ".repeat(f.depth);
    let name = f.path.rsplit('.').next().unwrap_or(&f.path);
    let _ = write!(s, "bit {:>4} {:>+4}  {indent}{name}", f.bit, f.bits);
    match &f.kind {
        FieldKind::Scope => {
            if !matches!(f.value, Value::None) {
                let _ = write!(s, " = {}", f.value);
            }
        }
        FieldKind::Padding => {
            let _ = write!(s, " (padding)");
        }
        FieldKind::Check {
            expected, found, ..
        } => {
            let verdict = if expected == found { "ok" } else { "MISMATCH" };
            let _ = write!(s, " = {found:#010x}  check {verdict}");
            if expected != found {
                let _ = write!(s, " (expected {expected:#010x})");
            }
        }
        FieldKind::Value => {
            if !matches!(f.value, Value::None) {
                let _ = write!(s, " = {}", f.value);
            }
            if let Some(raw) = f.raw {
                let _ = write!(s, " ({raw})");
            }
            if let Some((lo, hi)) = f.range {
                let _ = write!(s, "  {lo}..={hi}");
            }
        }
    }
    if f.failed {
        let _ = write!(s, "  <- FAILED");
    }
    s.push('\n');
}
