//! What the reference samples never send, written by an independent encoder built from
//! yojimbo's STANDARD.md (and reliable.io's header layout), not from the crate: several channel
//! types in one packet, message id wrap, the relative id ladder's tiers, blocks on unreliable
//! channels, every elision, and every receiver obligation refused with its field and bit.

use std::sync::Arc;

use bitlens_codec::{Error, ErrorKind, Result, Stream, Value};
use bitlens_yojimbo::{
    Body, ChannelConfig, ChannelType, Config, Content, MessageType, Note, Receiver, RefusalKind,
    Reliable, ReliableConfig, Typed, packet,
};

/// serialize's bit writer: least significant bit first, bytes in order.
#[derive(Default)]
struct W {
    bytes: Vec<u8>,
    bit: usize,
}

fn width(min: i64, max: i64) -> u32 {
    let span = (max - min) as u64;
    64 - span.leading_zeros()
}

impl W {
    fn bits(&mut self, v: u64, n: u32) -> &mut Self {
        for i in 0..n {
            if self.bit.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if v >> i & 1 == 1 {
                *self.bytes.last_mut().unwrap() |= 1 << (self.bit % 8);
            }
            self.bit += 1;
        }
        self
    }
    fn bool(&mut self, b: bool) -> &mut Self {
        self.bits(u64::from(b), 1)
    }
    /// `serialize_int(v, min, max)`; `v` may be out of range (a hostile writer) if it fits.
    fn int(&mut self, v: i64, min: i64, max: i64) -> &mut Self {
        self.bits((v - min) as u64, width(min, max))
    }
    fn align(&mut self) -> &mut Self {
        while !self.bit.is_multiple_of(8) {
            self.bits(0, 1);
        }
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.align();
        for &x in b {
            self.bits(u64::from(x), 8);
        }
        self
    }
    /// serialize's `serialize_int_relative` ladder.
    fn relative(&mut self, previous: u32, current: u32) -> &mut Self {
        let d = i64::from(current) - i64::from(previous);
        if d == 1 {
            return self.bool(true);
        }
        self.bool(false);
        for (lo, hi) in [(2, 6), (7, 23), (24, 280), (281, 4377), (4378, 69914)] {
            if d <= hi {
                return self.bool(true).int(d, lo, hi);
            }
            self.bool(false);
        }
        self.bits(u64::from(current), 32)
    }
    /// STANDARD.md's `serialize_sequence_relative`.
    fn sequence_relative(&mut self, previous: u16, current: u16) -> &mut Self {
        let b = u32::from(current) + if previous > current { 65536 } else { 0 };
        self.relative(u32::from(previous), b)
    }
}

/// A body: `value` in `int(0, 200)`, then `flag`.
#[derive(Default, Debug, PartialEq)]
struct Small {
    value: i64,
    flag: bool,
}

impl Body for Small {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.int("value", &mut self.value, 0, 200)?;
        s.bool("flag", &mut self.flag)
    }
}

/// A block message's body: 16 bits.
#[derive(Default)]
struct Tag {
    tag: u64,
}

impl Body for Tag {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.bits("tag", &mut self.tag, 16)
    }
}

/// A body whose reader refuses everything (yojimbo's `TestSerializeFailOnReadMessage`).
#[derive(Default)]
struct Fail;

impl Body for Fail {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        let kind = ErrorKind::InvalidArgument("refused".to_owned());
        Err(Error::new(kind, s.bit_position(), "nothing"))
    }
}

fn ch(kind: ChannelType, max_messages: u32, block: u32, fragment: u32, off: bool) -> ChannelConfig {
    ChannelConfig {
        kind,
        max_messages_per_packet: max_messages,
        max_block_size: block,
        block_fragment_size: fragment,
        disable_blocks: off,
    }
}

/// Three channels of both types (channel 2 without blocks), three message types: `Small`,
/// the block message `Tag`, and `Fail`. maxFragmentsPerBlock: channel 0 5000/1000 = 5 (3 bits),
/// channel 1 ceil(300/128) = 3.
fn mixed() -> Config {
    use ChannelType::{ReliableOrdered as R, UnreliableUnordered as U};
    Config {
        reliable: ReliableConfig::default(),
        channels: vec![
            ch(R, 8, 5000, 1000, false),
            ch(U, 5, 300, 128, false),
            ch(R, 8, 1024, 1024, true),
        ],
        message_types: vec![
            MessageType::new("Small", false, Arc::new(Typed::<Small>::new())),
            MessageType::new("Tag", true, Arc::new(Typed::<Tag>::new())),
            MessageType::new("Fail", false, Arc::new(Typed::<Fail>::new())),
        ],
    }
}

/// One channel, one message type (a block message): both elisions, and one fragment per block.
fn single() -> Config {
    Config {
        reliable: ReliableConfig::default(),
        channels: vec![ch(ChannelType::ReliableOrdered, 4, 100, 100, false)],
        message_types: vec![MessageType::new("Tag", true, Arc::new(Typed::<Tag>::new()))],
    }
}

fn small(w: &mut W, value: i64, flag: bool) {
    w.int(value, 0, 200).bool(flag);
}

fn value_of(trace: &bitlens_codec::Trace, path: &str) -> Value {
    trace
        .get(path)
        .unwrap_or_else(|| panic!("no field {path}"))
        .value
        .clone()
}

