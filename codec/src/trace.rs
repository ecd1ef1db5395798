//! What a read saw, for people: a [`Trace`] of every field (path, bit offset, width, value,
//! allowed range), check marker and padding, in stream order, and how the read ended.
//!
//! [`TraceStream`](crate::TraceStream) fills one through a [`Recorder`]; [`ReadStream`](crate::ReadStream)
//! reads through [`NoTrace`], whose hooks cost nothing.

use crate::error::{Error, ErrorKind};
use crate::fixed::Fixed;
use crate::float_text::{f32_text, f64_text};

pub use crate::path_string::PathString;

/// A decoded value as the trace records it (and as the schema interpreter represents data).
///
/// Equality is the equality of what was on the wire: floats compare by their bits, so a NaN
/// equals the same NaN (two traces of one datagram are equal) and `0.0` differs from `-0.0`.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum Value {
    /// No value of its own (a struct or array scope).
    None,
    /// A bool.
    Bool(bool),
    /// Any integer that fits `i128` (every `i64`, `u64` and `int128`, and a `u128` up to
    /// `i128::MAX`). Serialized as a JSON number within the range of `i64` and `u64`, where
    /// JSON readers get it back exactly, else as a string of its digits ([`JsonInt`]).
    Int(#[cfg_attr(feature = "serde", serde(serialize_with = "serialize_int"))] i128),
    /// A 32-bit float (also compressed floats, after decoding). Serialized as a JSON number,
    /// or as `"nan"`, `"inf"`, `"-inf"`, `"nan:0x..."` ([`crate::float_text`]).
    F32(
        #[cfg_attr(
            feature = "serde",
            serde(serialize_with = "crate::float_text::serialize_f32")
        )]
        f32,
    ),
    /// A 64-bit float, serialized as [`Value::F32`] is.
    F64(
        #[cfg_attr(
            feature = "serde",
            serde(serialize_with = "crate::float_text::serialize_f64")
        )]
        f64,
    ),
    /// A string.
    Str(String),
    /// Raw bytes (serialized as a hex string).
    Bytes(#[cfg_attr(feature = "serde", serde(serialize_with = "hex_string"))] Vec<u8>),
    /// Several floats: a compressed vector or a quaternion `[x, y, z, w]`.
    Floats(
        #[cfg_attr(
            feature = "serde",
            serde(serialize_with = "crate::float_text::serialize_f32s")
        )]
        Vec<f32>,
    ),
    /// A `u128` above `i128::MAX` (smaller ones are [`Value::Int`], so every integer has one
    /// form: build with [`Value::from_u128`]). Printed as its decimal digits, serialized as a
    /// string of them.
    U128(#[cfg_attr(feature = "serde", serde(serialize_with = "serialize_u128"))] u128),
    /// A fixed-point value (decoded; the raw integer is the field's `raw`). Printed as its
    /// exact decimal, serialized as [`Fixed`] says.
    Fixed(Fixed),
}

impl Value {
    /// The value borrowed, as a trace's [`Field::value`] gives it (an integer as
    /// [`ValueRef::Int`] within `i64`, [`ValueRef::UInt`] within `u64`, else
    /// [`ValueRef::Wide`]).
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::None => ValueRef::None,
            Value::Bool(b) => ValueRef::Bool(*b),
            Value::Int(i) => match (i64::try_from(*i), u64::try_from(*i)) {
                (Ok(small), _) => ValueRef::Int(small),
                (_, Ok(u)) => ValueRef::UInt(u),
                _ => ValueRef::Wide(*i),
            },
            Value::U128(u) => ValueRef::U128(*u),
            Value::F32(x) => ValueRef::F32(*x),
            Value::F64(x) => ValueRef::F64(*x),
            Value::Str(s) => ValueRef::Str(s),
            Value::Bytes(b) => ValueRef::Bytes(b),
            Value::Floats(v) => ValueRef::Floats(v),
            Value::Fixed(x) => ValueRef::Fixed(*x),
        }
    }

    /// An unsigned 128-bit integer: [`Value::Int`] when it fits `i128`, else [`Value::U128`].
    pub fn from_u128(v: u128) -> Value {
        match i128::try_from(v) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::U128(v),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::None, Value::None) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Floats(a), Value::Floats(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Value::U128(a), Value::U128(b)) => a == b,
            (Value::Fixed(a), Value::Fixed(b)) => a == b,
            // Every variant named, so that a new one cannot fall through unnoticed.
            (
                Value::None
                | Value::Bool(_)
                | Value::Int(_)
                | Value::F32(_)
                | Value::F64(_)
                | Value::Str(_)
                | Value::Bytes(_)
                | Value::Floats(_)
                | Value::U128(_)
                | Value::Fixed(_),
                _,
            ) => false,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.as_ref(), f)
    }
}

/// An integer as JSON: a number within the range of `i64` and `u64` (which every JSON reader
/// holds exactly), else a string of its decimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonInt(pub i128);

#[cfg(feature = "serde")]
impl serde::Serialize for JsonInt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        serialize_int(&self.0, s)
    }
}

#[cfg(feature = "serde")]
fn serialize_int<S: serde::Serializer>(v: &i128, s: S) -> std::result::Result<S::Ok, S::Error> {
    if let Ok(x) = i64::try_from(*v) {
        s.serialize_i64(x)
    } else if let Ok(x) = u64::try_from(*v) {
        s.serialize_u64(x)
    } else {
        s.collect_str(v)
    }
}

#[cfg(feature = "serde")]
fn serialize_u128<S: serde::Serializer>(v: &u128, s: S) -> std::result::Result<S::Ok, S::Error> {
    match u64::try_from(*v) {
        Ok(x) => s.serialize_u64(x),
        Err(_) => s.collect_str(v),
    }
}

#[cfg(feature = "serde")]
fn hex_string<S: serde::Serializer>(bytes: &[u8], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&Value::Bytes(bytes.to_vec()))
}

/// What a field is, in a [`Trace`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case", tag = "kind")
)]
pub enum FieldKind {
    /// A value.
    Value,
    /// A struct or array: the fields after it with a greater depth are inside it.
    Scope,
    /// Alignment padding.
    Padding,
    /// A check marker (or the packet CRC, labelled `crc32`).
    Check {
        /// The check's label.
        label: PathString,
        /// The 32 bits the reader expected.
        expected: u32,
        /// The 32 bits found.
        found: u32,
    },
}

/// One recorded field of a [`Trace`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TraceField {
    /// Full path, outermost first: `objects[17].position.x`. Inline up to 24 bytes: a trace
    /// records a path per field, and most fit without an allocation. Read it through
    /// [`TraceField::path`] and [`TraceField::name`]: how a trace stores names may change (issue
    /// 20: record positions, build names only when they are shown).
    path: PathString,
    /// Nesting depth: 0 at the top.
    pub depth: usize,
    /// First bit.
    pub bit: usize,
    /// Width in bits (for a scope: everything inside it).
    pub bits: usize,
    /// The value (for compressed encodings: the decoded value).
    pub value: Value,
    /// The integer sent on the wire, where it differs from `value` (a compressed float's code).
    pub raw: Option<i128>,
    /// The allowed range of the wire integer, for ranged fields.
    pub range: Option<(i128, i128)>,
    /// What the field is.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub kind: FieldKind,
    /// The read stopped at this field: its value is what was found, not an accepted value.
    pub failed: bool,
}

impl TraceField {
    /// An entry recorded by hand (a transport's header fields): `path` in full, not failed, no
    /// raw value or range.
    pub fn new(
        path: &str,
        depth: usize,
        bit: usize,
        bits: usize,
        value: Value,
        kind: FieldKind,
    ) -> Self {
        TraceField {
            path: path.into(),
            depth,
            bit,
            bits,
            value,
            raw: None,
            range: None,
            kind,
            failed: false,
        }
    }

    /// The field's full path, outermost first: `objects[17].position.x`, `mice[3]`, `crc32`.
    #[inline]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last segment of the path: `x` of `objects[17].position.x`, `[3]` of `mice[3]`.
    #[inline]
    pub fn name(&self) -> &str {
        let path = self.path.as_str();
        let dot = path.rfind('.').map_or(0, |i| i + 1);
        let bracket = path.rfind('[').unwrap_or(0);
        &path[dot.max(bracket)..]
    }

    /// True for a check marker whose found bits differ from the expected ones.
    pub fn check_failed(&self) -> bool {
        matches!(&self.kind, FieldKind::Check { expected, found, .. } if expected != found)
    }
}

/// Everything a [`TraceStream`](crate::TraceStream) saw: the fields in stream order, and how the read ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Fields, scopes, padding and checks in the order they were read, stored compactly
    /// ([`Entries`]): read them as views ([`Entries::walk`], [`Entries::view`]) or, through
    /// the slice of owned [`TraceField`]s it dereferences to (built on first use), as before.
    pub fields: Entries,
    /// The error that stopped the read, if any.
    pub error: Option<Error>,
    /// Bits consumed.
    pub bits_read: usize,
    /// Bits in the data.
    pub total_bits: usize,
}

impl Trace {
    /// The check markers (and CRC) that were read.
    pub fn checks(&self) -> impl Iterator<Item = Field<'_>> {
        self.fields.views().filter(|f| f.check().is_some())
    }

    /// The field at `path`, if it was read.
    pub fn get(&self, path: &str) -> Option<&TraceField> {
        self.fields.iter().find(|f| f.path == path)
    }

    /// Marks where a read that ran past the end stopped, when a recorded field is that place: a
    /// length whose elements (or bytes) do not fit in what remains is the field the error names,
    /// at the error's bit, and is marked `failed`. Nothing changes for other errors, or when a
    /// field is already marked. [`TraceStream::into_trace`](crate::TraceStream::into_trace)
    /// calls it; [`Trace::past_end_entry`] gives the place when no field was recorded there.
    pub fn mark_past_end(&mut self) {
        if self.fields.views().any(|f| f.failed()) {
            return;
        }
        let Some(e) = &self.error else {
            return;
        };
        if !matches!(e.kind(), ErrorKind::PastEnd { .. }) {
            return;
        }
        let (path, bit) = (e.field(), e.bit());
        let at = (0..self.fields.len())
            .rev()
            .find(|&i| self.fields.entries[i].bit == bit as u64 && self.fields.path_of(i) == path);
        if let Some(i) = at {
            self.fields.set_failed(i);
        }
    }

    /// The field path and bit of a past_end error.
    fn past_end_at(&self) -> Option<(&str, usize)> {
        let e = self.error.as_ref()?;
        matches!(e.kind(), ErrorKind::PastEnd { .. }).then(|| (e.field(), e.bit()))
    }

    /// Where a read ran past the end at a field that has too few bits left to be read at all
    /// (so none was recorded): an entry for the views to show it, marked "read stopped here"
    /// (the field's path and depth, its first bit, the bits that remain from there, no value,
    /// `failed`). `None` for other errors, or when a recorded field is marked failed already.
    /// Not part of [`Trace::fields`]: the fields are what was read (JSON lists them).
    pub fn past_end_entry(&self) -> Option<TraceField> {
        if self.fields.views().any(|f| f.failed()) {
            return None;
        }
        let (path, bit) = self.past_end_at()?;
        // One level below the scope the path names (an element `[i]` is a level too).
        let parent = path.rfind(['.', '[']).map_or("", |i| &path[..i]);
        let depth = if parent.is_empty() {
            self.fields.view(0).map_or(0, |f| f.depth())
        } else {
            (0..self.fields.len())
                .rev()
                .find(|&i| self.fields.path_of(i) == parent)
                .map_or(0, |i| self.fields.entries[i].depth as usize + 1)
        };
        Some(TraceField {
            path: PathString::from(path),
            depth,
            bit,
            bits: self.total_bits.saturating_sub(bit),
            value: Value::None,
            raw: None,
            range: None,
            kind: FieldKind::Value,
            failed: true,
        })
    }
}

