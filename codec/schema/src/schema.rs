//! The checked schema and what it offers: its framing, names and the packet-level read, write,
//! count and measure (the interpreter is in `interpret.rs`, the loader in `parse.rs`, the JSON
//! conversions in `json.rs`).

use crate::batch::schema::BatchSchema;
use crate::defs::{EnumDef, StructDef, UnionDef};
use crate::error::SchemaWarning;
use crate::value::{DynValue, NULL};
use bitlens_codec::error::{Error, ErrorKind, Result};
use bitlens_codec::measure::MeasureStream;
use bitlens_codec::packet::{Protocol, ProtocolId};
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_codec::stream::Stream;
use bitlens_codec::trace::Trace;
use bitlens_codec::write::{CountStream, WriteStream};
use std::collections::HashMap;
use std::sync::Arc;

/// A checked protocol description: framing, packet types, structs and enums.
#[derive(Debug, Clone)]
pub struct Schema {
    pub(crate) protocol: Protocol,
    pub(crate) structs: Vec<StructDef>,
    pub(crate) enums: Vec<EnumDef>,
    pub(crate) unions: Vec<UnionDef>,
    /// Body struct of each packet type.
    pub(crate) packets: Vec<usize>,
    pub(crate) struct_ids: HashMap<String, usize>,
    /// The `[batch]` section: message batches with schema-described bodies.
    pub(crate) batch: Option<BatchSchema>,
    /// The `[yojimbo]` section: a yojimbo game's channels and message types.
    pub(crate) yojimbo: Option<crate::yojimbo::Section>,
    /// The TOML text it was parsed from.
    pub(crate) source: Arc<str>,
    /// What loaded but deserves a look.
    pub(crate) warnings: Vec<SchemaWarning>,
}

impl Schema {
    /// What loaded but deserves a look, in the order found: compressed float ranges that are
    /// not stable (a packet read with them may not re-encode to the same bytes). Tools show
    /// them; reading and writing are unaffected.
    pub fn warnings(&self) -> &[SchemaWarning] {
        &self.warnings
    }

    /// Whether the schema has a `[protocol]` section, and so packets of bitlens's framing (a
    /// schema of only a `[yojimbo]` section has none: its [`Schema::protocol`] has no packet
    /// types and every packet read is refused).
    pub fn has_protocol(&self) -> bool {
        !self.packets.is_empty()
    }

    /// The framing parameters: name, protocol id, packet type names (by number) and MTU.
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// The TOML text the schema was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The same schema framing its packets with another protocol id (`bitlens --protocol-id`):
    /// the CRCs of packets of another version or build are checked against that id.
    pub fn with_protocol_id(&self, id: ProtocolId) -> Schema {
        let mut s = self.clone();
        s.protocol.id = id;
        s
    }

    /// The `[batch]` section, when the schema has one: message types and their byte-aligned
    /// bodies, interpreted through the batch layer's `ByteStream` (see [`batch`]).
    pub fn batch(&self) -> Option<&BatchSchema> {
        self.batch.as_ref()
    }

    /// The most entries a [`Schema::trace`] of a datagram of `len` bytes can hold, framing
    /// included (a read visits as many fields): linear in `len`, because the loader refuses a
    /// struct that records more than 64 entries per bit it reads plus 4096 (SCHEMA.md,
    /// "Bounds"). A datagram over the MTU is refused before anything is read.
    pub fn max_trace_fields(&self, len: usize) -> usize {
        // The CRC, the packet type, the end check and its padding.
        const FRAMING: u64 = 4;
        let bits = len.saturating_mul(8);
        self.packets
            .iter()
            .map(|&sid| self.structs[sid].cost.plus(FRAMING).entries(bits))
            .max()
            .unwrap_or(0)
            .max(FRAMING as usize)
    }

    /// The names of the structs, in no particular order.
    pub fn struct_names(&self) -> impl Iterator<Item = &str> {
        self.struct_ids.keys().map(String::as_str)
    }

    /// Reads a framed packet and records every field, as [`bitlens_codec::trace_packet`] does for a
    /// compiled protocol. The packet type is given once it has been read (even when the body
    /// then fails).
    pub fn trace(&self, data: &[u8]) -> (Option<u32>, Trace) {
        let mut s = TraceStream::new(data);
        let mut seen = None;
        let r = self.framed(&mut s, &mut 0, &NULL, &mut seen).map(|_| ());
        (seen, s.into_trace(r))
    }