#[test]
fn three_channel_types_in_one_packet() {
    let cfg = mixed();
    let mut w = W::default();
    w.int(3, 0, 3); // three entries
    // channel 0, reliable-ordered: ids 10, 11, 15, then (type, body) pairs
    w.int(0, 0, 2).bool(false).bool(true).int(3, 1, 8);
    w.bits(10, 16)
        .sequence_relative(10, 11)
        .sequence_relative(11, 15);
    for (v, f) in [(1, true), (200, false), (7, true)] {
        w.int(0, 0, 2);
        small(&mut w, v, f);
    }
    // channel 1, unreliable-unordered: (type, body[, block]) interleaved, no ids
    w.int(1, 0, 2).bool(false).bool(true).int(2, 1, 5);
    w.int(1, 0, 2)
        .bits(0xbeef, 16)
        .int(3, 1, 300)
        .bytes(&[9, 8, 7]);
    w.int(0, 0, 2);
    small(&mut w, 42, false);
    // channel 2, reliable-ordered, no messages
    w.int(2, 0, 2).bool(false).bool(false);
    let bits = w.bit;

    let (r, trace) = packet::trace(&cfg, &w.bytes, 77);
    let p = r.unwrap();
    assert_eq!(p.bits, bits);
    assert_eq!(p.entries.len(), 3);
    let Content::Messages(ms) = &p.entries[0].content else {
        panic!()
    };
    assert_eq!(ms.iter().map(|m| m.id).collect::<Vec<_>>(), [10, 11, 15]);
    assert!(ms.iter().all(|m| m.id_on_wire && m.message_type == 0));
    let Content::Messages(us) = &p.entries[1].content else {
        panic!()
    };
    // Unreliable messages take the packet's sequence as their id.
    assert_eq!((us[0].id, us[0].id_on_wire), (77, false));
    assert_eq!(us[0].block.as_deref(), Some(&[9u8, 8, 7][..]));
    assert_eq!(us[1].block, None);
    assert_eq!(p.entries[2].content, Content::Nothing);
    // Field by field, with paths.
    assert_eq!(
        value_of(&trace, "entries[0].messages[1].body.value"),
        Value::Int(200)
    );
    assert_eq!(
        value_of(&trace, "entries[0].messages[2].body.flag"),
        Value::Bool(true)
    );
    assert_eq!(value_of(&trace, "entries[0].ids[2]"), Value::Int(15));
    assert_eq!(
        value_of(&trace, "entries[1].messages[0].body.tag"),
        Value::Int(0xbeef)
    );
    assert_eq!(
        value_of(&trace, "entries[1].messages[0].block_size"),
        Value::Int(3)
    );
    assert_eq!(
        value_of(&trace, "entries[1].messages[1].body.value"),
        Value::Int(42)
    );
    let f = trace.get("entries[1].channel").unwrap();
    assert_eq!((f.bits, f.range), (2, Some((0, 2))));
    // The crate's writer gives the encoder's bytes back.
    let mut buf = [0u8; 64];
    let n = bitlens_yojimbo::write::write(&cfg, &p, &mut buf).unwrap();
    assert_eq!(&buf[..n], &w.bytes[..]);
}

fn ids_packet(ids: &[u16]) -> W {
    let mut w = W::default();
    w.int(1, 0, 1)
        .bool(false)
        .bool(true)
        .int(ids.len() as i64, 1, 4);
    w.bits(u64::from(ids[0]), 16);
    for pair in ids.windows(2) {
        w.sequence_relative(pair[0], pair[1]);
    }
    for i in 0..ids.len() {
        w.bits(i as u64, 16);
    }
    w
}

fn read_ids(cfg: &Config, w: &W) -> (Vec<u16>, bitlens_codec::Trace) {
    let (r, trace) = packet::trace(cfg, &w.bytes, 0);
    let Content::Messages(ms) = &r.unwrap().entries[0].content else {
        panic!()
    };
    (ms.iter().map(|m| m.id).collect(), trace)
}

#[test]
fn message_ids_wrap_at_65536() {
    // 65534 -> 65535 -> 0 -> 1: each +1 across the wrap costs one bit.
    let w = ids_packet(&[65534, 65535, 0, 1]);
    let (ids, trace) = read_ids(&single(), &w);
    assert_eq!(ids, [65534, 65535, 0, 1]);
    for i in 1..4 {
        assert_eq!(trace.get(&format!("entries[0].ids[{i}]")).unwrap().bits, 1);
    }
    // A larger step across the wrap: 65000 -> 30 is +566 (tier 281..=4377: 5 flags, 13 bits).
    let w = ids_packet(&[65000, 30]);
    let (ids, trace) = read_ids(&single(), &w);
    assert_eq!(ids, [65000, 30]);
    assert_eq!(trace.get("entries[0].ids[1]").unwrap().bits, 5 + 13);
}

#[test]
fn every_relative_tier_reads() {
    // Differences at both ends of every tier: 1, 2..6, 7..23, 24..280, 281..4377, 4378..65535.
    for d in [1u32, 2, 6, 7, 23, 24, 280, 281, 4377, 4378, 65535] {
        let first = 60000u16;
        let next = (u32::from(first) + d) as u16;
        let w = ids_packet(&[first, next]);
        let (ids, _) = read_ids(&single(), &w);
        assert_eq!(ids, [first, next], "difference {d}");
    }
}

