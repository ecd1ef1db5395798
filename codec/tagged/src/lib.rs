//! The compatible tagged format of seed 001: save files and data that outlive versions.
//!
//! Where the bit-packed packets of the codec core trade compatibility for size, this format keeps
//! every old file readable: each field carries an id and a wire type, so a reader skips the
//! fields it does not know, gives the ones it misses their default, and never confuses a removed
//! field with a new one. It is close to the protobuf wire format, with a few changes (seed 001,
//! `WIRE.md` section 2).
//!
//! # Wire layout
//!
//! ```text
//! document   = sized(struct)                        the root struct with its size prefix
//! struct     = field*                               ids strictly increasing, zero values omitted
//! field      = varint(delta_id << 2 | wire) value   delta_id = id for the first field,
//!                                                    id - previous_id - 1 after it
//! wire 0 byte    1 raw byte          bool (0 or 1 only), u8, i8 (two's complement)
//! wire 1 octet   8 bytes, LE         f64 bits; f32 is widened to f64 first
//! wire 2 varint  big-endian varint   u16..u64, usize; i16..i64, isize zig-zagged first
//! wire 3 sized   varint(len) bytes   String (UTF-8), Vec<T> and [T; N] (elements back to back,
//!                                    no headers), structs, tuples and maps (arrays of pairs)
//! ```
//!
//! Varints are big-endian 7-bit groups with reduced redundancy: 127 = `7F`, 128 = `80 00`,
//! 16511 = `FF 7F`, 16512 = `80 80 00` (see [`varint`]). A size prefix is placed by rotation:
//! the body is written, then its length after it, then the tail of the buffer is rotated so the
//! length comes first; one pass and no temporary buffer.
//!
//! # One function per type: the reporter pattern
//!
//! A struct lists its fields once, in [`Tagged::report`], each with its id. The same function
//! encodes ([`Encoder`]), decodes ([`Decoder`], a merge walk over the stream and the struct:
//! unknown ids are skipped by their wire type, missing ids get their zero value, a wire type that
//! differs from the field's type is an error) and dumps ([`Dumper`]). `#[derive(Tagged)]` writes
//! it from `#[tag(N)]` attributes:
//!
//! ```
//! use bitlens_tagged::{self as tagged, Tagged};
//!
//! /// Version 1 of a record: the seed's own example.
//! #[derive(Tagged, Default, Debug, PartialEq)]
//! struct BarV1 {
//!     #[tag(0)]
//!     a: u32,
//!     #[tag(1)]
//!     b: u8,
//!     #[tag(2)]
//!     c: u8,
//! }
//!
//! /// Version 2 removed `b`; its id is retired so it is never reused.
//! #[derive(Tagged, Default, Debug, PartialEq)]
//! #[tag(removed(1))]
//! struct BarV2 {
//!     #[tag(0)]
//!     a: u32,
//!     #[tag(2)]
//!     c: u8,
//! }
//!
//! # fn main() -> Result<(), tagged::Error> {
//! let v1 = tagged::encode_document(&mut BarV1 { a: 129, b: 255, c: 6 })?;
//! // Size prefix 7, then the seed's fields: a = 129, b = 255, c = 6.
//! assert_eq!(v1, [0x07, 0x02, 0x80, 0x01, 0x00, 0xFF, 0x00, 0x06]);
//!
//! // The new version skips the removed field by its wire type ...
//! assert_eq!(tagged::decode_document::<BarV2>(&v1)?, BarV2 { a: 129, c: 6 });
//! // ... and the old version gives the missing field its default.
//! let v2 = tagged::encode_document(&mut BarV2 { a: 129, c: 6 })?;
//! assert_eq!(tagged::decode_document::<BarV1>(&v2)?, BarV1 { a: 129, b: 0, c: 6 });
//!
//! // Hostile input is an error with its byte offset and field id, never a panic.
//! let err = tagged::decode_document::<BarV2>(&[0x07, 0x02, 0x80]).unwrap_err();
//! assert_eq!(err.to_string(), "byte 0 (document): sized length 7 exceeds the 2 bytes that remain");
//! # Ok(())
//! # }
//! ```
//!
//! # Removed ids are never reused
//!
//! A field id belongs to one field for the life of the format: when a field is deleted, its id
//! is retired, because an old file still holds data under it and a new field with that id and
//! the same wire type would silently read the old, unrelated value. List retired ids on the
//! struct with `#[tag(removed(4, 7))]`: the derive refuses to compile a field that reuses one and
//! exposes the list as [`Tagged::REMOVED_IDS`]. Hand-written impls set that constant and keep a
//! `// removed ids (DO NOT REUSE): 4, 7` comment in `report`. Renaming a field or reordering its
//! declaration is free; changing its type to another wire type is a removal plus an addition.
//!
//! # Types
//!
//! bool, u8, i8, u16..u64, usize, i16..i64, isize, f32, f64, String, `Vec<u8>` (byte strings),
//! `Vec<T>`, `[T; N]` (a region with exactly N elements), `Option<T>` (a field that is present or
//! not: `Some(0)` is written, `None` is omitted; `None` cannot be an array element), structs with
//! `Tagged`, pairs and triples (small structs with ids 0, 1, 2), and `BTreeMap<K, V>` (an array
//! of pairs, key id 0, value id 1). A field whose value is its type's zero (0, false, +0.0,
//! empty, `None`, a struct of zeros) is not written; a missing field reads as that zero.
//!
//! # Hostile input
//!
//! Decoding never panics and never allocates by an unchecked length: every length prefix is
//! checked against the bytes that remain in its enclosing region before anything is read or
//! allocated, a region's bytes must be used exactly, nesting of sized values is limited to
//! [`MAX_DEPTH`] (so recursion depth is bounded on any input), and varints longer than a u64
//! allows or overflowing it are rejected. Every [`Error`] names its byte offset and field id.
//! The schema-less walk of [`raw`] (what `bitlens tagged` prints) obeys the same rules.

