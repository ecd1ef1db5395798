//! Datagram -> decoded packet: picks a decoder per UDP port (like Wireshark's "Decode As") and
//! runs the codec's own serialize function through its `TraceStream`. Nothing here re-implements
//! a format: the fields, checks and errors are what the codec recorded.
//!
//! Also the desync locator: when a check marker mismatches, it searches nearby byte offsets for
//! the marker the writer really wrote and says how far reader and writer have drifted apart.

use crate::capture::{Capture, Datagram, Status as CaptureStatus};
use bitlens_batch::{BatchError, BatchTrace};
use bitlens_codec::packet::{Packet, Protocol, ProtocolId, frame};
use bitlens_codec::{Error, ErrorKind, FieldKind, ReadStream, Stream, Trace, TraceStream};
use bitlens_schema::Schema;
use bitlens_testkit::batch_demo;
use bitlens_testkit::batch_demo::trace_batch;
use bitlens_testkit::demo::{self, DemoPacket};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// How a datagram's payload is decoded.
#[derive(Debug, Clone)]
pub enum DecoderKind {
    /// The compiled demo protocol (bit-packed packets).
    Demo,
    /// Message batches of the demo protocol (seed 002, WIRE.md section 3).
    Batch,
    /// A protocol described by a schema file (`--schema`), interpreted through the same streams.
    Schema(Arc<Schema>),
    /// Message batches whose bodies the schema's `[batch]` section describes.
    SchemaBatch(Arc<Schema>),
}

impl DecoderKind {
    /// The decoder's name as `--decode PORT=KIND` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            DecoderKind::Demo => "demo",
            DecoderKind::Batch => "batch",
            DecoderKind::Schema(_) => "schema",
            DecoderKind::SchemaBatch(_) => "schema-batch",
        }
    }
}

/// Which decoder handles which UDP port, and the protocol id to verify CRCs with.
#[derive(Debug, Clone)]
pub struct Decoders {
    by_port: BTreeMap<u16, DecoderKind>,
    demo_protocol: Arc<Protocol>,
    schema: Option<Arc<Schema>>,
}

impl Default for Decoders {
    fn default() -> Self {
        let mut by_port = BTreeMap::new();
        by_port.insert(demo::PORT, DecoderKind::Demo);
        by_port.insert(batch_demo::PORT, DecoderKind::Batch);
        Decoders {
            by_port,
            demo_protocol: Arc::new(demo::PROTOCOL.clone()),
            schema: None,
        }
    }
}

impl Decoders {
    /// Sets the decoder for a port (`--decode PORT=KIND`).
    pub fn set(&mut self, port: u16, kind: DecoderKind) {
        self.by_port.insert(port, kind);
    }

    /// Loads a schema: the `schema` decoder kind becomes available, and it replaces the demo
    /// decoder on the demo port (40000) unless `--decode PORT=schema` says otherwise later.
    /// A schema with a `[batch]` section also replaces the batch decoder on the batch port
    /// (40001) with `schema-batch`.
    pub fn set_schema(&mut self, schema: Schema) {
        let schema = Arc::new(schema);
        self.schema = Some(Arc::clone(&schema));
        if schema.batch().is_some() {
            let kind = DecoderKind::SchemaBatch(Arc::clone(&schema));
            self.by_port.insert(batch_demo::PORT, kind);
        }
        self.by_port.insert(demo::PORT, DecoderKind::Schema(schema));
    }

    /// Parses a decoder name.
    ///
    /// # Errors
    /// A message listing the known kinds.
    pub fn parse_kind(&self, name: &str) -> Result<DecoderKind, String> {
        match name {
            "demo" => Ok(DecoderKind::Demo),
            "batch" => Ok(DecoderKind::Batch),
            "schema" => match &self.schema {
                Some(s) => Ok(DecoderKind::Schema(Arc::clone(s))),
                None => Err("the schema decoder needs --schema FILE".into()),
            },
            "schema-batch" => match &self.schema {
                Some(s) if s.batch().is_some() => Ok(DecoderKind::SchemaBatch(Arc::clone(s))),
                Some(_) => Err(
                    "the schema-batch decoder needs a [batch] section in the schema (see SCHEMA.md)"
                        .into(),
                ),
                None => Err("the schema-batch decoder needs --schema FILE".into()),
            },
            other => Err(format!(
                "unknown decoder {other:?} (known: demo, batch, schema, schema-batch, none)"
            )),
        }
    }

