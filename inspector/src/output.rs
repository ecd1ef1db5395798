//! Turning a [`Decoded`] datagram into text lines and JSON objects for `decode` and `check`.

use crate::capture::{Capture, Datagram};
use crate::decode::{Decoded, Problem};
use bitlens_codec::batch::{FramingStatus, MessageStatus};
use bitlens_codec::{FieldKind, TraceField, Value};
use serde::Serialize;
use std::fmt::Write as _;

/// One field of the JSON form.
#[derive(Serialize)]
pub struct JsonField<'a> {
    /// Field path.
    pub path: &'a str,
    /// First bit in the payload.
    pub bit: usize,
    /// Width in bits.
    pub bits: usize,
    /// The value (decoded; compressed floats as floats).
    pub value: &'a Value,
    /// Smallest allowed wire value, for ranged fields.
    pub min: Option<i128>,
    /// Largest allowed wire value, for ranged fields.
    pub max: Option<i128>,
}

impl<'a> From<&'a TraceField> for JsonField<'a> {
    fn from(f: &'a TraceField) -> Self {
        JsonField {
            path: &f.path,
            bit: f.bit,
            bits: f.bits,
            value: &f.value,
            min: f.range.map(|r| r.0),
            max: f.range.map(|r| r.1),
        }
    }
}

/// One check marker of the JSON form.
#[derive(Serialize)]
pub struct JsonCheck<'a> {
    /// The label (`crc32` for the packet CRC).
    pub label: &'a str,
    /// Bit of the 32-bit marker.
    pub bit: usize,
    /// Whether reader and writer agree.
    pub ok: bool,
    /// What the reader expected.
    pub expected: u32,
    /// What it found.
    pub found: u32,
}

/// The error of the JSON form.
#[derive(Serialize)]
pub struct JsonError {
    /// Snake-case error kind.
    pub kind: String,
    /// Bit where the read stopped.
    pub bit: usize,
    /// Field path.
    pub field: String,
    /// The whole message.
    pub message: String,
}

/// The desync analysis of the JSON form.
#[derive(Serialize)]
pub struct JsonDesync {
    /// The mismatched check's label.
    pub label: String,
    /// Where the reader looked for it.
    pub expected_bit: usize,
    /// Where the writer's marker really is.
    pub found_bit: Option<usize>,
    /// The last check that held.
    pub after_check: Option<String>,
    /// Fewest bits the reader is behind the writer (negative: ahead).
    pub behind_min: Option<i64>,
    /// Most bits the reader is behind the writer.
    pub behind_max: Option<i64>,
    /// A sentence for people.
    pub message: String,
}

/// One datagram of `bitlens decode --json`.
#[derive(Serialize)]
pub struct JsonDatagram<'a> {
    /// 1-based frame number.
    pub frame: u64,
    /// Epoch seconds with 9 decimals.
    pub time: String,
    /// `ip:port` (`[ip]:port` for IPv6).
    pub src: String,
    /// `ip:port`.
    pub dst: String,
    /// UDP payload bytes in the capture.
    pub len: usize,
    /// Decoder name (`none` when no decoder is set for the ports).
    pub decoder: &'a str,
    /// `ok`, `error`, `desync`, `truncated`, `fragment`, `undecoded`.
    pub status: &'static str,
    /// The packet type's name.
    pub packet_type: Option<&'a str>,
    /// Every value field, in stream order.
    pub fields: Vec<JsonField<'a>>,
    /// Every check marker (and the CRC).
    pub checks: Vec<JsonCheck<'a>>,
    /// The error that stopped the read.
    pub error: Option<JsonError>,
    /// The desync analysis.
    pub desync: Option<JsonDesync>,
    /// For batch datagrams: one object per message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<JsonMessage<'a>>>,
}

/// One message of a batch datagram.
#[derive(Serialize)]
pub struct JsonMessage<'a> {
    /// Position in the batch.
    pub index: usize,
    /// Byte offset of its header in the datagram.
    pub offset: usize,
    /// Message type number.
    #[serde(rename = "type")]
    pub message_type: u8,
    /// The type's name, for known types.
    pub name: Option<&'static str>,
    /// Update stage number.
    pub stage: u8,
    /// The stage's name, for known stages.
    pub stage_name: Option<&'static str>,
    /// Body length from its header.
    pub len: usize,
    /// `ok`, `unknown_type` or `error`.
    pub status: &'static str,
    /// Why it did not decode.
    pub error: Option<JsonError>,
    /// The decoded body fields (known types).
    pub fields: Vec<JsonField<'a>>,
}