#[test]
fn absolute_relative_ids_read_as_the_code_reads_them() {
    // A writer may send the absolute 32-bit value: taken, 65536 off once, low 16 bits kept.
    let mut w = W::default();
    w.int(1, 0, 1)
        .bool(false)
        .bool(true)
        .int(2, 1, 4)
        .bits(10, 16);
    w.bits(0, 6).bits(70_000, 32); // six 0 flags, then the value
    w.bits(0, 16).bits(0, 16);
    let (ids, _) = read_ids(&single(), &w);
    assert_eq!(ids, [10, 4464]); // 70000 - 65536
    // An absolute value not above the previous id is refused (serialize 1.6 checks it).
    let mut w = W::default();
    w.int(1, 0, 1)
        .bool(false)
        .bool(true)
        .int(2, 1, 4)
        .bits(10, 16);
    w.bits(0, 6).bits(10, 32).bits(0, 32);
    let e = packet::read(&single(), &w.bytes, 0).unwrap_err();
    assert_eq!(e.field, "entries[0].ids[1].value");
    assert_eq!(e.bit, 1 + 1 + 1 + 2 + 16 + 6);
    assert!(matches!(
        e.kind,
        RefusalKind::Wire(ErrorKind::OutOfRange { value: 10, .. })
    ));
}

#[test]
fn blocks_on_an_unreliable_channel() {
    let cfg = mixed();
    // Two block messages of 1 and 300 (maxBlockSize) bytes, each aligned.
    let big: Vec<u8> = (0..300).map(|i| i as u8).collect();
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(1, 0, 2)
        .bool(false)
        .bool(true)
        .int(2, 1, 5);
    w.int(1, 0, 2).bits(1, 16).int(1, 1, 300).bytes(&[0xaa]);
    w.int(1, 0, 2).bits(2, 16).int(300, 1, 300).bytes(&big);
    let p = packet::read(&cfg, &w.bytes, 5).unwrap();
    let Content::Messages(ms) = &p.entries[0].content else {
        panic!()
    };
    assert_eq!(ms[0].block.as_deref(), Some(&[0xaa][..]));
    assert_eq!(ms[1].block.as_deref(), Some(&big[..]));
    // Block size 0 or past maxBlockSize: the serialize layer's range.
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(1, 0, 2)
        .bool(false)
        .bool(true)
        .int(1, 1, 5);
    w.int(1, 0, 2).bits(1, 16).bits(300, 9); // raw 300 = size 301
    let e = packet::read(&cfg, &w.bytes, 5).unwrap_err();
    assert_eq!(e.field, "entries[0].messages[0].block_size");
    assert!(matches!(
        e.kind,
        RefusalKind::Wire(ErrorKind::OutOfRange { value: 301, .. })
    ));
    // Non-zero bits before the aligned block.
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(1, 0, 2)
        .bool(false)
        .bool(true)
        .int(1, 1, 5);
    w.int(1, 0, 2)
        .bits(1, 16)
        .int(1, 1, 300)
        .bits(1, 1)
        .bytes(&[1]);
    let e = packet::read(&cfg, &w.bytes, 5).unwrap_err();
    assert_eq!(e.field, "entries[0].messages[0].block");
    assert!(matches!(
        e.kind,
        RefusalKind::Wire(ErrorKind::NonzeroPadding { .. })
    ));
}

#[test]
fn elisions_take_no_bits() {
    let cfg = single();
    // One channel: no index. One type: no type. maxFragmentsPerBlock 1: no count, no id.
    let mut w = W::default();
    w.int(1, 0, 1)
        .bool(true)
        .bits(513, 16)
        .int(4, 1, 100)
        .bytes(&[1, 2, 3, 4])
        .bits(0x1234, 16);
    let (r, trace) = packet::trace(&cfg, &w.bytes, 0);
    let p = r.unwrap();
    assert_eq!(p.bits, 1 + 1 + 16 + 7 + 7 + 32 + 16);
    assert!(trace.get("entries[0].channel").is_none());
    assert!(trace.get("entries[0].fragment.num_fragments").is_none());
    assert!(trace.get("entries[0].fragment.fragment_id").is_none());
    assert!(trace.get("entries[0].fragment.type").is_none());
    let Content::Fragment(f) = &p.entries[0].content else {
        panic!()
    };
    assert_eq!((f.message_id, f.num_fragments, f.fragment_id), (513, 1, 0));
    assert_eq!(f.head.as_ref().unwrap().message_type, 0);
    assert_eq!(
        value_of(&trace, "entries[0].fragment.body.tag"),
        Value::Int(0x1234)
    );
    // numFragments 1 on a channel with more: no fragment id either.
    let cfg = mixed();
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(true)
        .bits(7, 16)
        .int(1, 1, 5)
        .int(2, 1, 1000);
    w.bytes(&[5, 6]).int(1, 0, 2).bits(9, 16);
    let (r, trace) = packet::trace(&cfg, &w.bytes, 0);
    r.unwrap();
    assert!(trace.get("entries[0].fragment.fragment_id").is_none());
    assert_eq!(
        value_of(&trace, "entries[0].fragment.num_fragments"),
        Value::Int(1)
    );
}

#[test]
fn later_block_fragments_carry_no_type_or_body() {
    let cfg = mixed();
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(true)
        .bits(7, 16)
        .int(3, 1, 5)
        .int(2, 0, 2);
    w.int(1, 1, 1000).bytes(&[0xee]);
    let (r, trace) = packet::trace(&cfg, &w.bytes, 0);
    let p = r.unwrap();
    assert_eq!(p.bits, w.bit);
    let Content::Fragment(f) = &p.entries[0].content else {
        panic!()
    };
    assert_eq!((f.fragment_id, f.head.is_none()), (2, true));
    assert!(trace.get("entries[0].fragment.type").is_none());
}

