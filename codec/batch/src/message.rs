//! Messages, their 4-byte header, and one batch: [`BatchWriter`] fills a caller-owned buffer,
//! [`read_batch`] walks one as an iterator of `Result<RawMessage>` (WIRE.md section 3).

use super::error::{BatchError, BatchErrorKind, MessageRef, Result};
use crate::stream::{ByteReader, ByteStream, ByteWriter};
use bitlens_codec::trace::Tracer;
use std::fmt;

/// Bytes of the batch header: `[u16 LE total batch length, header included]`.
pub const BATCH_HEADER_LEN: usize = 2;
/// Bytes of a message header: `[u8 type][u8 update stage][u16 LE body length]`.
pub const MESSAGE_HEADER_LEN: usize = 4;
/// The largest MTU a batch can use: its length must fit the u16 batch header.
pub const MAX_MTU: usize = u16::MAX as usize;

/// The largest message body an MTU allows: MTU - 4 - 2 (seed 002).
pub const fn max_body(mtu: usize) -> usize {
    mtu.saturating_sub(MESSAGE_HEADER_LEN + BATCH_HEADER_LEN)
}

/// The update stage a message is handled in (seed 002's `NetworkUpdateStage`), one byte on the
/// wire. Stages are ordered: loopback delivery compares them. Values past the named ones survive
/// decoding and show as `Unknown(n)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct UpdateStage(pub u8);

impl UpdateStage {
    /// Stage 0.
    pub const INITIALIZATION: UpdateStage = UpdateStage(0);
    /// Stage 1.
    pub const EARLY_UPDATE: UpdateStage = UpdateStage(1);
    /// Stage 2.
    pub const FIXED_UPDATE: UpdateStage = UpdateStage(2);
    /// Stage 3.
    pub const PRE_UPDATE: UpdateStage = UpdateStage(3);
    /// Stage 4.
    pub const UPDATE: UpdateStage = UpdateStage(4);
    /// Stage 5.
    pub const PRE_LATE_UPDATE: UpdateStage = UpdateStage(5);
    /// Stage 6.
    pub const POST_LATE_UPDATE: UpdateStage = UpdateStage(6);
    /// Number of named stages: incoming queues exist for these.
    pub const COUNT: usize = 7;

    const NAMES: [&'static str; Self::COUNT] = [
        "initialization",
        "early_update",
        "fixed_update",
        "pre_update",
        "update",
        "pre_late_update",
        "post_late_update",
    ];

    /// Every named stage, in order.
    pub const ALL: [UpdateStage; Self::COUNT] = [
        Self::INITIALIZATION,
        Self::EARLY_UPDATE,
        Self::FIXED_UPDATE,
        Self::PRE_UPDATE,
        Self::UPDATE,
        Self::PRE_LATE_UPDATE,
        Self::POST_LATE_UPDATE,
    ];

    /// The stage's snake_case name, `None` for an unknown stage.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMES.get(usize::from(self.0)).copied()
    }
}

impl fmt::Debug for UpdateStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "Unknown({:#04x})", self.0),
        }
    }
}

/// A transport channel (reliable, unreliable, ...): batches never mix channels (seed 002).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Channel(pub u8);

/// A client of the message system (seed 002's client id).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct ClientId(pub u64);

/// The 4-byte message header.
///
/// ```text
///  byte 0          1               2    3
/// +---------------+---------------+---------+
/// | message type  | update stage  | body len|  u16 little-endian, header excluded
/// +---------------+---------------+---------+
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MessageHeader {
    /// The message type.
    pub message_type: u8,
    /// The stage it is handled in.
    pub stage: UpdateStage,
    /// Body length in bytes.
    pub len: u16,
}

impl MessageHeader {
    /// The header's bytes.
    pub fn to_bytes(self) -> [u8; MESSAGE_HEADER_LEN] {
        let [lo, hi] = self.len.to_le_bytes();
        [self.message_type, self.stage.0, lo, hi]
    }

    /// The header in `b`.
    pub fn from_bytes(b: [u8; MESSAGE_HEADER_LEN]) -> Self {
        MessageHeader {
            message_type: b[0],
            stage: UpdateStage(b[1]),
            len: u16::from_le_bytes([b[2], b[3]]),
        }
    }
}

/// What a handler learns besides the message (seed 002's `NetworkContext`).
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct NetworkContext {
    /// Who sent it (the local client for loopback).
    pub sender: ClientId,
    /// The channel it came on.
    pub channel: Channel,
    /// Its message type.
    pub message_type: u8,
    /// The stage it is handled in.
    pub stage: UpdateStage,
    /// When it was received, in the caller's time unit.
    pub timestamp: f64,
}

