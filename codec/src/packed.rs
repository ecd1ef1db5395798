//! `#[derive(BitPacked)]` and `#[derive(PacketSet)]`: one description of a message that is its
//! `serialize` function and its schema.
//!
//! A derived type gets the one [`BitPacked::serialize`] function over every [`Stream`] (write,
//! read, measure, trace), its [`BitPacked::MIN_BITS`] for the array length checks, and its
//! definition in the schema language of `SCHEMA.md` ([`schema_of`]), which `bitlens-schema`
//! interprets to the same bytes, verdicts, errors and traces. A packet enum derives
//! [`PacketSet`]: the [`Packet`] impl (protocol, type numbers, bodies; framing by
//! [`crate::packet::frame`]) and the whole protocol's schema.
//!
//! ```
//! use bitlens_codec::{BitPacked, PacketSet, ReadStream, WriteStream, read_packet, write_packet};
//!
//! #[derive(BitPacked, Debug, Default, PartialEq)]
//! struct Player {
//!     #[bitlens(range = 0..=100)]
//!     health: i32,
//!     alive: bool,
//!     #[bitlens(max_len = 31)]
//!     name: String,
//!     #[bitlens(compressed(min = -512.0, max = 512.0, resolution = 0.01))]
//!     position: [f32; 3],
//! }
//!
//! #[derive(PacketSet, Debug, PartialEq)]
//! #[bitlens(protocol = "tiny", id = 0x7469_6e79, mtu = 1200)]
//! enum Tiny {
//!     Hello(Player),
//!     Bye,
//! }
//!
//! impl Default for Tiny {
//!     fn default() -> Self { Tiny::Bye }
//! }
//!
//! let mut p = Player { health: 73, alive: true, name: "bob".into(), position: [1.5, 0.0, -2.25] };
//! let mut buf = [0u8; 64];
//! let mut w = WriteStream::new(&mut buf);
//! p.serialize(&mut w)?;
//! let n = w.finish();
//! let mut back = Player::default();
//! back.serialize(&mut ReadStream::new(&buf[..n]))?;
//! assert_eq!(back, p);
//!
//! // A packet set frames it: CRC, type, body, end check.
//! let n = write_packet(&mut Tiny::Hello(p), &mut buf)?;
//! assert!(matches!(read_packet::<Tiny>(&buf[..n])?, Tiny::Hello(q) if q.health == 73));
//!
//! // The same attributes are the schema.
//! let schema = Tiny::schema();
//! assert!(schema.contains(r#"{ name = "health", type = "int", min = 0, max = 100 }"#));
//! # Ok::<(), bitlens_codec::Error>(())
//! ```
//!
//! The attribute language is described on the derive macros (`bitlens_codec_derive`); what it
//! cannot say (a linking context, fields named other than the Rust layout, conditions other than a
//! bool flag) stays a hand-written `serialize` function, which may still implement
//! [`BitPacked`] by hand to nest in derived types.

use crate::bits::{bits_required, bits_required128};
use crate::error::{Error, ErrorKind, Result};
use crate::packet::Packet;
use crate::stream::Stream;
use std::any::type_name;
use std::fmt::Write as _;

/// A value with a bit-packed form: one serialize function for every stream, the fewest bits it
/// takes, and its description in the schema language. Derive it with `#[derive(BitPacked)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no bit-packed form",
    label = "this field's type needs `#[derive(BitPacked)]`, or an attribute that says its wire form",
    note = "integers, bool, f32, f64, u64, i128, u128 and [u8; N] have one; String and Vec need `max_len`, floats arrays `compressed(...)` or `quaternion(...)`"
)]
pub trait BitPacked {
    /// The fewest bits a value takes on the wire: what an array reader multiplies its count by
    /// before anything grows.
    const MIN_BITS: usize;

    /// True for types whose fields go straight into the enclosing scope when serialized with
    /// [`BitPacked::serialize`] (structs and tagged unions); false for types that are one field
    /// (integers, enums).
    const FIELDS: bool = false;

