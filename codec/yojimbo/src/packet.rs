//! The connection packet (yojimbo's STANDARD.md, as yojimbo 1.9.1's code reads it): channel
//! entries, messages, message blocks and block fragments, read through a codec [`Stream`] so
//! that a traced read records every field with its path, bit, width, value and range.

use bitlens_codec::{
    Error, ErrorKind, ReadStream, Stream, Trace, TraceStream, Value, bits_required,
};

use crate::config::{BodyReader, ChannelType, Config};
use crate::error::{Refusal, RefusalKind};

/// A run of bits copied out of a packet, least significant bit of each byte first (the wire's
/// order): a message body as it was on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bits {
    /// The bits, packed from bit 0 of byte 0; the unused high bits of the last byte are zero.
    pub data: Vec<u8>,
    /// How many bits.
    pub len: usize,
}

impl Bits {
    /// Bits `start..end` of `data` (both within it).
    pub fn copy(data: &[u8], start: usize, end: usize) -> Bits {
        let len = end.saturating_sub(start);
        let mut out = vec![0u8; len.div_ceil(8)];
        for i in 0..len {
            let b = start + i;
            if data.get(b / 8).is_some_and(|x| x >> (b % 8) & 1 == 1) {
                out[i / 8] |= 1 << (i % 8);
            }
        }
        Bits { data: out, len }
    }

    /// Bit `i` (false past the end).
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.data[i / 8] >> (i % 8) & 1 == 1
    }
}

/// One message of a channel entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its id: from the wire on a reliable-ordered channel; on an unreliable-unordered one the
    /// reliable packet's sequence, which is what yojimbo's receiver gives it.
    pub id: u16,
    /// Whether the id was on the wire.
    pub id_on_wire: bool,
    /// Its type (an index into the configuration's message types).
    pub message_type: u32,
    /// Its body's bits, as they were on the wire.
    pub body: Bits,
    /// The message block (unreliable-unordered channels, block message types).
    pub block: Option<Vec<u8>>,
}

/// The message a block's fragment 0 carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockHead {
    /// Its type (a block message type).
    pub message_type: u32,
    /// Its body's bits.
    pub body: Bits,
}

/// One fragment of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockFragment {
    /// The block message's id.
    pub message_id: u16,
    /// How many fragments the block has.
    pub num_fragments: u32,
    /// This fragment, from 0.
    pub fragment_id: u32,
    /// Its bytes.
    pub data: Vec<u8>,
    /// On fragment 0: the message's type and body.
    pub head: Option<BlockHead>,
}

/// What a channel entry carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// `hasMessages` false: nothing.
    Nothing,
    /// Messages, in wire order.
    Messages(Vec<Message>),
    /// One block fragment.
    Fragment(BlockFragment),
}

/// One channel entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The channel's index.
    pub channel: usize,
    /// What it carries.
    pub content: Content,
}

/// A connection packet, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionPacket {
    /// The channel entries in wire order (yojimbo's writer sends them by ascending channel; its
    /// reader takes any order and repeats, and so does this one).
    pub entries: Vec<Entry>,
    /// Bits read. yojimbo's reader looks at nothing after them (not even the padding of the
    /// last byte), and neither does this one.
    pub bits: usize,
}

/// A read stream that knows how to hand a body to a [`BodyReader`].
pub trait BodyStream: Stream {
    /// Reads one body.
    ///
    /// # Errors
    /// What the body reader refuses.
    fn body(&mut self, reader: &dyn BodyReader) -> bitlens_codec::Result<()>;
}

impl BodyStream for ReadStream<'_> {
    fn body(&mut self, reader: &dyn BodyReader) -> bitlens_codec::Result<()> {
        reader.read(self)
    }
}

impl BodyStream for TraceStream<'_> {
    fn body(&mut self, reader: &dyn BodyReader) -> bitlens_codec::Result<()> {
        reader.trace(self)
    }
}

/// Reads a connection packet (the bytes after the reliable header, or a reassembled packet's),
/// refusing what yojimbo refuses. `sequence` is the reliable packet's sequence (the id of
/// unreliable messages).
///
/// # Errors
/// The first refusal: a receiver obligation, a rule of the code, or the serialize layer's.
pub fn read(cfg: &Config, data: &[u8], sequence: u16) -> Result<ConnectionPacket, Refusal> {
    let mut s = ReadStream::new(data);
    read_from(&mut s, cfg, data, sequence)
}

/// Reads like [`read`] and records every field into a [`Trace`] whose verdict is the read's.
pub fn trace(
    cfg: &Config,
    data: &[u8],
    sequence: u16,
) -> (Result<ConnectionPacket, Refusal>, Trace) {
    let mut s = TraceStream::new(data);
    let r = read_from(&mut s, cfg, data, sequence);
    let verdict = match &r {
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_codec()),
    };
    (r, s.into_trace(verdict))
}