/// The wire half of a seed 002 message: its type, its name, a size upper bound and one
/// serialize function for every [`ByteStream`]. `#[derive(BatchStruct)]` with
/// `#[batch(message_type = N)]` writes it; [`Message`] adds what the game does with it.
///
/// ```
/// use bitlens_batch::{BatchStruct, Message, MessageBody, NetworkContext};
///
/// #[derive(Debug, Default, PartialEq, BatchStruct)]
/// #[batch(message_type = 40)]
/// struct Score {
///     #[batch(packed)]
///     player: u32,
///     #[batch(packed, abs_max = 1_000_000)]
///     points: i32,
/// }
///
/// impl Message for Score {
///     type Handler = Vec<(u32, i32)>;
///     fn handle(&mut self, _: &NetworkContext, table: &mut Self::Handler) {
///         table.push((self.player, self.points));
///     }
/// }
/// assert_eq!((Score::TYPE, Score::NAME), (40, "Score"));
/// assert_eq!(Score::default().size_upper_bound(), 5 + 5);
/// ```
///
/// Written by hand, for what the attributes cannot say:
///
/// ```
/// use bitlens_batch::{ByteStream, MessageBody, Result};
///
/// #[derive(Debug, Default, PartialEq)]
/// struct Score { player: u32, points: i32 }
///
/// impl MessageBody for Score {
///     const TYPE: u8 = 40;
///     const NAME: &'static str = "Score";
///     fn size_upper_bound(&self) -> usize { 5 + 5 }
///     fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()> {
///         s.packed_u32("player", &mut self.player)?;
///         s.packed_i32("points", &mut self.points)
///     }
/// }
/// # let _ = Score::default();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a batch message: it has no message type",
    label = "a variant of a `#[derive(MessageEnum)]` holds a message",
    note = "give its `#[derive(BatchStruct)]` struct `#[batch(message_type = N, name = \"...\")]` (a struct without one is a part of messages, not a message), or implement `MessageBody`"
)]
pub trait MessageBody {
    /// The message type byte.
    const TYPE: u8;
    /// A name for traces and errors.
    const NAME: &'static str;

    /// At least the serialized body size, at most MTU - 6: cheap over exact (seed 002).
    fn size_upper_bound(&self) -> usize;

    /// Writes or reads the body.
    ///
    /// # Errors
    /// Whatever the stream reports, and the message's own validation.
    fn serialize<S: ByteStream>(&mut self, s: &mut S) -> Result<()>;
}

/// A message of seed 002 the game handles: a [`MessageBody`] and its handler, called on
/// receipt ([`crate::MessageSystem::process`]) or immediately on loopback.
pub trait Message: MessageBody {
    /// What [`Message::handle`] acts on (the game state).
    type Handler: ?Sized;

    /// Acts on the message, on receipt or immediately on loopback.
    fn handle(&mut self, ctx: &NetworkContext, handler: &mut Self::Handler);
}

/// Encodes header and body of `msg` at the start of `dst`, returning the bytes used.
///
/// The body writer is bounded by the message's upper bound (and `dst`), so a message that lies
/// about its bound fails here, identically on every send path.
///
/// # Errors
/// Too_large when the bound exceeds `max_body`; buffer_full when `dst` cannot hold header and
/// bound (nothing written); bound_exceeded; whatever `serialize` returns.
pub fn encode_message<M: MessageBody>(
    dst: &mut [u8],
    base: usize,
    stage: UpdateStage,
    msg: &mut M,
    max_body: usize,
) -> Result<usize> {
    let bound = msg.size_upper_bound();
    if bound > max_body {
        let kind = BatchErrorKind::TooLarge {
            bound,
            limit: max_body,
        };
        return Err(BatchError::new(kind, base, M::NAME));
    }
    let needed = MESSAGE_HEADER_LEN + bound;
    // Only the bound matters here, not the free space after it: the check is the same
    // wherever the message lands in a batch.
    let Some(window) = dst.get_mut(..needed) else {
        let kind = BatchErrorKind::BufferFull {
            needed,
            available: dst.len(),
        };
        return Err(BatchError::new(kind, base, M::NAME));
    };
    let (head, body) = window.split_at_mut(MESSAGE_HEADER_LEN);
    let mut w = ByteWriter::with_base(body, base + MESSAGE_HEADER_LEN);
    msg.serialize(&mut w).map_err(|e| match e.kind() {
        BatchErrorKind::BufferFull { .. } => BatchError::new(
            BatchErrorKind::BoundExceeded { bound },
            e.offset(),
            e.field(),
        ),
        _ => e,
    })?;
    let len = w.finish();
    let header = MessageHeader {
        message_type: M::TYPE,
        stage,
        // len <= bound <= max_body < MAX_MTU.
        len: len as u16,
    };
    head.copy_from_slice(&header.to_bytes());
    Ok(MESSAGE_HEADER_LEN + len)
}