/// Builds the JSON form of a decoded datagram.
pub fn json<'a>(d: &Datagram, payload_len: usize, decoded: &'a Decoded) -> JsonDatagram<'a> {
    let mut fields = Vec::new();
    let mut checks = Vec::new();
    for f in &decoded.trace.fields {
        match &f.kind {
            // Annotated scopes carry a value of their own: a string, a vector, an object index.
            FieldKind::Scope if !matches!(f.value, Value::None) => fields.push(JsonField::from(f)),
            FieldKind::Value => fields.push(JsonField::from(f)),
            FieldKind::Check {
                label,
                expected,
                found,
            } => checks.push(JsonCheck {
                label,
                bit: f.bit,
                ok: expected == found,
                expected: *expected,
                found: *found,
            }),
            FieldKind::Scope | FieldKind::Padding => {}
        }
    }
    // A batch datagram's top-level error is its framing error only (its status follows the
    // framing); a message whose body is corrupt carries its error in `messages`.
    let framing_ok = decoded
        .batch
        .as_ref()
        .is_some_and(|b| b.status == FramingStatus::Ok);
    let error = decoded
        .problem
        .as_ref()
        .filter(|_| !framing_ok)
        .map(|p| JsonError {
            kind: p.kind.clone(),
            bit: p.bit,
            field: p.field.clone(),
            message: p.message.clone(),
        });
    let messages = decoded.batch.as_ref().map(|b| {
        // The datagram's fields are the messages' fields; list them per message only.
        fields.clear();
        b.messages
            .iter()
            .map(|m| JsonMessage {
                index: m.index,
                offset: m.offset,
                message_type: m.message_type,
                name: m.name,
                stage: m.stage,
                stage_name: m.stage_name,
                len: m.len,
                status: match m.status {
                    MessageStatus::Ok => "ok",
                    MessageStatus::UnknownType => "unknown_type",
                    MessageStatus::Error => "error",
                },
                error: m.error.as_ref().map(|e| {
                    let p = Problem::from(e);
                    JsonError {
                        kind: p.kind,
                        bit: p.bit,
                        field: p.field,
                        message: p.message,
                    }
                }),
                fields: m
                    .fields
                    .iter()
                    .filter(|f| f.kind == FieldKind::Value || !matches!(f.value, Value::None))
                    .map(JsonField::from)
                    .collect(),
            })
            .collect()
    });
    let desync = decoded.desync.as_ref().map(|s| JsonDesync {
        label: s.label.clone(),
        expected_bit: s.expected_bit,
        found_bit: s.found_bit,
        after_check: s.after_check.clone(),
        behind_min: s.behind.map(|b| b.0),
        behind_max: s.behind.map(|b| b.1),
        message: s.message(),
    });
    JsonDatagram {
        frame: d.frame,
        time: d.time.to_string(),
        src: d.src.to_string(),
        dst: d.dst.to_string(),
        len: payload_len,
        decoder: &decoded.decoder,
        // A batch datagram's status is its framing's (WIRE.md section 3); a corrupt message
        // body shows in its message's status.
        status: match &decoded.batch {
            Some(b) if b.status == FramingStatus::Ok => "ok",
            Some(_) => "error",
            None => decoded.status.name(),
        },
        packet_type: decoded.packet_type.as_deref(),
        fields,
        checks,
        error,
        desync,
        messages,
    }
}

/// The one-line text summary of a datagram.
pub fn summary_line(capture: &Capture, d: &Datagram, decoded: &Decoded) -> String {
    let mut s = format!(
        "{:>7}  {}  {} -> {}  {:>5} B  {} {} {}",
        d.frame,
        d.time,
        d.src,
        d.dst,
        capture.payload(d).len(),
        decoded.decoder,
        decoded.packet_type.as_deref().unwrap_or("-"),
        decoded.status
    );
    if let Some(p) = &decoded.problem {
        let _ = write!(s, "  {}", p.message);
    }
    if let Some(ds) = &decoded.desync {
        let _ = write!(s, "; {}", ds.message());
    }
    s
}

/// The field tree of a decoded datagram, indented, one field per line.
pub fn field_lines(decoded: &Decoded) -> Vec<String> {
    decoded
        .trace
        .fields
        .iter()
        .map(|f| {
            let indent = "  ".repeat(f.depth + 1);
            let name = leaf_name(&f.path);
            let mut line = match &f.kind {
                FieldKind::Scope if matches!(f.value, Value::None) => format!("{indent}{name}"),
                FieldKind::Scope | FieldKind::Value => format!("{indent}{name} = {}", f.value),
                FieldKind::Padding => format!("{indent}(padding)"),
                FieldKind::Check { label, expected, found } => {
                    let mark = if expected == found { "✓" } else { "✗" };
                    format!("{indent}check {mark} \"{label}\" expected {expected:#010x} found {found:#010x}")
                }
            };
            let _ = write!(line, "  [bit {}, {} bits", f.bit, f.bits);
            if let Some((lo, hi)) = f.range {
                let _ = write!(line, ", {lo}..={hi}");
            }
            if let Some(raw) = f.raw {
                let _ = write!(line, ", code {raw}");
            }
            line.push(']');
            if f.failed {
                line.push_str("  <- read stopped here");
            }
            line
        })
        .collect()
}

/// The last segment of a field path: `x` of `objects[3].position.x`, `[3]` of `objects[3]`.
pub fn leaf_name(path: &str) -> &str {
    let dot = path.rfind('.').map_or(0, |i| i + 1);
    let bracket = path.rfind('[').unwrap_or(0);
    &path[dot.max(bracket)..]
}
