//! The fuzz harness of the yojimbo layer (target `yojimbo`; the stable test replays
//! `corpus/yojimbo` through the same function).
//!
//! The first byte picks one of [`configs`] and the mode. Hostile mode: the rest is cut into
//! netcode payloads (a length byte, then that many bytes, times 4) fed to a traced and an
//! untraced [`Receiver`] of that configuration, which must agree, and read as a bare
//! connection packet; nothing may panic, and every refusal's bit lies within the data read.
//! Round-trip mode: the rest drives a generator of well-formed connection packets under that
//! configuration (several channel types, id wrap, blocks on unreliable channels, fragments);
//! each is written, must read back equal, and must write back to the same bytes.

use std::sync::Arc;

use bitlens_codec::{Result, Stream, WriteStream};

use crate::config::{
    Body, ChannelConfig, ChannelType, Config, MessageType, NoBody, ReliableConfig, Typed,
};
use crate::packet::{
    self, Bits, BlockFragment, BlockHead, ConnectionPacket, Content, Entry, Message,
};
use crate::receiver::Receiver;
use crate::write;

/// A small body for the fuzz configurations: `int(value, 0, 1000)`, then a bool.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Small {
    /// 0..=1000.
    pub value: i64,
    /// A flag.
    pub flag: bool,
}

impl Body for Small {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.int("value", &mut self.value, 0, 1000)?;
        s.bool("flag", &mut self.flag)
    }
}

/// A 16-bit body (as the yojimbo samples' `sequence`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seq16 {
    /// The value.
    pub sequence: u64,
}

impl Body for Seq16 {
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.bits("sequence", &mut self.sequence, 16)
    }
}

fn channel(
    kind: ChannelType,
    max_messages: u32,
    block: u32,
    fragment: u32,
    off: bool,
) -> ChannelConfig {
    ChannelConfig {
        kind,
        max_messages_per_packet: max_messages,
        max_block_size: block,
        block_fragment_size: fragment,
        disable_blocks: off,
    }
}

/// The configurations the harness runs under: (0) three channels, reliable-ordered,
/// unreliable-unordered and reliable-ordered with blocks disabled, four message types (one a
/// block message, one bodiless); (1) one reliable channel and one message type (both elisions),
/// a block message; (2) the yojimbo soak sample's channels and types (bodies `Seq16`).
pub fn configs() -> Vec<Config> {
    use ChannelType::{ReliableOrdered as R, UnreliableUnordered as U};
    let reliable = ReliableConfig {
        max_packet_size: 4096,
        fragment_size: 256,
        max_fragments: 16,
    };
    let small = || Arc::new(Typed::<Small>::new());
    let seq = || Arc::new(Typed::<Seq16>::new());
    vec![
        Config {
            reliable,
            channels: vec![
                channel(R, 64, 1000, 100, false),
                channel(U, 16, 300, 100, false),
                channel(R, 8, 1024, 1024, true),
            ],
            message_types: vec![
                MessageType::new("small", false, small()),
                MessageType::new("block", true, seq()),
                MessageType::new("empty", false, Arc::new(NoBody)),
                MessageType::new("seq", false, seq()),
            ],
        },
        Config {
            reliable,
            channels: vec![channel(R, 256, 64, 64, false)],
            message_types: vec![MessageType::new("only", true, small())],
        },
        Config {
            reliable: ReliableConfig {
                max_packet_size: 16384,
                fragment_size: 1024,
                max_fragments: 16,
            },
            channels: vec![
                channel(U, 256, 8192, 1024, false),
                channel(R, 256, 10240, 1024, false),
            ],
            message_types: vec![
                MessageType::new("TestMessage", false, seq()),
                MessageType::new("TestBlockMessage", true, seq()),
                MessageType::new("TestSerializeFailOnReadMessage", false, Arc::new(NoBody)),
                MessageType::new("TestExhaust", false, Arc::new(NoBody)),
            ],
        },
    ]
}

/// The harness: hostile bytes or a generated round trip, by the first byte.
pub fn yojimbo(data: &[u8]) {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let configs = configs();
    let cfg = &configs[usize::from(head >> 1) % configs.len()];
    if head & 1 == 0 {
        hostile(cfg, rest);
    } else {
        roundtrip(cfg, rest);
    }
}

/// Hostile bytes: nothing panics; traced and untraced reads agree; refusals lie within the data.
pub fn hostile(cfg: &Config, data: &[u8]) {
    let cfg = Arc::new(cfg.clone());
    let (fast, traced, trace) = packet_pair(&cfg, data);
    // Traces give their storage back, as a tool reading datagram after datagram does.
    trace.recycle();
    assert_eq!(fast, traced, "traced and untraced reads disagree");
    if let Err(e) = &fast {
        assert!(e.bit <= data.len() * 8, "refusal past the data: {e}");
    }
    let mut a = Receiver::new(cfg.clone(), false).expect("fuzz configurations are valid");
    let mut b = Receiver::new(cfg, true).expect("fuzz configurations are valid");
    let mut rest = data;
    let mut n = 0u64;
    while rest.len() >= 2 {
        let (len, tail) = rest.split_at(2);
        let len = usize::from(u16::from_le_bytes([len[0], len[1]])).min(tail.len());
        let (payload, tail) = tail.split_at(len);
        let x = a.receive(n, payload);
        let y = b.receive(n, payload);
        assert_eq!(x.reliable, y.reliable);
        assert_eq!(x.notes, y.notes);
        assert_eq!(x.blocks, y.blocks);
        assert_eq!(
            x.packet.as_ref().map(|p| &p.result),
            y.packet.as_ref().map(|p| &p.result)
        );
        if let Some(t) = y.header_trace {
            t.recycle();
        }
        if let Some(t) = y.packet.and_then(|p| p.trace) {
            t.recycle();
        }
        rest = tail;
        n += 1;
    }
    assert_eq!(a.finish(), b.finish());
}