/// Writes one batch into a caller-owned buffer of MTU bytes: messages back to back after the
/// 2-byte batch header, which [`BatchWriter::finish`] fills in.
///
/// ```text
///  0      2                6                  6+len
/// +------+----------------+------------------+----------------+-- ... --+
/// | total| message header | body             | message header | ...     |
/// | u16  | type stage len | len bytes        |                |         |
/// +------+----------------+------------------+----------------+-- ... --+
///  total = every byte of the batch, these 2 included; never more than the MTU
/// ```
#[derive(Debug)]
pub struct BatchWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
    count: usize,
}

impl<'a> BatchWriter<'a> {
    /// A writer over `buf`, whose length is the MTU.
    ///
    /// # Errors
    /// Invalid_config when `buf` is under 6 bytes or over [`MAX_MTU`].
    pub fn new(buf: &'a mut [u8]) -> Result<Self> {
        if buf.len() < BATCH_HEADER_LEN + MESSAGE_HEADER_LEN || buf.len() > MAX_MTU {
            let why = "the MTU must lie in 6..=65535 bytes";
            return Err(BatchError::new(BatchErrorKind::InvalidConfig(why), 0, ""));
        }
        Ok(BatchWriter {
            buf,
            len: BATCH_HEADER_LEN,
            count: 0,
        })
    }

    /// Appends `msg` if its upper bound fits in what is left: `Ok(false)` (nothing written)
    /// when it does not, so the caller can send this batch and start another.
    ///
    /// # Errors
    /// Too_large when the bound exceeds MTU - 6 (it fits no batch), bound_exceeded, and
    /// whatever `serialize` returns; nothing is kept of a failed message.
    pub fn push<M: MessageBody>(&mut self, stage: UpdateStage, msg: &mut M) -> Result<bool> {
        let bound = msg.size_upper_bound();
        let limit = max_body(self.buf.len());
        if bound <= limit && MESSAGE_HEADER_LEN + bound > self.buf.len() - self.len {
            return Ok(false);
        }
        let n = encode_message(&mut self.buf[self.len..], self.len, stage, msg, limit)?;
        self.len += n;
        self.count += 1;
        Ok(true)
    }

    /// Appends an already encoded message (header and body), `Ok(false)` when it does not fit.
    ///
    /// # Errors
    /// Body_length when `encoded` is not one whole message.
    pub fn push_encoded(&mut self, encoded: &[u8]) -> Result<bool> {
        check_encoded(encoded)?;
        let Some(dst) = self.buf.get_mut(self.len..self.len + encoded.len()) else {
            return Ok(false);
        };
        dst.copy_from_slice(encoded);
        self.len += encoded.len();
        self.count += 1;
        Ok(true)
    }

    /// Appends a message from its parts (type, stage, body): for relaying and re-encoding
    /// messages of unknown types. `Ok(false)` when it does not fit.
    ///
    /// # Errors
    /// Too_large when the body exceeds MTU - 6.
    pub fn push_raw(&mut self, message_type: u8, stage: UpdateStage, body: &[u8]) -> Result<bool> {
        let limit = max_body(self.buf.len());
        if body.len() > limit {
            let kind = BatchErrorKind::TooLarge {
                bound: body.len(),
                limit,
            };
            return Err(BatchError::new(kind, self.len, ""));
        }
        let end = self.len + MESSAGE_HEADER_LEN + body.len();
        let Some(dst) = self.buf.get_mut(self.len..end) else {
            return Ok(false);
        };
        let header = MessageHeader {
            message_type,
            stage,
            len: body.len() as u16,
        };
        dst[..MESSAGE_HEADER_LEN].copy_from_slice(&header.to_bytes());
        dst[MESSAGE_HEADER_LEN..].copy_from_slice(body);
        self.len = end;
        self.count += 1;
        Ok(true)
    }

    /// Bytes in the batch so far, header included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no message was pushed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Messages pushed.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Writes the batch header and gives the batch's length: send `buf[..len]`.
    pub fn finish(self) -> usize {
        finish_batch(self.buf, self.len);
        self.len
    }
}

