//! The error type of the byte-aligned batch layer.
//!
//! This layer counts in bytes, not bits, and keeps its errors `Copy` and allocation-free (the
//! send and receive paths promise zero heap allocations per message, error paths included): a
//! [`BatchError`] is a [`BatchErrorKind`], the byte offset where it happened (within the
//! datagram when reading a batch), the innermost field name (`&'static str`: names are literals
//! of Rust code, or names of a schema's `[batch]` section, interned once when it is loaded),
//! and, once a batch reader knows it, the message it happened in.

use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// What went wrong in the batch layer, without where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchErrorKind {
    /// A read needed more bytes than remain (checked before anything is consumed or allocated).
    PastEnd {
        /// Bytes the read needed.
        needed: usize,
        /// Bytes that remained.
        remaining: usize,
    },
    /// A write did not fit in the buffer it was given.
    BufferFull {
        /// Bytes the write needed.
        needed: usize,
        /// Bytes that were free.
        available: usize,
    },
    /// A value (a length, a bool byte, a packed integer) lies outside its declared range.
    OutOfRange {
        /// The value found (read) or given (write).
        value: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// A varint is longer than ten bytes or overflows 64 bits.
    InvalidVarint,
    /// A string's bytes are not UTF-8.
    InvalidUtf8,
    /// The batch header's total length disagrees with the datagram's length.
    BatchLength {
        /// Total length the batch header declares (header included).
        declared: usize,
        /// Bytes in the datagram.
        actual: usize,
    },
    /// A message header declares a body longer than what remains of the batch.
    BodyLength {
        /// Body length the message header declares.
        declared: usize,
        /// Bytes that remain after the header.
        remaining: usize,
    },
    /// A message's decoder stopped before the end of its body (every byte must be accounted
    /// for, so that every accepted batch re-encodes to the same bytes).
    TrailingBody {
        /// Unread bytes.
        unread: usize,
    },
    /// A message was decoded as a type other than the one its header names.
    WrongType {
        /// The type the decoder handles.
        expected: u8,
        /// The type in the header.
        found: u8,
    },
    /// A message's size upper bound exceeds MTU - 6 (seed 002): refused, nothing was sent.
    TooLarge {
        /// The message's upper bound.
        bound: usize,
        /// The largest allowed body, MTU - 6.
        limit: usize,
    },
    /// A message serialized more bytes than its own upper bound: a bug in the message type.
    BoundExceeded {
        /// The upper bound it declared.
        bound: usize,
    },
    /// A fixed-capacity queue is full: the message was refused (send) or dropped (receive).
    QueueFull {
        /// The queue's capacity.
        capacity: usize,
    },
    /// A destination is not a known client.
    UnknownClient {
        /// The client id.
        client: u64,
    },
    /// A configuration no wire encoding exists for (an MTU under 6 or over 65535, a zero capacity).
    InvalidConfig(&'static str),
    /// An encoding a writer never produces (kept out so every accepted batch re-encodes to the
    /// same bytes).
    NonCanonical(&'static str),
    /// A network id does not resolve to a known object (seed 004 linking).
    Unresolved {
        /// The network id.
        id: u64,
    },
    /// A value handed to a writer does not fit its field (a schema-described body given a
    /// string for an integer, a missing field, an array of the wrong length).
    InvalidValue(&'static str),
}

impl BatchErrorKind {
    /// The kind's stable snake_case name, as used in JSON output.
    pub fn name(&self) -> &'static str {
        match self {
            BatchErrorKind::PastEnd { .. } => "past_end",
            BatchErrorKind::BufferFull { .. } => "buffer_full",
            BatchErrorKind::OutOfRange { .. } => "out_of_range",
            BatchErrorKind::InvalidVarint => "invalid_varint",
            BatchErrorKind::InvalidUtf8 => "invalid_utf8",
            BatchErrorKind::BatchLength { .. } => "batch_length",
            BatchErrorKind::BodyLength { .. } => "body_length",
            BatchErrorKind::TrailingBody { .. } => "trailing_body",
            BatchErrorKind::WrongType { .. } => "wrong_type",
            BatchErrorKind::TooLarge { .. } => "too_large",
            BatchErrorKind::BoundExceeded { .. } => "bound_exceeded",
            BatchErrorKind::QueueFull { .. } => "queue_full",
            BatchErrorKind::UnknownClient { .. } => "unknown_client",
            BatchErrorKind::InvalidConfig(_) => "invalid_config",
            BatchErrorKind::NonCanonical(_) => "non_canonical",
            BatchErrorKind::Unresolved { .. } => "unresolved",
            BatchErrorKind::InvalidValue(_) => "invalid_value",
        }
    }
}

impl fmt::Display for BatchErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BatchErrorKind::PastEnd { needed, remaining } => {
                write!(f, "read past end: needs {needed} bytes, {remaining} remain")
            }
            BatchErrorKind::BufferFull { needed, available } => {
                write!(f, "buffer full: needs {needed} bytes, {available} free")
            }
            BatchErrorKind::OutOfRange { value, min, max } => {
                write!(f, "{value} out of range {min}..={max}")
            }
            BatchErrorKind::InvalidVarint => {
                write!(f, "varint longer than 10 bytes or over 64 bits")
            }
            BatchErrorKind::InvalidUtf8 => write!(f, "string is not valid UTF-8"),
            BatchErrorKind::BatchLength { declared, actual } => write!(
                f,
                "batch header says {declared} bytes, datagram has {actual} (truncated or padded)"
            ),
            BatchErrorKind::BodyLength {
                declared,
                remaining,
            } => write!(
                f,
                "message body of {declared} bytes, only {remaining} remain in the batch"
            ),
            BatchErrorKind::TrailingBody { unread } => {
                write!(
                    f,
                    "{unread} bytes left unread at the end of the message body"
                )
            }
            BatchErrorKind::WrongType { expected, found } => {
                write!(f, "message type {found} decoded as type {expected}")
            }
            BatchErrorKind::TooLarge { bound, limit } => write!(
                f,
                "message upper bound of {bound} bytes exceeds MTU - 6 = {limit}; not sent (split the message)"
            ),
            BatchErrorKind::BoundExceeded { bound } => write!(
                f,
                "message wrote more than its upper bound of {bound} bytes (fix size_upper_bound)"
            ),
            BatchErrorKind::QueueFull { capacity } => {
                write!(f, "queue full at its capacity of {capacity}")
            }
            BatchErrorKind::UnknownClient { client } => write!(f, "unknown client {client}"),
            BatchErrorKind::InvalidConfig(why) => write!(f, "invalid configuration: {why}"),
            BatchErrorKind::NonCanonical(why) => write!(f, "non-canonical encoding: {why}"),
            BatchErrorKind::Unresolved { id } => {
                write!(f, "network id {id} does not resolve to an object")
            }
            BatchErrorKind::InvalidValue(why) => write!(f, "invalid value: {why}"),
        }
    }
}