/// What a [`Decoder`](crate::read::Decoder) does with what it reads: nothing ([`NoTrace`]) or record it ([`Recorder`]).
pub trait Tracer {
    /// False when every hook is a no-op, so that values for them are never built.
    const ACTIVE: bool;
    /// A field was read (or failed: `failed`).
    #[allow(
        clippy::too_many_arguments,
        reason = "one call per primitive; a struct would only be unpacked again"
    )]
    fn field(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: Value,
        range: Option<(i128, i128)>,
        kind: FieldKind,
        failed: bool,
    );
    /// A signed integer field within `i64` was read, with its allowed range if it has one.
    /// The default builds the [`Value`] and calls [`Tracer::field`]; a tracer that stores ints
    /// as they are overrides it (no `i128` built per field).
    #[inline]
    fn int(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: i64,
        range: Option<(i64, i64)>,
        failed: bool,
    ) {
        let range = range.map(|(lo, hi)| (i128::from(lo), i128::from(hi)));
        let value = Value::Int(i128::from(value));
        self.field(name, bit, bits, value, range, FieldKind::Value, failed);
    }
    /// An unsigned integer field within `u64` was read, with its allowed range `0..=max` if it
    /// has one. The default calls [`Tracer::field`] as [`Tracer::int`]'s does.
    #[inline]
    fn uint(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: u64,
        max: Option<u64>,
        failed: bool,
    ) {
        let range = max.map(|hi| (0, i128::from(hi)));
        let value = Value::Int(i128::from(value));
        self.field(name, bit, bits, value, range, FieldKind::Value, failed);
    }
    /// A one-bit bool field was read.
    #[inline]
    fn boolean(&mut self, name: &str, bit: usize, value: bool) {
        let kind = FieldKind::Value;
        self.field(name, bit, 1, Value::Bool(value), None, kind, false);
    }
    /// A 32-bit float field was read.
    #[inline]
    fn float32(&mut self, name: &str, bit: usize, bits: usize, value: f32) {
        let kind = FieldKind::Value;
        self.field(name, bit, bits, Value::F32(value), None, kind, false);
    }
    /// A 64-bit float field was read.
    #[inline]
    fn float64(&mut self, name: &str, bit: usize, bits: usize, value: f64) {
        let kind = FieldKind::Value;
        self.field(name, bit, bits, Value::F64(value), None, kind, false);
    }
    /// Alignment padding of `bits` (more than 0) bits was read: `pad` is what they held,
    /// failed when not 0.
    #[inline]
    fn padding(&mut self, name: &str, bit: usize, bits: usize, pad: u64) {
        let value = Value::Int(i128::from(pad));
        let kind = FieldKind::Padding;
        self.field(name, bit, bits, value, None, kind, pad != 0);
    }
    /// A 32-bit check marker labelled `label` was read: `found` against `expected`, failed
    /// when they differ.
    #[inline]
    fn check(&mut self, label: &str, bit: usize, expected: u32, found: u32) {
        let kind = FieldKind::Check {
            label: label.into(),
            expected,
            found,
        };
        let value = Value::Int(i128::from(found));
        self.field(label, bit, 32, value, None, kind, found != expected);
    }
    /// A scope (`Some(name)`) or array element (`index`) begins.
    fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize);
    /// The innermost scope ends at `bit`.
    fn exit(&mut self, bit: usize);
    /// Replaces the display value of the entry that ended last.
    fn annotate(&mut self, value: Value);
    /// A [`Tracer::field`] of a text value, borrowed. The default builds the [`Value`].
    #[inline]
    fn text(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: &str,
        range: Option<(i128, i128)>,
        failed: bool,
    ) {
        let value = Value::Str(value.to_owned());
        self.field(name, bit, bits, value, range, FieldKind::Value, failed);
    }
    /// A [`Tracer::field`] of a bytes value, borrowed. The default builds the [`Value`].
    #[inline]
    fn bytes(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: &[u8],
        range: Option<(i128, i128)>,
        failed: bool,
    ) {
        let value = Value::Bytes(value.to_vec());
        self.field(name, bit, bits, value, range, FieldKind::Value, failed);
    }
    /// [`Tracer::annotate`] with a text, borrowed. The default builds the [`Value`].
    #[inline]
    fn annotate_str(&mut self, value: &str) {
        self.annotate(Value::Str(value.to_owned()));
    }
    /// [`Tracer::annotate`] with floats, borrowed. The default builds the [`Value`].
    #[inline]
    fn annotate_floats(&mut self, value: &[f32]) {
        self.annotate(Value::Floats(value.to_vec()));
    }
}

/// The tracer of [`ReadStream`](crate::ReadStream): records nothing and costs nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTrace;

/// A tracer lent out: every hook goes to the tracer behind the reference, so a reader can be
/// handed `&mut rec` and the recorder is not moved in and out (a few hundred bytes) per use.
impl<T: Tracer + ?Sized> Tracer for &mut T {
    const ACTIVE: bool = T::ACTIVE;
    #[inline(always)]
    fn field(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: Value,
        range: Option<(i128, i128)>,
        kind: FieldKind,
        failed: bool,
    ) {
        (**self).field(name, bit, bits, value, range, kind, failed);
    }
    #[inline(always)]
    fn int(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: i64,
        range: Option<(i64, i64)>,
        failed: bool,
    ) {
        (**self).int(name, bit, bits, value, range, failed);
    }
    #[inline(always)]
    fn uint(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: u64,
        max: Option<u64>,
        failed: bool,
    ) {
        (**self).uint(name, bit, bits, value, max, failed);
    }
    #[inline(always)]
    fn boolean(&mut self, name: &str, bit: usize, value: bool) {
        (**self).boolean(name, bit, value);
    }
    #[inline(always)]
    fn float32(&mut self, name: &str, bit: usize, bits: usize, value: f32) {
        (**self).float32(name, bit, bits, value);
    }
    #[inline(always)]
    fn float64(&mut self, name: &str, bit: usize, bits: usize, value: f64) {
        (**self).float64(name, bit, bits, value);
    }
    #[inline(always)]
    fn padding(&mut self, name: &str, bit: usize, bits: usize, pad: u64) {
        (**self).padding(name, bit, bits, pad);
    }
    #[inline(always)]
    fn check(&mut self, label: &str, bit: usize, expected: u32, found: u32) {
        (**self).check(label, bit, expected, found);
    }
    #[inline(always)]
    fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize) {
        (**self).enter(name, index, bit);
    }
    #[inline(always)]
    fn exit(&mut self, bit: usize) {
        (**self).exit(bit);
    }
    #[inline(always)]
    fn annotate(&mut self, value: Value) {
        (**self).annotate(value);
    }
    #[inline(always)]
    fn text(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: &str,
        range: Option<(i128, i128)>,
        failed: bool,
    ) {
        (**self).text(name, bit, bits, value, range, failed);
    }
    #[inline(always)]
    fn bytes(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: &[u8],
        range: Option<(i128, i128)>,
        failed: bool,
    ) {
        (**self).bytes(name, bit, bits, value, range, failed);
    }
    #[inline(always)]
    fn annotate_str(&mut self, value: &str) {
        (**self).annotate_str(value);
    }
    #[inline(always)]
    fn annotate_floats(&mut self, value: &[f32]) {
        (**self).annotate_floats(value);
    }
}

impl Tracer for NoTrace {
    const ACTIVE: bool = false;
    #[inline(always)]
    fn field(
        &mut self,
        _: &str,
        _: usize,
        _: usize,
        _: Value,
        _: Option<(i128, i128)>,
        _: FieldKind,
        _: bool,
    ) {
    }
    #[inline(always)]
    fn int(&mut self, _: &str, _: usize, _: usize, _: i64, _: Option<(i64, i64)>, _: bool) {}
    #[inline(always)]
    fn uint(&mut self, _: &str, _: usize, _: usize, _: u64, _: Option<u64>, _: bool) {}
    #[inline(always)]
    fn boolean(&mut self, _: &str, _: usize, _: bool) {}
    #[inline(always)]
    fn float32(&mut self, _: &str, _: usize, _: usize, _: f32) {}
    #[inline(always)]
    fn float64(&mut self, _: &str, _: usize, _: usize, _: f64) {}
    #[inline(always)]
    fn padding(&mut self, _: &str, _: usize, _: usize, _: u64) {}
    #[inline(always)]
    fn check(&mut self, _: &str, _: usize, _: u32, _: u32) {}
    #[inline(always)]
    fn enter(&mut self, _: Option<&str>, _: Option<usize>, _: usize) {}
    #[inline(always)]
    fn exit(&mut self, _: usize) {}
    #[inline(always)]
    fn annotate(&mut self, _: Value) {}
    #[inline(always)]
    fn text(&mut self, _: &str, _: usize, _: usize, _: &str, _: Option<(i128, i128)>, _: bool) {}
    #[inline(always)]
    fn bytes(&mut self, _: &str, _: usize, _: usize, _: &[u8], _: Option<(i128, i128)>, _: bool) {}
    #[inline(always)]
    fn annotate_str(&mut self, _: &str) {}
    #[inline(always)]
    fn annotate_floats(&mut self, _: &[f32]) {}
}

/// The parent of a root entry.
const ROOT: u32 = u32::MAX;

/// An entry's value kinds ([`Entry::value_kind`]).
mod vk {
    pub const NONE: u8 = 0;
    pub const BOOL: u8 = 1;
    /// An `i64`, its bits in `value`.
    pub const INT: u8 = 2;
    /// A `u64` above `i64::MAX`.
    pub const UINT: u8 = 3;
    /// An `i128` beyond both: `value` indexes `wide`.
    pub const WIDE: u8 = 4;
    /// A `u128` above `i128::MAX`: `value` indexes `wide`.
    pub const U128: u8 = 5;
    pub const F32: u8 = 6;
    pub const F64: u8 = 7;
    /// `value` is a span (offset << 32 | length) of `text`.
    pub const STR: u8 = 8;
    /// A span of `bytes`.
    pub const BYTES: u8 = 9;
    /// A span of `floats`.
    pub const FLOATS: u8 = 10;
    /// `value` indexes `fixed`.
    pub const FIXED: u8 = 11;
}

/// An entry's field kinds ([`Entry::kind`]).
mod fk {
    pub const VALUE: u8 = 0;
    pub const SCOPE: u8 = 1;
    pub const PADDING: u8 = 2;
    /// `lo`/`hi` are the label's span of `text`, `raw` is `expected << 32 | found`.
    pub const CHECK: u8 = 3;
}

/// An entry's flags ([`Entry::flags`]).
mod flag {
    pub const FAILED: u8 = 1;
    pub const RAW: u8 = 2;
    /// `raw` indexes `wide`.
    pub const RAW_WIDE: u8 = 4;
    pub const RANGE: u8 = 8;
    /// `lo` indexes `wide` (the low bound, the high one after it).
    pub const RANGE_WIDE: u8 = 16;
    /// The name is the whole path (a hand-made entry).
    pub const ABSOLUTE: u8 = 32;
    /// The name is an array index `[i]`: no dot before it.
    pub const INDEX: u8 = 64;
    /// With `INDEX`: the index is the number in `name` (no text), written when walked.
    pub const NUM: u8 = 128;
}