/// Writes the batch header for a batch of `len` bytes.
pub(crate) fn finish_batch(buf: &mut [u8], len: usize) {
    // len <= buf.len() <= MAX_MTU.
    buf[..BATCH_HEADER_LEN].copy_from_slice(&(len as u16).to_le_bytes());
}

/// Checks that `encoded` is exactly one message, header and body.
pub(crate) fn check_encoded(encoded: &[u8]) -> Result<()> {
    let header = encoded
        .first_chunk::<MESSAGE_HEADER_LEN>()
        .map(|h| MessageHeader::from_bytes(*h));
    match header {
        Some(h) if usize::from(h.len) == encoded.len() - MESSAGE_HEADER_LEN => Ok(()),
        _ => {
            let kind = BatchErrorKind::BodyLength {
                declared: header.map_or(0, |h| usize::from(h.len)),
                remaining: encoded.len().saturating_sub(MESSAGE_HEADER_LEN),
            };
            Err(BatchError::new(kind, 0, "len"))
        }
    }
}

/// One message of a received batch, not yet decoded: its header and a borrowed body.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RawMessage<'a> {
    /// Index in the batch, from 0.
    pub index: usize,
    /// Byte offset of the header within the datagram.
    pub offset: usize,
    /// The header.
    pub header: MessageHeader,
    /// The body, exactly `header.len` bytes.
    pub body: &'a [u8],
}

impl<'a> RawMessage<'a> {
    /// Where this message is, for errors.
    pub fn at(&self) -> MessageRef {
        MessageRef {
            index: self.index,
            offset: self.offset,
            message_type: Some(self.header.message_type),
        }
    }

    /// Byte offset of the body within the datagram.
    #[inline]
    pub fn body_offset(&self) -> usize {
        self.offset + MESSAGE_HEADER_LEN
    }

    /// Decodes the body as `M`.
    ///
    /// # Errors
    /// Wrong_type when the header names another type; whatever `M::serialize` reports;
    /// trailing_body when it leaves bytes unread. Every error names this message.
    pub fn decode<M: MessageBody + Default>(&self) -> Result<M> {
        let mut m = M::default();
        self.decode_into(&mut m)?;
        Ok(m)
    }

    /// Decodes the body into `m`, reusing whatever it owns (strings, vectors).
    ///
    /// # Errors
    /// As [`RawMessage::decode`].
    pub fn decode_into<M: MessageBody>(&self, m: &mut M) -> Result<()> {
        self.decode_traced(m, bitlens_codec::trace::NoTrace)
            .map(|_| ())
            .map_err(|(e, _)| e)
    }

    /// Decodes the body into `m` while `tracer` records every field (offsets in the datagram).
    ///
    /// # Errors
    /// As [`RawMessage::decode`]; the tracer is returned either way.
    pub fn decode_traced<M: MessageBody, T: Tracer>(
        &self,
        m: &mut M,
        tracer: T,
    ) -> std::result::Result<T, (BatchError, T)> {
        if self.header.message_type != M::TYPE {
            let kind = BatchErrorKind::WrongType {
                expected: M::TYPE,
                found: self.header.message_type,
            };
            return Err((
                BatchError::new(kind, self.offset, "type").in_message(self.at()),
                tracer,
            ));
        }
        let mut r = ByteReader::with_tracer(self.body, self.body_offset(), tracer);
        let result = m.serialize(&mut r).and_then(|()| r.finish());
        let tracer = r.into_tracer();
        match result {
            Ok(()) => Ok(tracer),
            Err(e) => Err((e.in_message(self.at()), tracer)),
        }
    }
}

/// Checks a batch's header and gives an iterator over its messages.
///
/// The declared total length must equal the datagram's length: a shorter datagram was
/// truncated, a longer one carries bytes no header accounts for.
///
/// # Errors
/// Past_end under 2 bytes; batch_length when the header disagrees with the datagram.
pub fn read_batch(data: &[u8]) -> Result<Messages<'_>> {
    let Some(head) = data.first_chunk::<BATCH_HEADER_LEN>() else {
        let kind = BatchErrorKind::PastEnd {
            needed: BATCH_HEADER_LEN,
            remaining: data.len(),
        };
        return Err(BatchError::new(kind, 0, "batch_len"));
    };
    let declared = usize::from(u16::from_le_bytes(*head));
    if declared != data.len() || declared < BATCH_HEADER_LEN {
        let kind = BatchErrorKind::BatchLength {
            declared,
            actual: data.len(),
        };
        return Err(BatchError::new(kind, 0, "batch_len"));
    }
    Ok(Messages {
        data,
        pos: BATCH_HEADER_LEN,
        index: 0,
        failed: false,
    })
}