    /// Serializes the value on any stream: a struct's fields without a scope of their own (as a
    /// packet body or an array element is), or a single-field type under the name `""` (an array
    /// element).
    ///
    /// # Errors
    /// Whatever the stream reports; a value outside its declared range.
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()>;

    /// Serializes the value as the field `name` of an enclosing struct: a struct in a scope named
    /// `name`, a single-field type under that name.
    ///
    /// # Errors
    /// As [`BitPacked::serialize`].
    #[inline(always)]
    fn serialize_field<S: Stream>(&mut self, s: &mut S, name: &str) -> Result<()> {
        s.scope(name, |s| self.serialize(s))
    }

    /// The field keys that describe this type in the schema language (`type = "i32"`, or
    /// `type = "Player"` after defining `[struct.Player]` in `w`).
    fn schema_type(w: &mut SchemaWriter) -> String;
}

/// The element of a `Vec` field: a reader makes each one as `Default::default()` before it reads
/// it in place ([`Stream::array`]). The derive checks it for every `Vec` field
/// ([`vec_element`]), so that a missing `Default` says the fix (most often a tagged union: an
/// enum with data, which needs `#[derive(Default)]` and a `#[default]` variant).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is the element of a `Vec` field and has no `Default`",
    label = "a reader makes each element as `Default::default()`, then reads it in place",
    note = "derive it: `#[derive(Default)]` (on an enum with data, also mark the variant a new element starts as with `#[default]`), or implement `Default`"
)]
pub trait VecElement: Default {}

impl<T: Default> VecElement for T {}

/// The derive's check of a `Vec` field's element type ([`VecElement`]), at the element type.
#[doc(hidden)]
pub const fn vec_element<T: VecElement>() {}

/// An element of a sparse array (seed 000, "Serializing Array Subsets"): a struct with one
/// `#[bitlens(sparse_index)]` field, which the array sends as a relative object index before the
/// struct's other fields. Derived with [`BitPacked`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element of a sparse array",
    label = "a sparse array's element needs a field marked `#[bitlens(sparse_index)]`"
)]
pub trait SparseElement: BitPacked + Default {
    /// The index field's name on the wire.
    const INDEX_NAME: &'static str;
    /// The element's object index.
    fn index(&self) -> i64;
    /// Sets the element's object index; `None` when the index does not fit the field's type.
    fn set_index(&mut self, index: i64) -> Option<()>;
}

/// A packet set: a [`Packet`] enum whose whole protocol has a schema. Derived with
/// `#[derive(PacketSet)]`.
pub trait PacketSet: Packet {
    /// The whole protocol in the schema language (`SCHEMA.md`): `[protocol]` and every struct,
    /// enum and union of its bodies. `bitlens_schema::Schema::from_toml` of this text reads,
    /// writes and traces exactly as the compiled packets do.
    fn schema() -> String;
}

/// The definitions of `T` (and of the types it uses) in the schema language, without a
/// `[protocol]` section.
pub fn schema_of<T: BitPacked>() -> String {
    let mut w = SchemaWriter::new();
    T::schema_type(&mut w);
    w.finish()
}

// ---- primitives ---------------------------------------------------------------------------------

macro_rules! full_range {
    ($($t:ty => $schema:literal),*) => {$(
        impl BitPacked for $t {
            const MIN_BITS: usize = bits_required(<$t>::MIN as i64, <$t>::MAX as i64) as usize;

            #[inline(always)]
            fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
                self.serialize_field(s, "")
            }

            /// The full range of the type as [`Stream::int`].
            #[inline(always)]
            fn serialize_field<S: Stream>(&mut self, s: &mut S, name: &str) -> Result<()> {
                s.int_as(name, self, <$t>::MIN, <$t>::MAX)
            }

            fn schema_type(_: &mut SchemaWriter) -> String {
                concat!("type = \"", $schema, "\"").to_owned()
            }
        }
    )*};
}
full_range!(i8 => "i8", i16 => "i16", i32 => "i32", i64 => "i64", u8 => "u8", u16 => "u16", u32 => "u32");

