//! Message batches with schema-described bodies: the `[batch]` section of a schema, interpreted
//! through the batch layer's own [`ByteStream`] trait (WIRE.md section 3, seed 002).
//!
//! One interpreter per layer: a `[batch.struct.NAME]` body calls exactly the byte-aligned
//! primitives a hand-written `Message::serialize` calls ([`ByteReader`], [`ByteWriter`],
//! [`ByteCounter`], and the tracing reader), with the same names, so a schema that describes
//! compiled messages gives the same bytes, errors and traces (`captures/demo.schema.toml`
//! describes the demo messages of `bitlens_testkit::batch_demo`; `fuzzing::schema::schema_batch_vs_compiled` checks it).
//!
//! ```text
//! type            wire (batch::fast)                        DynValue
//! u8 i8 bool      1 byte (bool: 0 or 1)                     Int / Bool
//! u16..i64        little-endian, 2 / 4 / 8 bytes            Int (u64: U64)
//! f32 f64         raw IEEE-754 bits, little-endian          F32 / F64
//! packed_u32/u64  varint of the tagged format               Int / U64
//! packed_i32/i64  zig-zag, then varint                      Int
//! string          packed length in 0..=max_len, UTF-8       Str
//! bytes           `len` raw bytes, or packed length + bytes Bytes
//! pod             `len` elements (or one struct) in one copy, traced as one field of bytes
//! array           packed count in 0..=max_len, elements `name[i]`
//! a struct name   its fields in a scope
//! ```
//!
//! Reading never panics and never allocates by an unchecked length: counts go through
//! [`ByteStream::length`], which checks them against `max_len` and the bytes that remain.
//!
//! Names read from the file are interned once (`&'static str`), because the batch layer keeps
//! its errors `Copy` and allocation-free: the memory is bounded by the distinct names of every
//! schema a process loads.

use crate::bounds::{Cost, MAX_DEPTH};
use crate::error::SchemaError;
use crate::source::{Parser, Val, cycle_error, duplicate_name, get, line_col, too_deep};
use crate::value::{DynStruct, DynValue};
use bitlens_batch::dissect::MessageSet;
use bitlens_batch::message::{
    BatchWriter, MAX_MTU, MESSAGE_HEADER_LEN, RawMessage, UpdateStage, max_body,
};
use bitlens_batch::stream::{ByteCounter, ByteReader, ByteStream, ByteWriter, LittleEndian};
use bitlens_batch::{BatchError, BatchErrorKind, Result};
use bitlens_codec::trace::Tracer;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};
use toml::Spanned;
use toml::de::DeValue;

/// A name of the file as the batch layer's `&'static str`, interned process-wide.
fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// A fixed-width primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prim {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl Prim {
    fn from_name(n: &str) -> Option<Prim> {
        Some(match n {
            "bool" => Prim::Bool,
            "u8" => Prim::U8,
            "u16" => Prim::U16,
            "u32" => Prim::U32,
            "u64" => Prim::U64,
            "i8" => Prim::I8,
            "i16" => Prim::I16,
            "i32" => Prim::I32,
            "i64" => Prim::I64,
            "f32" => Prim::F32,
            "f64" => Prim::F64,
            _ => return None,
        })
    }

    pub(super) fn size(self) -> usize {
        match self {
            Prim::Bool | Prim::U8 | Prim::I8 => 1,
            Prim::U16 | Prim::I16 => 2,
            Prim::U32 | Prim::I32 | Prim::F32 => 4,
            Prim::U64 | Prim::I64 | Prim::F64 => 8,
        }
    }

    /// The largest value of an unsigned type, `None` for signed and float types.
    fn unsigned_max(self) -> Option<u64> {
        match self {
            Prim::U8 => Some(u8::MAX.into()),
            Prim::U16 => Some(u16::MAX.into()),
            Prim::U32 => Some(u32::MAX.into()),
            Prim::U64 => Some(u64::MAX),
            _ => None,
        }
    }

    pub(super) fn signed(self) -> bool {
        matches!(self, Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64)
    }
}

/// A range check made after a value is read (and before it is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    None,
    /// Unsigned values in `min..=max`.
    Range {
        min: u64,
        max: u64,
    },
    /// Signed values with `|v| <= max`; an error reports `|v|` out of `0..=max`.
    Abs(u64),
}

/// What a batch field is on the wire.
#[derive(Debug, Clone)]
pub(super) enum BKind {
    Prim(Prim, Check),
    /// A varint: `wide` = 64 bits, `signed` = zig-zag first.
    Packed {
        signed: bool,
        wide: bool,
        check: Check,
    },
    Str {
        max_len: usize,
    },
    Bytes {
        len: usize,
    },
    ByteVec {
        max_len: usize,
    },
    /// `len` primitives in one copy of their bytes.
    Pod {
        element: Prim,
        len: usize,
        check: Check,
    },
    /// A struct of fixed-width fields in one copy of its bytes.
    PodStruct {
        sid: usize,
        size: usize,
    },
    Struct(usize),
    Array {
        max_len: usize,
        /// Fewest bytes of one element: the reader checks `count * unit` against what remains.
        unit: usize,
        element: Box<BKind>,
    },
}

#[derive(Debug, Clone)]
pub(super) struct BField {
    pub(super) name: &'static str,
    pub(super) kind: BKind,
    pub(super) guard: Option<(usize, bool)>,
}

#[derive(Debug, Clone)]
pub(super) struct BStruct {
    pub(super) fields: Vec<BField>,
    pub(super) layout: Arc<[Arc<str>]>,
    /// Fewest bytes its unguarded fields take.
    min_size: usize,
    /// The most trace entries its fields record, per body byte plus fixed (no scope of its own).
    cost: Cost,
    /// Levels of structs and arrays inside it.
    depth: usize,
}

#[derive(Debug, Clone)]
pub(super) struct MessageDef {
    pub(super) message_type: u8,
    pub(super) name: &'static str,
    pub(super) body: usize,
}

/// The `[batch]` section of a schema: message types by number, their byte-aligned bodies, and
/// optionally the update stages' names.
#[derive(Debug, Clone)]
pub struct BatchSchema {
    pub(super) messages: Vec<MessageDef>,
    by_type: Vec<Option<usize>>,
    pub(super) structs: Vec<BStruct>,
    stages: Option<Vec<Option<&'static str>>>,
}

