//! Writes a [`ConnectionPacket`] back to the wire (bodies as the bits they were read as): what
//! the fuzz harness round-trips, and what a proxy re-encodes after changing a message.

use bitlens_codec::{Error, ErrorKind, Result, Stream, WriteStream};

use crate::config::{ChannelType, Config};
use crate::packet::{Bits, BlockFragment, ConnectionPacket, Content, Message, sequence_relative};

fn invalid(why: String, s: &WriteStream<'_>, name: &str) -> Error {
    Error::new(ErrorKind::InvalidArgument(why), s.bit_position(), name)
}

fn raw(s: &mut WriteStream<'_>, name: &str, bits: &Bits) -> Result<()> {
    let mut i = 0;
    while i < bits.len {
        let n = (bits.len - i).min(32);
        let mut v = 0u64;
        for k in 0..n {
            v |= u64::from(bits.get(i + k)) << k;
        }
        s.bits(name, &mut v, n as u32)?;
        i += n;
    }
    Ok(())
}

fn int(s: &mut WriteStream<'_>, name: &str, v: i64, min: i64, max: i64) -> Result<()> {
    let mut v = v;
    s.int(name, &mut v, min, max)
}

fn type_and_body(s: &mut WriteStream<'_>, cfg: &Config, t: u32, body: &Bits) -> Result<()> {
    let max_type = cfg.max_message_type();
    if i64::from(t) > max_type {
        return Err(invalid(
            format!("message type {t} not registered"),
            s,
            "type",
        ));
    }
    if max_type > 0 {
        int(s, "type", i64::from(t), 0, max_type)?;
    }
    raw(s, "body", body)
}

fn messages(s: &mut WriteStream<'_>, cfg: &Config, ch: usize, ms: &[Message]) -> Result<()> {
    let cc = cfg.channels[ch];
    let n = ms.len() as i64;
    int(
        s,
        "num_messages",
        n,
        1,
        i64::from(cc.max_messages_per_packet),
    )?;
    match cc.kind {
        ChannelType::ReliableOrdered => {
            let mut first = u64::from(ms[0].id);
            s.bits("ids", &mut first, 16)?;
            for w in ms.windows(2) {
                let mut id = w[1].id;
                sequence_relative(s, "ids", w[0].id, &mut id)?;
            }
            for m in ms {
                type_and_body(s, cfg, m.message_type, &m.body)?;
            }
        }
        ChannelType::UnreliableUnordered => {
            for m in ms {
                type_and_body(s, cfg, m.message_type, &m.body)?;
                let block = cfg.message_types[m.message_type as usize].block;
                match (&m.block, block) {
                    (Some(b), true) => {
                        let size = b.len() as i64;
                        int(s, "block_size", size, 1, i64::from(cc.max_block_size))?;
                        let mut b = b.clone();
                        s.bytes("block", &mut b)?;
                    }
                    (None, false) => {}
                    _ => {
                        let why = "a block exactly on block message types".to_owned();
                        return Err(invalid(why, s, "block"));
                    }
                }
            }
        }
    }
    Ok(())
}

fn fragment(s: &mut WriteStream<'_>, cfg: &Config, ch: usize, f: &BlockFragment) -> Result<()> {
    let cc = cfg.channels[ch];
    let mut id = u64::from(f.message_id);
    s.bits("message_id", &mut id, 16)?;
    let max = i64::from(cc.max_fragments_per_block());
    let count = i64::from(f.num_fragments);
    if max > 1 {
        int(s, "num_fragments", count, 1, max)?;
    } else if count != 1 {
        return Err(invalid(format!("{count} fragments"), s, "num_fragments"));
    }
    let fid = i64::from(f.fragment_id);
    if count > 1 {
        int(s, "fragment_id", fid, 0, count - 1)?;
    } else if fid != 0 {
        return Err(invalid(format!("fragment {fid} of 1"), s, "fragment_id"));
    }
    let size = f.data.len() as i64;
    int(
        s,
        "fragment_size",
        size,
        1,
        i64::from(cc.block_fragment_size),
    )?;
    let mut data = f.data.clone();
    s.bytes("data", &mut data)?;
    match (&f.head, fid) {
        (Some(h), 0) => type_and_body(s, cfg, h.message_type, &h.body),
        (None, 1..) => Ok(()),
        _ => Err(invalid(
            "a head exactly on fragment 0".to_owned(),
            s,
            "head",
        )),
    }
}

/// Writes `packet` into `buf` under `cfg`; the bytes used.
///
/// # Errors
/// A value the configuration cannot carry (a channel, count, type or size out of its range,
/// two equal consecutive ids), a buffer too small.
pub fn write(cfg: &Config, packet: &ConnectionPacket, buf: &mut [u8]) -> Result<usize> {
    let mut s = WriteStream::new(buf);
    let channels = cfg.channels.len() as i64;
    int(
        &mut s,
        "num_entries",
        packet.entries.len() as i64,
        0,
        channels,
    )?;
    for e in &packet.entries {
        if e.channel >= cfg.channels.len() {
            return Err(invalid(format!("channel {}", e.channel), &s, "channel"));
        }
        if channels > 1 {
            int(&mut s, "channel", e.channel as i64, 0, channels - 1)?;
        }
        let mut block = matches!(e.content, Content::Fragment(_));
        s.bool("block_message", &mut block)?;
        match &e.content {
            Content::Nothing => s.bool("has_messages", &mut false)?,
            Content::Messages(ms) if ms.is_empty() => s.bool("has_messages", &mut false)?,
            Content::Messages(ms) => {
                s.bool("has_messages", &mut true)?;
                messages(&mut s, cfg, e.channel, ms)?;
            }
            Content::Fragment(f) => fragment(&mut s, cfg, e.channel, f)?,
        }
    }
    Ok(s.finish())
}