    /// Parses and applies one `PORT=KIND` override.
    ///
    /// # Errors
    /// A message saying what is wrong with the argument.
    pub fn apply_override(&mut self, arg: &str) -> Result<(), String> {
        let (port, kind) = arg
            .split_once('=')
            .ok_or_else(|| format!("--decode {arg:?}: expected PORT=KIND, e.g. 40000=demo"))?;
        let port: u16 = port
            .trim()
            .parse()
            .map_err(|_| format!("--decode {arg:?}: {port:?} is not a UDP port"))?;
        let kind = kind.trim();
        if kind == "none" {
            self.by_port.remove(&port);
            return Ok(());
        }
        let kind = self
            .parse_kind(kind.trim())
            .map_err(|e| format!("--decode {arg:?}: {e}"))?;
        self.set(port, kind);
        Ok(())
    }

    /// Verifies the demo protocol's CRCs with another protocol id (`--protocol-id`).
    pub fn set_protocol_id(&mut self, id: ProtocolId) {
        let mut p = (*self.demo_protocol).clone();
        p.id = id;
        self.demo_protocol = Arc::new(p);
    }

    /// The decoder for a datagram: its destination port first, then its source port.
    pub fn for_datagram(&self, d: &Datagram) -> Option<&DecoderKind> {
        self.by_port
            .get(&d.dst.port())
            .or_else(|| self.by_port.get(&d.src.port()))
    }

    /// The framing parameters a decoder verifies CRCs with (the demo's carries `--protocol-id`);
    /// `None` for message batches, which have no CRC.
    pub fn protocol_of<'a>(&'a self, kind: &'a DecoderKind) -> Option<&'a Protocol> {
        match kind {
            DecoderKind::Demo => Some(&self.demo_protocol),
            DecoderKind::Schema(schema) => Some(schema.protocol()),
            DecoderKind::Batch | DecoderKind::SchemaBatch(_) => None,
        }
    }