/// (field, bit, kind) of a refused packet.
fn refused(cfg: &Config, w: &W) -> (String, usize, RefusalKind) {
    let fast = packet::read(cfg, &w.bytes, 0).unwrap_err();
    let (traced, trace) = packet::trace(cfg, &w.bytes, 0);
    assert_eq!(traced.unwrap_err(), fast);
    // The trace's verdict is the refusal, at its bit.
    assert_eq!(trace.error.as_ref().unwrap().bit(), fast.bit);
    (fast.field, fast.bit, fast.kind)
}

#[test]
fn obligation_too_many_channel_entries() {
    let mut w = W::default();
    w.bits(3, 2); // numChannels 2 (a 2-bit field): 3 entries
    let cfg = Config {
        channels: vec![ChannelConfig::new(ChannelType::ReliableOrdered); 2],
        ..single()
    };
    let (field, bit, kind) = refused(&cfg, &w);
    assert_eq!((field.as_str(), bit), ("num_entries", 0));
    assert_eq!(kind, RefusalKind::TooManyEntries { value: 3, max: 2 });
}

#[test]
fn obligation_channel_index_in_range() {
    let mut w = W::default();
    w.int(2, 0, 3)
        .int(0, 0, 2)
        .bool(false)
        .bool(false)
        .bits(3, 2); // second entry: channel 3
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!((field.as_str(), bit), ("entries[1].channel", 6));
    assert_eq!(kind, RefusalKind::ChannelIndex { value: 3, max: 2 });
}

#[test]
fn obligation_message_count_in_range() {
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(1, 0, 2)
        .bool(false)
        .bool(true)
        .bits(6, 3); // 7 messages, max 5
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!((field.as_str(), bit), ("entries[0].num_messages", 6));
    assert_eq!(kind, RefusalKind::MessageCount { value: 7, max: 5 });
}

#[test]
fn obligation_no_block_fragment_with_disable_blocks() {
    let mut w = W::default();
    w.int(1, 0, 3).int(2, 0, 2).bool(true).bits(0, 16);
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!((field.as_str(), bit), ("entries[0].block_message", 4));
    assert_eq!(kind, RefusalKind::BlocksDisabled { channel: 2 });
}

#[test]
fn obligation_fragment_id_below_count() {
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(true)
        .bits(7, 16)
        .int(3, 1, 5)
        .bits(3, 2);
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!(
        (field.as_str(), bit),
        ("entries[0].fragment.fragment_id", 2 + 2 + 1 + 16 + 3)
    );
    assert_eq!(
        kind,
        RefusalKind::FragmentId {
            value: 3,
            num_fragments: 3
        }
    );
}

#[test]
fn obligation_fragment_count_within_max_fragments_per_block() {
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(true)
        .bits(7, 16)
        .bits(6, 3); // 7 > 5
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!(
        (field.as_str(), bit),
        ("entries[0].fragment.num_fragments", 21)
    );
    assert_eq!(kind, RefusalKind::FragmentCount { value: 7, max: 5 });
    // maxFragmentsPerBlock rounds up: 300 / 128 is 3 fragments (2 bits), count 3 accepted.
    let cfg = mixed();
    assert_eq!(cfg.channels[1].max_fragments_per_block(), 3);
}

#[test]
fn obligation_fragment_zero_is_a_block_message() {
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(true)
        .bits(7, 16)
        .int(1, 1, 5)
        .int(1, 1, 1000);
    w.bytes(&[1]).int(0, 0, 2); // type 0, Small: not a block message
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!((field.as_str(), bit), ("entries[0].fragment.type", 48));
    assert_eq!(kind, RefusalKind::NotABlockMessage { message_type: 0 });
}

#[test]
fn obligation_a_failing_body_fails_the_whole_packet() {
    // Entry 0 is fine; entry 1's second message fails: nothing of the packet is returned.
    let mut w = W::default();
    w.int(2, 0, 3).int(2, 0, 2).bool(false).bool(false);
    w.int(0, 0, 2)
        .bool(false)
        .bool(true)
        .int(2, 1, 8)
        .bits(1, 16)
        .sequence_relative(1, 2);
    w.int(0, 0, 2);
    small(&mut w, 3, true);
    let fail_bit = w.bit;
    w.int(2, 0, 2);
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!(field, "entries[1].messages[1].body.nothing");
    assert_eq!(bit, fail_bit + 2);
    let RefusalKind::Body {
        message_type: 2, ..
    } = kind
    else {
        panic!("{kind:?}")
    };
    // A body's own out-of-range value is the same refusal, naming the body's field.
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(false)
        .bool(true)
        .int(1, 1, 8)
        .bits(1, 16);
    w.int(0, 0, 2).bits(255, 8); // value 255 > 200
    let (field, _, kind) = refused(&mixed(), &w);
    assert_eq!(field, "entries[0].messages[0].body.value");
    assert!(matches!(
        kind,
        RefusalKind::Body {
            error: ErrorKind::OutOfRange { value: 255, .. },
            ..
        }
    ));
}

