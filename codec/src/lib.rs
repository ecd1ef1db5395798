//! bitlens-codec: bit-packed serialization for the protocols of real-time games.
//!
//! One `serialize` function per message, generic over [`Stream`], writes a packet
//! ([`WriteStream`]), reads one ([`ReadStream`]), measures one ([`MeasureStream`]: a bound, as
//! serialize 1.0 defines it), counts its exact bits ([`CountStream`]) and traces one
//! ([`TraceStream`]). Read and write cannot drift apart, because there is only one function.
//!
//! **Your own protocol**: derive it (`#[derive(BitPacked)]` on each message,
//! `#[derive(PacketSet)]` on the enum of your packets: see the example below), or write a
//! `serialize` per message and implement [`Packet`] for the enum by hand (its [`Protocol`]: id,
//! packet types, MTU). Then the `bitlens` crate's inspector reads your captures with it (a
//! `main` of ten lines: `bitlens::Cli`), and the `fuzzing` module (feature `arbitrary`) gives
//! your one-line cargo-fuzz targets the checks bitlens runs on its own protocol
//! (`bitlens fuzz-init` writes them). The repository's `examples/custom-protocol/` is a whole
//! game protocol done this way.
//!
//! # Guarantees
//!
//! - **Reads never panic and never allocate by an unchecked length**, on any input. Every value
//!   is range-checked; every count and length is checked against its declared range *and*
//!   against the bits that remain before a vector grows; the first violation aborts the read with
//!   an [`Error`] that names the bit and the field path (`bit 203 (field "health"): 140 out of
//!   range 0..=100`).
//! - **Writes of invalid values are errors**, not panics and not silent truncation: a value
//!   outside its range, a too-long string, more data than the buffer (or MTU) holds.
//! - **count == bits written** (from bit 0), **measure >= bits written** at every starting
//!   bit, and **read(write(x)) == x**; every packet a reader accepts re-encodes to the identical
//!   bytes, where its compressed float ranges are stable, its quaternions are not near ties
//!   ([`CompressedFloat::is_stable`], [`SmallestThree::reencodes`]) and its relative integers
//!   use their smallest tier (a reader also takes a small difference sent in the 32-bit tier).
//!   Property tests pin them.
//! - **Readers refuse exactly what serialize 1.0 refuses** at the serialize layer (WIRE.md
//!   section 1): conforming writers' packets are accepted and decode to the standard's values.
//!   bitlens's own layers (packet framing, check markers, `end`, relative object indices) keep
//!   their stricter rules. Pinned by the conformance vectors (`codec/tests/vectors/`, run by
//!   `bitlens vectors`).
//!
//! # The crates
//!
//! This crate is the core: the bit layer ([`bits`]), the streams ([`stream`], [`write`](mod@write),
//! [`read`]), traces ([`trace`]), errors, checksums, quantization, packet framing ([`packet`])
//! and network ids ([`link`]), the derive's traits and helpers ([`packed`]), and the one
//! interface every tool reads a protocol through ([`dissect`]: a verdict at read speed, or a
//! full dissection). Its default build depends on `crc32fast`, `itoa` and the derive macros
//! (`bitlens-codec-derive`, feature `derive`, on by default): a game that wants only the bit
//! packer compiles only this. Optional features: `serde` (serialize traces), `inline-paths`
//! (trace paths inline up to 24 bytes, no allocation per traced field: the inspector's) and
//! `arbitrary` (arbitrary values for fuzzing; `generate`: values of any serializable type
//! drawn through its own serialize function; and `fuzzing`: the fuzz harnesses for your own
//! packet set, one line per cargo-fuzz target).
//!
//! The formats live beside it, each in its own crate: `bitlens-tagged` (the tagged format of
//! save files), `bitlens-batch` (byte-aligned message batches) and `bitlens-schema` (protocols
//! described in TOML). The inspector is `bitlens`.
//!
//! # Example
//!
//! A message is a struct with `#[derive(BitPacked)]`: its attributes say each field's wire
//! form, and the derive writes the one `serialize` function and the schema text (see
//! [`packed`] and the `bitlens-codec-derive` crate for the attribute language).
//!
//! ```
//! use bitlens_codec::{BitPacked, CountStream, MeasureStream, ReadStream, Result, WriteStream};
//!
//! #[derive(BitPacked, Debug, Default, PartialEq)]
//! struct Player {
//!     #[bitlens(range = 0..=100)]
//!     health: i32,
//!     alive: bool,
//!     #[bitlens(max_len = 31)]
//!     name: String,
//! }
//!
//! let mut buf = [0u8; 64];
//! let mut w = WriteStream::new(&mut buf);
//! let mut p = Player { health: 73, alive: true, name: "bob".into() };
//! p.serialize(&mut w)?;
//! let bits = w.bits_written();
//! let n = w.finish();
//!
//! let mut c = CountStream::new();
//! p.serialize(&mut c)?;
//! assert_eq!(c.bits(), bits);
//! // The standard's measure, a bound at any start: the string's align pads 3 bits here (40
//! // written), and a measure charges 7 for it.
//! let mut m = MeasureStream::new();
//! p.serialize(&mut m)?;
//! assert_eq!((bits, m.bits()), (40, 44));
//!
//! let mut back = Player::default();
//! back.serialize(&mut ReadStream::new(&buf[..n]))?;
//! assert_eq!(back, p);
//!
//! // A hostile health value is rejected, naming the field and the bit.
//! let err = back.serialize(&mut ReadStream::new(&[0x7f])).unwrap_err();
//! assert_eq!(err.to_string(), "bit 0 (field \"health\"): 127 out of range 0..=100");
//! # Ok::<(), bitlens_codec::Error>(())
//! ```
//!
//! The same function written by hand, for what attributes cannot express (a context such as a
//! linking table, a layout computed at run time): call the [`Stream`] primitives in order.
//!
//! ```
//! use bitlens_codec::{Stream, Result, WriteStream, ReadStream};
//!
//! #[derive(Debug, Default, PartialEq)]
//! struct Player { health: i32, alive: bool, name: String }
//!
//! impl Player {
//!     fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
//!         s.int_as("health", &mut self.health, 0, 100)?;
//!         s.bool("alive", &mut self.alive)?;
//!         s.string("name", &mut self.name, 31)
//!     }
//! }
//!
//! let mut buf = [0u8; 64];
//! let mut w = WriteStream::new(&mut buf);
//! Player { health: 73, alive: true, name: "bob".into() }.serialize(&mut w)?;
//! let n = w.finish();
//! let mut back = Player::default();
//! back.serialize(&mut ReadStream::new(&buf[..n]))?;
//! assert_eq!(back.health, 73);
//! # Ok::<(), bitlens_codec::Error>(())
//! ```
//!
//! A type of your own inside derived messages: implement [`BitPacked`] by hand (its fewest
//! bits, its `serialize`, and its schema text: [`SchemaWriter::define`](packed::SchemaWriter::define)
//! writes its section once, under a name unique in the file, with [`packed::struct_text`]), and
//! derived structs take it as a field like any other; their schema text uses it.
//!
//! ```
//! use bitlens_codec::packed::{self, SchemaWriter};
//! use bitlens_codec::{BitPacked, ReadStream, Result, Stream, WriteStream};
//!
//! /// A cell of a 64 x 64 grid: two 6-bit coordinates.
//! #[derive(Debug, Default, Clone, Copy, PartialEq)]
//! struct Cell { x: u8, y: u8 }
//!
//! impl BitPacked for Cell {
//!     const MIN_BITS: usize = 12;
//!     // Its fields go into the enclosing scope (`from.x`), as a derived struct's do.
//!     const FIELDS: bool = true;
//!
//!     fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
//!         s.int_as("x", &mut self.x, 0, 63)?;
//!         s.int_as("y", &mut self.y, 0, 63)
//!     }
//!
//!     fn schema_type(w: &mut SchemaWriter) -> String {
//!         let name = w.define::<Self>("Cell", |_, name| {
//!             packed::struct_text(name, &[
//!                 r#"name = "x", type = "int", min = 0, max = 63"#.to_owned(),
//!                 r#"name = "y", type = "int", min = 0, max = 63"#.to_owned(),
//!             ])
//!         });
//!         format!("type = {}", packed::toml_str(&name))
//!     }
//! }
//!
//! #[derive(BitPacked, Debug, Default, PartialEq)]
//! struct Move { from: Cell, to: Cell }
//!
//! let mut m = Move { from: Cell { x: 1, y: 2 }, to: Cell { x: 63, y: 0 } };
//! let mut buf = [0u8; 8];
//! let mut w = WriteStream::new(&mut buf);
//! m.serialize(&mut w)?;
//! assert_eq!(w.bits_written(), 24);
//! let n = w.finish();
//! let mut back = Move::default();
//! back.serialize(&mut ReadStream::new(&buf[..n]))?;
//! assert_eq!(back, m);
//! // A value outside the hand-written range is refused at its field, as a derived one is.
//! m.to.x = 64;
//! let err = m.serialize(&mut WriteStream::new(&mut buf)).unwrap_err();
//! assert_eq!(err.field(), "to.x");
//!
//! // The schema text: Cell defined once, used by both fields.
//! let mut w = SchemaWriter::new();
//! assert_eq!(Move::schema_type(&mut w), "type = \"Move\"");
//! let text = w.finish();
//! assert!(text.contains("[struct.Cell]\nfields = [\n  { name = \"x\", type = \"int\", min = 0, max = 63 },"));
//! assert!(text.contains("{ name = \"from\", type = \"Cell\" }"), "{text}");
//! assert_eq!(text.matches("[struct.Cell]").count(), 1);
//! # Ok::<(), bitlens_codec::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod bits;
pub mod checksum;
pub mod dissect;
pub mod error;
pub mod fixed;
pub mod float_text;
#[cfg(feature = "arbitrary")]
pub mod fuzzing;
#[cfg(feature = "arbitrary")]
pub mod generate;
pub mod link;
pub mod measure;
pub mod observe;
pub mod packed;
pub mod packet;
mod path_string;
pub mod quantize;
pub mod read;
pub mod stream;
pub mod trace;
pub mod transport;
pub mod write;

/// `#[derive(BitPacked)]` and `#[derive(PacketSet)]` (feature `derive`, on by default).
#[cfg(feature = "derive")]
pub use bitlens_codec_derive::{BitPacked, PacketSet};
pub use bits::{BitReader, BitWriter, bits_required, bits_required128};
pub use error::{Error, ErrorKind, Result};
pub use fixed::{Fixed, FixedPoint};
pub use measure::MeasureStream;
pub use packed::{BitPacked, PacketSet};
pub use packet::{
    Packet, Protocol, ProtocolId, check_hash, read_packet, trace_packet, write_packet,
};
pub use quantize::{CompressedFloat, CompressedFloatParams, SmallestThree};
pub use read::{ReadStream, TraceStream};
pub use stream::Stream;
pub use trace::{Entries, FieldKind, Trace, TraceField, Value};
pub use write::{CountStream, WriteStream};