/// The messages of a batch: every header's length is checked against what remains; the
/// iterator yields the first corrupt message's error, naming it, and then stops.
#[derive(Debug, Clone)]
pub struct Messages<'a> {
    data: &'a [u8],
    pos: usize,
    index: usize,
    failed: bool,
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<RawMessage<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let offset = self.pos;
        let rest = &self.data[offset..];
        let mut at = MessageRef {
            index: self.index,
            offset,
            message_type: rest.first().copied(),
        };
        let Some(head) = rest.first_chunk::<MESSAGE_HEADER_LEN>() else {
            self.failed = true;
            let kind = BatchErrorKind::PastEnd {
                needed: MESSAGE_HEADER_LEN,
                remaining: rest.len(),
            };
            return Some(Err(BatchError::new(kind, offset, "header").in_message(at)));
        };
        let header = MessageHeader::from_bytes(*head);
        at.message_type = Some(header.message_type);
        let remaining = rest.len() - MESSAGE_HEADER_LEN;
        let len = usize::from(header.len);
        if len > remaining {
            self.failed = true;
            let kind = BatchErrorKind::BodyLength {
                declared: len,
                remaining,
            };
            return Some(Err(BatchError::new(kind, offset + 2, "len").in_message(at)));
        }
        let body = &rest[MESSAGE_HEADER_LEN..MESSAGE_HEADER_LEN + len];
        self.pos += MESSAGE_HEADER_LEN + len;
        self.index += 1;
        Some(Ok(RawMessage {
            index: at.index,
            offset,
            header,
            body,
        }))
    }
}

impl std::iter::FusedIterator for Messages<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of two messages: type 7 stage 4 body [AA BB], type 9 stage 0 empty body.
    const TWO: [u8; 12] = [
        12, 0, // total
        7, 4, 2, 0, 0xAA, 0xBB, // message 0
        9, 0, 0, 0, // message 1
    ];

    #[test]
    fn parse_two_messages() {
        let msgs: Vec<_> = read_batch(&TWO).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].header.message_type, 7);
        assert_eq!(msgs[0].header.stage, UpdateStage::UPDATE);
        assert_eq!(msgs[0].body, &[0xAA, 0xBB]);
        assert_eq!((msgs[1].index, msgs[1].offset), (1, 8));
        assert!(msgs[1].body.is_empty());
    }

    #[test]
    fn emit_two_messages() {
        let mut buf = [0u8; 64];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        assert!(w.push_raw(7, UpdateStage::UPDATE, &[0xAA, 0xBB]).unwrap());
        assert!(w.push_encoded(&[9, 0, 0, 0]).unwrap());
        let n = w.finish();
        assert_eq!(&buf[..n], &TWO);
    }

    #[test]
    fn lengths_are_checked_and_the_corrupt_message_named() {
        let mut bad = TWO;
        bad[4] = 3; // message 0 claims 3 body bytes: then message 1's header is cut
        let items: Vec<_> = read_batch(&bad).unwrap().collect();
        assert_eq!(items.len(), 2);
        let e = items[1].unwrap_err();
        assert_eq!(
            e.message(),
            Some(MessageRef {
                index: 1,
                offset: 9,
                message_type: Some(0)
            })
        );
        let mut bad = TWO;
        bad[10] = 1; // message 1 claims a body byte past the end
        let e = read_batch(&bad).unwrap().nth(1).unwrap().unwrap_err();
        assert_eq!(
            e.to_string(),
            "byte 10 (message 1 at byte 8, type 9) (field \"len\"): message body of 1 bytes, only 0 remain in the batch"
        );
    }

    #[test]
    fn batch_length_must_match_the_datagram() {
        for n in 0..TWO.len() {
            assert!(read_batch(&TWO[..n]).is_err(), "prefix {n} accepted");
        }
        let mut long = TWO.to_vec();
        long.push(0);
        assert!(matches!(
            read_batch(&long).unwrap_err().kind(),
            BatchErrorKind::BatchLength {
                declared: 12,
                actual: 13
            }
        ));
        assert_eq!(read_batch(&[2, 0]).unwrap().count(), 0);
        assert!(read_batch(&[1, 0]).is_err());
    }

    #[test]
    fn stage_debug_names_unknowns_in_hex() {
        assert_eq!(format!("{:?}", UpdateStage::UPDATE), "update");
        assert_eq!(format!("{:?}", UpdateStage(200)), "Unknown(0xc8)");
    }
}
