//! What a read saw, for people: a [`Trace`] of every field (path, bit offset, width, value,
//! allowed range), check marker and padding, in stream order, and how the read ended.
//!
//! [`TraceStream`](crate::TraceStream) fills one through a [`Recorder`]; [`ReadStream`](crate::ReadStream)
//! reads through [`NoTrace`], whose hooks cost nothing.

use crate::error::{Error, ErrorKind};
use crate::fixed::Fixed;
use crate::float_text::{f32_text, f64_text};

/// A traced field's path. With feature `inline-paths` (the inspector's), a `CompactString`
/// that holds up to 24 bytes inline, so a trace allocates nothing per field for most paths;
/// else a `String`.
#[cfg(feature = "inline-paths")]
pub type PathString = compact_str::CompactString;
/// A traced field's path. With feature `inline-paths` (the inspector's), a `CompactString`
/// that holds up to 24 bytes inline, so a trace allocates nothing per field for most paths;
/// else a `String`.
#[cfg(not(feature = "inline-paths"))]
pub type PathString = String;

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
        match self {
            Value::None => Ok(()),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::U128(i) => write!(f, "{i}"),
            Value::Fixed(x) => write!(f, "{x}"),
            Value::F32(x) => match f32_text(*x) {
                Some(text) => f.write_str(&text),
                None => write!(f, "{x}"),
            },
            Value::F64(x) => match f64_text(*x) {
                Some(text) => f.write_str(&text),
                None => write!(f, "{x}"),
            },
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => {
                for byte in b {
                    write!(f, "{byte:02x}")?;
                }
                Ok(())
            }
            Value::Floats(v) => {
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
    /// Fields, scopes, padding and checks in the order they were read.
    pub fields: Vec<TraceField>,
    /// The error that stopped the read, if any.
    pub error: Option<Error>,
    /// Bits consumed.
    pub bits_read: usize,
    /// Bits in the data.
    pub total_bits: usize,
}

impl Trace {
    /// The check markers (and CRC) that were read.
    pub fn checks(&self) -> impl Iterator<Item = &TraceField> {
        self.fields
            .iter()
            .filter(|f| matches!(f.kind, FieldKind::Check { .. }))
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
        if self.fields.iter().any(|f| f.failed) {
            return;
        }
        let Some(e) = &self.error else {
            return;
        };
        if !matches!(e.kind(), ErrorKind::PastEnd { .. }) {
            return;
        }
        let (path, bit) = (e.field(), e.bit());
        if let Some(f) = self
            .fields
            .iter_mut()
            .rev()
            .find(|f| f.bit == bit && f.path == path)
        {
            f.failed = true;
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
        if self.fields.iter().any(|f| f.failed) {
            return None;
        }
        let (path, bit) = self.past_end_at()?;
        // One level below the scope the path names (an element `[i]` is a level too).
        let parent = path.rfind(['.', '[']).map_or("", |i| &path[..i]);
        let depth = if parent.is_empty() {
            self.fields.first().map_or(0, |f| f.depth)
        } else {
            self.fields
                .iter()
                .rev()
                .find(|f| f.path == parent)
                .map_or(0, |f| f.depth + 1)
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
}

/// The tracer of [`ReadStream`](crate::ReadStream): records nothing and costs nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTrace;

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
}

/// The tracer of [`TraceStream`](crate::TraceStream): builds the [`Trace`].
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    fields: Vec<TraceField>,
    /// Open scopes: index into `fields` and the length of `path` before the scope.
    open: Vec<(usize, usize)>,
    path: String,
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
    /// Its one unnamed value, recorded at the element's own depth, if it came.
    value: Option<usize>,
}

/// `open`'s entry for a pending element (its index in `fields` is not known yet).
const PENDING: usize = usize::MAX;

impl Recorder {
    /// A recorder whose top-level entries have depth `depth`.
    pub fn at_depth(depth: usize) -> Self {
        Recorder {
            depth_base: depth,
            ..Self::default()
        }
    }

    /// The recorded entries, in read order.
    pub fn into_fields(self) -> Vec<TraceField> {
        self.fields
    }

    /// A recorder whose field storage is the one [`Trace::recycle`] gave back on this thread.
    pub fn recycled() -> Self {
        let mut fields = SPARE_FIELDS.with(std::cell::Cell::take);
        fields.reserve(64);
        // The path and the open scopes are scratch space: the last recycled recorder's.
        let (mut path, open) = SPARE_SCRATCH.with(std::cell::Cell::take);
        path.reserve(64);
        Recorder {
            fields,
            path,
            open,
            ..Recorder::default()
        }
    }

    /// How many entries have been recorded so far (the index the next one gets).
    pub fn recorded(&self) -> usize {
        self.fields.len()
    }

    /// Entry `i` of those recorded so far, to mark it after the fact (a batch message's length
    /// is marked failed once its body turns out not to fit it).
    pub fn entry_mut(&mut self, i: usize) -> Option<&mut TraceField> {
        self.fields.get_mut(i)
    }

    /// How many scopes are open: a caller that records several readers' fields into one tree
    /// (a batch's messages) closes what a failed read left open down to its own level.
    pub fn open_scopes(&self) -> usize {
        self.open.len()
    }

    /// Closes every scope still open at bit `end` (a read that stopped inside them) and returns
    /// the entries.
    pub fn close(mut self, end: usize) -> Vec<TraceField> {
        while !self.open.is_empty() {
            self.exit(end);
        }
        // Keep the scratch space for this thread's next recorder (not a path or a nesting
        // that one hostile packet made huge).
        if self.path.capacity() <= 1 << 12 && self.open.capacity() <= 1 << 12 {
            self.path.clear();
            SPARE_SCRATCH.with(|spare| spare.set((self.path, self.open)));
        }
        self.fields
    }

    /// Records the pending element's scope entry, before its value if it has one.
    fn record_pending(&mut self) {
        let Some(p) = self.pending.take() else {
            return;
        };
        let depth = self.depth_base + self.open.len() - 1;
        let scope = TraceField {
            path: PathString::from(self.path.as_str()),
            depth,
            bit: p.bit,
            bits: 0,
            value: Value::None,
            raw: None,
            range: None,
            kind: FieldKind::Scope,
            failed: false,
        };
        let at = match p.value {
            Some(v) => {
                // Rare: more than the one value inside the element. The scope goes before it.
                self.fields.insert(v, scope);
                self.fields[v + 1].depth += 1;
                if self.last_ended == Some(v) {
                    self.last_ended = Some(v + 1);
                }
                v
            }
            None => {
                self.fields.push(scope);
                self.fields.len() - 1
            }
        };
        if let Some(top) = self.open.last_mut() {
            top.0 = at;
        }
    }

    #[inline(always)]
    fn child_path(&mut self, name: &str) -> PathString {
        // Extend the current path in place and copy it once (inline, no allocation, up to 24
        // bytes): traces build a path for every field.
        if name.is_empty() {
            return PathString::from(self.path.as_str());
        }
        let before = self.path.len();
        if before > 0 {
            self.path.push('.');
        }
        self.path.push_str(name);
        let path = PathString::from(self.path.as_str());
        self.path.truncate(before);
        path
    }
}

impl Recorder {
    /// [`Tracer::field`]'s body, inlined into each typed hook so that the value, range and
    /// kind are built in place in the entry (not built by the reader and moved in).
    #[allow(clippy::too_many_arguments, reason = "mirrors the trait")]
    #[inline(always)]
    fn push_field(
        &mut self,
        name: &str,
        bit: usize,
        bits: usize,
        value: Value,
        range: Option<(i128, i128)>,
        kind: FieldKind,
        failed: bool,
    ) {
        let mut depth = self.depth_base + self.open.len();
        if let Some(p) = &mut self.pending {
            if name.is_empty() && p.value.is_none() {
                // The element's one unnamed value, perhaps: recorded at the element's depth.
                p.value = Some(self.fields.len());
                depth -= 1;
            } else {
                self.record_pending();
            }
        }
        let path = self.child_path(name);
        self.fields.push(TraceField {
            path,
            depth,
            bit,
            bits,
            value,
            raw: None,
            range,
            kind,
            failed,
        });
        self.last_ended = Some(self.fields.len() - 1);
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
        self.push_field(name, bit, bits, value, range, kind, failed);
    }

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
        self.push_field(name, bit, bits, value, range, FieldKind::Value, failed);
    }

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
        self.push_field(name, bit, bits, value, range, FieldKind::Value, failed);
    }

    fn boolean(&mut self, name: &str, bit: usize, value: bool) {
        let kind = FieldKind::Value;
        self.push_field(name, bit, 1, Value::Bool(value), None, kind, false);
    }

    fn float32(&mut self, name: &str, bit: usize, bits: usize, value: f32) {
        let kind = FieldKind::Value;
        self.push_field(name, bit, bits, Value::F32(value), None, kind, false);
    }

    fn float64(&mut self, name: &str, bit: usize, bits: usize, value: f64) {
        let kind = FieldKind::Value;
        self.push_field(name, bit, bits, Value::F64(value), None, kind, false);
    }

    fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize) {
        self.record_pending();
        let before = self.path.len();
        // Extend the current path in place; the scope entry gets one exact-size copy.
        match (name, index) {
            (_, Some(i)) => {
                self.path.push('[');
                self.path.push_str(itoa::Buffer::new().format(i));
                self.path.push(']');
            }
            (Some(n), None) if !n.is_empty() => {
                if before > 0 {
                    self.path.push('.');
                }
                self.path.push_str(n);
            }
            _ => {}
        }
        if index.is_some() {
            self.pending = Some(PendingElement { bit, value: None });
            self.open.push((PENDING, before));
            return;
        }
        let path = PathString::from(self.path.as_str());
        self.fields.push(TraceField {
            path,
            depth: self.depth_base + self.open.len(),
            bit,
            bits: 0,
            value: Value::None,
            raw: None,
            range: None,
            kind: FieldKind::Scope,
            failed: false,
        });
        self.open.push((self.fields.len() - 1, before));
    }

    fn exit(&mut self, bit: usize) {
        if self.open.last().is_some_and(|&(i, _)| i == PENDING)
            && let Some(p) = self.pending
        {
            match p.value {
                // The element was its one value: that entry stands for it.
                Some(v) => {
                    self.pending = None;
                    if let Some((_, before)) = self.open.pop() {
                        self.path.truncate(before);
                    }
                    self.last_ended = Some(v);
                    return;
                }
                // An empty element: its scope is recorded, and ends here as any other.
                None => self.record_pending(),
            }
        }
        if let Some((i, before)) = self.open.pop() {
            self.fields[i].bits = bit - self.fields[i].bit;
            self.path.truncate(before);
            self.last_ended = Some(i);
            // An array element that is a single unnamed value (`mice[3]`) needs no scope of its
            // own: keep the value, one level up.
            if i + 2 == self.fields.len() && self.fields[i + 1].path == self.fields[i].path {
                // The value is the last entry: it takes the scope's place (one fixed-size move,
                // where `remove` shifted through a memmove call).
                self.fields.swap_remove(i);
                self.fields[i].depth -= 1;
            }
        }
    }

    fn annotate(&mut self, value: Value) {
        if let Some(f) = self.last_ended.and_then(|i| self.fields.get_mut(i)) {
            if let Value::Int(raw) = f.value
                && f.kind == FieldKind::Value
            {
                f.raw = Some(raw);
            }
            f.value = value;
        }
    }
}