#[test]
fn the_codes_own_refusals() {
    // A block fragment on an unreliable-unordered channel (read, then refused).
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(1, 0, 2)
        .bool(true)
        .bits(7, 16)
        .int(1, 1, 3)
        .int(1, 1, 128);
    w.bytes(&[1]).int(1, 0, 2).bits(0, 16);
    let (field, bit, kind) = refused(&mixed(), &w);
    assert_eq!((field.as_str(), bit), ("entries[0].block_message", 4));
    assert_eq!(kind, RefusalKind::BlockOnUnreliableChannel { channel: 1 });
    // A message type past the registered ones.
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(false)
        .bool(true)
        .int(1, 1, 8)
        .bits(1, 16)
        .bits(3, 2);
    let (field, _, kind) = refused(&mixed(), &w);
    assert_eq!(field, "entries[0].messages[0].type");
    assert!(matches!(
        kind,
        RefusalKind::Wire(ErrorKind::OutOfRange { value: 3, .. })
    ));
    // Cut short.
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(false)
        .bool(true)
        .int(2, 1, 8)
        .bits(1, 4);
    let (field, _, kind) = refused(&mixed(), &w);
    assert_eq!(field, "entries[0].ids");
    assert!(matches!(kind, RefusalKind::Wire(ErrorKind::PastEnd { .. })));
}

#[test]
fn what_the_code_accepts_and_the_standard_does_not_say() {
    let cfg = mixed();
    // Entries out of channel order, and the same channel twice.
    let mut w = W::default();
    w.int(3, 0, 3);
    for c in [2, 0, 0] {
        w.int(c, 0, 2).bool(false).bool(false);
    }
    let p = packet::read(&cfg, &w.bytes, 0).unwrap();
    assert_eq!(
        p.entries.iter().map(|e| e.channel).collect::<Vec<_>>(),
        [2, 0, 0]
    );
    // A block message type as an ordinary message on a reliable-ordered channel.
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(false)
        .bool(true)
        .int(1, 1, 8)
        .bits(1, 16);
    w.int(1, 0, 2).bits(5, 16);
    let p = packet::read(&cfg, &w.bytes, 0).unwrap();
    let Content::Messages(ms) = &p.entries[0].content else {
        panic!()
    };
    assert_eq!((ms[0].message_type, ms[0].block.is_none()), (1, true));
    // Garbage after the last bit read is not looked at.
    let mut w = W::default();
    w.int(0, 0, 3).bits(0xff, 6).bits(0xffff, 16);
    assert_eq!(packet::read(&cfg, &w.bytes, 0).unwrap().bits, 2);
}

/// reliable.io's canonical header, written by hand from its layout.
fn header(sequence: u16, ack: u16, ack_bits: u32) -> Vec<u8> {
    let mut prefix = 0u8;
    let mut tail = Vec::new();
    for i in 0..4 {
        let b = (ack_bits >> (8 * i)) as u8;
        if b != 0xff {
            prefix |= 2 << i;
            tail.push(b);
        }
    }
    let mut out = vec![];
    let d = sequence.wrapping_sub(ack);
    let mut ack_bytes = ack.to_le_bytes().to_vec();
    if d <= 255 {
        prefix |= 0x20;
        ack_bytes = vec![d as u8];
    }
    out.push(prefix);
    out.extend_from_slice(&sequence.to_le_bytes());
    out.extend(ack_bytes);
    out.extend(tail);
    out
}

fn fragment(sequence: u16, id: u8, count: u8, head: Option<&[u8]>, data: &[u8]) -> Vec<u8> {
    let mut out = vec![1];
    out.extend_from_slice(&sequence.to_le_bytes());
    out.extend([id, count - 1]);
    out.extend(head.unwrap_or(&[]));
    out.extend_from_slice(data);
    out
}

fn small_reliable() -> Config {
    Config {
        reliable: ReliableConfig {
            max_packet_size: 64,
            fragment_size: 16,
            max_fragments: 4,
        },
        ..mixed()
    }
}

fn refusal_of(payload: &[u8]) -> bitlens_yojimbo::Refusal {
    let mut rx = Receiver::new(Arc::new(small_reliable()), true).unwrap();
    let d = rx.receive(1, payload);
    let e = d.refusal().cloned().expect("refused");
    assert_eq!(d.header_trace.unwrap().error.is_some(), d.reliable.is_err());
    e
}

#[test]
fn reliable_header_and_fragment_refusals() {
    let h = header(5, 3, 0xffff_ff00);
    assert_eq!(h, [0x22, 5, 0, 2, 0]);
    let k = |p: &[u8]| {
        let e = refusal_of(p);
        (e.field, e.bit, e.kind)
    };
    assert_eq!(
        k(&[0x00, 1]).2,
        RefusalKind::ReliableTooShort {
            needed: 3,
            bytes: 2
        }
    );
    // Announces a 2-byte ack and a byte of ack_bits, has neither.
    let (f, _, kind) = k(&[0x02, 1, 0]);
    assert_eq!(
        (f.as_str(), kind),
        (
            "reliable.ack",
            RefusalKind::ReliableTooShort {
                needed: 6,
                bytes: 3
            }
        )
    );
    assert_eq!(
        k(&[0x03, 1, 0, 0]).2,
        RefusalKind::ReliableTooShort {
            needed: 5,
            bytes: 4
        }
    );
    assert_eq!(
        k(&[0x03, 1, 0, 0, 1]).2,
        RefusalKind::FragmentPrefix { prefix: 3 }
    );
    let (f, bit, kind) = k(&fragment(9, 0, 5, None, &[]));
    assert_eq!((f.as_str(), bit), ("reliable.num_fragments_minus_1", 32));
    assert_eq!(kind, RefusalKind::PacketFragmentCount { value: 5, max: 4 });
    let (f, _, kind) = k(&fragment(9, 2, 2, None, &[0]));
    assert_eq!(
        (f.as_str(), kind),
        (
            "reliable.fragment_id",
            RefusalKind::PacketFragmentId {
                value: 2,
                num_fragments: 2
            }
        )
    );
    let (f, _, kind) = k(&fragment(9, 0, 2, Some(&header(8, 3, 0)), &[0; 16]));
    assert_eq!(f, "reliable.packet.sequence");
    assert_eq!(
        kind,
        RefusalKind::FragmentSequence {
            fragment: 9,
            packet: 8
        }
    );
    // A 2-byte ack for a difference of 6 is valid alone, not inside fragment 0.
    let long = [0x00, 9, 0, 3, 0];
    let mut rx = Receiver::new(Arc::new(small_reliable()), false).unwrap();
    let d = rx.receive(0, &[&long[..], &[0]].concat());
    assert!(d.refusal().is_none(), "{:?}", d.refusal());
    assert_eq!(
        k(&fragment(9, 0, 2, Some(&long), &[0; 16])).2,
        RefusalKind::NonCanonicalHeader
    );
    let (f, _, kind) = k(&fragment(9, 0, 2, Some(&header(9, 3, 0)), &[0; 15]));
    assert_eq!(f, "reliable.data");
    assert_eq!(
        kind,
        RefusalKind::FragmentSize {
            bytes: 15,
            fragment_size: 16,
            last: false
        }
    );
    let kind = k(&fragment(9, 1, 2, None, &[0; 17])).2;
    assert_eq!(
        kind,
        RefusalKind::FragmentSize {
            bytes: 17,
            fragment_size: 16,
            last: true
        }
    );
    // No connection packet after the header; a connection packet over max_packet_size.
    let e = refusal_of(&header(1, 0, 0));
    assert_eq!(e.kind, RefusalKind::EmptyPacket);
    let big = [header(1, 0, 0), vec![0; 65]].concat();
    assert_eq!(
        refusal_of(&big).kind,
        RefusalKind::PacketTooLarge { bytes: 65, max: 64 }
    );
}

