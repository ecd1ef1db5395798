//! reliable.io's packet header and fragment header (reliable 1.4.0, as yojimbo 1.9.1 vendors
//! it), read field by field through a codec [`Stream`] (bytes little-endian: on a byte boundary
//! the codec's least-significant-first bits are the same thing).

use bitlens_codec::{ErrorKind, Stream};

use crate::config::ReliableConfig;
use crate::error::{Refusal, RefusalKind};

/// Bytes of a fragment header before fragment 0's packet header.
pub const FRAGMENT_HEADER_BYTES: usize = 5;
/// The largest regular packet header.
pub const MAX_HEADER_BYTES: usize = 9;

/// A regular packet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The packet's sequence.
    pub sequence: u16,
    /// The newest sequence the sender has received.
    pub ack: u16,
    /// Bit i: `ack - i` was received (bytes left out are 0xFF).
    pub ack_bits: u32,
    /// Bytes the header took.
    pub bytes: usize,
}

/// A fragment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentHeader {
    /// The whole packet's sequence.
    pub sequence: u16,
    /// This fragment, from 0.
    pub fragment_id: u32,
    /// How many fragments the packet has.
    pub num_fragments: u32,
    /// On fragment 0: the whole packet's regular header.
    pub header: Option<Header>,
    /// Where the fragment data starts, in bytes.
    pub data_start: usize,
}

/// The reliable.io part of one netcode payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reliable {
    /// A regular packet: the connection packet follows the header.
    Regular(Header),
    /// One fragment of a larger packet.
    Fragment(FragmentHeader),
}

/// The canonical regular header (what `reliable_write_packet_header` writes).
pub fn write_header(sequence: u16, ack: u16, ack_bits: u32, out: &mut Vec<u8>) {
    let mut prefix = 0u8;
    for i in 0..4 {
        if (ack_bits >> (8 * i)) & 0xff != 0xff {
            prefix |= 2 << i;
        }
    }
    let delta = sequence.wrapping_sub(ack);
    if delta <= 255 {
        prefix |= 1 << 5;
    }
    out.push(prefix);
    out.extend_from_slice(&sequence.to_le_bytes());
    if delta <= 255 {
        out.push(delta as u8);
    } else {
        out.extend_from_slice(&ack.to_le_bytes());
    }
    for i in 0..4 {
        if prefix & (2 << i) != 0 {
            out.push((ack_bits >> (8 * i)) as u8);
        }
    }
}

fn wire(e: bitlens_codec::Error) -> Refusal {
    Refusal::wire(&e)
}

fn byte<S: Stream>(s: &mut S, name: &str) -> Result<u8, Refusal> {
    let mut v = 0u64;
    s.bits(name, &mut v, 8).map_err(wire)?;
    Ok(v as u8)
}

fn word<S: Stream>(s: &mut S, name: &str) -> Result<u16, Refusal> {
    let mut v = 0u64;
    s.bits(name, &mut v, 16).map_err(wire)?;
    Ok(v as u16)
}

fn too_short(s_bit: usize, field: &str, needed: usize, bytes: usize) -> Refusal {
    Refusal::new(
        RefusalKind::ReliableTooShort { needed, bytes },
        s_bit,
        field,
    )
}

/// Reads a regular header from the stream's position (a byte boundary) over `bytes` bytes.
fn read_header<S: Stream>(s: &mut S, bytes: usize) -> Result<Header, Refusal> {
    let start = s.bit_position();
    let base = start / 8;
    if bytes < 3 {
        return Err(too_short(start, "prefix", 3, bytes));
    }
    let prefix = byte(s, "prefix")?;
    if prefix & 1 != 0 {
        let kind = RefusalKind::Wire(ErrorKind::OutOfRange {
            value: i128::from(prefix & 1),
            min: 0,
            max: 0,
        });
        return Err(Refusal::new(kind, start, "prefix"));
    }
    let sequence = word(s, "sequence")?;
    let short_ack = prefix & (1 << 5) != 0;
    let ack_len = if short_ack { 1 } else { 2 };
    let extra = (1..=4).filter(|b| prefix & (1 << b) != 0).count();
    let needed = 3 + ack_len + extra;
    if bytes < needed {
        let bit = s.bit_position();
        return Err(too_short(bit, "ack", needed, bytes));
    }
    let ack = if short_ack {
        sequence.wrapping_sub(u16::from(byte(s, "ack_delta")?))
    } else {
        word(s, "ack")?
    };
    let mut ack_bits = u32::MAX;
    // The bytes present, as the elements of one array (a scope in the field tree, as the
    // codec's arrays are; none when every byte was left out).
    if extra > 0 {
        s.scope("ack_bits", |s| {
            for i in 0..4 {
                if prefix & (2 << i) != 0 {
                    let mut b = 0u64;
                    s.index(i, |s| s.bits("", &mut b, 8))?;
                    ack_bits &= !(0xff << (8 * i));
                    ack_bits |= (b as u32 & 0xff) << (8 * i);
                }
            }
            Ok(())
        })
        .map_err(wire)?;
    }
    Ok(Header {
        sequence,
        ack,
        ack_bits,
        bytes: s.bit_position() / 8 - base,
    })
}