macro_rules! raw {
    ($($t:ty => $method:ident, $bits:expr, $schema:literal);*) => {$(
        impl BitPacked for $t {
            const MIN_BITS: usize = $bits;

            #[inline(always)]
            fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
                self.serialize_field(s, "")
            }

            #[inline(always)]
            fn serialize_field<S: Stream>(&mut self, s: &mut S, name: &str) -> Result<()> {
                s.$method(name, self)
            }

            fn schema_type(_: &mut SchemaWriter) -> String {
                concat!("type = \"", $schema, "\"").to_owned()
            }
        }
    )*};
}
raw!(bool => bool, 1, "bool"; u64 => u64, 64, "u64"; f32 => f32, 32, "f32"; f64 => f64, 64, "f64";
     u128 => u128, 128, "u128");

impl BitPacked for i128 {
    const MIN_BITS: usize = 128;

    #[inline(always)]
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        self.serialize_field(s, "")
    }

    /// The full range as [`Stream::int128`].
    #[inline(always)]
    fn serialize_field<S: Stream>(&mut self, s: &mut S, name: &str) -> Result<()> {
        s.int128(name, self, i128::MIN, i128::MAX)
    }

    fn schema_type(_: &mut SchemaWriter) -> String {
        format!(
            "type = \"int128\", min = \"{}\", max = \"{}\"",
            i128::MIN,
            i128::MAX
        )
    }
}

impl<const N: usize> BitPacked for [u8; N] {
    const MIN_BITS: usize = N * 8;

    #[inline(always)]
    fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        self.serialize_field(s, "")
    }

    /// Aligns, then the `N` raw bytes ([`Stream::bytes`]).
    #[inline(always)]
    fn serialize_field<S: Stream>(&mut self, s: &mut S, name: &str) -> Result<()> {
        bytes_fixed(s, name, self)
    }

    fn schema_type(_: &mut SchemaWriter) -> String {
        format!("type = \"bytes\", len = {N}")
    }
}

// ---- helpers the derived code calls -------------------------------------------------------------

/// [`Stream::bytes`] of a fixed-size buffer, with the length check of [`Stream::bytes_vec`]
/// first, so that a short read fails as a schema's `bytes` field does.
///
/// # Errors
/// Past_end, nonzero_padding, buffer full.
#[inline]
pub fn bytes_fixed<S: Stream>(s: &mut S, name: &str, buf: &mut [u8]) -> Result<()> {
    if S::READING {
        // As bytes_vec: at the bytes' first bit, after the padding.
        let pad = (8 - s.bit_position() % 8) % 8;
        let needed = buf.len().saturating_mul(8);
        let remaining = s.remaining_bits().saturating_sub(pad);
        if needed > remaining {
            let kind = ErrorKind::PastEnd { needed, remaining };
            return Err(Error::new(kind, s.bit_position() + pad, name));
        }
    }
    s.bytes(name, buf)
}

/// A field that its guard leaves out: a writer refuses a value other than the default (it would
/// be lost), a reader gets the default.
///
/// # Errors
/// Invalid_argument when writing a value that is not `T::default()`.
#[inline]
pub fn absent<S: Stream, T: Default + PartialEq>(
    s: &mut S,
    name: &str,
    flag: &str,
    v: &mut T,
) -> Result<()> {
    if S::READING {
        *v = T::default();
    } else if *v != T::default() {
        return Err(given_while_absent(s.bit_position(), name, flag));
    }
    Ok(())
}

/// An `Option` field that its guard leaves out: a writer refuses `Some`, a reader gets `None`.
///
/// # Errors
/// Invalid_argument when writing `Some`.
#[inline]
pub fn absent_option<S: Stream, T>(
    s: &mut S,
    name: &str,
    flag: &str,
    v: &mut Option<T>,
) -> Result<()> {
    if S::READING {
        *v = None;
    } else if v.is_some() {
        return Err(given_while_absent(s.bit_position(), name, flag));
    }
    Ok(())
}