    /// `port=kind` pairs, for the status bar and summaries.
    pub fn describe(&self) -> String {
        self.by_port
            .iter()
            .map(|(p, k)| format!("{p}={}", k.name()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Decodes one datagram of `capture`.
    pub fn decode(&self, capture: &Capture, d: &Datagram) -> Decoded {
        self.decode_payload(d.status, self.for_datagram(d), capture.payload(d))
    }

    /// Decodes one datagram (whose payload is `payload`) for an output that lists a batch's
    /// fields per message (JSON): a batch datagram's one-tree form (`Decoded::trace`) is left
    /// empty, everything else is what [`Decoders::decode`] gives.
    pub fn decode_flat(&self, d: &Datagram, payload: &[u8]) -> Decoded {
        self.decode_with(d.status, self.for_datagram(d), payload, false)
    }

    /// Decodes a payload with the decoder chosen for it.
    pub fn decode_payload(
        &self,
        status: CaptureStatus,
        kind: Option<&DecoderKind>,
        payload: &[u8],
    ) -> Decoded {
        self.decode_with(status, kind, payload, true)
    }

    fn decode_with(
        &self,
        status: CaptureStatus,
        kind: Option<&DecoderKind>,
        payload: &[u8],
        batch_tree: bool,
    ) -> Decoded {
        let Some(kind) = kind else {
            return Decoded::without_trace("none", Status::Undecoded);
        };
        match status {
            CaptureStatus::Truncated => {
                return Decoded::without_trace(kind.name(), Status::Truncated);
            }
            CaptureStatus::Fragment => {
                return Decoded::without_trace(kind.name(), Status::Fragment);
            }
            CaptureStatus::Whole => {}
        }
        match kind {
            DecoderKind::Demo => {
                let (t, trace) = trace_demo(payload, &self.demo_protocol);
                let packet_type = t
                    .and_then(|t| self.demo_protocol.type_name(t))
                    .map(str::to_owned);
                Decoded::from_trace(kind.name(), packet_type, trace, payload)
            }
            DecoderKind::Schema(schema) => {
                let (t, trace) = schema.trace(payload);
                let packet_type = t
                    .and_then(|t| schema.protocol().type_name(t))
                    .map(str::to_owned);
                Decoded::from_trace(kind.name(), packet_type, trace, payload)
            }
            DecoderKind::Batch => Decoded::from_batch_with(trace_batch(payload), batch_tree),
            DecoderKind::SchemaBatch(schema) => Decoded {
                decoder: kind.name(),
                ..Decoded::from_batch_with(schema_batch_trace(schema, payload), batch_tree)
            },
        }
    }
}

/// The packet type shown for message batches.
const BATCH: &str = "Batch";

/// The verdict on a datagram without its trace: what `check` needs, at read-stream speed.
/// The packet type's name is borrowed from the decoders: `check` tallies a million of these.
#[derive(Debug, Clone)]
pub struct Verdict<'a> {
    /// The status (a check mismatch is [`Status::Desync`]).
    pub status: Status,
    /// The packet type's name, when the read got that far.
    pub packet_type: Option<&'a str>,
    /// What stopped the read.
    pub problem: Option<Problem>,
}

impl Decoders {
    /// The verdict on one datagram, read without tracing.
    pub fn verdict(&self, capture: &Capture, d: &Datagram) -> Verdict<'_> {
        self.verdict_of(d, capture.payload(d))
    }

    /// The verdict on a datagram whose payload is `payload`, read without tracing.
    pub fn verdict_of(&self, d: &Datagram, payload: &[u8]) -> Verdict<'_> {
        let kind = self.for_datagram(d);
        let status = match (kind, d.status) {
            (None, _) => Some(Status::Undecoded),
            (_, CaptureStatus::Truncated) => Some(Status::Truncated),
            (_, CaptureStatus::Fragment) => Some(Status::Fragment),
            _ => None,
        };
        if let Some(status) = status {
            return Verdict {
                status,
                packet_type: None,
                problem: None,
            };
        }
        match kind {
            Some(DecoderKind::Demo) => {
                let mut s = ReadStream::new(payload);
                let (known, r) = run_demo(&mut s, &self.demo_protocol);
                let packet_type = known.and_then(|t| self.demo_protocol.type_name(t));
                Verdict::from_read(packet_type, r)
            }
            Some(DecoderKind::Schema(schema)) => {
                let (known, r) = schema.verdict(payload);
                let packet_type = known.and_then(|t| schema.protocol().type_name(t));
                Verdict::from_read(packet_type, r)
            }
            Some(DecoderKind::SchemaBatch(schema)) => {
                let decoded = Decoded::from_batch_with(schema_batch_trace(schema, payload), false);
                Verdict {
                    status: decoded.status,
                    packet_type: Some(BATCH),
                    problem: decoded.problem,
                }
            }
            Some(DecoderKind::Batch) => {
                let result = batch_demo::verdict(payload);
                Verdict {
                    status: if result.is_ok() {
                        Status::Ok
                    } else {
                        Status::Error
                    },
                    packet_type: Some(BATCH),
                    problem: result.err().as_ref().map(Problem::from),
                }
            }
            None => Verdict {
                status: Status::Undecoded,
                packet_type: None,
                problem: None,
            },
        }
    }
}

impl<'a> Verdict<'a> {
    fn from_read(packet_type: Option<&'a str>, r: Result<(), Error>) -> Self {
        let status = match &r {
            Ok(()) => Status::Ok,
            Err(e) if matches!(e.kind(), ErrorKind::CheckMismatch { .. }) => Status::Desync,
            Err(_) => Status::Error,
        };
        Verdict {
            status,
            packet_type,
            problem: r.err().map(|e| Problem::from(&e)),
        }
    }
}

/// Why a datagram did not decode, whichever layer said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The error kind's snake-case name (`out_of_range`, `check_mismatch`, ...).
    pub kind: String,
    /// Bit offset in the payload.
    pub bit: usize,
    /// Field path (for batches: the message and field).
    pub field: String,
    /// The whole one-line message.
    pub message: String,
}

