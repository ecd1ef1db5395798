//! Packet framing (seed 000, "Protocol IDs, CRC32 and Serialization Checks"; WIRE.md section 1).
//!
//! ```text
//! bit 0        32           32 + t                                 end (byte-aligned)
//! +------------+------------+----------------------------+---------+--------------------+
//! | crc32 (LE) | type: t bits | body                     | pad to8 | hash("END OF PACKET") |
//! +------------+------------+----------------------------+---------+--------------------+
//! t = bits_required(0, types - 1): absent when the protocol has one packet type.
//! crc32 = CRC-32/IEEE over protocol_id (4 or 8 bytes LE, never sent) ++ packet with crc zeroed.
//! ```
//!
//! A reader checks, in order: at most MTU bytes, at least 4 bytes, the CRC, the type range, the body, the end check,
//! and that nothing follows. Every packet a reader accepts re-encodes to the identical bytes.

pub use crate::checksum::{ProtocolId, check_hash, packet_crc, seal_crc};
use crate::error::{Error, ErrorKind, Result};
use crate::measure::MeasureStream;
use crate::read::{ReadStream, TraceStream};
use crate::stream::Stream;
use crate::trace::Trace;
use crate::write::{CountStream, WriteStream};

/// The label of the check that closes every packet.
pub const END_OF_PACKET: &str = "end of packet";

/// A protocol's framing parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protocol {
    /// A short name (for traces and the inspector).
    pub name: String,
    /// Folded into the CRC.
    pub id: ProtocolId,
    /// Names of the packet types, indexed by type number; their count sets the type field's width.
    pub packet_types: Vec<String>,
    /// The largest datagram the protocol sends, in bytes.
    pub mtu: usize,
}

impl Protocol {
    /// The number of packet types.
    pub fn type_count(&self) -> u32 {
        self.packet_types.len() as u32
    }

    /// The name of packet type `t`.
    pub fn type_name(&self, t: u32) -> Option<&str> {
        self.packet_types.get(t as usize).map(String::as_str)
    }
}

/// Serializes a whole framed packet on any stream: CRC, type, `body(stream, type)`, the end
/// check and the strict end. On read `packet_type` receives the type before `body` runs.
///
/// # Errors
/// Any error of the CRC, the type, the body, the end check or trailing data.
pub fn frame<S: Stream>(
    s: &mut S,
    protocol: &Protocol,
    packet_type: &mut u32,
    body: impl FnOnce(&mut S, u32) -> Result<()>,
) -> Result<()> {
    if S::READING && s.remaining_bits() > protocol.mtu.saturating_mul(8) {
        let bytes = s.remaining_bits() / 8;
        return Err(Error::new(
            ErrorKind::TooLong {
                bytes,
                mtu: protocol.mtu,
            },
            0,
            "",
        ));
    }
    s.packet_crc(protocol.id)?;
    let types = protocol.type_count();
    if types > 1 {
        s.int_as("packet_type", packet_type, 0, types - 1)?;
    } else if S::READING {
        *packet_type = 0;
    }
    if S::READING {
        let name = protocol.type_name(*packet_type).unwrap_or("?");
        s.annotate_str(name);
    }
    body(s, *packet_type)?;
    s.check(END_OF_PACKET)?;
    s.end()
}

/// A message type with a fixed protocol: its packet type number and one serialize function for
/// its body. [`write_packet`], [`read_packet`], [`count_packet`], [`measure_packet`] and [`trace_packet`] add the
/// framing.
pub trait Packet: Sized {
    /// The protocol this packet belongs to.
    fn protocol() -> &'static Protocol;
    /// This packet's type number.
    fn packet_type(&self) -> u32;
    /// A default packet of type `t`, to read into; `None` for a type the protocol lacks.
    fn empty(t: u32) -> Option<Self>;
    /// Serializes the body (everything between the type and the end check).
    ///
    /// # Errors
    /// Whatever the stream reports.
    fn serialize_body<S: Stream>(&mut self, s: &mut S) -> Result<()>;