/// An `Option` field that its guard says is present: the value to serialize, `T::default()` for
/// a reader to fill.
///
/// # Errors
/// Invalid_argument when writing `None`.
#[inline]
pub fn present_option<'v, S: Stream, T: Default>(
    s: &mut S,
    name: &str,
    flag: &str,
    v: &'v mut Option<T>,
) -> Result<&'v mut T> {
    if S::READING {
        return Ok(v.insert(T::default()));
    }
    let bit = s.bit_position();
    v.as_mut().ok_or_else(|| {
        let why = format!("missing value: \"{flag}\" says it is present (give one)");
        Error::new(ErrorKind::InvalidArgument(why), bit, name)
    })
}

#[cold]
fn given_while_absent(bit: usize, name: &str, flag: &str) -> Error {
    // The schema interpreter's words, so both engines refuse alike.
    let why = format!("field given while \"{flag}\" says it is absent (leave it out)");
    Error::new(ErrorKind::InvalidArgument(why), bit, name)
}

/// An `Option` behind its own flag: `flag` as a bool, then the value when it is `Some`.
///
/// # Errors
/// Whatever the stream or `f` reports.
#[inline(always)]
pub fn flagged<S: Stream, T: Default>(
    s: &mut S,
    flag: &str,
    v: &mut Option<T>,
    f: impl FnOnce(&mut S, &mut T) -> Result<()>,
) -> Result<()> {
    let mut present = v.is_some();
    s.bool(flag, &mut present)?;
    if !present {
        if S::READING {
            *v = None;
        }
        return Ok(());
    }
    if S::READING {
        return f(s, v.insert(T::default()));
    }
    match v {
        Some(x) => f(s, x),
        None => Ok(()),
    }
}

/// [`Stream::bits`] of an integer field of `n` bits.
///
/// # Errors
/// As [`Stream::bits`]; out_of_range for a value that does not fit `n` bits.
#[inline(always)]
pub fn bits_as<S: Stream, T: RawBits>(s: &mut S, name: &str, v: &mut T, n: u32) -> Result<()> {
    let mut x = v.to_bits();
    s.bits(name, &mut x, n)?;
    if S::READING {
        *v = T::from_bits(x);
    }
    Ok(())
}

/// Integers sent as raw bits ([`bits_as`]): the two's complement bits of signed types.
pub trait RawBits: Copy {
    /// The value's bits at the type's width, zero-extended to 64 (a negative value sets the top
    /// bit of its type, and so fits only a field as wide as the type).
    fn to_bits(self) -> u64;
    /// The value from bits read (at most the type's width).
    fn from_bits(bits: u64) -> Self;
}

macro_rules! raw_bits {
    ($($t:ty => $u:ty),*) => {$(
        impl RawBits for $t {
            #[inline(always)]
            fn to_bits(self) -> u64 {
                // Two's complement bits of the type's own width: what a reader of that many bits
                // gives back, so every value read re-encodes.
                self as $u as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
        }
    )*};
}
raw_bits!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, i8 => u8, i16 => u16, i32 => u32, i64 => u64);