#[test]
fn packets_reassemble_across_datagrams_in_any_order() {
    let cfg = Arc::new(small_reliable());
    // A 20-byte connection packet: one entry on channel 0 with messages... simply 2 empty
    // entries then garbage the reader does not look at.
    let mut w = W::default();
    w.int(2, 0, 3)
        .int(0, 0, 2)
        .bool(false)
        .bool(false)
        .int(1, 0, 2)
        .bool(false)
        .bool(false);
    let mut body = w.bytes.clone();
    body.resize(20, 0xab);
    let h = header(40, 39, 0xffff_fffe);
    let f0 = fragment(40, 0, 2, Some(&h), &body[..16]);
    let f1 = fragment(40, 1, 2, None, &body[16..]);
    let mut rx = Receiver::new(cfg, true).unwrap();
    let d = rx.receive(7, &f1);
    assert!(d.packet.is_none() && d.notes.is_empty());
    let d = rx.receive(8, &f1);
    assert_eq!(
        d.notes,
        [Note::DuplicateFragment {
            sequence: 40,
            fragment_id: 1
        }]
    );
    let d = rx.receive(9, &f0);
    let Ok(Reliable::Fragment(f)) = d.reliable else {
        panic!()
    };
    assert_eq!(f.header.unwrap().ack_bits, 0xffff_fffe);
    let p = d.packet.unwrap();
    assert_eq!(
        (p.sequence, p.bytes, p.datagrams.clone()),
        (40, 20, vec![7, 9])
    );
    assert_eq!(p.result.unwrap().entries.len(), 2);
    // The packet is received: its fragments and its sequence are repeats now.
    let d = rx.receive(10, &f0);
    assert_eq!(
        d.notes,
        [Note::FragmentOfReceivedPacket {
            sequence: 40,
            fragment_id: 0
        }]
    );
    let d = rx.receive(11, &[header(40, 39, 0), body].concat());
    assert_eq!(d.notes, [Note::DuplicatePacket { sequence: 40 }]);
    assert!(d.packet.unwrap().duplicate);
}

#[test]
fn inconsistent_and_missing_packet_fragments_are_reported() {
    let mut rx = Receiver::new(Arc::new(small_reliable()), false).unwrap();
    let h = header(3, 2, 0);
    rx.receive(1, &fragment(3, 0, 3, Some(&h), &[0; 16]));
    let d = rx.receive(2, &fragment(3, 1, 2, None, &[0; 4]));
    assert!(matches!(
        &d.notes[..],
        [Note::InconsistentFragment {
            sequence: 3,
            fragment_id: 1,
            ..
        }]
    ));
    assert!(d.notes[0].is_fault());
    let d = rx.receive(3, &fragment(3, 0, 3, Some(&h), &[1; 16]));
    assert!(matches!(
        &d.notes[..],
        [Note::InconsistentFragment { fragment_id: 0, .. }]
    ));
    assert_eq!(
        rx.finish(),
        [Note::PacketIncomplete {
            sequence: 3,
            num_fragments: 3,
            received: vec![0],
            datagrams: vec![1]
        }]
    );
}

#[test]
fn pending_packets_are_bounded() {
    let mut rx = Receiver::new(Arc::new(small_reliable()), false).unwrap();
    let n = bitlens_yojimbo::receiver::PENDING_PACKETS as u16;
    let mut given_up = 0;
    for s in 0..n + 10 {
        let d = rx.receive(u64::from(s), &fragment(s, 1, 2, None, &[0; 3]));
        given_up += d
            .notes
            .iter()
            .filter(|n| matches!(n, Note::PacketIncomplete { .. }))
            .count();
    }
    assert_eq!(given_up, 10);
    assert_eq!(rx.finish().len(), usize::from(n));
}