/// One trace entry as a trace stores it: 64 bytes, `Copy`, nothing on the heap. Its path is its
/// parent's path and its name (texts live in the [`Entries`]' arenas); values that do not fit
/// 64 bits live in the arenas too.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The value, by `value_kind`: inline bits, an arena span or an arena index.
    value: u64,
    /// The wire integer (`flag::RAW`), or an index of `wide`, or a check's two words.
    raw: i64,
    /// The range's low bound (`flag::RANGE`), an index of `wide`, or a check label's offset.
    lo: i64,
    /// The range's high bound, or a check label's length.
    hi: i64,
    /// First bit.
    bit: u64,
    /// Width in bits, saturating at `u32::MAX` (a trace of more than 512 MiB of data).
    bits: u32,
    /// The name's offset in `text`.
    name: u32,
    /// The name's length.
    name_len: u32,
    /// The parent entry's index, or [`ROOT`].
    parent: u32,
    /// Nesting depth (saturating).
    depth: u32,
    value_kind: u8,
    kind: u8,
    flags: u8,
}

/// `x` as a `u32` offset, length or count, saturating (arenas past 4 GiB are not indexed).
#[inline(always)]
fn u32_of(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// An arena span as an entry's `value`.
#[inline(always)]
fn span(off: u32, len: u32) -> u64 {
    (u64::from(off) << 32) | u64::from(len)
}

/// The start and end of a span.
#[inline(always)]
fn unspan(v: u64) -> (usize, usize) {
    let off = (v >> 32) as usize;
    (off, off.saturating_add((v & 0xFFFF_FFFF) as usize))
}

/// The last segment of a path, as [`TraceField::name`] cuts it.
fn last_segment(path: &str) -> &str {
    let dot = path.rfind('.').map_or(0, |i| i + 1);
    let bracket = path.rfind('[').unwrap_or(0);
    &path[dot.max(bracket)..]
}

/// The entries of a [`Trace`], stored compactly: one 64-byte entry each (its name, not its
/// path: a path is its parent's path and its name), with arenas for names, strings, bytes,
/// floats and values beyond 64 bits.
///
/// Read them in order as views with their paths ([`Entries::walk`]: one path buffer, no path
/// stored or built per entry), one at a time ([`Entries::view`], [`Field::path`]), or as owned
/// [`TraceField`]s: an `Entries` dereferences to a slice of them, built on first use and kept
/// (the easy form, for readers off the hot path). Equality, `Debug` and serde compare and show
/// the owned form.
#[derive(Clone, Default)]
pub struct Entries {
    entries: Vec<Entry>,
    text: String,
    bytes: Vec<u8>,
    floats: Vec<f32>,
    wide: Vec<u128>,
    fixed: Vec<Fixed>,
    owned: std::sync::OnceLock<Vec<TraceField>>,
}

impl Entries {
    /// No entries.
    pub const fn new() -> Self {
        Entries {
            entries: Vec::new(),
            text: String::new(),
            bytes: Vec::new(),
            floats: Vec::new(),
            wide: Vec::new(),
            fixed: Vec::new(),
            owned: std::sync::OnceLock::new(),
        }
    }

    /// How many entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True without entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i`, as a view.
    #[inline]
    pub fn view(&self, i: usize) -> Option<Field<'_>> {
        let e = self.entries.get(i)?;
        Some(Field { store: self, e })
    }

    /// Every entry, as views, in order.
    pub fn views(&self) -> impl DoubleEndedIterator<Item = Field<'_>> + ExactSizeIterator {
        self.entries.iter().map(|e| Field { store: self, e })
    }

    /// Every entry in order, with its path ([`Walk::next`]).
    pub fn walk(&self) -> Walk<'_> {
        self.walk_range(0..self.entries.len())
    }

    /// The entries of `range` in order, with their full paths ([`Walk::next`]).
    pub fn walk_range(&self, range: std::ops::Range<usize>) -> Walk<'_> {
        Walk::new(self, range)
    }

    /// The full path of entry `i` (empty past the end).
    pub fn path_of(&self, i: usize) -> String {
        let mut out = String::new();
        self.write_path(i, &mut out);
        out
    }

    /// Appends a hand-made entry (its path in full).
    pub fn push(&mut self, f: TraceField) {
        let e = self.encode(f);
        self.owned.take();
        self.entries.push(e);
    }

    /// Appends hand-made entries.
    pub fn extend(&mut self, fields: impl IntoIterator<Item = TraceField>) {
        for f in fields {
            self.push(f);
        }
    }

    /// Puts hand-made entries before all others (a transport's header before its payload's
    /// entries): the others' parents move with them.
    pub fn prepend(&mut self, fields: Vec<TraceField>) {
        let n = u32_of(fields.len());
        let front: Vec<Entry> = fields.into_iter().map(|f| self.encode(f)).collect();
        for e in &mut self.entries {
            if e.parent != ROOT {
                e.parent = e.parent.saturating_add(n);
            }
        }
        // In place: the entries' vector (a thread's recycled one, sized for its packets) stays;
        // a new one grown to hold them all and the old one freed cost ~2,500 instructions a
        // datagram under a transport's header.
        self.entries.splice(0..0, front);
        self.owned.take();
    }

    /// Moves every entry `by` bits later.
    pub fn shift_bits(&mut self, by: usize) {
        for e in &mut self.entries {
            e.bit = e.bit.saturating_add(by as u64);
        }
        self.owned.take();
    }

    /// Marks entry `i` failed ("read stopped here"); false past the end.
    pub fn set_failed(&mut self, i: usize) -> bool {
        let Some(e) = self.entries.get_mut(i) else {
            return false;
        };
        e.flags |= flag::FAILED;
        self.owned.take();
        true
    }

    /// Removes every entry, keeping the storage.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.text.clear();
        self.bytes.clear();
        self.floats.clear();
        self.wide.clear();
        self.fixed.clear();
        self.owned.take();
    }

    /// The owned form ([`TraceField`]s with full paths).
    pub fn into_vec(mut self) -> Vec<TraceField> {
        match self.owned.take() {
            Some(v) => v,
            None => self.materialize(),
        }
    }

    /// Whether the owned form (the slice of [`TraceField`]s an `Entries` dereferences to) has
    /// been built. A reader that keeps to views ([`Entries::view`], [`Entries::views`],
    /// [`Entries::walk`]) never builds it: its tests can say so.
    pub fn owned_built(&self) -> bool {
        self.owned.get().is_some()
    }

    /// The owned form, built in one pass: the paths in a `String` (names are text already: no
    /// UTF-8 check per path, as a walk's bytes would need), each entry's value and kind built
    /// straight from it.
    fn materialize(&self) -> Vec<TraceField> {
        let mut out = Vec::with_capacity(self.entries.len());
        let mut path = String::new();
        // Open scopes whose paths are a prefix of `path`: index and path length.
        let mut open: Vec<(u32, usize)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if e.flags & flag::ABSOLUTE != 0 {
                open.clear();
                path.clear();
            } else {
                self.parent_path(e.parent, i, &mut open, &mut path);
            }
            self.append_name(e, &mut path);
            if e.kind == fk::SCOPE {
                open.push((u32_of(i), path.len()));
            }
            out.push(self.owned_entry(e, &path));
        }
        out
    }

    /// Leaves the path of `parent` (for entry `i`) in `path`: the open scope's, or built.
    #[inline(always)]
    fn parent_path(&self, parent: u32, i: usize, open: &mut Vec<(u32, usize)>, path: &mut String) {
        while let Some(&(p, len)) = open.last() {
            if p == parent && path.is_char_boundary(len) {
                path.truncate(len);
                return;
            }
            open.pop();
        }
        if parent == ROOT || parent as usize >= i {
            path.clear();
        } else {
            self.write_path(parent as usize, path);
            open.push((parent, path.len()));
        }
    }

    /// Entry `e` in owned form, under `path`.
    #[inline(always)]
    fn owned_entry(&self, e: &Entry, path: &str) -> TraceField {
        let f = Field { store: self, e };
        let kind = match e.kind {
            fk::SCOPE => FieldKind::Scope,
            fk::PADDING => FieldKind::Padding,
            fk::CHECK => f.field_kind(),
            _ => FieldKind::Value,
        };
        let value = match e.value_kind {
            vk::NONE => Value::None,
            vk::INT => Value::Int(i128::from(e.value as i64)),
            vk::UINT => Value::Int(i128::from(e.value)),
            vk::BOOL => Value::Bool(e.value != 0),
            vk::F32 => Value::F32(f32::from_bits(e.value as u32)),
            vk::F64 => Value::F64(f64::from_bits(e.value)),
            _ => f.to_value(),
        };
        TraceField {
            path: path.into(),
            depth: e.depth as usize,
            bit: e.bit as usize,
            bits: e.bits as usize,
            value,
            raw: f.raw(),
            range: f.range(),
            kind,
            failed: e.flags & flag::FAILED != 0,
        }
    }

    /// Every text the entries hold, one after another: names, hand-made entries' paths,
    /// string values and check labels. A walked path ([`Entries::walk`], [`Field::path`]) is
    /// made of these names, dots and array indices `[i]`, so a writer that finds nothing to
    /// escape here need not look at each path (or label) again.
    #[inline]
    pub fn texts(&self) -> &str {
        &self.text
    }

    #[inline(always)]
    fn text_at(&self, start: usize, end: usize) -> &str {
        self.text.get(start..end).unwrap_or("")
    }

    #[inline(always)]
    fn name_of(&self, e: &Entry) -> &str {
        let start = e.name as usize;
        self.text_at(start, start.saturating_add(e.name_len as usize))
    }

    /// `name`'s span in `text`.
    #[inline(always)]
    fn put_text(&mut self, name: &str) -> (u32, u32) {
        let off = u32_of(self.text.len());
        self.text.push_str(name);
        (off, u32_of(name.len()))
    }

    /// An element's name `[i]`: its number (`flag::NUM`), or for an index past `u32::MAX`
    /// its text; the name, its length and its flags.
    #[inline(always)]
    fn index_name(&mut self, i: usize) -> (u32, u32, u8) {
        match u32::try_from(i) {
            Ok(n) => (n, 0, flag::INDEX | flag::NUM),
            Err(_) => {
                let (off, len) = self.put_index(i);
                (off, len, flag::INDEX)
            }
        }
    }

    /// `[i]`'s span in `text`.
    #[cold]
    fn put_index(&mut self, i: usize) -> (u32, u32) {
        let off = u32_of(self.text.len());
        self.text.push('[');
        self.text.push_str(itoa::Buffer::new().format(i));
        self.text.push(']');
        (off, u32_of(self.text.len()) - off)
    }

    fn put_wide(&mut self, v: u128) -> u64 {
        self.wide.push(v);
        (self.wide.len() - 1) as u64
    }

    /// An integer's value kind and bits.
    #[inline(always)]
    fn int_bits(&mut self, i: i128) -> (u8, u64) {
        if let Ok(x) = i64::try_from(i) {
            (vk::INT, x as u64)
        } else if let Ok(x) = u64::try_from(i) {
            (vk::UINT, x)
        } else {
            (vk::WIDE, self.put_wide(i as u128))
        }
    }

    fn put_value(&mut self, e: &mut Entry, v: Value) {
        let (kind, bits) = match v {
            Value::None => (vk::NONE, 0),
            Value::Bool(b) => (vk::BOOL, u64::from(b)),
            Value::Int(i) => self.int_bits(i),
            Value::U128(u) => (vk::U128, self.put_wide(u)),
            Value::F32(x) => (vk::F32, u64::from(x.to_bits())),
            Value::F64(x) => (vk::F64, x.to_bits()),
            Value::Str(s) => {
                let (off, len) = self.put_text(&s);
                (vk::STR, span(off, len))
            }
            Value::Bytes(b) => {
                let off = u32_of(self.bytes.len());
                self.bytes.extend_from_slice(&b);
                (vk::BYTES, span(off, u32_of(b.len())))
            }
            Value::Floats(xs) => {
                let off = u32_of(self.floats.len());
                self.floats.extend_from_slice(&xs);
                (vk::FLOATS, span(off, u32_of(xs.len())))
            }
            Value::Fixed(x) => {
                self.fixed.push(x);
                (vk::FIXED, (self.fixed.len() - 1) as u64)
            }
        };
        e.value_kind = kind;
        e.value = bits;
    }

    fn put_raw(&mut self, e: &mut Entry, raw: Option<i128>) {
        e.flags &= !(flag::RAW | flag::RAW_WIDE);
        let Some(r) = raw else {
            return;
        };
        match i64::try_from(r) {
            Ok(x) if e.kind != fk::CHECK => {
                e.raw = x;
                e.flags |= flag::RAW;
            }
            _ => {
                e.raw = self.put_wide(r as u128) as i64;
                e.flags |= flag::RAW | flag::RAW_WIDE;
            }
        }
    }

    #[inline(always)]
    fn put_range(&mut self, e: &mut Entry, range: Option<(i128, i128)>) {
        let Some((lo, hi)) = range else {
            return;
        };
        match (i64::try_from(lo), i64::try_from(hi)) {
            (Ok(l), Ok(h)) if e.kind != fk::CHECK => {
                (e.lo, e.hi) = (l, h);
                e.flags |= flag::RANGE;
            }
            _ => {
                e.lo = self.put_wide(lo as u128) as i64;
                self.put_wide(hi as u128);
                e.flags |= flag::RANGE | flag::RANGE_WIDE;
            }
        }
    }

    /// The field kind, with a check's label and words.
    fn put_kind(&mut self, e: &mut Entry, kind: &FieldKind) {
        e.kind = match kind {
            FieldKind::Value => fk::VALUE,
            FieldKind::Scope => fk::SCOPE,
            FieldKind::Padding => fk::PADDING,
            FieldKind::Check {
                label,
                expected,
                found,
            } => {
                let (off, len) = self.put_text(label);
                (e.lo, e.hi) = (i64::from(off), i64::from(len));
                e.raw = ((u64::from(*expected) << 32) | u64::from(*found)) as i64;
                fk::CHECK
            }
        };
    }

    /// A hand-made entry in compact form (its path as an absolute name).
    fn encode(&mut self, f: TraceField) -> Entry {
        let (name, name_len) = self.put_text(&f.path);
        let mut e = Entry {
            bit: f.bit as u64,
            bits: u32_of(f.bits),
            name,
            name_len,
            parent: ROOT,
            depth: u32_of(f.depth),
            flags: flag::ABSOLUTE | if f.failed { flag::FAILED } else { 0 },
            ..Entry::default()
        };
        self.put_kind(&mut e, &f.kind);
        self.put_value(&mut e, f.value);
        self.put_raw(&mut e, f.raw);
        self.put_range(&mut e, f.range);
        e
    }

    /// Writes the full path of entry `i` into `out` (cleared first).
    fn write_path(&self, i: usize, out: &mut String) {
        out.clear();
        let mut chain = Vec::new();
        let mut at = i;
        while let Some(e) = self.entries.get(at) {
            chain.push(at);
            if e.flags & flag::ABSOLUTE != 0 || e.parent == ROOT || e.parent as usize >= at {
                break;
            }
            at = e.parent as usize;
        }
        for &k in chain.iter().rev() {
            let e = &self.entries[k];
            if e.flags & flag::ABSOLUTE != 0 {
                out.clear();
            }
            self.append_name(e, out);
        }
    }

    /// Appends an entry's name to its parent's path in `out`, as the recorder joins them.
    #[inline(always)]
    fn append_name(&self, e: &Entry, out: &mut String) {
        if e.flags & flag::NUM != 0 {
            out.push('[');
            out.push_str(itoa::Buffer::new().format(e.name));
            out.push(']');
            return;
        }
        let name = self.name_of(e);
        if !name.is_empty() {
            if e.flags & (flag::INDEX | flag::ABSOLUTE) == 0 && !out.is_empty() {
                out.push('.');
            }
            out.push_str(name);
        }
    }

    /// Gives the storage back for this thread's next recorder (not storage one huge packet
    /// made huge).
    #[inline]
    fn recycle(mut self) {
        if self.entries.capacity() <= 1 << 16 && self.text.capacity() <= 1 << 20 {
            self.clear();
            SPARE_ENTRIES.with(|spare| spare.set(self));
        }
    }
}