impl RawBits for bool {
    #[inline(always)]
    fn to_bits(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}

/// [`Stream::int128`] of any integer field (`u64`, `i128`, `u128` with a range).
///
/// # Errors
/// As [`Stream::int128`]; out_of_range for a `u128` above `i128::MAX`.
#[inline(always)]
pub fn int128_as<S: Stream, T: Wide>(
    s: &mut S,
    name: &str,
    v: &mut T,
    min: i128,
    max: i128,
) -> Result<()> {
    let mut x = v.to_i128();
    if S::WRITING && x.is_none() {
        let kind = ErrorKind::OutOfRange {
            value: i128::MAX,
            min,
            max,
        };
        return Err(Error::new(kind, s.bit_position(), name));
    }
    let mut y = x.take().unwrap_or(0);
    s.int128(name, &mut y, min, max)?;
    if S::READING {
        *v = T::from_i128(y);
    }
    Ok(())
}

/// Integers sent by [`int128_as`].
pub trait Wide: Copy {
    /// The value as an `i128` (`None` for a `u128` above `i128::MAX`).
    fn to_i128(self) -> Option<i128>;
    /// The value from an `i128` already checked to lie within a range of this type.
    fn from_i128(v: i128) -> Self;
}

macro_rules! wide {
    ($($t:ty),*) => {$(
        impl Wide for $t {
            #[inline(always)]
            fn to_i128(self) -> Option<i128> {
                i128::try_from(self).ok()
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                v as $t
            }
        }
    )*};
}
wide!(i8, i16, i32, i64, u8, u16, u32, u64, i128, u128);

/// The bounds of an integer type, for the derive's compile-time check that a range fits its
/// field.
pub trait IntBounds {
    /// The smallest value.
    const LOW: i128;
    /// The largest value (`i128::MAX` for `u128`).
    const HIGH: i128;
}

macro_rules! int_bounds {
    ($($t:ty),*) => {$(
        impl IntBounds for $t {
            const LOW: i128 = <$t>::MIN as i128;
            const HIGH: i128 = if (<$t>::MAX as u128) > i128::MAX as u128 {
                i128::MAX
            } else {
                <$t>::MAX as i128
            };
        }
    )*};
}
int_bounds!(
    i8, i16, i32, i64, u8, u16, u32, u64, i128, u128, isize, usize
);

/// A sparse array (seed 000, "Serializing Array Subsets"), as `bitlens_schema`'s `sparse_array`
/// sends it: in a scope named `name`, per element under `[i]` its relative object index
/// ([`Stream::object_index`], named [`SparseElement::INDEX_NAME`]) and its fields, then the
/// sentinel index `max_objects` under `[len]`.
///
/// Bounded on read: the indices strictly increase up to the sentinel, so at most `max_objects`
/// elements, each of at least one bit.
///
/// # Errors
/// Out_of_range for indices that do not increase or pass `max_objects`, or that do not fit the
/// index field; whatever an element reports.
pub fn sparse_array<S: Stream, T: SparseElement>(
    s: &mut S,
    name: &str,
    v: &mut Vec<T>,
    max_objects: i64,
) -> Result<()> {
    s.scope(name, |s| {
        let mut previous = -1i64;
        if S::WRITING {
            for (i, item) in v.iter_mut().enumerate() {
                s.index(i, |s| {
                    let mut current = item.index();
                    s.object_index(T::INDEX_NAME, previous, &mut current, max_objects)?;
                    item.serialize(s)
                })?;
                previous = item.index();
            }
            let mut end = max_objects;
            return s.index(v.len(), |s| {
                s.object_index(T::INDEX_NAME, previous, &mut end, max_objects)
            });
        }
        v.clear();
        loop {
            let i = v.len();
            let done = s.index(i, |s| {
                let bit = s.bit_position();
                let mut current = 0;
                s.object_index(T::INDEX_NAME, previous, &mut current, max_objects)?;
                if current == max_objects {
                    return Ok(true);
                }
                let mut item = T::default();
                item.set_index(current).ok_or_else(|| {
                    let kind = ErrorKind::OutOfRange {
                        value: i128::from(current),
                        min: 0,
                        max: i128::from(max_objects),
                    };
                    Error::new(kind, bit, T::INDEX_NAME)
                })?;
                item.serialize(s)?;
                v.push(item);
                previous = current;
                Ok(false)
            })?;
            if done {
                return Ok(());
            }
        }
    })
}

// ---- the schema text ----------------------------------------------------------------------------

/// Collects the definitions (`[struct.NAME]`, `[enum.NAME]`, `[union.NAME]`) of the types a
/// schema uses, each once, under names unique in the file.
#[derive(Debug, Default)]
pub struct SchemaWriter {
    defs: Vec<Definition>,
}

#[derive(Debug)]
struct Definition {
    /// The Rust type (from [`std::any::type_name`]), or empty for a synthesized struct.
    rust: &'static str,
    name: String,
    text: String,
}

impl SchemaWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Defines `T` once under a name based on `base` (`base_2`, ... when another type took it):
    /// `body` writes the definition (its section header included) given the name chosen. Returns
    /// the name; a type met again (also while its own body is written) gets its first name.
    pub fn define<T: ?Sized>(
        &mut self,
        base: &str,
        body: impl FnOnce(&mut SchemaWriter, &str) -> String,
    ) -> String {
        let rust = type_name::<T>();
        if let Some(d) = self.defs.iter().find(|d| d.rust == rust) {
            return d.name.clone();
        }
        self.insert(rust, base, body)
    }

