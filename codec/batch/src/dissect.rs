//! Batches dissected for people: the framing, and per message its header, status and fields,
//! recorded from the messages' own serialize functions into ONE field tree (the inspector
//! re-implements nothing).
//!
//! A [`MessageSet`] is what a protocol's batches carry: names for its type numbers, and one
//! body decode generic over a [`Tracer`], so that the verdict (nothing recorded, what
//! `bitlens check` runs) and the dissection (every field recorded) are the same code.
//! [`BatchDissector`] makes a message set a [`Dissector`] for the inspector.
//!
//! The tree of a batch datagram, every entry in datagram bit offsets:
//!
//! ```text
//! batch_len                 bits 0..16
//! [0] = "Ping"              the whole message: header and body
//!   header                  type (8 bits), stage (8 bits), len (16 bits)
//!   stamp                   the body's fields, as Ping's serialize function read them
//!     ...
//! [1] = "unknown"           a type the set does not know: header only, skipped by its length
//! ```
//!
//! Each [`MessageView`] of the dissection names its range of that tree; paths inside a message
//! begin with its scope (`[0].stamp.sequence`), and [`Dissection::path_in_message`] gives them
//! relative to it.
//!
//! A batch's status is an error when its framing is corrupt or when any message's body is:
//! `check`, the text and JSON output and the TUI all say so.

use crate::error::{BatchError, Result};
use crate::message::{BATCH_HEADER_LEN, MESSAGE_HEADER_LEN, RawMessage, UpdateStage, read_batch};
use bitlens_codec::dissect::{
    Dissection, Dissector, Layout, MessageStatus, MessageView, Problem, Status, Verdict,
};
use bitlens_codec::trace::{FieldKind, NoTrace, Recorder, Trace, Tracer, Value};
use std::sync::Arc;

/// The packet type a batch datagram shows (in `check`'s table, the TUI's list, JSON).
pub const BATCH: &str = "Batch";

/// The message types a protocol's batches carry: names for type numbers, and the decode of a
/// known type's body.
///
/// Implemented by the compiled messages of a protocol (`bitlens_testkit::batch_demo::DemoMessages`
/// for the demo) and by a schema's `[batch]` section (`bitlens_schema`).
pub trait MessageSet: Send + Sync {
    /// The name of message type `message_type`, `None` for a type the set does not know
    /// (such messages are skipped by their length).
    fn message_name(&self, message_type: u8) -> Option<&'static str>;

    /// The name of an update stage: [`UpdateStage::name`] unless the set names its own.
    fn stage_name(&self, stage: u8) -> Option<&'static str> {
        UpdateStage(stage).name()
    }

    /// Decodes the body of `raw`, a message of a known type, while `tracer` records every field
    /// (offsets within the datagram, as [`crate::ByteReader::with_tracer`] gives them). The body
    /// must be consumed exactly; the error names the message. Typically
    /// `raw.decode_traced(&mut M::default(), tracer)` for the type's `M`.
    fn read_body<T: Tracer>(&self, raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T);

    /// The set described in the schema language (SCHEMA.md), when it can give it.
    fn schema_text(&self) -> Option<String> {
        None
    }
}

impl<M: MessageSet> MessageSet for Arc<M> {
    fn message_name(&self, message_type: u8) -> Option<&'static str> {
        (**self).message_name(message_type)
    }

    fn stage_name(&self, stage: u8) -> Option<&'static str> {
        (**self).stage_name(stage)
    }

    fn read_body<T: Tracer>(&self, raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T) {
        (**self).read_body(raw, tracer)
    }

    fn schema_text(&self) -> Option<String> {
        (**self).schema_text()
    }
}

impl From<&BatchError> for Problem {
    fn from(e: &BatchError) -> Self {
        let field = match e.message() {
            Some(m) => format!("[{}].{}", m.index, e.field()),
            None => e.field().to_owned(),
        };
        Problem {
            kind: e.kind().name(),
            bit: e.offset() * 8,
            field,
            message: e.to_string(),
        }
    }
}

/// The verdict on a batch, read without recording anything: the number of messages, or the
/// error a dissection reports first (the framing error, else the first message whose body does
/// not decode).
///
/// # Errors
/// The framing error, or the first body error; each names its message.
pub fn check_batch<M: MessageSet>(set: &M, data: &[u8]) -> Result<usize> {
    let mut body_error = None;
    let mut count = 0;
    for m in read_batch(data)? {
        let raw = m?;
        if set.message_name(raw.header.message_type).is_some()
            && let (Err(e), NoTrace) = set.read_body(&raw, NoTrace)
        {
            body_error.get_or_insert(e);
        }
        count += 1;
    }
    body_error.map_or(Ok(count), Err)
}