impl BatchSchema {
    /// The name of message type `t`, `None` for types the schema does not list.
    pub fn message_name(&self, t: u8) -> Option<&'static str> {
        self.def(t).map(|m| m.name)
    }

    /// The number of the message type named `name`.
    pub fn message_type(&self, name: &str) -> Option<u8> {
        self.messages
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.message_type)
    }

    /// The message types, by number.
    pub fn message_types(&self) -> impl Iterator<Item = (u8, &'static str)> + '_ {
        self.messages.iter().map(|m| (m.message_type, m.name))
    }

    /// The most entries the trace of one message body of `len` bytes can hold, whatever its
    /// type (a read visits as many fields): linear in `len`, because the loader refuses a batch
    /// struct that records more than 64 entries per byte it reads plus 256 (SCHEMA.md, "Bounds").
    pub fn max_trace_fields(&self, len: usize) -> usize {
        self.messages
            .iter()
            .map(|m| self.structs[m.body].cost.entries(len))
            .max()
            .unwrap_or(0)
    }

    /// The name of an update stage: the schema's `stages`, or else [`UpdateStage::name`].
    pub fn stage_name(&self, stage: u8) -> Option<&'static str> {
        match &self.stages {
            Some(names) => names.get(usize::from(stage)).copied().flatten(),
            None => UpdateStage(stage).name(),
        }
    }

    pub(super) fn def(&self, t: u8) -> Option<&MessageDef> {
        self.by_type[usize::from(t)].map(|i| &self.messages[i])
    }

    fn known(&self, s: &impl ByteStream, t: u8) -> Result<&MessageDef> {
        self.def(t).ok_or_else(|| {
            let kind = BatchErrorKind::InvalidValue("a message type the schema does not list");
            BatchError::new(kind, s.base() + s.position(), "type")
        })
    }

    /// Serializes the body of a message of type `t` on any [`ByteStream`]: the hook that
    /// reads, writes, measures and traces. A reader replaces `value` with the body read; a
    /// writer sends `value` (a struct) and leaves it as it was.
    ///
    /// # Errors
    /// A type the schema does not list (invalid_value), a value that does not fit its field
    /// (invalid_value, out_of_range), and whatever the stream reports.
    pub fn serialize_body<S: ByteStream>(
        &self,
        s: &mut S,
        t: u8,
        value: &mut DynValue,
    ) -> Result<()> {
        let body = self.known(s, t)?.body;
        self.struct_body(s, body, value)
    }

    /// Decodes a message's body: `Ok(None)` for a type the schema does not list (skipped by its
    /// length). The body must be consumed exactly.
    ///
    /// # Errors
    /// The first error, naming the message.
    pub fn decode(&self, raw: &RawMessage<'_>) -> Result<Option<DynValue>> {
        if self.def(raw.header.message_type).is_none() {
            return Ok(None);
        }
        let mut r =
            ByteReader::with_tracer(raw.body, raw.body_offset(), bitlens_codec::trace::NoTrace);
        let mut v = DynValue::Null;
        self.serialize_body(&mut r, raw.header.message_type, &mut v)
            .and_then(|()| r.finish())
            .map_err(|e| e.in_message(raw.at()))?;
        Ok(Some(v))
    }

    /// Writes the body of a message of type `t` into `buf`, returning the bytes used.
    ///
    /// # Errors
    /// As [`BatchSchema::serialize_body`]; buffer_full when `buf` is too small.
    pub fn encode_body(&self, t: u8, value: &DynValue, buf: &mut [u8]) -> Result<usize> {
        let mut w = ByteWriter::new(buf);
        self.serialize_body(&mut w, t, &mut value.clone())?;
        Ok(w.finish())
    }

    /// The exact body size of a message of type `t` with `value`.
    ///
    /// # Errors
    /// As [`BatchSchema::serialize_body`].
    pub fn measure(&self, t: u8, value: &DynValue) -> Result<usize> {
        let mut c = ByteCounter::new();
        self.serialize_body(&mut c, t, &mut value.clone())?;
        Ok(c.bytes())
    }

    /// Appends a message of type `t` to a batch: `Ok(false)` when it does not fit.
    ///
    /// # Errors
    /// As [`BatchSchema::encode_body`]; too_large when the body exceeds the largest message
    /// any batch can carry.
    pub fn push(
        &self,
        w: &mut BatchWriter<'_>,
        stage: UpdateStage,
        t: u8,
        value: &DynValue,
    ) -> Result<bool> {
        let mut body = vec![0u8; max_body(MAX_MTU)];
        let n = self.encode_body(t, value, &mut body)?;
        w.push_raw(t, stage, &body[..n])
    }

    // ---- the interpreter ------------------------------------------------------------------

    fn struct_body<S: ByteStream>(&self, s: &mut S, sid: usize, v: &mut DynValue) -> Result<()> {
        let sd = &self.structs[sid];
        if S::READING {
            let mut values = vec![DynValue::Null; sd.layout.len()];
            let r = self.fields(s, sd, &mut values);
            *v = DynValue::Struct(DynStruct {
                names: sd.layout.clone(),
                values,
            });
            return r;
        }
        let at = s.base() + s.position();
        let mut values = canonical(&sd.layout, v, at)?;
        self.fields(s, sd, &mut values)
    }

    fn fields<S: ByteStream>(
        &self,
        s: &mut S,
        sd: &BStruct,
        values: &mut [DynValue],
    ) -> Result<()> {
        for (i, f) in sd.fields.iter().enumerate() {
            let present = f
                .guard
                .is_none_or(|(flag, when)| matches!(values[flag], DynValue::Bool(b) if b == when));
            if !present {
                if S::WRITING && !values[i].is_null() {
                    let why = "a value for a field its guard leaves out";
                    let kind = BatchErrorKind::InvalidValue(why);
                    return Err(BatchError::new(kind, s.base() + s.position(), f.name));
                }
                values[i] = DynValue::Null;
                continue;
            }
            self.value(s, &f.kind, f.name, f.name, &mut values[i])?;
        }
        Ok(())
    }

    /// One field; `err` names it in range errors (an array element's errors name the array,
    /// as compiled code does).
    fn value<S: ByteStream>(
        &self,
        s: &mut S,
        kind: &BKind,
        name: &'static str,
        err: &'static str,
        v: &mut DynValue,
    ) -> Result<()> {
        let at = s.base() + s.position();
        match kind {
            BKind::Prim(p, check) => {
                if S::WRITING {
                    check_value(*check, v, at, err)?;
                }
                trace_range(s, *check);
                prim(s, *p, name, v)?;
                if S::READING {
                    check_value(*check, v, at, err)?;
                }
                Ok(())
            }
            BKind::Packed {
                signed,
                wide,
                check,
            } => {
                if S::WRITING {
                    check_value(*check, v, at, err)?;
                }
                trace_range(s, *check);
                match (signed, wide) {
                    (false, false) => {
                        let mut x = if S::WRITING { want(v, at, name)? } else { 0 };
                        s.packed_u32(name, &mut x)?;
                        *v = DynValue::Int(x.into());
                    }
                    (false, true) => {
                        let mut x = if S::WRITING { want(v, at, name)? } else { 0 };
                        s.varint(name, &mut x)?;
                        *v = DynValue::U64(x);
                    }
                    (true, false) => {
                        let mut x = if S::WRITING { want(v, at, name)? } else { 0 };
                        s.packed_i32(name, &mut x)?;
                        *v = DynValue::Int(x.into());
                    }
                    (true, true) => {
                        let mut x = if S::WRITING { want(v, at, name)? } else { 0 };
                        s.packed_i64(name, &mut x)?;
                        *v = DynValue::Int(x);
                    }
                }
                if S::READING {
                    check_value(*check, v, at, err)?;
                }
                Ok(())
            }
            BKind::Str { max_len } => {
                let mut text = match std::mem::take(v) {
                    DynValue::Str(t) if S::WRITING => t,
                    _ if S::READING => String::new(),
                    other => {
                        *v = other;
                        return Err(invalid(at, name, "expected a string"));
                    }
                };
                let r = s.string(name, &mut text, *max_len);
                *v = DynValue::Str(text);
                r
            }
            BKind::Bytes { len } => {
                let mut bytes = take_bytes::<S>(v, at, name, Some(*len))?;
                let r = s.slice(name, &mut bytes, bitlens_batch::SliceKind::Bytes);
                *v = DynValue::Bytes(bytes);
                r
            }
            BKind::ByteVec { max_len } => {
                let mut bytes = take_bytes::<S>(v, at, name, None)?;
                let r = s.byte_vec(name, &mut bytes, *max_len);
                *v = DynValue::Bytes(bytes);
                r
            }
            BKind::Pod {
                element,
                len,
                check,
            } => {
                let mut bytes = vec![0u8; element.size() * len];
                if S::WRITING {
                    let items = want_array(v, at, name, Some(*len))?;
                    worst(*check, items, at, err)?;
                    let mut w = ByteWriter::with_base(&mut bytes, at);
                    for item in items {
                        prim(&mut w, *element, name, &mut item.clone())?;
                    }
                }
                s.slice(name, &mut bytes, bitlens_batch::SliceKind::Bytes)?;
                if S::READING {
                    // The bytes were read and traced as one field; their elements are read
                    // again, untraced, by the same primitives.
                    let mut r = ByteReader::with_tracer(&bytes, at, bitlens_codec::trace::NoTrace);
                    let mut items = vec![DynValue::Null; *len];
                    for item in &mut items {
                        prim(&mut r, *element, name, item)?;
                    }
                    worst(*check, &items, at, err)?;
                    *v = DynValue::Array(items);
                }
                Ok(())
            }
            BKind::PodStruct { sid, size } => {
                let mut bytes = vec![0u8; *size];
                if S::WRITING {
                    let mut w = ByteWriter::with_base(&mut bytes, at);
                    self.struct_body(&mut w, *sid, v)?;
                }
                s.slice(name, &mut bytes, bitlens_batch::SliceKind::Bytes)?;
                if S::READING {
                    let mut r = ByteReader::with_tracer(&bytes, at, bitlens_codec::trace::NoTrace);
                    self.struct_body(&mut r, *sid, v)?;
                }
                Ok(())
            }
            BKind::Struct(sid) => s.scope(name, |s| self.struct_body(s, *sid, v)),
            BKind::Array {
                max_len,
                unit,
                element,
            } => {
                let mut items = if S::READING {
                    Vec::new()
                } else {
                    match std::mem::take(v) {
                        DynValue::Array(items) => items,
                        other => {
                            *v = other;
                            return Err(invalid(at, name, "expected an array"));
                        }
                    }
                };
                let mut n = items.len();
                let r = s.length(name, &mut n, *max_len, *unit).and_then(|()| {
                    if S::READING {
                        // `length` checked n against max_len and the bytes that remain.
                        items.resize(n, DynValue::Null);
                    }
                    s.scope(name, |s| {
                        for (i, item) in items.iter_mut().enumerate() {
                            s.index(i, |s| self.value(s, element, "", name, item))?;
                        }
                        Ok(())
                    })
                });
                *v = DynValue::Array(items);
                r
            }
        }
    }
}