    /// Defines a struct of no Rust type of its own (a packet body made of a variant's fields),
    /// under a new name based on `base`.
    pub fn synthesize(
        &mut self,
        base: &str,
        body: impl FnOnce(&mut SchemaWriter, &str) -> String,
    ) -> String {
        self.insert("", base, body)
    }

    fn insert(
        &mut self,
        rust: &'static str,
        base: &str,
        body: impl FnOnce(&mut SchemaWriter, &str) -> String,
    ) -> String {
        let mut name = base.to_owned();
        let mut n = 1;
        while self.defs.iter().any(|d| d.name == name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        let i = self.defs.len();
        self.defs.push(Definition {
            rust,
            name: name.clone(),
            text: String::new(),
        });
        let text = body(self, &name);
        self.defs[i].text = text;
        name
    }

    /// The definitions, in the order they were first met.
    pub fn finish(self) -> String {
        let mut out = String::new();
        for d in self.defs {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&d.text);
        }
        out
    }
}

/// `[struct.NAME]` with `fields` (each an inline table's keys, without braces).
pub fn struct_text(name: &str, fields: &[String]) -> String {
    let mut out = format!("[struct.{}]\n", toml_key(name));
    if fields.is_empty() {
        out.push_str("fields = []\n");
        return out;
    }
    out.push_str("fields = [\n");
    for f in fields {
        let _ = writeln!(out, "  {{ {f} }},");
    }
    out.push_str("]\n");
    out
}

/// A TOML basic string: `"..."` with `\\`, `\"` and control characters escaped.
pub fn toml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML key: bare when it can be, else quoted.
pub fn toml_key(s: &str) -> String {
    let bare = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { s.to_owned() } else { toml_str(s) }
}

/// An `f32` as a TOML float that the schema reads back as the same `f32` (the shortest decimal
/// that round-trips, with a `.0` where Rust prints none).
pub fn toml_f32(x: f32) -> String {
    let text = format!("{x:?}");
    if text.contains(['.', 'e', 'E', 'n', 'i']) {
        text
    } else {
        format!("{text}.0")
    }
}

/// An integer in the schema language: a TOML integer within `i64`, else a string of its digits
/// (what `int128` bounds take).
pub fn toml_int(x: i128) -> String {
    match i64::try_from(x) {
        Ok(v) => v.to_string(),
        Err(_) => format!("\"{x}\""),
    }
}

/// The type name in a derived type's schema keys (`type = "Name"` gives `Name`): what a sparse
/// array's `element`, an `include` and a packet's `body` name.
pub fn named_type(keys: &str) -> &str {
    keys.strip_prefix("type = \"")
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or(keys)
}

/// The fewest bits of a `max_len` count: `bits_required(0, max_len)`.
pub const fn count_bits(max_len: usize) -> usize {
    let max = if max_len > i64::MAX as usize {
        i64::MAX
    } else {
        max_len as i64
    };
    bits_required(0, max) as usize
}