impl std::ops::Deref for Entries {
    type Target = [TraceField];
    fn deref(&self) -> &[TraceField] {
        self.owned.get_or_init(|| self.materialize())
    }
}

impl<'a> IntoIterator for &'a Entries {
    type Item = &'a TraceField;
    type IntoIter = std::slice::Iter<'a, TraceField>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<TraceField>> for Entries {
    fn from(fields: Vec<TraceField>) -> Self {
        let mut out = Entries::new();
        out.extend(fields);
        out
    }
}

impl FromIterator<TraceField> for Entries {
    fn from_iter<I: IntoIterator<Item = TraceField>>(iter: I) -> Self {
        let mut out = Entries::new();
        out.extend(iter);
        out
    }
}

impl PartialEq for Entries {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && **self == **other
    }
}

impl std::fmt::Debug for Entries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Entries {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// The last segment of a [`Field`]'s path ([`Field::name_part`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamePart<'t> {
    /// A name: `x` of `objects[17].position.x`.
    Text(&'t str),
    /// An array element's index: `3` of `mice[3]`, shown `[3]`.
    Index(u32),
}

/// A borrowed view of a trace's value ([`Field::value`]): what [`Value`] holds, without
/// building it. Equality is [`Value`]'s: floats compare by their bits (a NaN equals the same
/// NaN), and an integer equals itself whichever variant holds it.
#[derive(Debug, Clone, Copy)]
pub enum ValueRef<'t> {
    /// No value.
    None,
    /// A bool.
    Bool(bool),
    /// An integer within `i64`.
    Int(i64),
    /// An integer above `i64::MAX`, within `u64`.
    UInt(u64),
    /// Any other integer that fits `i128`.
    Wide(i128),
    /// A `u128` above `i128::MAX`.
    U128(u128),
    /// A 32-bit float.
    F32(f32),
    /// A 64-bit float.
    F64(f64),
    /// A string.
    Str(&'t str),
    /// Raw bytes.
    Bytes(&'t [u8]),
    /// Several floats.
    Floats(&'t [f32]),
    /// A fixed-point value.
    Fixed(Fixed),
}

impl ValueRef<'_> {
    /// The owned [`Value`].
    pub fn to_value(self) -> Value {
        match self {
            ValueRef::None => Value::None,
            ValueRef::Bool(b) => Value::Bool(b),
            ValueRef::Int(i) => Value::Int(i128::from(i)),
            ValueRef::UInt(u) => Value::Int(i128::from(u)),
            ValueRef::Wide(i) => Value::Int(i),
            ValueRef::U128(u) => Value::U128(u),
            ValueRef::F32(x) => Value::F32(x),
            ValueRef::F64(x) => Value::F64(x),
            ValueRef::Str(s) => Value::Str(s.to_owned()),
            ValueRef::Bytes(b) => Value::Bytes(b.to_vec()),
            ValueRef::Floats(xs) => Value::Floats(xs.to_vec()),
            ValueRef::Fixed(x) => Value::Fixed(x),
        }
    }
}

impl PartialEq for ValueRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        let int = |v: &ValueRef| match *v {
            ValueRef::Int(i) => Some(i128::from(i)),
            ValueRef::UInt(u) => Some(i128::from(u)),
            ValueRef::Wide(i) => Some(i),
            _ => None,
        };
        if let (Some(a), Some(b)) = (int(self), int(other)) {
            return a == b;
        }
        match (*self, *other) {
            (ValueRef::None, ValueRef::None) => true,
            (ValueRef::Bool(a), ValueRef::Bool(b)) => a == b,
            (ValueRef::U128(a), ValueRef::U128(b)) => a == b,
            (ValueRef::F32(a), ValueRef::F32(b)) => a.to_bits() == b.to_bits(),
            (ValueRef::F64(a), ValueRef::F64(b)) => a.to_bits() == b.to_bits(),
            (ValueRef::Str(a), ValueRef::Str(b)) => a == b,
            (ValueRef::Bytes(a), ValueRef::Bytes(b)) => a == b,
            (ValueRef::Floats(a), ValueRef::Floats(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (ValueRef::Fixed(a), ValueRef::Fixed(b)) => a == b,
            _ => false,
        }
    }
}

impl std::fmt::Display for ValueRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ValueRef::None => Ok(()),
            ValueRef::Bool(b) => write!(f, "{b}"),
            ValueRef::Int(i) => write!(f, "{i}"),
            ValueRef::UInt(i) => write!(f, "{i}"),
            ValueRef::Wide(i) => write!(f, "{i}"),
            ValueRef::U128(i) => write!(f, "{i}"),
            ValueRef::Fixed(x) => write!(f, "{x}"),
            ValueRef::F32(x) => match f32_text(x) {
                Some(text) => f.write_str(&text),
                None => write!(f, "{x}"),
            },
            ValueRef::F64(x) => match f64_text(x) {
                Some(text) => f.write_str(&text),
                None => write!(f, "{x}"),
            },
            ValueRef::Str(s) => write!(f, "{s:?}"),
            ValueRef::Bytes(b) => {
                for byte in b {
                    write!(f, "{byte:02x}")?;
                }
                Ok(())
            }
            ValueRef::Floats(v) => {
                write!(f, "(")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    match f32_text(*x) {
                        Some(text) => f.write_str(&text)?,
                        None => write!(f, "{x}")?,
                    }
                }
                write!(f, ")")
            }
        }
    }
}

/// What a trace entry is, without a check's label ([`Field::check`] has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A value.
    Value,
    /// A struct or array scope.
    Scope,
    /// Alignment padding.
    Padding,
    /// A check marker.
    Check,
}

/// A view of one entry of a trace's [`Entries`].
#[derive(Debug, Clone, Copy)]
pub struct Field<'t> {
    store: &'t Entries,
    e: &'t Entry,
}

impl<'t> Field<'t> {
    /// First bit.
    #[inline(always)]
    pub fn bit(&self) -> usize {
        self.e.bit as usize
    }

    /// Width in bits (saturating at `u32::MAX`).
    #[inline(always)]
    pub fn bits(&self) -> usize {
        self.e.bits as usize
    }

    /// Nesting depth: 0 at the top.
    #[inline(always)]
    pub fn depth(&self) -> usize {
        self.e.depth as usize
    }

    /// The read stopped at this field.
    #[inline(always)]
    pub fn failed(&self) -> bool {
        self.e.flags & flag::FAILED != 0
    }

    /// What the entry is.
    #[inline(always)]
    pub fn kind(&self) -> EntryKind {
        match self.e.kind {
            fk::SCOPE => EntryKind::Scope,
            fk::PADDING => EntryKind::Padding,
            fk::CHECK => EntryKind::Check,
            _ => EntryKind::Value,
        }
    }

    /// A check's label, expected and found bits.
    #[inline]
    pub fn check(&self) -> Option<(&'t str, u32, u32)> {
        if self.e.kind != fk::CHECK {
            return None;
        }
        let start = self.e.lo as usize;
        let label = self
            .store
            .text_at(start, start.saturating_add(self.e.hi as usize));
        let words = self.e.raw as u64;
        Some((label, (words >> 32) as u32, words as u32))
    }