/// A connection packet with one block fragment of message `id` on channel 0 of `mixed()`.
fn block_fragment(id: u16, fragment_id: u32, count: u32, data: &[u8], tag: u16) -> Vec<u8> {
    let mut w = W::default();
    w.int(1, 0, 3)
        .int(0, 0, 2)
        .bool(true)
        .bits(u64::from(id), 16)
        .int(count.into(), 1, 5);
    if count > 1 {
        w.int(fragment_id.into(), 0, i64::from(count) - 1);
    }
    w.int(data.len() as i64, 1, 1000).bytes(data);
    if fragment_id == 0 {
        w.int(1, 0, 2).bits(u64::from(tag), 16);
    }
    w.bytes
}

fn regular(sequence: u16, connection: &[u8]) -> Vec<u8> {
    [header(sequence, 0, 0), connection.to_vec()].concat()
}

#[test]
fn blocks_reassemble_across_datagrams_once_whole() {
    let mut rx = Receiver::new(Arc::new(mixed()), true).unwrap();
    let data: Vec<u8> = (0..2300u32).map(|i| (i * 7) as u8).collect();
    let parts = [&data[..1000], &data[1000..2000], &data[2000..]];
    let d = rx.receive(20, &regular(1, &block_fragment(9, 2, 3, parts[2], 0)));
    assert!(d.blocks.is_empty());
    let d = rx.receive(21, &regular(2, &block_fragment(9, 0, 3, parts[0], 0x77)));
    assert!(d.blocks.is_empty());
    // A resend of fragment 0 in a later packet: a repeat.
    let d = rx.receive(22, &regular(3, &block_fragment(9, 0, 3, parts[0], 0x77)));
    assert_eq!(
        d.notes,
        [Note::DuplicateBlockFragment {
            channel: 0,
            message_id: 9,
            fragment_id: 0
        }]
    );
    let d = rx.receive(23, &regular(4, &block_fragment(9, 1, 3, parts[1], 0)));
    assert_eq!(d.blocks.len(), 1);
    let b = &d.blocks[0];
    assert_eq!((b.channel, b.message_id, b.message_type), (0, 9, 1));
    assert_eq!(b.data, data);
    assert_eq!(b.datagrams, [20, 21, 23]);
    assert_eq!(b.body.data, 0x77u16.to_le_bytes());
    // Later copies of its fragments are resends of a complete block.
    let d = rx.receive(24, &regular(5, &block_fragment(9, 2, 3, parts[2], 0)));
    assert_eq!(
        d.notes,
        [Note::FragmentOfCompleteBlock {
            channel: 0,
            message_id: 9,
            fragment_id: 2
        }]
    );
    assert!(rx.finish().is_empty());
}

#[test]
fn inconsistent_and_missing_block_fragments_are_reported() {
    let mut rx = Receiver::new(Arc::new(mixed()), false).unwrap();
    rx.receive(1, &regular(1, &block_fragment(4, 0, 3, &[1; 1000], 5)));
    // Another fragment count than the block's first fragment.
    let d = rx.receive(2, &regular(2, &block_fragment(4, 1, 2, &[1; 10], 0)));
    assert!(matches!(
        &d.notes[..],
        [Note::InconsistentBlockFragment {
            message_id: 4,
            fragment_id: 1,
            ..
        }]
    ));
    // A non-last fragment shorter than blockFragmentSize.
    let d = rx.receive(3, &regular(3, &block_fragment(4, 1, 3, &[1; 999], 0)));
    assert!(matches!(
        &d.notes[..],
        [Note::InconsistentBlockFragment { fragment_id: 1, .. }]
    ));
    // Other bytes for a fragment already held.
    let d = rx.receive(4, &regular(4, &block_fragment(4, 0, 3, &[2; 1000], 5)));
    assert!(matches!(
        &d.notes[..],
        [Note::InconsistentBlockFragment { fragment_id: 0, .. }]
    ));
    // The last fragment may end exactly at maxBlockSize (5000).
    let d = rx.receive(5, &regular(5, &block_fragment(6, 4, 5, &[0; 1000], 0)));
    assert!(d.notes.is_empty(), "{:?}", d.notes);
    let notes = rx.finish();
    assert_eq!(notes.len(), 2);
    assert!(
        matches!(&notes[0], Note::BlockIncomplete { message_id: 4, num_fragments: 3, received, .. } if received == &[0, 1])
    );
}

#[test]
fn pending_blocks_are_bounded() {
    let mut rx = Receiver::new(Arc::new(mixed()), false).unwrap();
    let n = bitlens_yojimbo::receiver::PENDING_BLOCKS as u16;
    let mut given_up = 0;
    for id in 0..n + 3 {
        let d = rx.receive(
            u64::from(id),
            &regular(id, &block_fragment(id, 1, 3, &[0; 1000], 0)),
        );
        given_up += d
            .notes
            .iter()
            .filter(|n| matches!(n, Note::BlockIncomplete { .. }))
            .count();
    }
    assert_eq!(given_up, 3);
    assert_eq!(rx.finish().len(), usize::from(n));
}

#[test]
fn configurations_past_the_limits_are_refused() {
    let mut cfg = mixed();
    cfg.channels[1].max_messages_per_packet = 0;
    assert!(Receiver::new(Arc::new(cfg), false).is_err());
    let mut cfg = mixed();
    cfg.channels[0].max_block_size = bitlens_yojimbo::config::MAX_BLOCK_SIZE + 1;
    let e = Receiver::new(Arc::new(cfg), false).err().unwrap();
    assert!(e.to_string().contains("channel 0 max_block_size"), "{e}");
    let mut cfg = mixed();
    cfg.channels = vec![ChannelConfig::new(ChannelType::ReliableOrdered); 65];
    assert!(Receiver::new(Arc::new(cfg), false).is_err());
    let mut cfg = mixed();
    cfg.message_types.clear();
    assert!(Receiver::new(Arc::new(cfg), false).is_err());
}