fn wire(e: Error) -> Refusal {
    Refusal::wire(&e)
}

fn prefix_field(prefix: &str, field: &str) -> String {
    if field.is_empty() {
        prefix.to_owned()
    } else if field.starts_with('[') {
        format!("{prefix}{field}")
    } else {
        format!("{prefix}.{field}")
    }
}

/// `f` inside the trace scope `name`; a refusal's field gets `name` in front.
fn scoped<S: Stream, R>(
    s: &mut S,
    name: &str,
    f: impl FnOnce(&mut S) -> Result<R, Refusal>,
) -> Result<R, Refusal> {
    let r = s.scope(name, |s| Ok(f(s))).map_err(wire)?;
    r.map_err(|e| Refusal {
        field: prefix_field(name, &e.field),
        ..e
    })
}

/// `f` inside the trace index `i`; a refusal's field gets `[i]` in front.
fn indexed<S: Stream, R>(
    s: &mut S,
    i: usize,
    f: impl FnOnce(&mut S) -> Result<R, Refusal>,
) -> Result<R, Refusal> {
    let r = s.index(i, |s| Ok(f(s))).map_err(wire)?;
    r.map_err(|e| Refusal {
        field: prefix_field(&format!("[{i}]"), &e.field),
        ..e
    })
}

/// `int(v, min, max)`; an out-of-range value becomes the refusal `obligation` makes of it.
fn int_or<S: Stream>(
    s: &mut S,
    name: &str,
    min: i64,
    max: i64,
    obligation: impl FnOnce(i128) -> RefusalKind,
) -> Result<i64, Refusal> {
    let mut v = 0i64;
    match s.int(name, &mut v, min, max) {
        Ok(()) => Ok(v),
        Err(e) => match e.kind() {
            ErrorKind::OutOfRange { value, .. } => {
                Err(Refusal::new(obligation(*value), e.bit(), e.field()))
            }
            _ => Err(wire(e)),
        },
    }
}

fn int<S: Stream>(s: &mut S, name: &str, min: i64, max: i64) -> Result<i64, Refusal> {
    let mut v = 0i64;
    s.int(name, &mut v, min, max).map_err(wire)?;
    Ok(v)
}

/// The tiers of `serialize_int_relative` after the one-bit `+1`: the flag's name, then the
/// difference's range.
const TIERS: [(&str, i64, i64); 5] = [
    ("d<=6", 2, 6),
    ("d<=23", 7, 23),
    ("d<=280", 24, 280),
    ("d<=4377", 281, 4377),
    ("d<=69914", 4378, 69914),
];

/// yojimbo's `serialize_sequence_relative` (serialize 1.6's `serialize_int_relative` over
/// `uint32`): `previous` and `current + 65536` when it wrapped, the difference in the smallest
/// tier, or `current` absolute in 32 bits (a reader refuses an absolute value not above
/// `previous`); a reader takes 65536 off once and keeps the low 16 bits.
///
/// # Errors
/// Out_of_range when a writer is given `current == previous` (no encoding exists) or a reader
/// finds an absolute value not above `previous`; past_end / buffer full.
pub fn sequence_relative<S: Stream>(
    s: &mut S,
    name: &str,
    previous: u16,
    current: &mut u16,
) -> bitlens_codec::Result<()> {
    s.scope(name, |s| ladder(s, previous, current))?;
    let value = *current;
    s.annotate(|| Value::Int(i128::from(value)));
    Ok(())
}

/// The flags and value of [`sequence_relative`], in the current scope.
fn ladder<S: Stream>(s: &mut S, previous: u16, current: &mut u16) -> bitlens_codec::Result<()> {
    let start = s.bit_position();
    let a = u64::from(previous);
    let mut d = 0u64;
    if S::WRITING {
        let b = u64::from(*current) + if previous > *current { 65536 } else { 0 };
        if b <= a {
            let kind = ErrorKind::OutOfRange {
                value: i128::from(*current),
                min: i128::from(previous) + 1,
                max: i128::from(previous) + 65535,
            };
            return Err(Error::new(kind, start, ""));
        }
        d = b - a;
    }
    let mut absolute = None;
    let mut one = d == 1;
    s.bool("d=1", &mut one)?;
    if one {
        d = 1;
    } else {
        let mut found = false;
        for (flag, lo, hi) in TIERS {
            let mut here = d <= hi as u64;
            s.bool(flag, &mut here)?;
            if here {
                let mut v = d as i64;
                s.int("d", &mut v, lo, hi)?;
                d = v as u64;
                found = true;
                break;
            }
        }
        if !found {
            let mut v = d + a;
            let bit = s.bit_position();
            s.bits("value", &mut v, 32)?;
            if S::READING && v <= a {
                let kind = ErrorKind::OutOfRange {
                    value: i128::from(v),
                    min: i128::from(a) + 1,
                    max: i128::from(u32::MAX),
                };
                return Err(Error::new(kind, bit, "value"));
            }
            absolute = Some(v);
        }
    }
    if S::READING {
        let mut b = absolute.unwrap_or(a + d);
        if b >= 65536 {
            b -= 65536;
        }
        *current = b as u16;
    }
    Ok(())
}