/// The fewest bits of an `int128` over `min..=max`.
pub const fn int128_bits(min: i128, max: i128) -> usize {
    bits_required128(min, max) as usize
}

/// The larger of two bit counts (a const `max`).
pub const fn max_bits(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// The smaller of two bit counts (a const `min`): a union's fewest bits over its variants.
pub const fn min_bits(a: usize, b: usize) -> usize {
    if a < b { a } else { b }
}

pub use stable_range::{
    RANGE_STABLE, RANGE_UNDECIDED, RANGE_UNSTABLE, STABILITY_CHECKED_STEPS, range_stability,
};

/// The derive's compile-time stability check of compressed float ranges (a module of its own, so
/// that the warning's text names the same impls whatever else this module gains).
pub mod stable_range {
    use crate::quantize::CompressedFloat;

    /// The most steps whose stability a derive decides code by code at compile time: above it (and
    /// at most [`MAX_STABLE_STEPS`](crate::quantize::MAX_STABLE_STEPS), and not stable by the cheap
    /// bound) `const` evaluation would take too long, and [`range_stability`] says
    /// [`RANGE_UNDECIDED`].
    pub const STABILITY_CHECKED_STEPS: u32 = 1 << 16;

    /// [`range_stability`]: every code of the range re-encodes as itself.
    pub const RANGE_STABLE: u8 = 0;
    /// [`range_stability`]: some code of the range re-encodes as another one.
    pub const RANGE_UNSTABLE: u8 = 1;
    /// [`range_stability`]: too many steps to decide at compile time (check
    /// [`CompressedFloat::is_stable`] at run time).
    pub const RANGE_UNDECIDED: u8 = 2;

    /// Whether a compressed float range is stable ([`CompressedFloat::is_stable`]), as far as a
    /// compile-time check can afford to tell: [`RANGE_STABLE`], [`RANGE_UNSTABLE`] or
    /// [`RANGE_UNDECIDED`] (between [`STABILITY_CHECKED_STEPS`] and 2^23 + 1 steps, not stable by
    /// the cheap bound). The derive turns the last two into warnings ([`StableRange`]).
    pub const fn range_stability(spec: &CompressedFloat) -> u8 {
        if spec.is_stable_by_bound() {
            RANGE_STABLE
        } else if spec.steps() > crate::quantize::MAX_STABLE_STEPS {
            RANGE_UNSTABLE
        } else if spec.steps() > STABILITY_CHECKED_STEPS {
            RANGE_UNDECIDED
        } else if spec.is_stable() {
            RANGE_STABLE
        } else {
            RANGE_UNSTABLE
        }
    }

    /// The derive's compile-time check of a compressed float range: `StableRange::<{
    /// range_stability(&RANGE) }>::check()` compiles silently for a stable range and warns (a
    /// deprecation warning at the attribute, the only warning a derive can raise) for the others,
    /// as `bitlens-schema` warns when it loads such a range.
    #[doc(hidden)]
    pub struct StableRange<const STABILITY: u8>;

    // The impls name their value as a literal, not as RANGE_STABLE and the others: rustc prints
    // a constant in a type's generic arguments as the path of an anonymous constant
    // (`bitlens_codec::::packed::stable_range::{impl#1}::{constant#0}`) in the warning. Their
    // values are pinned below.
    const _: () = assert!(RANGE_STABLE == 0 && RANGE_UNSTABLE == 1 && RANGE_UNDECIDED == 2);

    impl StableRange<0> {
        /// A stable range: nothing to say.
        pub const fn check() {}
    }

    impl StableRange<1> {
        /// An unstable range.
        #[deprecated(
            note = "this compressed float range is not stable: a packet read with it may not \
                    re-encode to the same bytes (readers accept every code up to M, as serialize \
                    1.0 says; see CompressedFloat::is_stable and WIRE.md). A coarser resolution is \
                    stable; `bitlens-schema` says which for the derived schema"
        )]
        pub const fn check() {}
    }

    impl StableRange<2> {
        /// A range too large to check at compile time.
        #[deprecated(
            note = "this compressed float range has too many steps to check its stability at \
                    compile time: check CompressedFloat::is_stable at run time (or load the derived \
                    schema with `bitlens-schema`, which warns when it is not stable)"
        )]
        pub const fn check() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantize::CompressedFloat;

    #[test]
    fn range_stability_is_is_stable_where_it_decides() {
        let class = |min, max, res| {
            let spec = CompressedFloat::new(min, max, res).unwrap();
            (range_stability(&spec), spec.is_stable())
        };
        // Game ranges, stable by the bound.
        assert_eq!(class(-512.0, 512.0, 0.01), (RANGE_STABLE, true));
        // Issue 21's ranges: past 2^23 + 1 steps.
        assert_eq!(class(0.0, 100_000.0, 0.001), (RANGE_UNSTABLE, false));
        assert_eq!(class(100.0, 200.0, 1e-5), (RANGE_UNSTABLE, false));
        // Steps narrower than an ulp, few enough to check code by code.
        assert_eq!(class(1e6, 1e6 + 1000.0, 0.05), (RANGE_UNSTABLE, false));
        // Too many steps for the compile-time budget, whatever the truth.
        assert_eq!(
            range_stability(&CompressedFloat::new(1000.0, 2000.0, 2e-4).unwrap()),
            RANGE_UNDECIDED
        );
        // Small ranges near and below an ulp: the check agrees with is_stable on each.
        let mut seen = [0usize; 2];
        for m in [3u32, 100, 1000, 5000, 20_000, 60_000] {
            for base in [0.0f32, 1.0, 1000.0, 65_536.0, 1e6, 3e6] {
                for span in [0.001f32, 1.0, 100.0, 1000.0] {
                    let Ok(spec) = CompressedFloat::new(base, base + span, span / m as f32) else {
                        continue; // base + span rounds to base
                    };
                    let c = range_stability(&spec);
                    assert_ne!(c, RANGE_UNDECIDED, "{base} {span} {m}");
                    assert_eq!(c == RANGE_STABLE, spec.is_stable(), "{base} {span} {m}");
                    seen[usize::from(c)] += 1;
                }
            }
        }
        assert!(seen[0] > 10 && seen[1] > 10, "{seen:?}");
    }

    #[test]
    fn floats_read_back_as_the_same_f32() {
        for x in [0.01f32, -512.0, 512.0, 1e-7, 3.4e38, 0.1, 1.0 / 3.0] {
            let text = toml_f32(x);
            assert_eq!(text.parse::<f32>().unwrap(), x, "{text}");
            assert!(text.contains(['.', 'e']), "{text} is a TOML float");
        }
    }

    #[test]
    fn strings_and_keys_are_escaped() {
        assert_eq!(toml_str("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(toml_key("rigid body"), "\"rigid body\"");
        assert_eq!(toml_key("Rigid_Body-2"), "Rigid_Body-2");
        assert_eq!(toml_int(i128::from(i64::MIN)), i64::MIN.to_string());
        assert_eq!(toml_int(i128::MAX), format!("\"{}\"", i128::MAX));
    }

    #[test]
    fn a_name_taken_by_another_type_gets_a_suffix() {
        let mut w = SchemaWriter::new();
        let a = w.define::<u8>("Thing", |_, n| format!("[struct.{n}]\nfields = []\n"));
        let b = w.define::<u16>("Thing", |_, n| format!("[struct.{n}]\nfields = []\n"));
        let again = w.define::<u8>("Other", |_, _| unreachable!());
        assert_eq!(
            (a.as_str(), b.as_str(), again.as_str()),
            ("Thing", "Thing_2", "Thing")
        );
        assert_eq!(
            w.finish(),
            "[struct.Thing]\nfields = []\n\n[struct.Thing_2]\nfields = []\n"
        );
    }
}
