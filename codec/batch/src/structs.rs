//! Byte-aligned structs described once: the [`BatchStruct`] trait that
//! `#[derive(BatchStruct)]` implements (the one serialize function, the byte bounds, the
//! schema text), the [`MessageEnum`] trait of `#[derive(MessageEnum)]` with [`MessagesOf`], the
//! [`MessageSet`] it makes of a message enum, and the range checks derived code calls.
//!
//! The checks are the schema interpreter's (`bitlens_schema`, SCHEMA.md "Message batches"): a
//! value is checked before it is written and after it is read (it is traced first), and the
//! error is `out_of_range` at the field's first byte, naming the field (an array element's
//! error names the array). A derived struct and its schema text therefore write the same bytes,
//! record the same trace and refuse the same inputs; `codec/testkit/tests/batch_derive.rs` and
//! the `schema_batch_vs_compiled` fuzz target check it.

use crate::dissect::MessageSet;
use crate::error::{BatchError, BatchErrorKind, Result};
use crate::message::{BatchWriter, MessageBody, RawMessage, UpdateStage};
use crate::stream::ByteStream;
use bitlens_codec::trace::Tracer;
use std::fmt::Write as _;
use std::marker::PhantomData;

/// A byte-aligned struct with one serialize function over every [`ByteStream`]: a message body
/// or a struct inside one. Written by `#[derive(BatchStruct)]` (see the derive's documentation
/// in `bitlens_batch`'s crate docs).
pub trait BatchStruct {
    /// Its name in the schema language (`[batch.struct.NAME]`); a message's name.
    const STRUCT_NAME: &'static str;
    /// The fewest bytes it takes on the wire.
    const MIN_BYTES: usize;
    /// The most bytes it takes on the wire: the size upper bound of a message of it.
    const MAX_BYTES: usize;
    /// True when every field is a fixed-width number, a pod array, raw bytes or a pod struct,
    /// without a range check or a guard: what a plain-old-data struct sent in one unchecked copy
    /// (`#[batch(pod)]`) may hold.
    const PLAIN: bool;

    /// Writes, reads, measures or traces the struct's fields, in order.
    ///
    /// # Errors
    /// Whatever the stream reports, and the fields' range checks.
    fn serialize_fields<S: ByteStream>(&mut self, s: &mut S) -> Result<()>;

    /// Adds its `[batch.struct.NAME]` definition, and those of the structs it holds, to `w`.
    fn define(w: &mut SchemaWriter);
}

/// Collects the `[batch.struct.NAME]` definitions of a message set, each once, in the order
/// first met (a struct before the structs that hold it).
#[derive(Debug, Default)]
pub struct SchemaWriter {
    defined: Vec<(&'static str, Vec<String>)>,
    text: String,
}

impl SchemaWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Defines struct `name` with `fields` (inline tables of the schema language), unless a
    /// struct of that name is already defined.
    ///
    /// # Panics
    /// When another struct of that name was defined with other fields: the schema would
    /// describe one of them wrongly (give one `#[batch(name = "...")]`).
    pub fn define(&mut self, name: &'static str, fields: &[String]) {
        if let Some((_, before)) = self.defined.iter().find(|(n, _)| *n == name) {
            assert!(
                before.as_slice() == fields,
                "two batch structs are named {name} with other fields: rename one with \
                 #[batch(name = \"...\")]"
            );
            return;
        }
        self.defined.push((name, fields.to_vec()));
        let _ = writeln!(self.text, "\n[batch.struct.{name}]\nfields = [");
        for f in fields {
            let _ = writeln!(self.text, "  {f},");
        }
        self.text.push_str("]\n");
    }

    /// The definitions written.
    pub fn finish(self) -> String {
        self.text
    }
}

/// A string in the schema language (a TOML basic string): the codec's, which the packet
/// derive's schema text uses too.
pub use bitlens_codec::packed::toml_str;

/// Equal strings, at compile time (the message enum's check that names are distinct).
pub const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The size upper bound of a message derived with `#[batch(exact_size)]`: its exact size,
/// counted on a copy (the derive's default bound is the constant [`BatchStruct::MAX_BYTES`],
/// seed 002's "cheap over exact"; a message whose fields may take more than a datagram's body
/// but whose values are usually small takes this one). A value the count refuses reports
/// `MAX_BYTES`; its write then fails with the count's error.
pub fn exact_size<M: BatchStruct + Clone>(m: &M) -> usize {
    let mut counter = crate::stream::ByteCounter::new();
    match m.clone().serialize_fields(&mut counter) {
        Ok(()) => counter.bytes(),
        Err(_) => M::MAX_BYTES,
    }
}

/// The bytes a packed length or count of at most `max` takes at most (the tagged format's
/// varint): the size bound of strings, byte vectors and arrays.
pub const fn varint_len(max: usize) -> usize {
    bitlens_tagged::varint::varint_len(max as u64)
}