/// Reads a connection packet from any read stream over `data` (at bit 0).
///
/// # Errors
/// As [`read`].
pub fn read_from<S: BodyStream>(
    s: &mut S,
    cfg: &Config,
    data: &[u8],
    sequence: u16,
) -> Result<ConnectionPacket, Refusal> {
    let channels = cfg.channels.len() as i64;
    let n = int_or(s, "num_entries", 0, channels, |value| {
        RefusalKind::TooManyEntries {
            value,
            max: i128::from(channels),
        }
    })? as usize;
    let mut entries = Vec::with_capacity(n);
    scoped(s, "entries", |s| {
        for i in 0..n {
            let e = indexed(s, i, |s| read_entry(s, cfg, data, sequence))?;
            entries.push(e);
        }
        Ok(())
    })?;
    Ok(ConnectionPacket {
        entries,
        bits: s.bit_position(),
    })
}

fn read_entry<S: BodyStream>(
    s: &mut S,
    cfg: &Config,
    data: &[u8],
    sequence: u16,
) -> Result<Entry, Refusal> {
    let channels = cfg.channels.len() as i64;
    let channel = if channels > 1 {
        int_or(s, "channel", 0, channels - 1, |value| {
            RefusalKind::ChannelIndex {
                value,
                max: i128::from(channels - 1),
            }
        })? as usize
    } else {
        0
    };
    let cc = cfg.channels[channel];
    let bit = s.bit_position();
    let mut block = false;
    s.bool("block_message", &mut block).map_err(wire)?;
    let content = if !block {
        let mut has = false;
        s.bool("has_messages", &mut has).map_err(wire)?;
        if has {
            let max = i64::from(cc.max_messages_per_packet);
            let count = int_or(s, "num_messages", 1, max, |value| {
                RefusalKind::MessageCount {
                    value,
                    max: i128::from(max),
                }
            })? as usize;
            let messages = match cc.kind {
                ChannelType::ReliableOrdered => read_ordered(s, cfg, data, count)?,
                ChannelType::UnreliableUnordered => {
                    read_unordered(s, cfg, data, count, sequence, cc.max_block_size)?
                }
            };
            Content::Messages(messages)
        } else {
            Content::Nothing
        }
    } else {
        if cc.disable_blocks {
            let kind = RefusalKind::BlocksDisabled { channel };
            return Err(Refusal::new(kind, bit, "block_message"));
        }
        let f = scoped(s, "fragment", |s| read_fragment(s, cfg, channel, data))?;
        if cc.kind == ChannelType::UnreliableUnordered {
            let kind = RefusalKind::BlockOnUnreliableChannel { channel };
            return Err(Refusal::new(kind, bit, "block_message"));
        }
        Content::Fragment(f)
    };
    Ok(Entry { channel, content })
}

/// The message type (elided with one type) and the body; the body's bits.
fn type_and_body<S: BodyStream>(
    s: &mut S,
    cfg: &Config,
    data: &[u8],
) -> Result<(u32, Bits), Refusal> {
    let max_type = cfg.max_message_type();
    let message_type = if max_type > 0 {
        int(s, "type", 0, max_type)? as u32
    } else {
        0
    };
    let reader = &cfg.message_types[message_type as usize].body;
    let start = s.bit_position();
    let r = s.scope("body", |s| s.body(reader.as_ref()));
    if let Err(e) = r {
        let kind = RefusalKind::Body {
            message_type,
            error: e.kind().clone(),
        };
        return Err(Refusal::new(kind, e.bit(), e.field()));
    }
    Ok((message_type, Bits::copy(data, start, s.bit_position())))
}