/// A schema's `[batch]` section as the batch layer's message set: what the inspector's
/// `schema-batch` dissector reads (`bitlens_schema::dissect`).
impl MessageSet for BatchSchema {
    fn message_name(&self, message_type: u8) -> Option<&'static str> {
        BatchSchema::message_name(self, message_type)
    }

    fn stage_name(&self, stage: u8) -> Option<&'static str> {
        BatchSchema::stage_name(self, stage)
    }

    fn read_body<T: Tracer>(&self, raw: &RawMessage<'_>, tracer: T) -> (Result<()>, T) {
        let mut r = ByteReader::with_tracer(raw.body, raw.body_offset(), tracer);
        let mut v = DynValue::Null;
        let result = self
            .serialize_body(&mut r, raw.header.message_type, &mut v)
            .and_then(|()| r.finish())
            .map_err(|e| e.in_message(raw.at()));
        (result, r.into_tracer())
    }
}

/// One primitive through the stream's own method for it.
fn prim<S: ByteStream>(s: &mut S, p: Prim, name: &'static str, v: &mut DynValue) -> Result<()> {
    let at = s.base() + s.position();
    macro_rules! int {
        ($method:ident, $t:ty, $wrap:expr) => {{
            let mut x: $t = if S::WRITING { want(v, at, name)? } else { 0 };
            s.$method(name, &mut x)?;
            *v = $wrap(x);
        }};
    }
    match p {
        Prim::Bool => {
            let mut b = match v {
                DynValue::Bool(b) => *b,
                _ if S::READING => false,
                _ => return Err(invalid(at, name, "expected a bool")),
            };
            s.bool(name, &mut b)?;
            *v = DynValue::Bool(b);
        }
        Prim::U8 => int!(u8, u8, |x| DynValue::Int(i64::from(x))),
        Prim::U16 => int!(u16, u16, |x| DynValue::Int(i64::from(x))),
        Prim::U32 => int!(u32, u32, |x| DynValue::Int(i64::from(x))),
        Prim::U64 => int!(u64, u64, DynValue::U64),
        Prim::I8 => int!(i8, i8, |x| DynValue::Int(i64::from(x))),
        Prim::I16 => int!(i16, i16, |x| DynValue::Int(i64::from(x))),
        Prim::I32 => int!(i32, i32, |x| DynValue::Int(i64::from(x))),
        Prim::I64 => int!(i64, i64, DynValue::Int),
        Prim::F32 => {
            let mut x = match *v {
                DynValue::F32(x) => x,
                DynValue::F64(x) => x as f32,
                DynValue::Int(x) => x as f32,
                _ if S::READING => 0.0,
                _ => return Err(invalid(at, name, "expected a number")),
            };
            s.f32(name, &mut x)?;
            *v = DynValue::F32(x);
        }
        Prim::F64 => {
            let mut x = match *v {
                DynValue::F64(x) => x,
                DynValue::F32(x) => f64::from(x),
                DynValue::Int(x) => x as f64,
                _ if S::READING => 0.0,
                _ => return Err(invalid(at, name, "expected a number")),
            };
            s.f64(name, &mut x)?;
            *v = DynValue::F64(x);
        }
    }
    Ok(())
}