impl From<&Error> for Problem {
    fn from(e: &Error) -> Self {
        Problem {
            kind: e.kind().name().to_owned(),
            bit: e.bit(),
            field: e.field().to_owned(),
            message: e.to_string(),
        }
    }
}

impl From<&BatchError> for Problem {
    fn from(e: &BatchError) -> Self {
        let field = match e.message() {
            Some(m) => format!("[{}].{}", m.index, e.field()),
            None => e.field().to_owned(),
        };
        Problem {
            kind: e.kind().name().to_owned(),
            bit: e.offset() * 8,
            field,
            message: e.to_string(),
        }
    }
}

/// Traces a batch with the bodies of the schema's `[batch]` section (an empty trace for a
/// schema without one: `parse_kind` refuses that pairing).
fn schema_batch_trace(schema: &Schema, payload: &[u8]) -> BatchTrace {
    match schema.batch() {
        Some(b) => b.trace(payload),
        None => bitlens_batch::trace_batch_with(payload, |_| None, |_, rec| (Ok(()), rec)),
    }
}

/// Traces a demo packet, framed with `protocol` (which may carry an overridden protocol id).
pub fn trace_demo(data: &[u8], protocol: &Protocol) -> (Option<u32>, Trace) {
    let mut s = TraceStream::new(data);
    let (known, r) = run_demo(&mut s, protocol);
    (known, s.into_trace(r))
}

/// Runs the compiled demo protocol on any read stream; returns the packet type if it was read.
fn run_demo<S: Stream>(s: &mut S, protocol: &Protocol) -> (Option<u32>, Result<(), Error>) {
    let mut t = 0u32;
    let mut known = None;
    let r = frame(s, protocol, &mut t, |s, t| {
        known = Some(t);
        let mut p = DemoPacket::empty(t).ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownPacketType(t),
                s.bit_position(),
                "packet_type",
            )
        })?;
        p.serialize_body(s)
    });
    (known, r)
}

/// The verdict on one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Decoded, every check held.
    Ok,
    /// The read stopped at an error other than a check mismatch.
    Error,
    /// A check marker mismatched: reader and writer disagree.
    Desync,
    /// The capture cut the datagram short: not decoded.
    Truncated,
    /// An IP fragment: not decoded.
    Fragment,
    /// No decoder for its ports.
    Undecoded,
}

impl Status {
    /// All statuses, in display order.
    pub const ALL: [Status; 6] = [
        Status::Ok,
        Status::Error,
        Status::Desync,
        Status::Truncated,
        Status::Fragment,
        Status::Undecoded,
    ];

    /// The lower-case name used in JSON and filters.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Desync => "desync",
            Status::Truncated => "truncated",
            Status::Fragment => "fragment",
            Status::Undecoded => "undecoded",
        }
    }

    /// A one-character glyph for lists.
    pub fn glyph(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Error => "✗",
            Status::Desync => "≠",
            Status::Truncated => "…",
            Status::Fragment => "¦",
            Status::Undecoded => "·",
        }
    }

    /// True for the statuses that count as a problem (`n`/`N` jump between these).
    pub fn is_problem(self) -> bool {
        !matches!(self, Status::Ok | Status::Undecoded)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a desynced reader really is, found by searching for the mismatched check's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desync {
    /// The check that mismatched.
    pub label: String,
    /// Bit where the reader looked for it.
    pub expected_bit: usize,
    /// Bit where the writer's marker really is, if found nearby.
    pub found_bit: Option<usize>,
    /// The last check that held before it (the drift happened in between).
    pub after_check: Option<String>,
    /// How many bits the reader is behind the writer (negative: ahead), as a range: byte
    /// alignment before the marker hides the exact count unless the padding shows it.
    pub behind: Option<(i64, i64)>,
}