fn read_ordered<S: BodyStream>(
    s: &mut S,
    cfg: &Config,
    data: &[u8],
    count: usize,
) -> Result<Vec<Message>, Refusal> {
    // Each id takes at least one bit (the first 16): checked before the vectors grow.
    let need = 16 + count - 1;
    if need > s.remaining_bits() {
        let kind = ErrorKind::PastEnd {
            needed: need,
            remaining: s.remaining_bits(),
        };
        return Err(wire(Error::new(kind, s.bit_position(), "ids")));
    }
    let mut ids = Vec::with_capacity(count);
    scoped(s, "ids", |s| {
        let mut first = 0u64;
        indexed(s, 0, |s| s.bits("", &mut first, 16).map_err(wire))?;
        ids.push(first as u16);
        for i in 1..count {
            let previous = ids[i - 1];
            let mut id = 0u16;
            indexed(s, i, |s| ladder(s, previous, &mut id).map_err(wire))?;
            s.annotate(|| Value::Int(i128::from(id)));
            ids.push(id);
        }
        Ok(())
    })?;
    // Grown as messages are read (a message may take very few bits), never ahead of the data.
    let mut messages = Vec::with_capacity(count.min(s.remaining_bits() / 8 + 1));
    scoped(s, "messages", |s| {
        for (i, &id) in ids.iter().enumerate() {
            let (message_type, body) = indexed(s, i, |s| type_and_body(s, cfg, data))?;
            messages.push(Message {
                id,
                id_on_wire: true,
                message_type,
                body,
                block: None,
            });
        }
        Ok(())
    })?;
    Ok(messages)
}

fn read_unordered<S: BodyStream>(
    s: &mut S,
    cfg: &Config,
    data: &[u8],
    count: usize,
    sequence: u16,
    max_block_size: u32,
) -> Result<Vec<Message>, Refusal> {
    // Grown as messages are read (a message may take no bits), never ahead of the data.
    let mut messages = Vec::with_capacity(count.min(s.remaining_bits() / 8 + 1));
    scoped(s, "messages", |s| {
        for i in 0..count {
            let m = indexed(s, i, |s| {
                let (message_type, body) = type_and_body(s, cfg, data)?;
                let mut block = None;
                if cfg.message_types[message_type as usize].block {
                    let size = int(s, "block_size", 1, i64::from(max_block_size))? as usize;
                    let mut bytes = Vec::new();
                    s.bytes_vec("block", &mut bytes, size).map_err(wire)?;
                    block = Some(bytes);
                }
                Ok(Message {
                    id: sequence,
                    id_on_wire: false,
                    message_type,
                    body,
                    block,
                })
            })?;
            messages.push(m);
        }
        Ok(())
    })?;
    Ok(messages)
}

fn read_fragment<S: BodyStream>(
    s: &mut S,
    cfg: &Config,
    channel: usize,
    data: &[u8],
) -> Result<BlockFragment, Refusal> {
    let cc = cfg.channels[channel];
    let mut id = 0u64;
    s.bits("message_id", &mut id, 16).map_err(wire)?;
    let max_fragments = i64::from(cc.max_fragments_per_block());
    let num_fragments = if max_fragments > 1 {
        int_or(s, "num_fragments", 1, max_fragments, |value| {
            RefusalKind::FragmentCount {
                value,
                max: i128::from(max_fragments),
            }
        })?
    } else {
        1
    };
    let fragment_id = if num_fragments > 1 {
        int_or(s, "fragment_id", 0, num_fragments - 1, |value| {
            RefusalKind::FragmentId {
                value,
                num_fragments: i128::from(num_fragments),
            }
        })?
    } else {
        0
    };
    let size = int(s, "fragment_size", 1, i64::from(cc.block_fragment_size))? as usize;
    let mut bytes = Vec::new();
    s.bytes_vec("data", &mut bytes, size).map_err(wire)?;
    let mut head = None;
    if fragment_id == 0 {
        let bit = s.bit_position();
        let max_type = cfg.max_message_type();
        let message_type = if max_type > 0 {
            int(s, "type", 0, max_type)? as u32
        } else {
            0
        };
        if !cfg.message_types[message_type as usize].block {
            let kind = RefusalKind::NotABlockMessage { message_type };
            return Err(Refusal::new(kind, bit, "type"));
        }
        let reader = &cfg.message_types[message_type as usize].body;
        let start = s.bit_position();
        if let Err(e) = s.scope("body", |s| s.body(reader.as_ref())) {
            let kind = RefusalKind::Body {
                message_type,
                error: e.kind().clone(),
            };
            return Err(Refusal::new(kind, e.bit(), e.field()));
        }
        head = Some(BlockHead {
            message_type,
            body: Bits::copy(data, start, s.bit_position()),
        });
    }
    Ok(BlockFragment {
        message_id: id as u16,
        num_fragments: num_fragments as u32,
        fragment_id: fragment_id as u32,
        data: bytes,
        head,
    })
}

/// The width in bits of `int(v, min, max)`, as the wire has it.
pub fn int_bits(min: i64, max: i64) -> u32 {
    bits_required(min, max)
}