    /// True for a check marker whose found bits differ from the expected ones.
    pub fn check_failed(&self) -> bool {
        self.check()
            .is_some_and(|(_, expected, found)| expected != found)
    }

    /// The field kind in owned form.
    pub fn field_kind(&self) -> FieldKind {
        match self.check() {
            Some((label, expected, found)) => FieldKind::Check {
                label: label.into(),
                expected,
                found,
            },
            None => match self.kind() {
                EntryKind::Scope => FieldKind::Scope,
                EntryKind::Padding => FieldKind::Padding,
                _ => FieldKind::Value,
            },
        }
    }

    /// The value, borrowed from the trace.
    #[inline(always)]
    pub fn value(&self) -> ValueRef<'t> {
        let (e, s) = (self.e, self.store);
        let wide = |i: u64| s.wide.get(i as usize).copied().unwrap_or(0);
        match e.value_kind {
            vk::BOOL => ValueRef::Bool(e.value != 0),
            vk::INT => ValueRef::Int(e.value as i64),
            vk::UINT => ValueRef::UInt(e.value),
            vk::WIDE => ValueRef::Wide(wide(e.value) as i128),
            vk::U128 => ValueRef::U128(wide(e.value)),
            vk::F32 => ValueRef::F32(f32::from_bits(e.value as u32)),
            vk::F64 => ValueRef::F64(f64::from_bits(e.value)),
            vk::STR => {
                let (a, b) = unspan(e.value);
                ValueRef::Str(s.text_at(a, b))
            }
            vk::BYTES => {
                let (a, b) = unspan(e.value);
                ValueRef::Bytes(s.bytes.get(a..b).unwrap_or_default())
            }
            vk::FLOATS => {
                let (a, b) = unspan(e.value);
                ValueRef::Floats(s.floats.get(a..b).unwrap_or_default())
            }
            vk::FIXED => match s.fixed.get(e.value as usize) {
                Some(x) => ValueRef::Fixed(*x),
                None => ValueRef::None,
            },
            _ => ValueRef::None,
        }
    }

    /// True when the entry has no value (a plain scope).
    #[inline(always)]
    pub fn has_value(&self) -> bool {
        self.e.value_kind != vk::NONE
    }

    /// The value in owned form.
    pub fn to_value(&self) -> Value {
        self.value().to_value()
    }

    /// The integer sent on the wire, where it differs from the value.
    #[inline]
    pub fn raw(&self) -> Option<i128> {
        let e = self.e;
        if e.flags & flag::RAW == 0 {
            return None;
        }
        if e.flags & flag::RAW_WIDE != 0 {
            return Some(self.store.wide.get(e.raw as usize).copied().unwrap_or(0) as i128);
        }
        Some(i128::from(e.raw))
    }

    /// The allowed range of the wire integer, for ranged fields.
    #[inline(always)]
    pub fn range(&self) -> Option<(i128, i128)> {
        let e = self.e;
        if e.flags & flag::RANGE == 0 {
            return None;
        }
        if e.flags & flag::RANGE_WIDE != 0 {
            let w = |i: usize| self.store.wide.get(i).copied().unwrap_or(0) as i128;
            return Some((w(e.lo as usize), w(e.lo as usize + 1)));
        }
        Some((i128::from(e.lo), i128::from(e.hi)))
    }

    /// The last segment of the path: `x` of `objects[17].position.x`, `[3]` of `mice[3]`.
    pub fn name(&self) -> std::borrow::Cow<'t, str> {
        match self.name_part() {
            NamePart::Text(name) => name.into(),
            NamePart::Index(i) => format!("[{i}]").into(),
        }
    }

    /// [`Field::name`] without building a text: the name, or the array element's index that
    /// [`Field::name`] writes as `[i]` (for a writer that puts the digits straight into its
    /// output).
    pub fn name_part(&self) -> NamePart<'t> {
        let s = self.store;
        let mut e = self.e;
        loop {
            if e.flags & flag::NUM != 0 {
                return NamePart::Index(e.name);
            }
            let name = s.name_of(e);
            if !name.is_empty() || e.flags & flag::ABSOLUTE != 0 || e.parent == ROOT {
                return NamePart::Text(last_segment(name));
            }
            match s.entries.get(e.parent as usize) {
                Some(p) => e = p,
                None => return NamePart::Text(""),
            }
        }
    }

    /// The full path, built by walking the parents (a reader of many entries in order walks
    /// them with [`Entries::walk`] instead).
    pub fn path(&self) -> String {
        let i = (self.e as *const Entry as usize - self.store.entries.as_ptr() as usize)
            / std::mem::size_of::<Entry>();
        self.store.path_of(i)
    }

    /// The owned entry, under `path` (its own, from [`Entries::walk`]).
    pub fn to_field(&self, path: &str) -> TraceField {
        TraceField {
            path: path.into(),
            depth: self.depth(),
            bit: self.bit(),
            bits: self.bits(),
            value: self.to_value(),
            raw: self.raw(),
            range: self.range(),
            kind: self.field_kind(),
            failed: self.failed(),
        }
    }
}

/// Entries in order with their paths, through one path buffer and a stack of the open
/// scopes' path lengths ([`Entries::walk`]). Not an `Iterator`: each path borrows the walk.
/// Its buffers are this thread's, taken when it starts and given back when it is dropped.
#[derive(Debug)]
pub struct Walk<'t> {
    store: &'t Entries,
    next: usize,
    end: usize,
    /// The last path at its start; past it, room (at least [`WALK_ROOM`] bytes).
    path: Vec<u8>,
    /// Scopes whose paths are a prefix of the path, outermost first: index and path length.
    open: Vec<(u32, usize)>,
}

/// Bytes of room a [`Walk`]'s path buffer keeps past the path, so that a name of up to 32
/// bytes is copied in fixed-size pieces.
const WALK_ROOM: usize = 64;

/// A walk's buffers: the path and the open scopes.
type WalkBuffers = (Vec<u8>, Vec<(u32, usize)>);

thread_local! {
    /// A finished walk's buffers, for this thread's next one.
    static SPARE_WALK: std::cell::Cell<WalkBuffers> =
        const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

/// Copies `src` into `dst` (as long as `src`): a few fixed-size copies for up to 32 bytes,
/// no `memcpy` call.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    // Both pieces are loaded before either is stored, as words: copies of constant length
    // written as such were merged by LLVM into one `memcpy` call of the length picked.
    if (8..=16).contains(&n) {
        let (head, tail) = (word::<8>(src, 0), word::<8>(src, n - 8));
        put_word(dst, 0, head);
        put_word(dst, n - 8, tail);
    } else if (17..=32).contains(&n) {
        let (head, tail) = (word::<16>(src, 0), word::<16>(src, n - 16));
        put_word(dst, 0, head);
        put_word(dst, n - 16, tail);
    } else if (4..8).contains(&n) {
        let (head, tail) = (word::<4>(src, 0), word::<4>(src, n - 4));
        put_word(dst, 0, head);
        put_word(dst, n - 4, tail);
    } else if (1..4).contains(&n) {
        // One to three bytes: the first, the middle and the last (some the same byte).
        let (first, middle, last) = (src[0], src[n / 2], src[n - 1]);
        dst[0] = first;
        dst[n / 2] = middle;
        dst[n - 1] = last;
    } else {
        dst[..n].copy_from_slice(src);
    }
}

/// The `N` bytes of `s` at `at`, as a value.
#[inline(always)]
fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    let mut w = [0; N];
    w.copy_from_slice(&s[at..at + N]);
    w
}

/// Stores `w` at `at` of `d`.
#[inline(always)]
fn put_word<const N: usize>(d: &mut [u8], at: usize, w: [u8; N]) {
    if let Some(slot) = d.get_mut(at..at + N).and_then(|s| s.first_chunk_mut::<N>()) {
        *slot = w;
    }
}

/// Writes `[index]` at `len` of `buf` (12 bytes of room); the new length.
#[inline(always)]
fn write_index(buf: &mut [u8], len: usize, index: u32) -> usize {
    let Some(w) = buf.get_mut(len..len + 12) else {
        return len;
    };
    w[0] = b'[';
    // Most indices are below 1000: their digits without a loop.
    let digit = |v: u32| b'0' + (v % 10) as u8;
    if index < 10 {
        w[1] = digit(index);
        w[2] = b']';
        return len + 3;
    }
    if index < 100 {
        w[1] = digit(index / 10);
        w[2] = digit(index);
        w[3] = b']';
        return len + 4;
    }
    if index < 1000 {
        w[1] = digit(index / 100);
        w[2] = digit(index / 10);
        w[3] = digit(index);
        w[4] = b']';
        return len + 5;
    }
    // The digits, last first, after counting them.
    let (mut v, mut n) = (index, 1);
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    let mut v = index;
    for k in (1..=n).rev() {
        w[k] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    w[n + 1] = b']';
    len + n + 2
}

/// Writes `name` at `len` of `buf` (after a dot when `dot` and the path so far is not empty;
/// 33 bytes of room past the name); the new length.
#[inline(always)]
fn write_name(buf: &mut [u8], mut len: usize, name: &[u8], dot: bool) -> usize {
    let n = name.len();
    if n == 0 {
        return len;
    }
    if dot && len > 0 {
        buf[len] = b'.';
        len += 1;
    }
    copy_short(&mut buf[len..len + n], name);
    len + n
}

impl<'t> Walk<'t> {
    fn new(store: &'t Entries, range: std::ops::Range<usize>) -> Self {
        let (mut path, mut open) = SPARE_WALK.with(std::cell::Cell::take);
        if path.len() < 256 {
            path.resize(256, 0);
        }
        open.clear();
        open.reserve(32);
        Walk {
            store,
            next: range.start,
            end: range.end.min(store.entries.len()),
            path,
            open,
        }
    }

    /// The next entry and its full path.
    #[allow(
        clippy::should_implement_trait,
        reason = "the path borrows the walk: not an Iterator"
    )]
    pub fn next(&mut self) -> Option<(Field<'t>, &str)> {
        let (f, path) = self.next_bytes()?;
        Some((f, std::str::from_utf8(path).unwrap_or("")))
    }

    /// The next entry and its full path as the UTF-8 bytes they are (no validation: what a
    /// writer of bytes takes).
    #[inline(always)]
    pub fn next_bytes(&mut self) -> Option<(Field<'t>, &[u8])> {
        let (f, path) = self.next_where(|_| true)?;
        Some((f, path.unwrap_or_default()))
    }

    /// The next entry, and its full path (as [`Walk::next_bytes`]) when `want` it: a reader
    /// that shows some entries only (not checks or padding) skips building the others' paths.
    /// A scope's path is always built (its children's paths start with it).
    #[inline(always)]
    pub fn next_where(
        &mut self,
        want: impl FnOnce(&Field<'t>) -> bool,
    ) -> Option<(Field<'t>, Option<&[u8]>)> {
        let i = self.next;
        if i >= self.end {
            return None;
        }
        self.next = i + 1;
        let s = self.store;
        let e = s.entries.get(i)?;
        let f = Field { store: s, e };
        // Skipped, nothing changes: the buffer still holds the open scopes' paths.
        if e.kind != fk::SCOPE && !want(&f) {
            return Some((f, None));
        }
        let len = if e.flags & flag::ABSOLUTE != 0 {
            self.open.clear();
            0
        } else {
            self.parent_len(e.parent, i)
        };
        // Room for the name (an index takes at most 12 bytes), a dot and the fixed-size copies.
        let need = len + e.name_len as usize + WALK_ROOM;
        if self.path.len() < need {
            self.grow(need);
        }
        // The buffer as a local slice: its stores cannot change the walk's fields, which stay
        // in registers.
        let len = if e.flags & flag::NUM != 0 {
            write_index(&mut self.path, len, e.name)
        } else {
            let start = e.name as usize;
            let name = (s.text.as_bytes())
                .get(start..start + e.name_len as usize)
                .unwrap_or_default();
            let dot = e.flags & (flag::INDEX | flag::ABSOLUTE) == 0;
            write_name(&mut self.path, len, name, dot)
        };
        if e.kind == fk::SCOPE {
            self.open.push((i as u32, len));
        }
        Some((f, Some(self.path.get(..len).unwrap_or_default())))
    }

    /// The path length of `parent` (the scopes after it closed), for entry `i`.
    #[inline(always)]
    fn parent_len(&mut self, parent: u32, i: usize) -> usize {
        while let Some(&(p, len)) = self.open.last() {
            if p == parent {
                return len;
            }
            self.open.pop();
        }
        if parent == ROOT || parent as usize >= i {
            0
        } else {
            self.rebuild(parent)
        }
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        self.path.resize(n * 2 + WALK_ROOM, 0);
    }

    /// The path of `parent`, an entry before the walk's range, into the buffer (and onto the
    /// stack); its length.
    #[cold]
    fn rebuild(&mut self, parent: u32) -> usize {
        let path = self.store.path_of(parent as usize);
        let n = path.len();
        if self.path.len() < n + WALK_ROOM {
            self.path.resize(n * 2 + WALK_ROOM, 0);
        }
        self.path[..n].copy_from_slice(path.as_bytes());
        self.open.push((parent, n));
        n
    }
}