/// Dissects a batch: its framing, every message's header, status and fields, in one tree.
pub fn dissect_batch<M: MessageSet>(set: &M, data: &[u8]) -> Dissection {
    dissect_batch_as(set, data, Headers::Recorded)
}

/// [`dissect_batch`] without each message's scope and header entries: what
/// [`Dissector::dissect_values`] gives. The same status, problem, messages and bits read;
/// every message's body under [`Dissection::body_of`] the same, one level less deep.
pub fn dissect_batch_values<M: MessageSet>(set: &M, data: &[u8]) -> Dissection {
    dissect_batch_as(set, data, Headers::Skipped)
}

/// Whether a batch dissection records each message's scope and header in the field tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Headers {
    /// `[i]`, `[i].header.type/stage/len`, then the body under `[i]`: the tree the TUI and
    /// `--fields` show.
    Recorded,
    /// The bodies only, each at the top of the tree with paths relative to its message: what
    /// [`Dissector::dissect_values`] gives (`decode --json` reads the header values from the
    /// [`MessageView`]s).
    Skipped,
}

fn dissect_batch_as<M: MessageSet>(set: &M, data: &[u8], headers: Headers) -> Dissection {
    let mut rec = Recorder::recycled();
    if let Some(h) = data.first_chunk::<BATCH_HEADER_LEN>() {
        let len = Value::Int(i128::from(u16::from_le_bytes(*h)));
        let bits = BATCH_HEADER_LEN * 8;
        rec.field("batch_len", 0, bits, len, None, FieldKind::Value, false);
    }
    let mut messages = Vec::new();
    let mut framing = None;
    match read_batch(data) {
        Err(e) => framing = Some(e),
        Ok(iter) => {
            for m in iter {
                match m {
                    Ok(raw) => {
                        let head = Head {
                            index: raw.index,
                            offset: raw.offset,
                            message_type: raw.header.message_type,
                            stage: raw.header.stage.0,
                            len: raw.body.len(),
                        };
                        record_message(set, head, Ok(&raw), &mut rec, &mut messages, headers);
                    }
                    Err(e) => {
                        framing = Some(e);
                        // A header that could be read is listed, marked as the corrupt message.
                        if let Some(at) = e.message()
                            && let Some(h) = data
                                .get(at.offset..)
                                .and_then(|r| r.first_chunk::<MESSAGE_HEADER_LEN>())
                        {
                            let head = Head {
                                index: at.index,
                                offset: at.offset,
                                message_type: h[0],
                                stage: h[1],
                                len: usize::from(u16::from_le_bytes([h[2], h[3]])),
                            };
                            record_message(set, head, Err(e), &mut rec, &mut messages, headers);
                        }
                    }
                }
            }
        }
    }
    // Every message closed its scopes: nothing is left open.
    let fields = rec.close(data.len() * 8);
    // Each message's scope, recorded or not, ends after its header and declared body.
    let message_ends = messages
        .iter()
        .map(|m| (m.offset + MESSAGE_HEADER_LEN + m.len) * 8);
    let bits_read = (fields.views().map(|f| f.bit() + f.bits()))
        .chain(message_ends)
        .max()
        .unwrap_or(0);
    let problem = framing.as_ref().map(Problem::from).or_else(|| {
        messages
            .iter()
            .find(|m: &&MessageView| m.status == MessageStatus::Error)
            .and_then(|m| m.problem.clone())
    });
    Dissection {
        status: if problem.is_some() {
            Status::Error
        } else {
            Status::Ok
        },
        packet_type: Some(BATCH),
        trace: Trace {
            fields,
            error: None,
            bits_read,
            total_bits: data.len() * 8,
        },
        problem,
        desync: None,
        messages: Some(messages),
        layers: Vec::new(),
    }
}

/// A message header as the batch layer read it.
struct Head {
    index: usize,
    offset: usize,
    message_type: u8,
    stage: u8,
    len: usize,
}

fn int(v: impl Into<i128>) -> Value {
    Value::Int(v.into())
}