/// The largest message body: derived `max_len`s and fields are bounded by it at compile time
/// (and their error messages say 65529).
pub const MAX_BODY: usize = crate::max_body(crate::MAX_MTU);

/// An unsigned value in `min..=max`, else `out_of_range` at byte `at` naming `name`.
///
/// # Errors
/// Out_of_range.
#[inline]
pub fn check_range(v: u64, min: u64, max: u64, at: usize, name: &'static str) -> Result<()> {
    if v < min || v > max {
        return Err(BatchError::out_of_range(v, min, max, at, name));
    }
    Ok(())
}

/// A signed value with `|v| <= abs_max`, else `out_of_range` (`|v|` out of `0..=abs_max`).
///
/// # Errors
/// Out_of_range.
#[inline]
pub fn check_abs(v: i64, abs_max: u64, at: usize, name: &'static str) -> Result<()> {
    let a = v.unsigned_abs();
    if a > abs_max {
        return Err(BatchError::out_of_range(a, 0, abs_max, at, name));
    }
    Ok(())
}

/// The values of a plain-old-data array in `min..=max`: the first one outside is the error.
///
/// # Errors
/// Out_of_range.
#[inline]
pub fn check_range_all<T: Copy + Into<u64>>(
    items: &[T],
    min: u64,
    max: u64,
    at: usize,
    name: &'static str,
) -> Result<()> {
    items
        .iter()
        .try_for_each(|&v| check_range(v.into(), min, max, at, name))
}

/// The values of a plain-old-data array within `abs_max`: the error reports the largest `|v|`.
///
/// # Errors
/// Out_of_range.
#[inline]
pub fn check_abs_all<T: Copy + Into<i64>>(
    items: &[T],
    abs_max: u64,
    at: usize,
    name: &'static str,
) -> Result<()> {
    let worst = items
        .iter()
        .map(|&v| v.into().unsigned_abs())
        .max()
        .unwrap_or(0);
    if worst > abs_max {
        return Err(BatchError::out_of_range(worst, 0, abs_max, at, name));
    }
    Ok(())
}

/// The error of a guarded field given a value while its guard leaves it out (the schema's
/// rule: absent fields read as their default, and only the default may be written).
#[cold]
pub fn guarded_value(at: usize, name: &'static str) -> BatchError {
    let why = "a value for a field its guard leaves out";
    BatchError::new(BatchErrorKind::InvalidValue(why), at, name)
}

/// The error of a message type the set does not list, read as if it did (the dissector skips
/// such messages by their length and never asks).
#[cold]
pub fn unlisted_type(raw: &RawMessage<'_>) -> BatchError {
    let why = "a message type the set does not list";
    BatchError::new(BatchErrorKind::InvalidValue(why), raw.body_offset(), "type")
        .in_message(raw.at())
}

/// [`MessageSet::read_body`] for one message type: `raw`'s body read into a fresh `M`, recorded
/// by `tracer`, which comes back whether the read failed or not (a derived enum's arm per type).
pub fn read_body_as<M: MessageBody + Default, T: Tracer>(
    raw: &RawMessage<'_>,
    tracer: T,
) -> (Result<()>, T) {
    match raw.decode_traced(&mut M::default(), tracer) {
        Ok(tracer) => (Ok(()), tracer),
        Err((e, tracer)) => (Err(e), tracer),
    }
}