impl Drop for Walk<'_> {
    fn drop(&mut self) {
        if self.path.len() <= 1 << 16 && self.open.capacity() <= 1 << 12 {
            let buffers = (
                std::mem::take(&mut self.path),
                std::mem::take(&mut self.open),
            );
            SPARE_WALK.with(|spare| spare.set(buffers));
        }
    }
}

/// The tracer of [`TraceStream`](crate::TraceStream): builds the [`Trace`].
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    out: Entries,
    /// Open scopes: their entry indices ([`PENDING`] for an element not recorded yet).
    open: Vec<u32>,
    last_ended: Option<usize>,
    /// Depth of the top-level entries (a batch message's fields sit under its scope).
    depth_base: usize,
    /// The innermost open scope when it is an array element not yet recorded: most elements
    /// are one unnamed value (`mice[3]`), which is then recorded alone, without a scope entry
    /// made and removed again. Anything else inside it records the scope first.
    pending: Option<PendingElement>,
}

/// An array element's scope, entered but not recorded yet (see [`Recorder`]).
#[derive(Debug, Clone, Copy)]
struct PendingElement {
    /// Where the element begins.
    bit: usize,
    /// Its index.
    index: usize,
    /// The entry of the scope around it (the array), or [`ROOT`].
    parent: u32,
    /// Its one unnamed value, recorded at the element's own depth, if it came.
    value: Option<usize>,
}

/// `open`'s entry for a pending element (its index in `fields` is not known yet).
const PENDING: u32 = u32::MAX - 1;

impl Recorder {
    /// A recorder whose top-level entries have depth `depth`.
    pub fn at_depth(depth: usize) -> Self {
        Recorder {
            depth_base: depth,
            ..Self::default()
        }
    }

    /// The recorded entries, in read order.
    pub fn into_fields(self) -> Entries {
        self.out
    }

    /// A recorder whose field storage is the one [`Trace::recycle`] gave back on this thread.
    pub fn recycled() -> Self {
        let mut out = SPARE_ENTRIES.with(|spare| spare.replace(Entries::new()));
        out.entries.reserve(64);
        out.text.reserve(256);
        // The open scopes are scratch space: the last recycled recorder's.
        let open = SPARE_SCRATCH.with(std::cell::Cell::take);
        Recorder {
            out,
            open,
            ..Recorder::default()
        }
    }

    /// How many entries have been recorded so far (the index the next one gets).
    pub fn recorded(&self) -> usize {
        self.out.entries.len()
    }

    /// Marks entry `i` of those recorded so far failed (a batch message's length, once its
    /// body turns out not to fit it); false past the end.
    pub fn mark_failed(&mut self, i: usize) -> bool {
        self.out.set_failed(i)
    }

    /// How many scopes are open: a caller that records several readers' fields into one tree
    /// (a batch's messages) closes what a failed read left open down to its own level.
    pub fn open_scopes(&self) -> usize {
        self.open.len()
    }

    /// Closes every scope still open at bit `end` (a read that stopped inside them) and returns
    /// the entries.
    #[inline]
    pub fn close(mut self, end: usize) -> Entries {
        while !self.open.is_empty() {
            self.exit(end);
        }
        // Keep the scratch space for this thread's next recorder (not a nesting that one
        // hostile packet made huge).
        if self.open.capacity() <= 1 << 12 {
            SPARE_SCRATCH.with(|spare| spare.set(std::mem::take(&mut self.open)));
        }
        self.out
    }

    /// The innermost recorded open scope, or [`ROOT`].
    #[inline(always)]
    fn parent(&self) -> u32 {
        self.open.last().copied().unwrap_or(ROOT)
    }

    /// Records the pending element's scope entry, before its value if it has one.
    fn record_pending(&mut self) {
        let Some(p) = self.pending.take() else {
            return;
        };
        let depth = self.depth_base + self.open.len() - 1;
        let mut scope = Entry {
            parent: p.parent,
            depth: u32_of(depth),
            bit: p.bit as u64,
            kind: fk::SCOPE,
            ..Entry::default()
        };
        let entries = &mut self.out.entries;
        let at = match p.value {
            Some(v) => {
                // Rare: more than the one value inside the element. The scope goes before it,
                // with the element's name; the value becomes its unnamed child.
                let value = &mut entries[v];
                (scope.name, scope.name_len) = (value.name, value.name_len);
                scope.flags = value.flags & (flag::INDEX | flag::NUM);
                value.name_len = 0;
                value.flags &= !(flag::INDEX | flag::NUM);
                value.parent = u32_of(v);
                value.depth += 1;
                entries.insert(v, scope);
                if self.last_ended == Some(v) {
                    self.last_ended = Some(v + 1);
                }
                v
            }
            None => {
                (scope.name, scope.name_len, scope.flags) = self.out.index_name(p.index);
                self.out.entries.push(scope);
                self.out.entries.len() - 1
            }
        };
        if let Some(top) = self.open.last_mut() {
            *top = u32_of(at);
        }
    }

    /// A new entry's name, parent and depth (and its place as the pending element's value).
    #[inline(always)]
    fn begin(&mut self, name: &str, bit: usize, bits: usize) -> Entry {
        let mut depth = self.depth_base + self.open.len();
        let mut e = Entry {
            bit: bit as u64,
            bits: u32_of(bits),
            ..Entry::default()
        };
        if let Some(p) = &mut self.pending {
            if name.is_empty() && p.value.is_none() {
                // The element's one unnamed value, perhaps: recorded at the element's depth,
                // under the element's name.
                p.value = Some(self.out.entries.len());
                let (index, parent) = (p.index, p.parent);
                depth -= 1;
                (e.name, e.name_len, e.flags) = self.out.index_name(index);
                e.parent = parent;
                e.depth = u32_of(depth);
                return e;
            }
            self.record_pending();
        }
        if !name.is_empty() {
            (e.name, e.name_len) = self.out.put_text(name);
        }
        e.parent = self.parent();
        e.depth = u32_of(depth);
        e
    }

    #[inline(always)]
    fn finish(&mut self, e: Entry) {
        self.out.entries.push(e);
        self.last_ended = Some(self.out.entries.len() - 1);
    }
}

impl Tracer for Recorder {
    const ACTIVE: bool = true;

    #[allow(clippy::too_many_arguments, reason = "mirrors the trait")]
    fn field(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: Value,
        range: Option<(i128, i128)>,
        kind: FieldKind,
        failed: bool,
    ) {
        let mut e = self.begin(name, bit, bits);
        if failed {
            e.flags |= flag::FAILED;
        }
        // The common kinds inline; the rest through the arenas.
        match (&kind, &value) {
            (FieldKind::Value | FieldKind::Scope | FieldKind::Padding, Value::Int(v))
                if i64::try_from(*v).is_ok() =>
            {
                e.kind = match kind {
                    FieldKind::Scope => fk::SCOPE,
                    FieldKind::Padding => fk::PADDING,
                    _ => fk::VALUE,
                };
                e.value_kind = vk::INT;
                e.value = *v as i64 as u64;
            }
            _ => {
                self.out.put_kind(&mut e, &kind);
                self.out.put_value(&mut e, value);
            }
        }
        self.out.put_range(&mut e, range);
        self.finish(e);
    }

    #[inline]
    fn int(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: i64,
        range: Option<(i64, i64)>,
        failed: bool,
    ) {
        let mut e = self.begin(name, bit, bits);
        e.value_kind = vk::INT;
        e.value = value as u64;
        if let Some((lo, hi)) = range {
            (e.lo, e.hi) = (lo, hi);
            e.flags |= flag::RANGE;
        }
        if failed {
            e.flags |= flag::FAILED;
        }
        self.finish(e);
    }

    #[inline]
    fn uint(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: u64,
        max: Option<u64>,
        failed: bool,
    ) {
        let mut e = self.begin(name, bit, bits);
        e.value_kind = if value > i64::MAX as u64 {
            vk::UINT
        } else {
            vk::INT
        };
        e.value = value;
        match max {
            None => {}
            Some(hi) if hi <= i64::MAX as u64 => {
                (e.lo, e.hi) = (0, hi as i64);
                e.flags |= flag::RANGE;
            }
            Some(hi) => self.out.put_range(&mut e, Some((0, i128::from(hi)))),
        }
        if failed {
            e.flags |= flag::FAILED;
        }
        self.finish(e);
    }

    #[inline]
    fn text(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: &str,
        range: Option<(i128, i128)>,
        failed: bool,
    ) {
        let mut e = self.begin(name, bit, bits);
        if failed {
            e.flags |= flag::FAILED;
        }
        let (off, len) = self.out.put_text(value);
        e.value_kind = vk::STR;
        e.value = span(off, len);
        self.out.put_range(&mut e, range);
        self.finish(e);
    }

    #[inline]
    fn bytes(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: &[u8],
        range: Option<(i128, i128)>,
        failed: bool,
    ) {
        let mut e = self.begin(name, bit, bits);
        if failed {
            e.flags |= flag::FAILED;
        }
        let off = u32_of(self.out.bytes.len());
        self.out.bytes.extend_from_slice(value);
        e.value_kind = vk::BYTES;
        e.value = span(off, u32_of(value.len()));
        self.out.put_range(&mut e, range);
        self.finish(e);
    }

    #[inline]
    fn padding(&mut self, name: &str, bit: usize, bits: usize, pad: u64) {
        let mut e = self.begin(name, bit, bits);
        e.kind = fk::PADDING;
        e.value_kind = if pad > i64::MAX as u64 {
            vk::UINT
        } else {
            vk::INT
        };
        e.value = pad;
        if pad != 0 {
            e.flags |= flag::FAILED;
        }
        self.finish(e);
    }