/// Records one message (its scope, header and body) and lists its view. `body` is the message
/// to decode, or the framing error that ends the batch at this message.
fn record_message<M: MessageSet>(
    set: &M,
    head: Head,
    body: std::result::Result<&RawMessage<'_>, BatchError>,
    rec: &mut Recorder,
    messages: &mut Vec<MessageView>,
    headers: Headers,
) {
    let name = set.message_name(head.message_type);
    let at = head.offset * 8;
    let level = rec.open_scopes();
    let first = rec.recorded();
    if headers == Headers::Skipped {
        let (status, error) = record_body(set, name, body, rec);
        let stopped = error.map_or(at, |e| e.offset() * 8);
        while rec.open_scopes() > level {
            rec.exit(stopped);
        }
        let entries = first..rec.recorded();
        messages.push(MessageView {
            index: head.index,
            offset: head.offset,
            message_type: head.message_type,
            name,
            stage: head.stage,
            stage_name: set.stage_name(head.stage),
            len: head.len,
            status,
            problem: error.as_ref().map(Problem::from),
            body: entries.clone(),
            entries,
        });
        return;
    }
    rec.enter(None, Some(head.index), at);
    rec.enter(Some("header"), None, at);
    let kind = || FieldKind::Value;
    rec.field("type", at, 8, int(head.message_type), None, kind(), false);
    rec.field("stage", at + 8, 8, int(head.stage), None, kind(), false);
    let len_entry = rec.recorded();
    rec.field(
        "len",
        at + 16,
        16,
        int(head.len as u64),
        None,
        kind(),
        false,
    );
    rec.exit(at + MESSAGE_HEADER_LEN * 8);
    let body_start = rec.recorded();
    let (status, error) = record_body(set, name, body, rec);
    // A read that failed inside a scope may have left it open: it ends where the read stopped.
    let stopped = error.map_or(at, |e| e.offset() * 8);
    while rec.open_scopes() > level + 1 {
        rec.exit(stopped);
    }
    let body_end = rec.recorded();
    if status == MessageStatus::Error && body_start == body_end {
        // Nothing of the body could be read: its length is what is wrong.
        rec.mark_failed(len_entry);
    }
    rec.exit(at + (MESSAGE_HEADER_LEN + head.len) * 8);
    rec.annotate_str(name.unwrap_or("unknown"));
    messages.push(MessageView {
        index: head.index,
        offset: head.offset,
        message_type: head.message_type,
        name,
        stage: head.stage,
        stage_name: set.stage_name(head.stage),
        len: head.len,
        status,
        problem: error.as_ref().map(Problem::from),
        entries: first..rec.recorded(),
        body: body_start..body_end,
    });
}

/// Reads a message's body into `rec` (nothing for a framing error or an unknown type).
fn record_body<M: MessageSet>(
    set: &M,
    name: Option<&str>,
    body: std::result::Result<&RawMessage<'_>, BatchError>,
    rec: &mut Recorder,
) -> (MessageStatus, Option<BatchError>) {
    // The recorder lent (`&mut Recorder` is a tracer too), not moved through the reader.
    match (body, name) {
        (Err(e), _) => (MessageStatus::Error, Some(e)),
        (Ok(_), None) => (MessageStatus::UnknownType, None),
        (Ok(raw), Some(_)) => match set.read_body(raw, rec) {
            (Ok(()), _) => (MessageStatus::Ok, None),
            (Err(e), _) => (MessageStatus::Error, Some(e)),
        },
    }
}

/// The [`Dissector`] of a protocol's batches: a [`MessageSet`] with a name.
#[derive(Debug, Clone)]
pub struct BatchDissector<M> {
    name: String,
    messages: M,
}

impl<M: MessageSet> BatchDissector<M> {
    /// The dissector of batches of `messages`, named `name` (`--decode PORT=NAME`).
    pub fn new(name: impl Into<String>, messages: M) -> Self {
        BatchDissector {
            name: name.into(),
            messages,
        }
    }

    /// The message set.
    pub fn messages(&self) -> &M {
        &self.messages
    }
}

impl<M: MessageSet> Dissector for BatchDissector<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn layout(&self) -> Layout {
        Layout::Batches
    }

    fn verdict(&self, payload: &[u8]) -> Verdict<'_> {
        match check_batch(&self.messages, payload) {
            Ok(_) => Verdict {
                status: Status::Ok,
                packet_type: Some(BATCH),
                problem: None,
                layer: None,
            },
            Err(e) => Verdict {
                status: Status::Error,
                packet_type: Some(BATCH),
                problem: Some(Problem::from(&e)),
                layer: None,
            },
        }
    }

    fn dissect(&self, payload: &[u8]) -> Dissection {
        dissect_batch(&self.messages, payload)
    }

    fn dissect_values(&self, payload: &[u8]) -> Dissection {
        dissect_batch_values(&self.messages, payload)
    }

    fn schema_text(&self) -> Option<String> {
        self.messages.schema_text()
    }
}