    /// The protocol described in the schema language (SCHEMA.md), when the packet set can give
    /// it (a derived packet set can): what `bitlens export-wireshark` and `--schema` read.
    /// `None` by default.
    fn schema_text() -> Option<String> {
        None
    }
}

/// Serializes `packet` with its framing on any stream.
///
/// # Errors
/// As [`frame`]; unknown_packet_type when the type read has no packet.
pub fn serialize_packet<P: Packet, S: Stream>(s: &mut S, packet: &mut P) -> Result<()> {
    let mut t = packet.packet_type();
    frame(s, P::protocol(), &mut t, |s, t| {
        if S::READING {
            *packet = empty_packet(t, s.bit_position())?;
        }
        packet.serialize_body(s)
    })
}

/// Reads a framed packet of `P` on a read (or trace) stream and keeps nothing: the verdict on
/// the bytes, as [`serialize_packet`] would read them, but framed with `protocol` (`P::protocol()`,
/// or the same packet types under another protocol id: `bitlens --protocol-id`). `seen` receives
/// the packet type as soon as it is known, even when the body then fails. What the dissector of a
/// compiled packet set runs ([`crate::dissect::PacketDissector`]).
///
/// # Errors
/// As [`serialize_packet`].
pub fn verify_packet<P: Packet, S: Stream>(
    s: &mut S,
    protocol: &Protocol,
    seen: &mut Option<u32>,
) -> Result<()> {
    frame(s, protocol, &mut 0, |s, t| {
        *seen = Some(t);
        empty_packet::<P>(t, s.bit_position())?.serialize_body(s)
    })
}

/// The packet of type `t` to read into, or unknown_packet_type at `bit`.
fn empty_packet<P: Packet>(t: u32, bit: usize) -> Result<P> {
    P::empty(t).ok_or_else(|| Error::new(ErrorKind::UnknownPacketType(t), bit, "packet_type"))
}

/// Writes `packet` into `buf` (at most the protocol's MTU of it) and returns the bytes used.
///
/// # Errors
/// Out-of-range values, and buffer_full when the packet exceeds the MTU or `buf`.
pub fn write_packet<P: Packet>(packet: &mut P, buf: &mut [u8]) -> Result<usize> {
    let mtu = P::protocol().mtu.min(buf.len());
    let mut s = WriteStream::new(&mut buf[..mtu]);
    serialize_packet(&mut s, packet)?;
    Ok(s.finish())
}

/// Reads a packet: every check of the framing, every range of the body.
///
/// # Errors
/// The first violation, with its bit and field.
pub fn read_packet<P: Packet + Default>(data: &[u8]) -> Result<P> {
    let mut s = ReadStream::new(data);
    let mut p = P::default();
    serialize_packet(&mut s, &mut p)?;
    Ok(p)
}

/// The exact number of bits [`write_packet`] writes for `packet`, framing included (what an
/// MTU check needs).
///
/// # Errors
/// As [`write_packet`], without the MTU limit.
pub fn count_packet<P: Packet>(packet: &mut P) -> Result<usize> {
    let mut s = CountStream::new();
    serialize_packet(&mut s, packet)?;
    Ok(s.bits())
}

/// serialize 1.0's measure of `packet`, framing included: a bound that is at least the bits
/// written from any starting position (7 bits per aligning operation), see [`MeasureStream`].
///
/// # Errors
/// Only what the packet's own serialize function returns: the measure refuses nothing.
pub fn measure_packet<P: Packet>(packet: &mut P) -> Result<usize> {
    let mut s = MeasureStream::new();
    serialize_packet(&mut s, packet)?;
    Ok(s.bits())
}

/// Reads a packet and records every field; the packet is returned when the read succeeded.
pub fn trace_packet<P: Packet + Default>(data: &[u8]) -> (Option<P>, Trace) {
    let mut s = TraceStream::new(data);
    let mut p = P::default();
    let r = serialize_packet(&mut s, &mut p);
    let ok = r.is_ok();
    (ok.then_some(p), s.into_trace(r))
}