    /// A check entry as [`Tracer::check`]'s default records it, without the owned label and
    /// value it builds (an allocation per check): the label's text is the entry's name too.
    #[inline]
    fn check(&mut self, label: &str, bit: usize, expected: u32, found: u32) {
        let mut e = self.begin(label, bit, 32);
        let (off, len) = if e.flags & flag::NUM == 0 && e.name_len as usize == label.len() {
            (e.name, e.name_len)
        } else {
            self.out.put_text(label)
        };
        (e.lo, e.hi) = (i64::from(off), i64::from(len));
        e.raw = ((u64::from(expected) << 32) | u64::from(found)) as i64;
        e.kind = fk::CHECK;
        e.value_kind = vk::INT;
        e.value = u64::from(found);
        if found != expected {
            e.flags |= flag::FAILED;
        }
        self.finish(e);
    }

    #[inline]
    fn boolean(&mut self, name: &str, bit: usize, value: bool) {
        let mut e = self.begin(name, bit, 1);
        e.value_kind = vk::BOOL;
        e.value = u64::from(value);
        self.finish(e);
    }

    #[inline]
    fn float32(&mut self, name: &str, bit: usize, bits: usize, value: f32) {
        let mut e = self.begin(name, bit, bits);
        e.value_kind = vk::F32;
        e.value = u64::from(value.to_bits());
        self.finish(e);
    }

    #[inline]
    fn float64(&mut self, name: &str, bit: usize, bits: usize, value: f64) {
        let mut e = self.begin(name, bit, bits);
        e.value_kind = vk::F64;
        e.value = value.to_bits();
        self.finish(e);
    }

    fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize) {
        self.record_pending();
        let parent = self.parent();
        if let Some(index) = index {
            self.pending = Some(PendingElement {
                bit,
                index,
                parent,
                value: None,
            });
            self.open.push(PENDING);
            return;
        }
        let mut e = Entry {
            parent,
            depth: u32_of(self.depth_base + self.open.len()),
            bit: bit as u64,
            kind: fk::SCOPE,
            ..Entry::default()
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            (e.name, e.name_len) = self.out.put_text(n);
        }
        self.out.entries.push(e);
        self.open.push(u32_of(self.out.entries.len() - 1));
    }

    fn exit(&mut self, bit: usize) {
        if self.open.last() == Some(&PENDING)
            && let Some(p) = self.pending
        {
            match p.value {
                // The element was its one value: that entry stands for it.
                Some(v) => {
                    self.pending = None;
                    self.open.pop();
                    self.last_ended = Some(v);
                    return;
                }
                // An empty element: its scope is recorded, and ends here as any other.
                None => self.record_pending(),
            }
        }
        if let Some(i) = self.open.pop() {
            let i = i as usize;
            let entries = &mut self.out.entries;
            let Some(scope) = entries.get_mut(i) else {
                return;
            };
            scope.bits = u32_of(bit.saturating_sub(scope.bit as usize));
            let scope = *scope;
            self.last_ended = Some(i);
            // An array element that is a single unnamed value (`mice[3]`) needs no scope of its
            // own: keep the value, one level up, under the scope's name.
            if i + 2 == entries.len()
                && entries[i + 1].parent == u32_of(i)
                && entries[i + 1].name_len == 0
                && entries[i + 1].flags & flag::NUM == 0
            {
                entries.swap_remove(i);
                let value = &mut entries[i];
                value.depth -= 1;
                value.parent = scope.parent;
                (value.name, value.name_len) = (scope.name, scope.name_len);
                let index = flag::INDEX | flag::NUM;
                value.flags = (value.flags & !index) | (scope.flags & index);
            }
        }
    }

    fn annotate(&mut self, value: Value) {
        if let Some((i, mut e)) = self.annotated() {
            self.out.put_value(&mut e, value);
            self.out.entries[i] = e;
        }
    }

    fn annotate_str(&mut self, value: &str) {
        if let Some((i, mut e)) = self.annotated() {
            let (off, len) = self.out.put_text(value);
            (e.value_kind, e.value) = (vk::STR, span(off, len));
            self.out.entries[i] = e;
        }
    }

    fn annotate_floats(&mut self, value: &[f32]) {
        if let Some((i, mut e)) = self.annotated() {
            let off = u32_of(self.out.floats.len());
            self.out.floats.extend_from_slice(value);
            (e.value_kind, e.value) = (vk::FLOATS, span(off, u32_of(value.len())));
            self.out.entries[i] = e;
        }
    }
}

impl Recorder {
    /// The entry that ended last, to be given a display value: its index and a copy whose
    /// integer value (of a value entry) became its raw value.
    #[inline]
    fn annotated(&mut self) -> Option<(usize, Entry)> {
        let i = self.last_ended?;
        let mut e = self.out.entries.get(i).copied()?;
        if e.kind == fk::VALUE {
            let raw = match self.out.view(i).map_or(ValueRef::None, |f| f.value()) {
                ValueRef::Int(x) => Some(i128::from(x)),
                ValueRef::UInt(x) => Some(i128::from(x)),
                ValueRef::Wide(x) => Some(x),
                _ => None,
            };
            if raw.is_some() {
                self.out.put_raw(&mut e, raw);
            }
        }
        Some((i, e))
    }
}