#[test]
fn a_block_fragment_past_max_block_size_is_reported() {
    // maxBlockSize 2500 in fragments of 1000: maxFragmentsPerBlock rounds up to 3 (2 bits), and
    // a full third fragment would end at byte 3000 (yojimbo: CHANNEL_ERROR_DESYNC).
    let mut cfg = single();
    cfg.channels[0].max_block_size = 2500;
    cfg.channels[0].block_fragment_size = 1000;
    let mut w = W::default();
    w.int(1, 0, 1)
        .bool(true)
        .bits(3, 16)
        .int(3, 1, 3)
        .int(2, 0, 2)
        .int(1000, 1, 1000);
    w.bytes(&[0; 1000]);
    let mut rx = Receiver::new(Arc::new(cfg), false).unwrap();
    let d = rx.receive(1, &regular(1, &w.bytes));
    assert!(d.refusal().is_none());
    let [
        Note::InconsistentBlockFragment {
            message_id: 3,
            fragment_id: 2,
            why,
            ..
        },
    ] = &d.notes[..]
    else {
        panic!("{:?}", d.notes)
    };
    assert!(why.contains("past maxBlockSize 2500"), "{why}");
    assert!(rx.finish().is_empty());
}

/// A game's derived message: its fields are the body.
#[derive(bitlens_codec::BitPacked, Debug, Default, PartialEq)]
struct Player {
    #[bitlens(range = 0..=100)]
    health: i32,
    alive: bool,
}

#[test]
fn a_derived_type_is_a_message_body() {
    let cfg = Config {
        reliable: ReliableConfig::default(),
        channels: vec![ChannelConfig::new(ChannelType::UnreliableUnordered)],
        message_types: vec![MessageType::new(
            "Player",
            false,
            Arc::new(bitlens_yojimbo::Derived::<Player>::new()),
        )],
    };
    let mut w = W::default();
    w.int(1, 0, 1).bool(false).bool(true).int(2, 1, 256);
    w.int(73, 0, 100).bool(true).int(5, 0, 100).bool(false);
    let (r, trace) = packet::trace(&cfg, &w.bytes, 9);
    let p = r.unwrap();
    assert_eq!(p.bits, w.bit);
    assert_eq!(
        value_of(&trace, "entries[0].messages[0].body.health"),
        Value::Int(73)
    );
    assert_eq!(
        value_of(&trace, "entries[0].messages[1].body.alive"),
        Value::Bool(false)
    );
    let f = trace.get("entries[0].messages[1].body.health").unwrap();
    assert_eq!(
        (f.bit, f.bits, f.range),
        (1 + 1 + 1 + 8 + 8, 7, Some((0, 100)))
    );
    // Its range is the reader's: 101 is refused, naming the body's field.
    let mut w = W::default();
    w.int(1, 0, 1)
        .bool(false)
        .bool(true)
        .int(1, 1, 256)
        .bits(101, 7)
        .bool(true);
    let e = packet::read(&cfg, &w.bytes, 9).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.bit),
        ("entries[0].messages[0].body.health", 11)
    );
    assert!(matches!(
        e.kind,
        RefusalKind::Body {
            error: ErrorKind::OutOfRange { value: 101, .. },
            ..
        }
    ));
}

#[test]
fn pending_bytes_are_bounded_and_connections_too() {
    use bitlens_yojimbo::receiver::PENDING_PACKET_BYTES;
    // Packets of 1 MiB (fragments of 64 KiB): the pending bytes stay within the budget.
    let cfg = Config {
        reliable: ReliableConfig {
            max_packet_size: 1 << 20,
            fragment_size: 65_536,
            max_fragments: 16,
        },
        ..mixed()
    };
    let mut rx = Receiver::new(Arc::new(cfg.clone()), false).unwrap();
    let chunk = vec![0u8; 65_536];
    let per_packet = PENDING_PACKET_BYTES / 65_536;
    let mut given_up = 0;
    for s in 0..(per_packet as u16 + 3) {
        let d = rx.receive(u64::from(s), &fragment(s, 1, 16, None, &chunk));
        given_up += d
            .notes
            .iter()
            .filter(|n| matches!(n, Note::PacketIncomplete { .. }))
            .count();
    }
    assert_eq!(given_up, 3);
    assert_eq!(rx.finish().len(), per_packet);
    // Connections: the least recently used is given up, with what it held.
    let max = bitlens_yojimbo::connections::MAX_CONNECTIONS;
    let mut conns = bitlens_yojimbo::Connections::new(Arc::new(cfg), false).unwrap();
    for k in 0..max as u32 + 1 {
        conns.receive(&k, u64::from(k), &fragment(1, 1, 2, None, &[0; 3]));
        if k == 1 {
            // key 0 used again: key 1 is the oldest now
            conns.receive(&0, 0, &fragment(2, 1, 2, None, &[0; 3]));
        }
    }
    assert_eq!(conns.len(), max);
    let gone = conns.take_evicted();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].0, 1);
    assert!(matches!(
        &gone[0].1[..],
        [Note::PacketIncomplete { sequence: 1, .. }]
    ));
    assert_eq!(conns.end(&0).unwrap().len(), 2);
    assert_eq!(conns.finish().len(), max - 1);
    assert!(conns.is_empty());
}