/// The message of a batch an error happened in: its position, its offset and its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageRef {
    /// Index of the message in its batch, from 0.
    pub index: usize,
    /// Byte offset of its header within the datagram.
    pub offset: usize,
    /// Its message type, when the header could be read.
    pub message_type: Option<u8>,
}

/// An error of the batch layer: a kind, the byte offset, the field and the message.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BatchError {
    kind: BatchErrorKind,
    offset: usize,
    field: &'static str,
    message: Option<MessageRef>,
}

impl BatchError {
    /// An error of `kind` at byte `offset` in the field named `field`.
    #[cold]
    pub fn new(kind: BatchErrorKind, offset: usize, field: &'static str) -> Self {
        BatchError {
            kind,
            offset,
            field,
            message: None,
        }
    }

    /// Out_of_range: `value` outside `min..=max`, at byte `offset` in the field named `field`.
    #[cold]
    pub fn out_of_range(
        value: u64,
        min: u64,
        max: u64,
        offset: usize,
        field: &'static str,
    ) -> Self {
        Self::new(
            BatchErrorKind::OutOfRange { value, min, max },
            offset,
            field,
        )
    }

    /// Names the message the error happened in (kept if already set: innermost wins).
    #[cold]
    pub fn in_message(mut self, message: MessageRef) -> Self {
        if self.message.is_none() {
            self.message = Some(message);
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &BatchErrorKind {
        &self.kind
    }

    /// The byte offset where it went wrong: within the datagram for batch reads, within the
    /// buffer for writes.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The innermost field name (empty for framing errors).
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// The message it happened in, if it happened inside a batch.
    pub fn message(&self) -> Option<MessageRef> {
        self.message
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}", self.offset)?;
        if let Some(m) = self.message {
            write!(f, " (message {} at byte {}", m.index, m.offset)?;
            if let Some(t) = m.message_type {
                write!(f, ", type {t}")?;
            }
            write!(f, ")")?;
        }
        if !self.field.is_empty() {
            write!(f, " (field \"{}\")", self.field)?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl fmt::Debug for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BatchError({}: {self})", self.kind.name())
    }
}

impl std::error::Error for BatchError {}

/// JSON shape: `{"kind": "body_length", "offset": 14, "field": "", "message": 2,
/// "message_offset": 10, "message_type": 3, "text": "byte 14 ..."}`.
impl Serialize for BatchError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", self.kind.name())?;
        m.serialize_entry("offset", &self.offset)?;
        m.serialize_entry("field", self.field)?;
        if let Some(r) = self.message {
            m.serialize_entry("message", &r.index)?;
            m.serialize_entry("message_offset", &r.offset)?;
            m.serialize_entry("message_type", &r.message_type)?;
        }
        m.serialize_entry("text", &self.to_string())?;
        m.end()
    }
}

/// The result type of the batch layer.
pub type Result<T, E = BatchError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_message_and_field() {
        let e = BatchError::new(
            BatchErrorKind::BodyLength {
                declared: 300,
                remaining: 6,
            },
            12,
            "len",
        )
        .in_message(MessageRef {
            index: 2,
            offset: 10,
            message_type: Some(3),
        });
        assert_eq!(
            e.to_string(),
            "byte 12 (message 2 at byte 10, type 3) (field \"len\"): message body of 300 bytes, only 6 remain in the batch"
        );
        let json = serde_json::to_value(e).unwrap();
        assert_eq!(json["kind"], "body_length");
        assert_eq!(json["message_type"], 3);
    }

    #[test]
    fn errors_are_small_and_copy() {
        fn is_copy<T: Copy>() {}
        is_copy::<BatchError>();
        assert!(std::mem::size_of::<BatchError>() <= 80);
    }
}