impl Desync {
    /// A sentence for people: "reader is 3 bits behind the writer between check 'header' and
    /// check 'objects'".
    pub fn message(&self) -> String {
        let between = match &self.after_check {
            Some(prev) => format!("between check '{prev}' and check '{}'", self.label),
            None => format!("before check '{}'", self.label),
        };
        match (self.behind, self.found_bit) {
            (Some((lo, hi)), Some(found)) => {
                let (dir, lo, hi) = if hi <= 0 {
                    ("ahead of", -hi, -lo)
                } else {
                    ("behind", lo.max(1), hi)
                };
                let amount = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} to {hi}")
                };
                let unit = if hi == 1 { "bit" } else { "bits" };
                format!(
                    "reader is {amount} {unit} {dir} the writer {between} (marker found at bit {found}, expected at bit {})",
                    self.expected_bit
                )
            }
            _ => format!(
                "reader and writer desynced {between}: marker not found within 64 bytes of bit {}",
                self.expected_bit
            ),
        }
    }
}

/// A decoded datagram: its verdict, the codec's trace, and the desync analysis.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The decoder's name.
    pub decoder: &'static str,
    /// The verdict.
    pub status: Status,
    /// The packet type's name, when the read got that far.
    pub packet_type: Option<String>,
    /// Every field the codec recorded (empty when nothing was decoded).
    pub trace: Trace,
    /// Where reader and writer drifted apart, for [`Status::Desync`].
    pub desync: Option<Desync>,
    /// What stopped the read, whichever layer said so.
    pub problem: Option<Problem>,
    /// The per-message view of a batch datagram.
    pub batch: Option<BatchTrace>,
}

impl Decoded {
    fn without_trace(decoder: &'static str, status: Status) -> Self {
        Decoded {
            decoder,
            status,
            packet_type: None,
            trace: Trace::default(),
            desync: None,
            problem: None,
            batch: None,
        }
    }

    /// Classifies a batch trace: an error when the framing or any message is corrupt.
    pub fn from_batch(batch: BatchTrace) -> Self {
        Self::from_batch_with(batch, true)
    }

    /// [`Decoded::from_batch`], with the one-tree form of the batch in `trace` only when
    /// `tree` is set (the JSON output and the verdict list fields per message).
    fn from_batch_with(batch: BatchTrace, tree: bool) -> Self {
        let problem = batch
            .error
            .as_ref()
            .or_else(|| batch.messages.iter().find_map(|m| m.error.as_ref()))
            .map(Problem::from);
        let status = if batch.is_clean() {
            Status::Ok
        } else {
            Status::Error
        };
        let fields = if tree { batch.tree() } else { Vec::new() };
        let bits_read = fields.iter().map(|f| f.bit + f.bits).max().unwrap_or(0);
        let trace = Trace {
            fields,
            bits_read,
            ..Trace::default()
        };
        Decoded {
            decoder: "batch",
            status,
            packet_type: Some(BATCH.into()),
            trace,
            desync: None,
            problem,
            batch: Some(batch),
        }
    }

    /// Classifies a finished trace and locates a desync.
    pub fn from_trace(
        decoder: &'static str,
        packet_type: Option<String>,
        trace: Trace,
        payload: &[u8],
    ) -> Self {
        let (status, desync) = match &trace.error {
            None => (Status::Ok, None),
            Some(e) => match e.kind() {
                ErrorKind::CheckMismatch {
                    label, expected, ..
                } => (
                    Status::Desync,
                    Some(locate_desync(&trace, label, *expected, e.bit(), payload)),
                ),
                _ => (Status::Error, None),
            },
        };
        let problem = trace.error.as_ref().map(Problem::from);
        Decoded {
            decoder,
            status,
            packet_type,
            trace,
            desync,
            problem,
            batch: None,
        }
    }
}