#[cold]
fn invalid(at: usize, name: &'static str, why: &'static str) -> BatchError {
    BatchError::new(BatchErrorKind::InvalidValue(why), at, name)
}

/// An integer value to write, converted to the field's type.
fn want<T: TryFrom<i64> + TryFrom<u64>>(v: &DynValue, at: usize, name: &'static str) -> Result<T> {
    let fits = match *v {
        DynValue::Int(x) => T::try_from(x).ok(),
        DynValue::U64(x) => T::try_from(x).ok(),
        _ => return Err(invalid(at, name, "expected an integer")),
    };
    fits.ok_or_else(|| invalid(at, name, "an integer that does not fit the field's type"))
}

/// The declared range of the value read next, for the trace (as compiled code records it):
/// `min..=max`, or `-abs_max..=abs_max`.
fn trace_range<S: ByteStream>(s: &mut S, check: Check) {
    match check {
        Check::None => {}
        Check::Range { min, max } => s.trace_range(min.into(), max.into()),
        Check::Abs(max) => s.trace_range(-i128::from(max), max.into()),
    }
}

/// The range check of one integer value (non-integers pass: the write reports them).
fn check_value(check: Check, v: &DynValue, at: usize, name: &'static str) -> Result<()> {
    let x = match *v {
        DynValue::Int(x) => i128::from(x),
        DynValue::U64(x) => i128::from(x),
        _ => return Ok(()),
    };
    match check {
        Check::None => Ok(()),
        Check::Range { min, max } => {
            if x < i128::from(min) || x > i128::from(max) {
                // A negative value cannot pass an unsigned range; it is shown as its magnitude.
                return Err(BatchError::out_of_range(
                    x.unsigned_abs() as u64,
                    min,
                    max,
                    at,
                    name,
                ));
            }
            Ok(())
        }
        Check::Abs(max) => {
            let a = x.unsigned_abs() as u64;
            if a > max {
                return Err(BatchError::out_of_range(a, 0, max, at, name));
            }
            Ok(())
        }
    }
}

/// The range check of a pod array: `Abs` reports the largest magnitude, `Range` the first value
/// outside it (as compiled code that checks after one copy does).
fn worst(check: Check, items: &[DynValue], at: usize, name: &'static str) -> Result<()> {
    if let Check::Abs(max) = check {
        let worst = items
            .iter()
            .filter_map(DynValue::as_i64)
            .map(i64::unsigned_abs)
            .max()
            .unwrap_or(0);
        if worst > max {
            return Err(BatchError::out_of_range(worst, 0, max, at, name));
        }
        return Ok(());
    }
    items
        .iter()
        .try_for_each(|item| check_value(check, item, at, name))
}

fn want_array<'v>(
    v: &'v DynValue,
    at: usize,
    name: &'static str,
    len: Option<usize>,
) -> Result<&'v [DynValue]> {
    match v {
        DynValue::Array(items) if len.is_none_or(|n| n == items.len()) => Ok(items),
        DynValue::Array(_) => Err(invalid(at, name, "an array of the wrong length")),
        _ => Err(invalid(at, name, "expected an array")),
    }
}

/// The bytes of a bytes field: a fresh buffer of `len` (reading), or the value's own bytes.
fn take_bytes<S: ByteStream>(
    v: &mut DynValue,
    at: usize,
    name: &'static str,
    len: Option<usize>,
) -> Result<Vec<u8>> {
    if S::READING {
        return Ok(vec![0; len.unwrap_or(0)]);
    }
    match std::mem::take(v) {
        DynValue::Bytes(b) if len.is_none_or(|n| n == b.len()) => Ok(b),
        other => {
            *v = other;
            Err(invalid(at, name, "expected bytes of the field's length"))
        }
    }
}

/// A struct value's fields in `layout` order (matched by name when built by hand).
fn canonical(layout: &Arc<[Arc<str>]>, v: &DynValue, at: usize) -> Result<Vec<DynValue>> {
    let DynValue::Struct(st) = v else {
        return Err(invalid(at, "", "expected a struct"));
    };
    if Arc::ptr_eq(&st.names, layout) || st.names == *layout {
        return Ok(st.values.clone());
    }
    if st.names.iter().any(|n| !layout.contains(n)) {
        return Err(invalid(at, "", "a field the struct does not have"));
    }
    Ok(layout
        .iter()
        .map(|n| st.get(n).cloned().unwrap_or_default())
        .collect())
}

// ---- parsing ---------------------------------------------------------------------------------

const BATCH_KEYS: &[&str] = &["messages", "stages", "struct", "doc"];

const BATCH_TYPES: &[&str] = &[
    "bool",
    "u8",
    "u16",
    "u32",
    "u64",
    "i8",
    "i16",
    "i32",
    "i64",
    "f32",
    "f64",
    "packed_u32",
    "packed_u64",
    "packed_i32",
    "packed_i64",
    "string",
    "bytes",
    "pod",
    "array",
];

const COMMON_KEYS: &[&str] = &["name", "type", "if", "unless", "doc"];

