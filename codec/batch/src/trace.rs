//! Batches decoded for people: framing status, and per message its header, status and fields,
//! recorded from the messages' own serialize functions (the inspector re-implements nothing).

use super::error::BatchError;
use super::message::{BATCH_HEADER_LEN, MESSAGE_HEADER_LEN, RawMessage, read_batch};
use bitlens_codec::trace::{FieldKind, Recorder, TraceField, Value};
use serde::Serialize;

/// Records the fields a [`super::ByteReader`] reads, with paths relative to the message and bit
/// offsets (`byte * 8`) within the datagram: the bit-packed streams' own [`Recorder`], so both
/// layers trace alike.
pub type FieldRecorder = Recorder;

/// Whether a batch's framing (batch length, every message length) is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FramingStatus {
    /// Every length is consistent.
    Ok,
    /// The batch header or a message header is wrong; messages after it are not listed.
    Error,
}

/// How one message decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// A known type, decoded completely.
    Ok,
    /// A type the protocol does not know: skipped by its length.
    UnknownType,
    /// Its header or body is corrupt.
    Error,
}

/// One message of a [`BatchTrace`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageTrace {
    /// Index in the batch.
    pub index: usize,
    /// Byte offset of its header in the datagram.
    pub offset: usize,
    /// Message type.
    #[serde(rename = "type")]
    pub message_type: u8,
    /// Name of a known type.
    pub name: Option<&'static str>,
    /// Update stage byte.
    pub stage: u8,
    /// Name of a known stage.
    pub stage_name: Option<&'static str>,
    /// Body length from the header.
    pub len: usize,
    /// How it decoded.
    pub status: MessageStatus,
    /// Why it did not.
    pub error: Option<BatchError>,
    /// The body's fields (known types), paths relative to the message, bits within the
    /// datagram; on error the failing field is marked `failed`.
    pub fields: Vec<TraceField>,
}

/// A batch decoded for people (`bitlens decode --json`, the inspector's tree and bit view).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchTrace {
    /// Framing status.
    pub status: FramingStatus,
    /// The framing error.
    pub error: Option<BatchError>,
    /// Total length from the batch header, when there is one.
    pub len: Option<usize>,
    /// The messages, up to and including the first whose framing is corrupt.
    pub messages: Vec<MessageTrace>,
}

impl BatchTrace {
    /// True when the framing is valid and every message decoded or was skipped as unknown.
    pub fn is_clean(&self) -> bool {
        self.status == FramingStatus::Ok
            && self
                .messages
                .iter()
                .all(|m| m.status != MessageStatus::Error)
    }

    /// The whole datagram as one field tree: `batch_len`, then per message a scope
    /// `[i] Name` holding `header` (`type`, `stage`, `len`) and the body's fields one level
    /// deeper. Bits are datagram bit offsets, so the bit view can highlight any entry.
    pub fn tree(&self) -> Vec<TraceField> {
        let mut out = Vec::new();
        let value = |path: String, depth, byte: usize, bytes: usize, value: Value| TraceField {
            path: path.into(),
            depth,
            bit: byte * 8,
            bits: bytes * 8,
            value,
            raw: None,
            range: None,
            kind: FieldKind::Value,
            failed: false,
        };
        let scope = |path: String, depth, byte: usize, bytes: usize, v: Value| TraceField {
            kind: FieldKind::Scope,
            ..value(path, depth, byte, bytes, v)
        };
        if let Some(len) = self.len {
            out.push(value(
                "batch_len".into(),
                0,
                0,
                BATCH_HEADER_LEN,
                int(len as u64),
            ));
        }
        for m in &self.messages {
            let p = format!("[{}]", m.index);
            let name = m.name.unwrap_or("unknown");
            let total = MESSAGE_HEADER_LEN + m.len;
            out.push(scope(
                p.clone(),
                0,
                m.offset,
                total,
                Value::Str(name.into()),
            ));
            out.push(scope(
                format!("{p}.header"),
                1,
                m.offset,
                MESSAGE_HEADER_LEN,
                Value::None,
            ));
            out.push(value(
                format!("{p}.header.type"),
                2,
                m.offset,
                1,
                int(m.message_type),
            ));
            out.push(value(
                format!("{p}.header.stage"),
                2,
                m.offset + 1,
                1,
                int(m.stage),
            ));
            let mut len = value(
                format!("{p}.header.len"),
                2,
                m.offset + 2,
                2,
                int(m.len as u64),
            );
            len.failed = m.status == MessageStatus::Error && m.fields.is_empty();
            out.push(len);
            for f in &m.fields {
                let mut f = f.clone();
                f.path = compact_str::format_compact!("{p}.{}", f.path);
                f.depth += 1;
                out.push(f);
            }
        }
        out
    }
}

fn int(v: impl Into<i128>) -> Value {
    Value::Int(v.into())
}

/// Traces a batch of any protocol: `name` names known types, `decode` reads a known message's
/// body into the recorder it is given (typically `raw.decode_traced(&mut M::default(), rec)`).
pub fn trace_batch_with(
    data: &[u8],
    name: impl Fn(u8) -> Option<&'static str>,
    mut decode: impl FnMut(&RawMessage<'_>, FieldRecorder) -> (Result<(), BatchError>, FieldRecorder),
) -> BatchTrace {
    let len = data
        .first_chunk::<BATCH_HEADER_LEN>()
        .map(|h| usize::from(u16::from_le_bytes(*h)));
    let mut trace = BatchTrace {
        status: FramingStatus::Ok,
        error: None,
        len,
        messages: Vec::new(),
    };
    let messages = match read_batch(data) {
        Ok(m) => m,
        Err(e) => {
            trace.status = FramingStatus::Error;
            trace.error = Some(e);
            return trace;
        }
    };
    for m in messages {
        match m {
            Ok(raw) => {
                let t = raw.header.message_type;
                let mut mt = MessageTrace {
                    index: raw.index,
                    offset: raw.offset,
                    message_type: t,
                    name: name(t),
                    stage: raw.header.stage.0,
                    stage_name: raw.header.stage.name(),
                    len: raw.body.len(),
                    status: MessageStatus::UnknownType,
                    error: None,
                    fields: Vec::new(),
                };
                if mt.name.is_some() {
                    let (result, rec) = decode(&raw, FieldRecorder::default());
                    mt.fields = rec.into_fields();
                    match result {
                        Ok(()) => mt.status = MessageStatus::Ok,
                        Err(e) => {
                            mt.status = MessageStatus::Error;
                            mt.error = Some(e);
                        }
                    }
                }
                trace.messages.push(mt);
            }
            Err(e) => {
                trace.status = FramingStatus::Error;
                trace.error = Some(e);
                // A header that could be read is listed, marked as the corrupt message.
                if let Some(at) = e.message()
                    && let Some(h) = data.get(at.offset..at.offset + MESSAGE_HEADER_LEN)
                {
                    {
                        let t = h[0];
                        trace.messages.push(MessageTrace {
                            index: at.index,
                            offset: at.offset,
                            message_type: t,
                            name: name(t),
                            stage: h[1],
                            stage_name: super::UpdateStage(h[1]).name(),
                            len: usize::from(u16::from_le_bytes([h[2], h[3]])),
                            status: MessageStatus::Error,
                            error: Some(e),
                            fields: Vec::new(),
                        });
                    }
                }
            }
        }
    }
    trace
}