    /// Reads a framed packet for its verdict only: the packet type once read, and how the read
    /// ended (what `bitlens check` needs for every datagram).
    pub fn verdict(&self, data: &[u8]) -> (Option<u32>, Result<()>) {
        let mut s = ReadStream::new(data);
        let mut seen = None;
        let r = self.framed(&mut s, &mut 0, &NULL, &mut seen).map(|_| ());
        (seen, r)
    }

    /// Reads a framed packet: its type number and its body as a struct value.
    ///
    /// # Errors
    /// The first violation, with its bit and field path (as the compiled reader reports it).
    pub fn read(&self, data: &[u8]) -> Result<(u32, DynValue)> {
        let mut s = ReadStream::new(data);
        let mut t = 0;
        let v = self.framed(&mut s, &mut t, &NULL, &mut None)?;
        Ok((t, v))
    }

    /// Writes a framed packet of type `packet_type` (its name) into `buf` (at most the MTU of
    /// it) and returns the bytes used.
    ///
    /// # Errors
    /// Unknown_packet_type (invalid_argument) for a name the protocol lacks; a value outside its
    /// range; a missing field or a value of the wrong kind (invalid_argument); buffer_full when
    /// the packet exceeds the MTU or `buf`.
    pub fn write(&self, packet_type: &str, value: &DynValue, buf: &mut [u8]) -> Result<usize> {
        let mut t = self.type_number(packet_type)?;
        let mtu = self.protocol.mtu.min(buf.len());
        let mut s = WriteStream::new(&mut buf[..mtu]);
        self.framed(&mut s, &mut t, value, &mut None)?;
        Ok(s.finish())
    }

    /// The exact number of bits [`Schema::write`] would produce, framing included (no MTU limit).
    ///
    /// # Errors
    /// As [`Schema::write`], without buffer_full.
    pub fn count(&self, packet_type: &str, value: &DynValue) -> Result<usize> {
        let mut t = self.type_number(packet_type)?;
        let mut s = CountStream::new();
        self.framed(&mut s, &mut t, value, &mut None)?;
        Ok(s.bits())
    }

    /// serialize 1.0's measure of a packet, framing included: a bound on its bits at any
    /// starting position (7 bits per aligning field; see [`MeasureStream`]).
    ///
    /// # Errors
    /// Unknown_packet_type (invalid_argument), a missing field or a value of the wrong kind
    /// (invalid_argument): the schema's own checks. The measure refuses no value.
    pub fn measure(&self, packet_type: &str, value: &DynValue) -> Result<usize> {
        let mut t = self.type_number(packet_type)?;
        let mut s = MeasureStream::new();
        self.framed(&mut s, &mut t, value, &mut None)?;
        Ok(s.bits())
    }

    /// Serializes the fields of struct `name` directly on `s`, without framing and without a
    /// scope of its own (as a packet body is): a message body inside a batch, or a test. On a
    /// read stream `value` is ignored and the value read is returned; on a write stream `value`
    /// is sent and `Null` is returned.
    ///
    /// # Errors
    /// An unknown struct name (invalid_argument), and whatever the stream reports.
    pub fn serialize_struct<S: Stream>(
        &self,
        s: &mut S,
        name: &str,
        value: &DynValue,
    ) -> Result<DynValue> {
        let sid = *self.struct_ids.get(name).ok_or_else(|| {
            let why = format!("no struct named {name:?} in the schema");
            Error::new(ErrorKind::InvalidArgument(why), s.bit_position(), "")
        })?;
        self.struct_value(s, &self.structs[sid], value, 0, None)
    }

    pub(crate) fn unknown_type_message(&self, name: &str) -> String {
        format!(
            "no packet type named {name:?} (the schema has {})",
            self.protocol.packet_types.join(", ")
        )
    }

    fn type_number(&self, name: &str) -> Result<u32> {
        self.protocol
            .packet_types
            .iter()
            .position(|n| n == name)
            .map(|t| t as u32)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidArgument(self.unknown_type_message(name)),
                    0,
                    "packet_type",
                )
            })
    }
}