fn keys_of(ty: &str) -> &'static [&'static str] {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "packed_u32" | "packed_u64" => &["min", "max"],
        "i8" | "i16" | "i32" | "i64" | "packed_i32" | "packed_i64" => &["abs_max"],
        "string" => &["max_len"],
        "bytes" => &["len", "max_len"],
        "pod" => &["element", "len", "min", "max", "abs_max"],
        "array" => &["max_len", "element"],
        _ => &[],
    }
}

/// The largest `len` / `max_len` a batch field may declare: a message body never exceeds it.
const MAX_LEN: usize = max_body(MAX_MTU);

/// The most trace entries a batch struct may record per body byte it reads: array elements
/// repeat their cost, so this bounds the work a hostile count can buy per byte.
const MAX_ENTRIES_PER_BYTE: f64 = 64.0;

/// The most trace entries a batch struct may record beyond what its bytes pay for (scopes, and
/// fields that take no bytes): what a message's 4-byte header pays for at
/// [`MAX_ENTRIES_PER_BYTE`]. A datagram holds a message per 4 bytes, so the packet structs'
/// 4096 per datagram would let a 1,200-byte batch of empty messages record 1.2 million entries.
const MAX_FIXED_ENTRIES: u64 = MAX_ENTRIES_PER_BYTE as u64 * MESSAGE_HEADER_LEN as u64;

struct Ctx<'a, 't> {
    p: &'a Parser<'t>,
    ids: HashMap<String, usize>,
    /// Raw struct definitions: name, span, fields.
    raw: Vec<(Spanned<String>, &'a toml::de::DeArray<'a>)>,
    structs: Vec<Option<BStruct>>,
    active: Vec<usize>,
}

/// Parses and checks a `[batch]` section.
pub(super) fn parse<'a>(p: &Parser<'_>, v: &'a Val<'a>) -> Result<BatchSchema, SchemaError> {
    let t = p.table(v, "[batch]")?;
    for (k, _) in t.iter() {
        if !BATCH_KEYS.contains(&k.get_ref().as_ref()) {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown key \"{}\" in [batch] (expected messages, stages, [batch.struct.NAME] or doc)",
                    k.get_ref()
                ),
            ));
        }
    }
    let mut cx = Ctx {
        p,
        ids: HashMap::new(),
        raw: Vec::new(),
        structs: Vec::new(),
        active: Vec::new(),
    };
    if let Some(section) = get(t, "struct") {
        let table = p.table(section, "[batch.struct]")?;
        p.at_most(&section.span(), table.len(), "batch structs")?;
        for (name, def) in table.iter() {
            p.name(&name.span(), name.get_ref(), "batch struct name")?;
            let st = p.table(def, &format!("batch struct {}", name.get_ref()))?;
            for (k, _) in st.iter() {
                if k.get_ref() != "fields" && k.get_ref() != "doc" {
                    return Err(p.err(
                        &k.span(),
                        format!(
                            "unknown key \"{}\" in batch struct {} (a struct has `fields = [...]` and an optional `doc`)",
                            k.get_ref(),
                            name.get_ref()
                        ),
                    ));
                }
            }
            let fields = get(st, "fields").ok_or_else(|| {
                p.err(
                    &name.span(),
                    format!(
                        "batch struct {} has no fields (add `fields = [ {{ name = \"x\", type = \"u32\" }} ]`)",
                        name.get_ref()
                    ),
                )
            })?;
            let list = fields.get_ref().as_array().ok_or_else(|| {
                p.err(
                    &fields.span(),
                    "`fields` must be an array of tables (`[{ name = ..., type = ... }, ...]`)",
                )
            })?;
            p.at_most(
                &fields.span(),
                list.len(),
                &format!("fields in batch struct {}", name.get_ref()),
            )?;
            let n = name.get_ref().to_string();
            if BATCH_TYPES.contains(&n.as_str()) {
                return Err(p.err(
                    &name.span(),
                    format!("type name \"{n}\" is a built-in type (rename it)"),
                ));
            }
            cx.ids.insert(n.clone(), cx.raw.len());
            cx.raw.push((Spanned::new(name.span(), n), list));
        }
    }
    cx.structs = vec![None; cx.raw.len()];
    for i in 0..cx.raw.len() {
        cx.resolve(i, None)?;
    }

    let messages_v = get(t, "messages").ok_or_else(|| {
        p.err(
            &v.span(),
            "[batch] has no `messages` (add `messages = [{ type = 1, name = \"Chat\" }]`)",
        )
    })?;
    let list = messages_v.get_ref().as_array().ok_or_else(|| {
        p.err(
            &messages_v.span(),
            "`messages` must be an array of message entries (write `messages = [{ type = 1, name = \"Chat\" }]`)",
        )
    })?;
    if list.len() > 256 {
        return Err(p.err(
            &messages_v.span(),
            format!(
                "`messages` lists {} entries, more than the 256 message types a header's byte holds (list each type once)",
                list.len()
            ),
        ));
    }
    let mut messages: Vec<MessageDef> = Vec::new();
    let mut by_type: Vec<Option<usize>> = vec![None; 256];
    let mut spans: Vec<Range<usize>> = Vec::new();
    for entry in list.iter() {
        let e = p.table(entry, "a message entry")?;
        for (k, _) in e.iter() {
            if !["type", "name", "body", "doc"].contains(&k.get_ref().as_ref()) {
                return Err(p.err(
                    &k.span(),
                    format!(
                        "unknown key \"{}\" in a message entry (expected type, name, body, doc)",
                        k.get_ref()
                    ),
                ));
            }
        }
        let tv = get(e, "type").ok_or_else(|| {
            p.err(
                &entry.span(),
                "message entry has no type number (add `type = 1`)",
            )
        })?;
        let n = p.int(tv, "message type")?;
        let message_type = u8::try_from(n).map_err(|_| {
            p.err(
                &tv.span(),
                format!("message type {n} does not fit the header's byte (use 0..=255)"),
            )
        })?;
        let nv = get(e, "name").ok_or_else(|| {
            p.err(
                &entry.span(),
                "message entry has no name (add `name = \"...\"`)",
            )
        })?;
        let name = p.string(nv, "message name")?;
        p.name(&name.span(), name.get_ref(), "message name")?;
        let body = match get(e, "body") {
            Some(b) => p.string(b, "message body")?,
            None => name.clone(),
        };
        if let Some(i) = by_type[usize::from(message_type)] {
            let (l, c) = line_col(p.text, spans[i].start);
            return Err(p.err(
                &tv.span(),
                format!(
                    "duplicate message type {message_type}, first at {l}:{c} (give each message its own number)"
                ),
            ));
        }
        if messages.iter().any(|m| m.name == name.get_ref()) {
            return Err(p.err(
                &name.span(),
                format!(
                    "duplicate message name \"{}\" (each message type needs its own name)",
                    name.get_ref()
                ),
            ));
        }
        let sid = *cx.ids.get(body.get_ref()).ok_or_else(|| {
            p.err(
                &body.span(),
                format!(
                    "message body \"{0}\" is not a batch struct defined in this file (add [batch.struct.{0}], or set `body`)",
                    body.get_ref()
                ),
            )
        })?;
        by_type[usize::from(message_type)] = Some(messages.len());
        spans.push(tv.span());
        messages.push(MessageDef {
            message_type,
            name: intern(name.get_ref()),
            body: sid,
        });
    }

    let stages = match get(t, "stages") {
        None => None,
        Some(sv) => {
            let list = sv.get_ref().as_array().ok_or_else(|| {
                p.err(
                    &sv.span(),
                    "`stages` must be an array of stage names (write `stages = [\"init\", \"update\"]`, stage 0 first)",
                )
            })?;
            if list.len() > 256 {
                return Err(p.err(
                    &sv.span(),
                    "`stages` lists more than 256 names (list at most 256: the stage is one byte)",
                ));
            }
            let mut names = Vec::new();
            for item in list.iter() {
                let stage = p.string(item, "a stage name")?;
                p.name(&stage.span(), stage.get_ref(), "stage name")?;
                names.push(Some(intern(stage.get_ref())));
            }
            Some(names)
        }
    };
    let structs = cx.structs.into_iter().flatten().collect();
    Ok(BatchSchema {
        messages,
        by_type,
        structs,
        stages,
    })
}