thread_local! {
    /// Entry storage given back by [`Trace::recycle`], for this thread's next trace.
    static SPARE_ENTRIES: std::cell::Cell<Entries> = const { std::cell::Cell::new(Entries::new()) };
    /// A closed recorder's scope stack (empty), for this thread's next one.
    static SPARE_SCRATCH: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Trace {
    /// Gives the trace's storage back for the next [`TraceStream`](crate::TraceStream) on
    /// this thread, so that tracing datagram after datagram allocates it once (storage for
    /// more than 64K entries is freed instead: one huge packet should not pin its memory).
    /// Clearing it drops nothing per entry: entries are `Copy`.
    #[inline]
    pub fn recycle(self) {
        self.fields.recycle();
    }
}

#[cfg(test)]
mod tests {
    use super::{Entries, Entry, EntryKind, FieldKind, Recorder, Trace, TraceField, Tracer, Value};
    use crate::fixed::Fixed;

    fn value(r: &mut Recorder, name: &str, bit: usize) {
        r.field(name, bit, 1, Value::Int(1), None, FieldKind::Value, false);
    }

    /// (path, depth, bit, bits, kind is a scope) of every entry.
    fn shape(r: Recorder, end: usize) -> Vec<(String, usize, usize, usize, bool)> {
        r.close(end)
            .into_iter()
            .map(|f| {
                let scope = f.kind == FieldKind::Scope;
                (f.path().to_owned(), f.depth, f.bit, f.bits, scope)
            })
            .collect()
    }

    #[test]
    fn array_elements_are_recorded_as_their_one_value_or_as_a_scope() {
        let mut r = Recorder::default();
        r.enter(Some("mice"), None, 0);
        // [0]: one unnamed value, recorded alone at the element's depth and annotated.
        r.enter(None, Some(0), 0);
        value(&mut r, "", 0);
        r.exit(1);
        r.annotate(Value::Str("first".into()));
        // [1]: an unnamed value, then a named one: the scope goes before both.
        r.enter(None, Some(1), 1);
        value(&mut r, "", 1);
        value(&mut r, "x", 2);
        r.exit(3);
        // [2]: nothing inside.
        r.enter(None, Some(2), 3);
        r.exit(3);
        // [3]: a named value only.
        r.enter(None, Some(3), 3);
        value(&mut r, "y", 3);
        r.exit(4);
        // [4]: left open by a failed read, closed at the end.
        r.enter(None, Some(4), 4);
        value(&mut r, "", 4);
        let got = r.clone();
        assert_eq!(
            got.out[1].value,
            Value::Str("first".into()),
            "annotate reaches the element's value"
        );
        let s = |p: &str, d, b, n, scope| (p.to_owned(), d, b, n, scope);
        assert_eq!(
            shape(r, 9),
            vec![
                s("mice", 0, 0, 9, true),
                s("mice[0]", 1, 0, 1, false),
                s("mice[1]", 1, 1, 2, true),
                s("mice[1]", 2, 1, 1, false),
                s("mice[1].x", 2, 2, 1, false),
                s("mice[2]", 1, 3, 0, true),
                s("mice[3]", 1, 3, 1, true),
                s("mice[3].y", 2, 3, 1, false),
                s("mice[4]", 1, 4, 1, false),
            ]
        );
    }

    /// A tracer with only the required hooks: the typed ones run their default bodies.
    #[derive(Default)]
    struct FieldOnly(Recorder);

    impl Tracer for FieldOnly {
        const ACTIVE: bool = true;
        fn field(
            &mut self,
            name: &str,
            bit: usize,
            bits: usize,
            value: Value,
            range: Option<(i128, i128)>,
            kind: FieldKind,
            failed: bool,
        ) {
            self.0.field(name, bit, bits, value, range, kind, failed);
        }
        fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize) {
            self.0.enter(name, index, bit);
        }
        fn exit(&mut self, bit: usize) {
            self.0.exit(bit);
        }
        fn annotate(&mut self, value: Value) {
            self.0.annotate(value);
        }
    }

    /// Short copies of every length copy exactly the bytes given; indices are written as
    /// `[i]`, the ones below 1000 without the loop too.
    #[test]
    fn walk_pieces_copy_names_and_write_indices_exactly() {
        let src: Vec<u8> = (1..=48u8).collect();
        for n in 0..=48 {
            let mut dst = [0u8; 64];
            super::copy_short(&mut dst[..n], &src[..n]);
            assert_eq!(dst[..n], src[..n], "{n}");
            assert!(dst[n..].iter().all(|&b| b == 0), "{n}");
        }
        for i in [
            0u32,
            7,
            9,
            10,
            42,
            99,
            100,
            255,
            999,
            1000,
            65_535,
            u32::MAX,
        ] {
            let mut buf = vec![b'x'; 20];
            let len = super::write_index(&mut buf, 3, i);
            assert_eq!(&buf[..len], format!("xxx[{i}]").as_bytes());
        }
    }

    /// Every typed hook once, inside a scope and an array element.
    fn typed_hooks<T: Tracer>(t: &mut T) {
        t.enter(Some("s"), None, 0);
        t.int("i", 0, 7, -5, Some((-64, 63)), false);
        t.int("j", 7, 64, i64::MIN, None, true);
        t.uint("u", 71, 64, u64::MAX, Some(u64::MAX), false);
        t.uint("w", 135, 64, 3, None, false);
        t.boolean("b", 199, true);
        t.float32("f", 200, 32, f32::from_bits(0x7FA0_0001));
        t.float64("d", 232, 64, -0.0);
        t.padding("pad", 296, 5, 9);
        t.check("label", 301, 0xDEAD_BEEF, 0xDEAD_BEEF);
        t.check("crc32", 333, 1, 2);
        t.text("t", 333, 16, "h\"i", None, false);
        t.bytes("y", 349, 16, &[0xAB, 0x01], Some((0, 255)), true);
        t.enter(None, Some(3), 365);
        t.uint("", 365, 4, 9, Some(15), false);
        t.exit(369);
        t.exit(369);
    }

    #[test]
    fn typed_hooks_record_what_their_default_bodies_do() {
        let mut typed = Recorder::default();
        typed_hooks(&mut typed);
        let mut plain = FieldOnly::default();
        typed_hooks(&mut plain);
        let (typed, plain) = (typed.close(369), plain.0.close(369));
        assert_eq!(typed, plain);
        // A lent recorder (`&mut Recorder` as the tracer) records the same.
        let mut lent = Recorder::default();
        typed_hooks(&mut &mut lent);
        assert_eq!(lent.close(369), typed);
        // Every name, label and text is in `texts`, and the paths are made of them.
        assert!(typed.texts().contains("crc32") && typed.texts().contains("h\"i"));
        let ranges: Vec<_> = typed.iter().map(|f| f.range).collect();
        let max = Some((0, i128::from(u64::MAX)));
        let element = Some((0, 15));
        let none = None;
        let expected = [
            none,
            Some((-64, 63)),
            none,
            max,
            none,
            none,
            none,
            none,
            none,
        ];
        assert_eq!(ranges[..9], expected);
        assert_eq!(ranges[9..], [none, none, none, Some((0, 255)), element]);
        let shown: Vec<_> = typed
            .iter()
            .map(|f| (f.path(), f.value.to_string(), f.failed))
            .collect();
        assert_eq!(
            shown,
            [
                ("s", String::new(), false),
                ("s.i", "-5".into(), false),
                ("s.j", i64::MIN.to_string(), true),
                ("s.u", u64::MAX.to_string(), false),
                ("s.w", "3".into(), false),
                ("s.b", "true".into(), false),
                ("s.f", "nan:0x7fa00001".into(), false),
                ("s.d", "-0".into(), false),
                ("s.pad", "9".into(), true),
                ("s.label", 0xDEAD_BEEF_u32.to_string(), false),
                ("s.crc32", "2".into(), true),
                ("s.t", "\"h\\\"i\"".into(), false),
                ("s.y", "ab01".into(), true),
                ("s[3]", "9".into(), false),
            ]
        );
        assert!(typed[10].check_failed() && !typed[9].check_failed());
        assert_eq!(typed[8].kind, FieldKind::Padding);
        assert_eq!(typed[11].depth, 1, "the element's one value stands for it");
    }

    #[test]
    fn borrowed_values_compare_as_owned_ones_do() {
        let values = [
            Value::F32(f32::NAN),
            Value::F32(-f32::NAN),
            Value::F32(0.0),
            Value::F32(-0.0),
            Value::F64(f64::NAN),
            Value::Floats(vec![f32::NAN, 1.0]),
            Value::Int(-1),
            Value::Int(i128::from(u64::MAX)),
            Value::Int(i128::MAX),
            Value::U128(u128::MAX),
            Value::Str("x".into()),
            Value::None,
        ];
        for a in &values {
            for b in &values {
                assert_eq!(a.as_ref() == b.as_ref(), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn values_compare_by_their_wire_bits() {
        assert_eq!(Value::F32(f32::NAN), Value::F32(f32::NAN));
        assert_ne!(Value::F32(f32::NAN), Value::F32(-f32::NAN));
        assert_ne!(Value::F32(0.0), Value::F32(-0.0));
        assert_eq!(Value::F64(f64::NAN), Value::F64(f64::NAN));
        assert_eq!(
            Value::Floats(vec![f32::NAN, 1.0]),
            Value::Floats(vec![f32::NAN, 1.0])
        );
        assert_ne!(Value::Floats(vec![1.0]), Value::Floats(vec![1.0, 1.0]));
        assert_ne!(Value::Int(1), Value::F32(1.0));
        let payload = f32::from_bits(0x7FA0_0001);
        assert_ne!(Value::F32(payload), Value::F32(f32::from_bits(0x7FA0_0002)));
        assert_eq!(Value::U128(u128::MAX), Value::U128(u128::MAX));
        assert_ne!(Value::U128(u128::MAX), Value::Int(-1));
    }

    /// Every entry's path from the walk, from `Field::path`, and from the owned form agree.
    fn paths_agree(e: &Entries) -> Vec<String> {
        let mut walked = Vec::new();
        let mut w = e.walk();
        while let Some((f, path)) = w.next() {
            assert_eq!(path, f.path(), "walk against the parents");
            walked.push(path.to_owned());
        }
        let owned: Vec<String> = e.iter().map(|f| f.path().to_owned()).collect();
        assert_eq!(walked, owned);
        // The owned form is each view's owned entry under its walked path.
        for (k, f) in e.iter().enumerate() {
            assert_eq!(Some(f), e.view(k).map(|v| v.to_field(&walked[k])).as_ref());
        }
        // A walk from any entry on (ancestors before it) gives the same paths.
        for start in 0..e.len() {
            let mut w = e.walk_range(start..e.len());
            let mut k = start;
            while let Some((_, path)) = w.next() {
                assert_eq!(path, walked[k], "walk from {start}");
                k += 1;
            }
        }
        // Skipping entries (every other one, then all): the paths of those wanted, and of
        // every scope, are the same.
        for none in [false, true] {
            let mut w = e.walk();
            let mut k = 0;
            while let Some((f, path)) = w.next_where(|_| !none && k % 2 == 0) {
                let (scope, wanted) = (f.kind() == EntryKind::Scope, !none && k % 2 == 0);
                match path {
                    Some(path) => {
                        assert!(scope || wanted, "{k} built");
                        assert_eq!(path, walked[k].as_bytes(), "{k}");
                    }
                    None => assert!(!scope && !wanted, "{k} skipped"),
                }
                k += 1;
            }
            assert_eq!(k, e.len());
        }
        walked
    }

    #[test]
    fn the_entry_is_64_bytes_copy_and_drops_nothing() {
        fn copy<T: Copy>() {}
        copy::<Entry>();
        assert!(
            std::mem::size_of::<Entry>() <= 64,
            "{}",
            std::mem::size_of::<Entry>()
        );
        assert!(!std::mem::needs_drop::<Entry>());
    }

    #[test]
    fn walked_paths_are_the_recorded_paths_in_every_nesting() {
        let mut r = Recorder::at_depth(1);
        r.enter(Some("grid"), None, 0);
        // Arrays of arrays: [0] holds an array whose elements are one value each.
        r.enter(None, Some(0), 0);
        r.enter(Some("row"), None, 0);
        for k in 0..3 {
            r.enter(None, Some(k), k);
            value(&mut r, "", k);
            r.exit(k + 1);
        }
        r.exit(3);
        r.exit(3);
        // [1]: two unnamed values (the scope goes in before the first).
        r.enter(None, Some(1), 3);
        value(&mut r, "", 3);
        value(&mut r, "", 4);
        r.exit(5);
        // [2]: empty; [3]: an unnamed struct holding one value (both scopes give way to it).
        r.enter(None, Some(2), 5);
        r.exit(5);
        r.enter(None, Some(3), 5);
        r.enter(None, None, 5);
        value(&mut r, "", 5);
        r.exit(6);
        r.exit(6);
        r.exit(6);
        value(&mut r, "after", 6);
        // A failed read: scopes left open, closed at the end.
        r.enter(Some("open"), None, 7);
        r.enter(None, Some(9), 7);
        r.enter(Some("deep"), None, 7);
        value(&mut r, "x", 7);
        let mut e = r.close(9);
        let paths = paths_agree(&e);
        assert_eq!(
            paths,
            [
                "grid",
                "grid[0]",
                "grid[0].row",
                "grid[0].row[0]",
                "grid[0].row[1]",
                "grid[0].row[2]",
                "grid[1]",
                "grid[1]",
                "grid[1]",
                "grid[2]",
                "grid[3]",
                "after",
                "open",
                "open[9]",
                "open[9].deep",
                "open[9].deep.x",
            ]
        );
        assert_eq!(e[0].depth, 1, "a recorder's depth base");
        assert_eq!(
            e[3].depth, 4,
            "an element's one value at the element's depth"
        );
        // Hand-made entries (absolute paths) before and after the recorded ones.
        e.prepend(vec![TraceField::new(
            "xor.count",
            0,
            0,
            8,
            Value::Int(3),
            FieldKind::Value,
        )]);
        e.push(TraceField::new(
            "xor.end",
            0,
            9,
            0,
            Value::None,
            FieldKind::Scope,
        ));
        let moved = paths_agree(&e);
        assert_eq!(moved[0], "xor.count");
        assert_eq!(moved[1..moved.len() - 1], paths[..]);
        assert_eq!(moved.last().map(String::as_str), Some("xor.end"));
    }

    #[test]
    fn every_value_kind_range_raw_and_check_round_trips() {
        let values = [
            Value::None,
            Value::Bool(true),
            Value::Int(-5),
            Value::Int(i128::from(u64::MAX)),
            Value::Int(i128::MIN),
            Value::U128(u128::MAX),
            Value::F32(f32::from_bits(0x7FA0_0001)),
            Value::F64(-0.0),
            Value::Str("naïve \"q\"".into()),
            Value::Bytes(vec![0, 1, 0xFF]),
            Value::Floats(vec![1.5, f32::NAN, -0.0]),
            Value::Fixed(Fixed::new(-13, 2)),
        ];
        let ranges = [
            None,
            Some((-8, 7)),
            Some((0, i128::from(u64::MAX))),
            Some((i128::MIN, i128::MAX)),
        ];
        let mut r = Recorder::default();
        let mut expected = Vec::new();
        for (k, v) in values.iter().enumerate() {
            let range = ranges[k % ranges.len()];
            let kind = if k % 3 == 0 {
                FieldKind::Scope
            } else {
                FieldKind::Value
            };
            r.field(
                &format!("f{k}"),
                k,
                k * 3,
                v.clone(),
                range,
                kind.clone(),
                k % 2 == 0,
            );
            let mut f = TraceField::new(&format!("f{k}"), 0, k, k * 3, v.clone(), kind);
            (f.range, f.failed) = (range, k % 2 == 0);
            expected.push(f);
        }
        // A raw value (the wire integer) set by an annotation, narrow and wide.
        r.int("code", 100, 7, -3, Some((-64, 63)), false);
        r.annotate(Value::Str("minus three".into()));
        r.field(
            "big",
            107,
            128,
            Value::Int(i128::MAX),
            None,
            FieldKind::Value,
            false,
        );
        r.annotate(Value::F64(1.0));
        r.check("end", 235, 0xDEAD_BEEF, 0x0BAD_F00D);
        r.uint("u", 267, 64, u64::MAX, Some(u64::MAX), false);
        let mut code = TraceField::new(
            "code",
            0,
            100,
            7,
            Value::Str("minus three".into()),
            FieldKind::Value,
        );
        (code.raw, code.range) = (Some(-3), Some((-64, 63)));
        let mut big = TraceField::new("big", 0, 107, 128, Value::F64(1.0), FieldKind::Value);
        big.raw = Some(i128::MAX);
        let check = FieldKind::Check {
            label: "end".into(),
            expected: 0xDEAD_BEEF,
            found: 0x0BAD_F00D,
        };
        let mut end = TraceField::new("end", 0, 235, 32, Value::Int(0x0BAD_F00D), check);
        end.failed = true;
        let mut u = TraceField::new(
            "u",
            0,
            267,
            64,
            Value::Int(i128::from(u64::MAX)),
            FieldKind::Value,
        );
        u.range = Some((0, i128::from(u64::MAX)));
        expected.extend([code, big, end, u]);
        let e = r.close(331);
        assert_eq!(e.clone().into_vec(), expected);
        // Hand-made entries keep all of it too.
        let again: Entries = expected.clone().into_iter().collect();
        assert_eq!(&again[..], &expected[..]);
        assert!(e.view(expected.len() - 2).is_some_and(|f| f.check_failed()));
        let trace = Trace {
            fields: e,
            ..Trace::default()
        };
        assert_eq!(trace.checks().count(), 1);
        assert_eq!(trace.get("u").map(|f| f.bit), Some(267));
    }

    #[test]
    fn recycled_storage_starts_empty() {
        let mut r = Recorder::recycled();
        value(&mut r, "a", 0);
        Trace {
            fields: r.close(1),
            ..Trace::default()
        }
        .recycle();
        let r = Recorder::recycled();
        assert_eq!(r.recorded(), 0);
        assert!(r.close(0).is_empty());
    }
}