mod error;
mod io;
pub mod raw;
mod reporter;
mod value;
pub mod varint;

pub use bitlens_codec_derive::Tagged;
pub use error::Error;
pub use io::{Reader, Writer};
pub use reporter::{Decoder, Dump, DumpField, DumpValue, Dumper, Encoder, Reporter};
pub use value::Value;

use core::fmt;

/// Deepest nesting of sized values (structs, arrays, strings, maps) that is read or written.
pub const MAX_DEPTH: u32 = 64;

/// How a field's bytes are laid out, so that a reader can skip a field it does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireType {
    /// One raw byte (bool, u8, i8).
    Byte = 0,
    /// Eight bytes, little-endian (f64 bits; f32 widened).
    Octet = 1,
    /// One varint (integers wider than a byte, zig-zag for signed).
    Varint = 2,
    /// A varint byte length, then that many bytes (strings, arrays, structs, maps).
    Sized = 3,
}

impl WireType {
    /// The wire type in the low two bits of a field header.
    pub fn from_header(header: u64) -> Self {
        match header & 3 {
            0 => WireType::Byte,
            1 => WireType::Octet,
            2 => WireType::Varint,
            _ => WireType::Sized,
        }
    }

    /// Lower-case name used in dumps and JSON: `byte`, `octet`, `varint`, `sized`.
    pub fn name(self) -> &'static str {
        match self {
            WireType::Byte => "byte",
            WireType::Octet => "octet",
            WireType::Varint => "varint",
            WireType::Sized => "sized",
        }
    }
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A struct stored in the tagged format: it reports each of its fields, with its id, to a
/// [`Reporter`], and that one function drives encoding, decoding and dumping.
///
/// Usually derived: `#[derive(Tagged)]` with `#[tag(N)]` on every field (see the module doc).
pub trait Tagged: Default {
    /// Ids that belonged to removed fields and must never be used again.
    const REMOVED_IDS: &'static [u64] = &[];

    /// Reports every field to `reporter`, in strictly increasing id order.
    ///
    /// # Errors
    /// Whatever the reporter returns; [`Error::IdsNotIncreasing`] if ids are out of order.
    fn report<R: Reporter>(&mut self, reporter: &mut R) -> Result<(), Error>;
}

/// Encodes `value` as a document: the root struct with its size prefix.
///
/// Takes `&mut` because the one `report` function that writes also reads into the value; the
/// value is not changed.
///
/// # Errors
/// Only for values with no encoding: nesting past [`MAX_DEPTH`], `None` inside an array, ids
/// out of order or too large.
pub fn encode_document<T: Tagged>(value: &mut T) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    encode_document_into(value, &mut out)?;
    Ok(out)
}

/// Appends `value` as a document to `out`; on error `out` may hold a partial document.
///
/// # Errors
/// As [`encode_document`].
pub fn encode_document_into<T: Tagged>(value: &mut T, out: &mut Vec<u8>) -> Result<(), Error> {
    let mut w = Writer::new(out);
    value.encode(&mut w)
}

/// Decodes a document: the root struct with its size prefix, and nothing after it.
///
/// # Errors
/// Any [`Error`] of the read, with byte offset and field id; [`Error::TrailingBytes`] when bytes
/// follow the root struct.
pub fn decode_document<T: Tagged>(bytes: &[u8]) -> Result<T, Error> {
    let mut r = Reader::new(bytes);
    let value = T::decode(&mut r)?;
    if !r.is_empty() {
        return Err(Error::TrailingBytes {
            offset: r.offset(),
            field: None,
            count: r.remaining(),
        });
    }
    Ok(value)
}

/// Lists the fields of `value` with their ids, names, wire types and values, through `report`.
pub fn dump<T: Tagged>(value: &mut T) -> Dump {
    let mut dumper = Dumper::default();
    // The dumper itself never fails; only a misbehaving `report` could return an error here,
    // and the fields reported before it are still worth showing.
    let _ = value.report(&mut dumper);
    dumper.into_dump()
}