type Read = std::result::Result<ConnectionPacket, crate::error::Refusal>;

fn packet_pair(cfg: &Config, data: &[u8]) -> (Read, Read, bitlens_codec::Trace) {
    let fast = packet::read(cfg, data, 7);
    let (traced, trace) = packet::trace(cfg, data, 7);
    (fast, traced, trace)
}

/// Draws numbers from the fuzz input (zeros once it runs out).
struct Draw<'a> {
    data: &'a [u8],
}

impl Draw<'_> {
    fn u32(&mut self) -> u32 {
        let mut v = [0u8; 4];
        let n = self.data.len().min(4);
        v[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        u32::from_le_bytes(v)
    }
    /// 0..n (n >= 1).
    fn below(&mut self, n: u32) -> u32 {
        self.u32() % n.max(1)
    }
    fn byte(&mut self) -> u8 {
        let b = self.data.first().copied().unwrap_or(0);
        self.data = self.data.get(1..).unwrap_or(&[]);
        b
    }
}

fn body_bits(cfg: &Config, t: u32, d: &mut Draw<'_>) -> Bits {
    let mut buf = [0u8; 16];
    let mut s = WriteStream::new(&mut buf);
    let name = cfg.message_types[t as usize].name.as_str();
    let r = match name {
        "small" | "only" => Small {
            value: i64::from(d.below(1001)),
            flag: d.byte() & 1 == 1,
        }
        .serialize(&mut s),
        "block" | "seq" | "TestMessage" | "TestBlockMessage" => Seq16 {
            sequence: u64::from(d.u32() as u16),
        }
        .serialize(&mut s),
        _ => Ok(()),
    };
    r.expect("a generated body fits 16 bytes");
    let bits = s.bits_written();
    s.finish();
    Bits::copy(&buf, 0, bits)
}

fn bytes(d: &mut Draw<'_>, n: usize) -> Vec<u8> {
    (0..n).map(|_| d.byte()).collect()
}

/// Generates one well-formed connection packet under `cfg` from the input.
pub fn generate(cfg: &Config, data: &[u8], sequence: u16) -> ConnectionPacket {
    let mut d = Draw { data };
    let types = cfg.message_types.len() as u32;
    let block_types: Vec<u32> = (0..types)
        .filter(|&t| cfg.message_types[t as usize].block)
        .collect();
    let n = d.below(cfg.channels.len() as u32 + 1);
    let mut entries = Vec::new();
    for _ in 0..n {
        let channel = d.below(cfg.channels.len() as u32) as usize;
        let cc = cfg.channels[channel];
        let fragment = cc.kind == ChannelType::ReliableOrdered
            && !cc.disable_blocks
            && !block_types.is_empty()
            && d.below(4) == 0;
        let content = if fragment {
            let num = 1 + d.below(cc.max_fragments_per_block());
            let id = d.below(num);
            let size = 1 + d.below(cc.block_fragment_size.min(40)) as usize;
            let head = (id == 0).then(|| {
                let t = block_types[d.below(block_types.len() as u32) as usize];
                BlockHead {
                    message_type: t,
                    body: body_bits(cfg, t, &mut d),
                }
            });
            Content::Fragment(BlockFragment {
                message_id: d.u32() as u16,
                num_fragments: num,
                fragment_id: id,
                data: bytes(&mut d, size),
                head,
            })
        } else {
            let count = d.below(cc.max_messages_per_packet.min(6) + 1);
            let mut id = d.u32() as u16;
            let mut messages = Vec::new();
            for i in 0..count {
                if i > 0 {
                    // Mostly +1, sometimes a larger step, sometimes across the wrap.
                    let step = match d.below(4) {
                        0 => 1 + d.below(65535),
                        _ => 1 + d.below(6),
                    };
                    id = id.wrapping_add(step as u16);
                }
                let t = d.below(types);
                let reliable = cc.kind == ChannelType::ReliableOrdered;
                let block = (!reliable && cfg.message_types[t as usize].block).then(|| {
                    let n = 1 + d.below(cc.max_block_size.min(24)) as usize;
                    bytes(&mut d, n)
                });
                messages.push(Message {
                    id: if reliable { id } else { sequence },
                    id_on_wire: reliable,
                    message_type: t,
                    body: body_bits(cfg, t, &mut d),
                    block,
                });
            }
            if messages.is_empty() {
                Content::Nothing
            } else {
                Content::Messages(messages)
            }
        };
        entries.push(Entry { channel, content });
    }
    ConnectionPacket { entries, bits: 0 }
}

/// A generated packet writes, reads back equal, and writes back to the same bytes.
pub fn roundtrip(cfg: &Config, data: &[u8]) {
    let sequence = 4242;
    let mut packet = generate(cfg, data, sequence);
    let mut buf = vec![0u8; 8192];
    let n = write::write(cfg, &packet, &mut buf).expect("a generated packet writes");
    let back = packet::read(cfg, &buf[..n], sequence).expect("a written packet reads back");
    packet.bits = back.bits;
    assert_eq!(back, packet, "read back differs");
    assert!(
        n == back.bits.div_ceil(8),
        "{n} bytes for {} bits",
        back.bits
    );
    let (traced, trace) = packet::trace(cfg, &buf[..n], sequence);
    trace.recycle();
    assert_eq!(traced.as_ref(), Ok(&back));
    let mut again = vec![0u8; 8192];
    let m = write::write(cfg, &back, &mut again).expect("a read packet writes");
    assert_eq!(&again[..m], &buf[..n], "re-encoding differs");
}