impl<'a> Ctx<'a, '_> {
    fn resolve(&mut self, i: usize, from: Option<&Range<usize>>) -> Result<(), SchemaError> {
        if self.structs[i].is_some() {
            return Ok(());
        }
        if self.active.contains(&i) {
            return Err(cycle_error(
                self.p,
                &self.raw,
                &self.active,
                i,
                from,
                "batch struct",
            ));
        }
        if self.active.len() >= MAX_DEPTH {
            // Checked before recursing: the loader itself recurses once per level.
            return Err(too_deep(
                self.p,
                &self.raw,
                &self.active,
                i,
                from,
                "batch struct",
            ));
        }
        self.active.push(i);
        let p = self.p;
        let mut fields: Vec<BField> = Vec::new();
        let mut spans: Vec<Range<usize>> = Vec::new();
        // Field index by name: duplicate and guard checks.
        let mut index: HashMap<&str, usize> = HashMap::new();
        let list: &'a toml::de::DeArray<'a> = self.raw[i].1;
        for f in list.iter() {
            let t = p.table(f, "a field")?;
            let ty_v = get(t, "type").ok_or_else(|| {
                p.err(
                    &f.span(),
                    "field has no type (add `type = \"u32\"`, or a batch struct name)",
                )
            })?;
            let ty = p.string(ty_v, "type")?;
            let allowed = keys_of(ty.get_ref());
            for (k, _) in t.iter() {
                let k_ref: &str = k.get_ref();
                if !COMMON_KEYS.contains(&k_ref) && !allowed.contains(&k_ref) {
                    let mut all: Vec<&str> = COMMON_KEYS.to_vec();
                    all.extend(allowed);
                    return Err(p.err(
                        &k.span(),
                        format!(
                            "unknown key \"{k_ref}\" for a batch field of type {} (expected one of {})",
                            ty.get_ref(),
                            all.join(", ")
                        ),
                    ));
                }
            }
            let name = match get(t, "name") {
                Some(n) => p.string(n, "name")?,
                None => {
                    return Err(p.err(&f.span(), "field has no name (add `name = \"x\"`)"));
                }
            };
            p.name(&name.span(), name.get_ref(), "field name")?;
            if let Some(&j) = index.get(name.get_ref().as_str()) {
                return Err(duplicate_name(p, &spans[j], name.get_ref(), &name.span()));
            }
            let guard = match (get(t, "if"), get(t, "unless")) {
                (Some(_), Some(_)) => {
                    return Err(p.err(&f.span(), "a field has both `if` and `unless` (keep one)"));
                }
                (Some(g), None) => Some((p.string(g, "if")?, true)),
                (None, Some(g)) => Some((p.string(g, "unless")?, false)),
                (None, None) => None,
            };
            let guard = match guard {
                None => None,
                Some((flag, when)) => {
                    let j = index
                        .get(flag.get_ref().as_str())
                        .copied()
                        .filter(|&j| {
                            let g = &fields[j];
                            matches!(g.kind, BKind::Prim(Prim::Bool, _)) && g.guard.is_none()
                        })
                        .ok_or_else(|| {
                            p.err(
                                &flag.span(),
                                format!(
                                    "\"{}\" is not an earlier unguarded bool field of this struct (a guard names one)",
                                    flag.get_ref()
                                ),
                            )
                        })?;
                    Some((j, when))
                }
            };
            let kind = self.kind(&ty, t, &f.span())?;
            spans.push(name.span());
            let interned = intern(name.get_ref());
            index.insert(interned, fields.len());
            fields.push(BField {
                name: interned,
                kind,
                guard,
            });
        }
        let layout: Vec<Arc<str>> = fields.iter().map(|f| Arc::from(f.name)).collect();
        self.active.pop();
        let min_size = fields
            .iter()
            .filter(|f| f.guard.is_none())
            .map(|f| self.min_size(&f.kind))
            .fold(0usize, usize::saturating_add);
        let cost = fields
            .iter()
            .fold(Cost::default(), |c, f| c.then(self.cost(&f.kind)));
        let depth = fields
            .iter()
            .map(|f| self.depth(&f.kind))
            .max()
            .unwrap_or(0);
        self.bounded(i, cost, depth)?;
        self.structs[i] = Some(BStruct {
            fields,
            layout: layout.into(),
            min_size,
            cost,
            depth,
        });
        Ok(())
    }

    /// Refuses batch struct `i` when a reader could record too many entries for it, or when it
    /// nests too deep (as the packet structs: `crate::bounds::Cost`).
    fn bounded(&self, i: usize, cost: Cost, depth: usize) -> Result<(), SchemaError> {
        let name = &self.raw[i].0;
        let why = if cost.fixed > MAX_FIXED_ENTRIES {
            format!(
                "batch struct {} makes a reader record {} fields and scopes that take no bytes, \
                 more than {MAX_FIXED_ENTRIES}, what its message's header pays for: a datagram of \
                 empty messages would keep a reader busy (nest fewer struct references in it, or \
                 put repeated parts in an array)",
                name.get_ref(),
                cost.fixed
            )
        } else if cost.per_unit > MAX_ENTRIES_PER_BYTE {
            format!(
                "batch struct {} makes a reader record {:.1} fields per byte it reads, more than \
                 {MAX_ENTRIES_PER_BYTE}: its array elements hold many fields that take no bytes \
                 (give each element fewer of them, or a field that takes bytes)",
                name.get_ref(),
                cost.per_unit
            )
        } else if depth > MAX_DEPTH {
            format!(
                "batch struct {} nests structs and arrays {depth} levels deep, more than \
                 {MAX_DEPTH} (flatten some levels)",
                name.get_ref()
            )
        } else {
            return Ok(());
        };
        Err(self.p.err(&name.span(), why))
    }

    /// The most trace entries a value of `kind` records: one per value (two for a string or a
    /// byte vector: the length, then the bytes), a scope per struct and array, an `[i]` scope
    /// per element; a pod is one field of bytes.
    fn cost(&self, kind: &BKind) -> Cost {
        let flat = |entries| Cost::flat(entries, self.min_size(kind));
        match kind {
            BKind::Prim(..)
            | BKind::Packed { .. }
            | BKind::Bytes { .. }
            | BKind::Pod { .. }
            | BKind::PodStruct { .. } => flat(1),
            BKind::Str { .. } | BKind::ByteVec { .. } => flat(2),
            BKind::Struct(sid) => self.struct_cost(*sid).scoped(self.min_size(kind)),
            // The count and the array's scope; elements (a struct element has its own scope).
            BKind::Array { unit, element, .. } => Cost::repeated(self.cost(element), *unit, 2),
        }
    }

    fn struct_cost(&self, sid: usize) -> Cost {
        self.structs[sid]
            .as_ref()
            .map_or(Cost::default(), |s| s.cost)
    }

    /// Levels of structs and arrays inside a value of `kind`.
    fn depth(&self, kind: &BKind) -> usize {
        match kind {
            BKind::Struct(sid) | BKind::PodStruct { sid, .. } => {
                1 + self.structs[*sid].as_ref().map_or(0, |s| s.depth)
            }
            BKind::Array { element, .. } => 1 + self.depth(element),
            _ => 0,
        }
    }

    fn kind(
        &mut self,
        ty: &Spanned<String>,
        t: &toml::de::DeTable<'_>,
        span: &Range<usize>,
    ) -> Result<BKind, SchemaError> {
        let p = self.p;
        let name = ty.get_ref().as_str();
        let count = |key: &str, required: bool| -> Result<Option<usize>, SchemaError> {
            match get(t, key) {
                Some(v) => {
                    let n = p.count(v, key)?;
                    if n > MAX_LEN {
                        return Err(p.err(
                            &v.span(),
                            format!("{key} {n} exceeds the largest message body, {MAX_LEN} bytes (use less)"),
                        ));
                    }
                    Ok(Some(n))
                }
                None if required => Err(p.err(
                    span,
                    format!("{name} field without `{key}` (add `{key} = 32`: a length needs an upper bound)"),
                )),
                None => Ok(None),
            }
        };
        if let Some(prim) = Prim::from_name(name) {
            return Ok(BKind::Prim(prim, self.check(prim, t)?));
        }
        Ok(match name {
            "packed_u32" | "packed_u64" | "packed_i32" | "packed_i64" => {
                let like = match name {
                    "packed_u32" => Prim::U32,
                    "packed_u64" => Prim::U64,
                    "packed_i32" => Prim::I32,
                    _ => Prim::I64,
                };
                BKind::Packed {
                    signed: like.signed(),
                    wide: like.size() == 8,
                    check: self.check(like, t)?,
                }
            }
            "string" => BKind::Str {
                max_len: count("max_len", true)?.unwrap_or(0),
            },
            "bytes" => match (count("len", false)?, count("max_len", false)?) {
                (Some(len), None) => BKind::Bytes { len },
                (None, Some(max_len)) => BKind::ByteVec { max_len },
                _ => {
                    return Err(p.err(
                        span,
                        "bytes field with both or neither of `len` and `max_len` (keep one: `len` for a fixed length, not sent; `max_len` for a packed length first)",
                    ));
                }
            },
            "pod" => {
                let ev = get(t, "element").ok_or_else(|| {
                    p.err(
                        span,
                        "pod field without `element` (add `element = \"f32\", len = 3`, or a batch struct of fixed-width fields)",
                    )
                })?;
                let e = p.string(ev, "element")?;
                if let Some(element) = Prim::from_name(e.get_ref()) {
                    let len = count("len", true)?.unwrap_or(0);
                    let bytes = element.size() * len;
                    if bytes > MAX_LEN {
                        let at = get(t, "len").map_or(span.clone(), |v| v.span());
                        return Err(p.err(
                            &at,
                            format!(
                                "pod of {len} {} takes {bytes} bytes, more than the largest \
                                 message body, {MAX_LEN} bytes (use len = {} at most)",
                                e.get_ref(),
                                MAX_LEN / element.size()
                            ),
                        ));
                    }
                    BKind::Pod {
                        element,
                        len,
                        check: self.check(element, t)?,
                    }
                } else {
                    for key in ["len", "min", "max", "abs_max"] {
                        if let Some(v) = get(t, key) {
                            return Err(p.err(
                                &v.span(),
                                format!("`{key}` applies to pod arrays of a primitive element, not to a pod struct (remove it)"),
                            ));
                        }
                    }
                    let sid = self.struct_ref(&e)?;
                    let size = self.pod_size(sid, &e)?;
                    BKind::PodStruct { sid, size }
                }
            }
            "array" => {
                let max_len = count("max_len", true)?.unwrap_or(0);
                let ev = get(t, "element").ok_or_else(|| {
                    p.err(
                        span,
                        "array field without `element` (add `element = \"u16\"` or `element = { type = \"u16\", max = 4095 }`)",
                    )
                })?;
                let element = match ev.get_ref() {
                    DeValue::String(_) => {
                        let e = p.string(ev, "element")?;
                        self.kind(&e, &toml::de::DeTable::new(), &ev.span())?
                    }
                    DeValue::Table(et) => {
                        for (k, _) in et.iter() {
                            if k.get_ref() == "name"
                                || k.get_ref() == "if"
                                || k.get_ref() == "unless"
                            {
                                return Err(p.err(
                                    &k.span(),
                                    format!("an array element takes no `{}` (elements are named `name[i]`)", k.get_ref()),
                                ));
                            }
                        }
                        let ety = get(et, "type").ok_or_else(|| {
                            p.err(&ev.span(), "element has no type (add `type = \"u16\"`)")
                        })?;
                        let ety = p.string(ety, "type")?;
                        let allowed = keys_of(ety.get_ref());
                        for (k, _) in et.iter() {
                            let k_ref: &str = k.get_ref();
                            if k_ref != "type" && k_ref != "doc" && !allowed.contains(&k_ref) {
                                return Err(p.err(
                                    &k.span(),
                                    format!(
                                        "unknown key \"{k_ref}\" for an element of type {} (expected one of type, {})",
                                        ety.get_ref(),
                                        allowed.join(", ")
                                    ),
                                ));
                            }
                        }
                        self.kind(&ety, et, &ev.span())?
                    }
                    _ => {
                        return Err(p.err(
                            &ev.span(),
                            "element is neither a type name nor a table (write `element = \"u16\"` or `element = { type = \"u16\", max = 4095 }`)",
                        ));
                    }
                };
                // The reader bounds a count by `count x fewest bytes <= what remains`: an
                // element that can take no bytes would let a 3-byte body claim max_len of them
                // (the bit-packed loader refuses the same shape).
                let unit = self.min_size(&element);
                if unit == 0 {
                    return Err(p.err(
                        &ev.span(),
                        "an array element that can take no bytes cannot be bounded by the \
                         message's size: a few bytes could claim max_len elements (give the \
                         element a field that takes bytes)",
                    ));
                }
                BKind::Array {
                    max_len,
                    unit,
                    element: Box::new(element),
                }
            }
            _ => BKind::Struct(self.struct_ref(ty)?),
        })
    }

    fn struct_ref(&mut self, ty: &Spanned<String>) -> Result<usize, SchemaError> {
        match self.ids.get(ty.get_ref()) {
            Some(&j) => {
                self.resolve(j, Some(&ty.span()))?;
                Ok(j)
            }
            None => Err(self.p.err(
                &ty.span(),
                format!(
                    "unknown type \"{}\" in a batch body (use a batch type: {}, or a [batch.struct.NAME])",
                    ty.get_ref(),
                    BATCH_TYPES.join(", ")
                ),
            )),
        }
    }

    /// The range keys of an integer field.
    fn check(&self, prim: Prim, t: &toml::de::DeTable<'_>) -> Result<Check, SchemaError> {
        let p = self.p;
        if prim.signed() {
            return match get(t, "abs_max") {
                None => Ok(Check::None),
                Some(v) => {
                    let n = p.int(v, "abs_max")?;
                    u64::try_from(n).map(Check::Abs).map_err(|_| {
                        p.err(
                            &v.span(),
                            format!("abs_max {n} is negative (use |v|'s largest allowed value)"),
                        )
                    })
                }
            };
        }
        let Some(type_max) = prim.unsigned_max() else {
            for key in ["min", "max", "abs_max"] {
                if let Some(v) = get(t, key) {
                    return Err(p.err(
                        &v.span(),
                        format!("`{key}` applies to integer fields only (remove it)"),
                    ));
                }
            }
            return Ok(Check::None);
        };
        if let Some(v) = get(t, "abs_max") {
            return Err(p.err(
                &v.span(),
                "`abs_max` applies to signed fields (use `min`/`max` for unsigned ones)",
            ));
        }
        let bound = |key: &str, default: u64| -> Result<(u64, Option<Range<usize>>), SchemaError> {
            match get(t, key) {
                None => Ok((default, None)),
                Some(v) => {
                    let n = p.int(v, key)?;
                    match u64::try_from(n) {
                        Ok(x) if x <= type_max => Ok((x, Some(v.span()))),
                        _ => Err(p.err(
                            &v.span(),
                            format!("{key} {n} is outside the type's range 0..={type_max} (use a value inside it)"),
                        )),
                    }
                }
            }
        };
        let (min, _) = bound("min", 0)?;
        let (max, max_span) = bound("max", type_max)?;
        if min > max {
            let span = max_span.unwrap_or(0..0);
            return Err(p.err(
                &span,
                format!("min {min} is greater than max {max} (swap them, or fix one)"),
            ));
        }
        if (min, max) == (0, type_max) {
            return Ok(Check::None);
        }
        Ok(Check::Range { min, max })
    }

    /// The fixed size of a pod struct: every field a fixed-width primitive or pod, unguarded.
    fn pod_size(&self, sid: usize, at: &Spanned<String>) -> Result<usize, SchemaError> {
        let sd = self.structs[sid]
            .as_ref()
            .map_or(&[][..], |s| &s.fields[..]);
        let mut size = 0;
        for f in sd {
            let n = match (&f.kind, f.guard) {
                (BKind::Prim(p, _), None) => p.size(),
                (BKind::Pod { element, len, .. }, None) => element.size() * len,
                (BKind::PodStruct { size, .. }, None) => *size,
                (BKind::Bytes { len }, None) => *len,
                _ => {
                    return Err(self.p.err(
                        &at.span(),
                        format!(
                            "batch struct {} is not plain old data: field \"{}\" has no fixed size (use fixed-width fields without `if`/`unless`, or type = \"{}\")",
                            at.get_ref(),
                            f.name,
                            at.get_ref()
                        ),
                    ));
                }
            };
            size += n;
            // A reader copies the whole struct into a buffer of its size: no larger than a body.
            if size > MAX_LEN {
                return Err(self.p.err(
                    &at.span(),
                    format!(
                        "pod struct {} takes at least {size} bytes, more than the largest \
                         message body, {MAX_LEN} bytes (make its fields smaller)",
                        at.get_ref()
                    ),
                ));
            }
        }
        Ok(size)
    }

    /// Fewest bytes a value of `kind` takes (a struct's is computed once, when it resolves).
    fn min_size(&self, kind: &BKind) -> usize {
        match kind {
            BKind::Prim(p, _) => p.size(),
            BKind::Packed { .. } | BKind::Str { .. } | BKind::ByteVec { .. } => 1,
            BKind::Array { .. } => 1,
            BKind::Bytes { len } => *len,
            BKind::Pod { element, len, .. } => element.size() * len,
            BKind::PodStruct { size, .. } => *size,
            BKind::Struct(sid) => self.structs[*sid].as_ref().map_or(0, |s| s.min_size),
        }
    }
}
