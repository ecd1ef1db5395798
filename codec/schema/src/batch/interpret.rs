//! The interpreter of a `[batch]` body: one serialize function, generic over [`ByteStream`],
//! calling the primitives a hand-written `Message::serialize` calls.

use super::schema::{BKind, BStruct, BatchSchema, Check, Prim};
use crate::value::{DynStruct, DynValue};
use bitlens_batch::dissect::MessageSet;
use bitlens_batch::message::RawMessage;
use bitlens_batch::stream::{ByteReader, ByteStream, ByteWriter, LittleEndian};
use bitlens_batch::{BatchError, BatchErrorKind, Result};
use bitlens_codec::trace::Tracer;
use std::sync::Arc;

impl BatchSchema {
    pub(crate) fn struct_body<S: ByteStream>(
        &self,
        s: &mut S,
        sid: usize,
        v: &mut DynValue,
    ) -> Result<()> {
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