/// The `[batch]` section of a message set: its `types` (number, name; each body the batch
/// struct of that name), then the structs `w` holds.
pub fn set_text(types: &[(u8, &'static str)], w: SchemaWriter) -> String {
    let mut out = String::from("[batch]\nmessages = [\n");
    for (t, name) in types {
        let _ = writeln!(out, "  {{ type = {t}, name = {} }},", toml_str(name));
    }
    out.push_str("]\n");
    out.push_str(&w.finish());
    out
}

/// The message enum of a protocol's batches, one variant per message type: what
/// `#[derive(MessageEnum)]` writes. [`MessagesOf`] makes it a [`MessageSet`] for the inspector.
pub trait MessageEnum: Sized {
    /// Every message type and its name, in declaration order.
    const TYPES: &'static [(u8, &'static str)];

    /// The name of `message_type`, `None` for a type the set does not know.
    fn message_name(message_type: u8) -> Option<&'static str> {
        Self::TYPES
            .iter()
            .find(|(t, _)| *t == message_type)
            .map(|(_, n)| *n)
    }

    /// Reads the body of `raw`, a message of a known type, while `tracer` records it (as
    /// [`MessageSet::read_body`]).
    fn read_body<T: Tracer>(raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T);

    /// Decodes a raw message: `Ok(None)` for a type the set does not know.
    ///
    /// # Errors
    /// The decode error, naming the message.
    fn decode(raw: &RawMessage<'_>) -> Result<Option<Self>>;

    /// Its message type.
    fn message_type(&self) -> u8;

    /// Its size upper bound.
    fn size_upper_bound(&self) -> usize;

    /// Appends it to a batch (`Ok(false)` when its bound does not fit).
    ///
    /// # Errors
    /// As [`BatchWriter::push`].
    fn push(&mut self, w: &mut BatchWriter<'_>, stage: UpdateStage) -> Result<bool>;

    /// Encodes header and body at the start of `dst` (no batch header), returning the bytes
    /// used.
    ///
    /// # Errors
    /// As [`crate::encode_message`].
    fn encode(&mut self, dst: &mut [u8], stage: UpdateStage) -> Result<usize>;

    /// The `[batch]` section of the schema language that describes the set, with every batch
    /// struct it uses: `bitlens --schema` reads batches with it exactly as the compiled set
    /// does.
    fn schema() -> String;
}

/// The [`MessageSet`] of a [`MessageEnum`]: `BatchDissector::new("batch", MessagesOf::<M>::new())`.
pub struct MessagesOf<M>(PhantomData<fn() -> M>);

impl<M> MessagesOf<M> {
    /// The set.
    pub const fn new() -> Self {
        MessagesOf(PhantomData)
    }
}

impl<M> Default for MessagesOf<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M> Clone for MessagesOf<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for MessagesOf<M> {}

impl<M> std::fmt::Debug for MessagesOf<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MessagesOf<{}>", std::any::type_name::<M>())
    }
}

impl<M: MessageEnum> MessageSet for MessagesOf<M> {
    fn message_name(&self, message_type: u8) -> Option<&'static str> {
        M::message_name(message_type)
    }

    fn read_body<T: Tracer>(&self, raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T) {
        M::read_body(raw, tracer)
    }

    fn schema_text(&self) -> Option<String> {
        Some(M::schema())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "two batch structs are named Pos with other fields")]
    fn two_structs_of_one_name_with_other_fields_are_refused() {
        let mut w = SchemaWriter::new();
        w.define("Pos", &["{ name = \"x\", type = \"u8\" }".to_owned()]);
        // The same definition again is fine (a struct used twice).
        w.define("Pos", &["{ name = \"x\", type = \"u8\" }".to_owned()]);
        w.define("Pos", &["{ name = \"y\", type = \"u16\" }".to_owned()]);
    }

    #[test]
    fn inline_lists_compare_their_values_only() {
        use crate::stream::{InlineStr, InlineVec};
        let mut v = InlineVec::<u16, 4>::try_from_slice(&[1, 2, 3]).unwrap();
        v.reset(0);
        assert_eq!(v, InlineVec::new());
        // A read into a string that held a longer text leaves its old bytes past the length.
        let mut s = InlineStr::<8>::truncated("longer");
        let mut r = crate::ByteReader::new(&[2, b'h', b'i']);
        crate::ByteStream::text(&mut r, "s", &mut s).unwrap();
        assert_eq!(s, InlineStr::<8>::truncated("hi"));
        assert!(same_str("Ping", "Ping") && !same_str("Ping", "Pong") && !same_str("a", "ab"));
    }

    #[test]
    fn the_largest_body_is_the_one_the_compile_errors_name() {
        assert_eq!(MAX_BODY, 65_529);
    }

    #[test]
    fn varint_len_is_the_tagged_formats() {
        for x in [
            0u64,
            1,
            127,
            128,
            255,
            16_511,
            16_512,
            65_529,
            u32::MAX as u64,
        ] {
            assert_eq!(
                varint_len(x as usize),
                bitlens_tagged::varint::varint_len(x),
                "{x}"
            );
        }
    }

    #[test]
    fn checks_report_the_value_and_range() {
        let e = check_range(7, 1, 5, 3, "x").unwrap_err();
        assert_eq!(
            (*e.kind(), e.offset(), e.field()),
            (
                BatchErrorKind::OutOfRange {
                    value: 7,
                    min: 1,
                    max: 5
                },
                3,
                "x"
            )
        );
        assert!(check_range(5, 1, 5, 0, "x").is_ok());
        let e = check_abs_all(&[3i32, -9, 8], 5, 0, "v").unwrap_err();
        assert_eq!(
            *e.kind(),
            BatchErrorKind::OutOfRange {
                value: 9,
                min: 0,
                max: 5
            }
        );
        let e = check_range_all(&[1u16, 9, 10], 0, 8, 0, "v").unwrap_err();
        assert!(matches!(
            e.kind(),
            BatchErrorKind::OutOfRange { value: 9, .. }
        ));
        assert_eq!(toml_str("a\"b\\"), "\"a\\\"b\\\\\"");
    }
}