fn read_u32_at_bit(data: &[u8], bit: usize) -> Option<u32> {
    if !bit.is_multiple_of(8) {
        return None;
    }
    let b = data.get(bit / 8..bit / 8 + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Searches byte offsets within 64 bytes of where the reader expected the check for the hash the
/// writer wrote, nearest first. Check markers are byte-aligned in the writer's stream too, so only
/// byte offsets can hold them; the zero padding before the writer's marker narrows down where the
/// writer's last field really ended.
pub fn locate_desync(
    trace: &Trace,
    label: &str,
    expected: u32,
    bit: usize,
    payload: &[u8],
) -> Desync {
    let after_check = trace
        .fields
        .iter()
        .filter(|f| {
            f.bit < bit
                && matches!(&f.kind, FieldKind::Check { expected, found, .. } if expected == found)
        })
        .filter_map(|f| match &f.kind {
            FieldKind::Check { label, .. } if label != "crc32" => Some(label.to_string()),
            _ => None,
        })
        .next_back();
    // Where the reader's last field ended, before it aligned for the marker.
    let reader_end = trace
        .fields
        .iter()
        .filter(|f| {
            f.bit + f.bits <= bit && !matches!(f.kind, FieldKind::Padding | FieldKind::Scope)
        })
        .map(|f| f.bit + f.bits)
        .max()
        .unwrap_or(bit);
    let mut found_bit = None;
    for step in 1..=64usize {
        for candidate in [bit.checked_add(step * 8), bit.checked_sub(step * 8)]
            .into_iter()
            .flatten()
        {
            if read_u32_at_bit(payload, candidate) == Some(expected) {
                found_bit = Some(candidate);
                break;
            }
        }
        if found_bit.is_some() {
            break;
        }
    }
    let behind = found_bit.map(|w| {
        // The writer's padding before its marker is zero: count the zero bits just before it.
        let mut zeros = 0usize;
        while zeros < 7 && w > zeros {
            let b = w - zeros - 1;
            let set = payload
                .get(b / 8)
                .is_some_and(|byte| byte >> (b % 8) & 1 == 1);
            if set {
                break;
            }
            zeros += 1;
        }
        let (lo, hi) = ((w - zeros) as i64, w as i64);
        (lo - reader_end as i64, hi - reader_end as i64)
    });
    Desync {
        label: label.to_owned(),
        expected_bit: bit,
        found_bit,
        after_check,
        behind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitlens_codec::WriteStream;

    #[test]
    fn a_writer_with_an_extra_bit_is_located() {
        // The writer sends one extra bit right where the reader is byte-aligned, so the marker
        // moves by a byte instead of hiding in alignment slack.
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        w.bits("a", &mut 0x5A5A_5A5A, 32).unwrap();
        w.bits("b", &mut 0x11, 8).unwrap();
        w.check("header").unwrap();
        w.bits("c", &mut 0xAB, 8).unwrap();
        w.bool("bug", &mut true).unwrap();
        w.check("objects").unwrap();
        let n = w.finish();

        let mut r = TraceStream::new(&buf[..n]);
        let result = (|| {
            r.bits("a", &mut 0, 32)?;
            r.bits("b", &mut 0, 8)?;
            r.check("header")?;
            r.bits("c", &mut 0, 8)?;
            r.check("objects")
        })();
        let trace = r.into_trace(result);
        let decoded = Decoded::from_trace("test", None, trace, &buf[..n]);
        assert_eq!(decoded.status, Status::Desync);
        let d = decoded.desync.unwrap();
        assert_eq!(
            (d.label.as_str(), d.expected_bit, d.found_bit),
            ("objects", 80, Some(88))
        );
        assert_eq!(d.after_check.as_deref(), Some("header"));
        // The writer's extra 1 bit is followed by 7 zero padding bits: 1 to 8 bits behind.
        assert_eq!(d.behind, Some((1, 8)));
        assert_eq!(
            d.message(),
            "reader is 1 to 8 bits behind the writer between check 'header' and check 'objects' \
             (marker found at bit 88, expected at bit 80)"
        );
    }

    #[test]
    fn overrides_parse() {
        let mut d = Decoders::default();
        d.apply_override("5000=demo").unwrap();
        assert!(d.apply_override("5000").is_err());
        assert!(d.apply_override("x=demo").is_err());
        assert!(d.apply_override("1=nope").unwrap_err().contains("known"));
        d.apply_override("40000=none").unwrap();
        assert_eq!(d.describe(), "5000=demo 40001=batch");
        assert!(
            d.apply_override("7=schema")
                .unwrap_err()
                .contains("--schema")
        );
    }
}