thread_local! {
    /// Field storage given back by [`Trace::recycle`], for this thread's next trace.
    static SPARE_FIELDS: std::cell::Cell<Vec<TraceField>> = const { std::cell::Cell::new(Vec::new()) };
    /// A closed recorder's path and scope stack (both empty), for this thread's next one.
    static SPARE_SCRATCH: std::cell::Cell<(String, Vec<(usize, usize)>)> =
        const { std::cell::Cell::new((String::new(), Vec::new())) };
}

impl Trace {
    /// Gives the trace's field storage back for the next [`TraceStream`](crate::TraceStream) on this thread, so that
    /// tracing datagram after datagram allocates it once (storage for more than 64K fields is
    /// freed instead: one huge packet should not pin its memory).
    pub fn recycle(self) {
        let mut fields = self.fields;
        if fields.capacity() <= 1 << 16 {
            fields.clear();
            SPARE_FIELDS.with(|spare| spare.set(fields));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FieldKind, Recorder, Tracer, Value};

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
            got.fields[1].value,
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
        assert_eq!(ranges[9..], [none, none, element]);
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
                ("s[3]", "9".into(), false),
            ]
        );
        assert!(typed[10].check_failed() && !typed[9].check_failed());
        assert_eq!(typed[8].kind, FieldKind::Padding);
        assert_eq!(typed[11].depth, 1, "the element's one value stands for it");
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
}