/// Reads the reliable.io part of a netcode payload of `data.len()` bytes from bit 0 of `s`
/// (which reads `data`): a regular header, or a fragment header (with fragment 0's packet
/// header), with reliable.io's receiver checks. Fields go in the scope `reliable`.
///
/// # Errors
/// The first check that fails, named.
pub fn read<S: Stream>(s: &mut S, data: &[u8], cfg: &ReliableConfig) -> Result<Reliable, Refusal> {
    let within = |e: Refusal| Refusal {
        field: format!("reliable.{}", e.field),
        ..e
    };
    s.scope("reliable", |s| Ok(read_inner(s, data, cfg)))
        .map_err(wire)?
        .map_err(within)
}

fn read_inner<S: Stream>(
    s: &mut S,
    data: &[u8],
    cfg: &ReliableConfig,
) -> Result<Reliable, Refusal> {
    let len = data.len();
    let max = cfg.max_packet_size as usize + MAX_HEADER_BYTES + FRAGMENT_HEADER_BYTES;
    if len > max {
        let kind = RefusalKind::PacketTooLarge {
            bytes: len,
            max: cfg.max_packet_size as usize,
        };
        return Err(Refusal::new(kind, 0, "prefix"));
    }
    if data.first().is_some_and(|p| p & 1 == 0) || data.is_empty() {
        let header = read_header(s, len)?;
        return Ok(Reliable::Regular(header));
    }
    if len < FRAGMENT_HEADER_BYTES {
        return Err(too_short(0, "prefix", FRAGMENT_HEADER_BYTES, len));
    }
    let prefix = byte(s, "prefix")?;
    if prefix != 1 {
        return Err(Refusal::new(
            RefusalKind::FragmentPrefix { prefix },
            0,
            "prefix",
        ));
    }
    let sequence = word(s, "sequence")?;
    let fragment_id = u32::from(byte(s, "fragment_id")?);
    let num_fragments = u32::from(byte(s, "num_fragments_minus_1")?) + 1;
    if num_fragments > cfg.max_fragments {
        let kind = RefusalKind::PacketFragmentCount {
            value: num_fragments,
            max: cfg.max_fragments,
        };
        return Err(Refusal::new(kind, 32, "num_fragments_minus_1"));
    }
    if fragment_id >= num_fragments {
        let kind = RefusalKind::PacketFragmentId {
            value: fragment_id,
            num_fragments,
        };
        return Err(Refusal::new(kind, 24, "fragment_id"));
    }
    let mut header = None;
    if fragment_id == 0 {
        let h = s
            .scope("packet", |s| {
                Ok(read_header(s, len - FRAGMENT_HEADER_BYTES))
            })
            .map_err(wire)?
            .map_err(|e| Refusal {
                field: format!("packet.{}", e.field),
                ..e
            })?;
        let bit = FRAGMENT_HEADER_BYTES * 8;
        if h.sequence != sequence {
            let kind = RefusalKind::FragmentSequence {
                fragment: sequence,
                packet: h.sequence,
            };
            return Err(Refusal::new(kind, bit + 8, "packet.sequence"));
        }
        let mut canonical = Vec::with_capacity(MAX_HEADER_BYTES);
        write_header(h.sequence, h.ack, h.ack_bits, &mut canonical);
        let end = FRAGMENT_HEADER_BYTES + h.bytes;
        if data[FRAGMENT_HEADER_BYTES..end] != canonical[..] {
            return Err(Refusal::new(RefusalKind::NonCanonicalHeader, bit, "packet"));
        }
        header = Some(h);
    }
    let data_start = s.bit_position() / 8;
    let bytes = len - data_start;
    let last = fragment_id + 1 == num_fragments;
    let size = cfg.fragment_size as usize;
    if bytes > size || (!last && bytes != size) {
        let kind = RefusalKind::FragmentSize {
            bytes,
            fragment_size: size,
            last,
        };
        return Err(Refusal::new(kind, data_start * 8, "data"));
    }
    Ok(Reliable::Fragment(FragmentHeader {
        sequence,
        fragment_id,
        num_fragments,
        header,
        data_start,
    }))
}
