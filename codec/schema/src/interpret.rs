//! The packet interpreter: one serialize function, generic over [`Stream`], that reads, writes,
//! counts, measures and traces a packet of a [`Schema`] by calling the primitives a compiled
//! serialize function calls, in the same order and with the same names.

use crate::defs::{EnumDef, Field, Kind, Prev, StructDef, UnionDef, element_previous};
use crate::schema::Schema;
use crate::value::{DynStruct, DynValue, NULL};
use bitlens_codec::error::{Error, ErrorKind, Result};
use bitlens_codec::fixed::{Fixed, FixedPoint};
use bitlens_codec::packet::frame;
use bitlens_codec::stream::Stream;
use bitlens_codec::trace::Value;
use std::borrow::Cow;
use std::sync::Arc;

impl Schema {
    /// Serializes one framed packet on any stream: the CRC, the type (`t`: written, or filled in
    /// by a reader), the body of that type from or into `value`, the end check. `seen` receives
    /// the type as soon as it is known, even when the body then fails; the value read (or
    /// `Null` on a write) is returned.
    ///
    /// # Errors
    /// Whatever the framing or the body's fields report.
    pub fn framed<S: Stream>(
        &self,
        s: &mut S,
        t: &mut u32,
        value: &DynValue,
        seen: &mut Option<u32>,
    ) -> Result<DynValue> {
        if self.packets.is_empty() {
            let why = "the schema has no [protocol] section: it describes no bitlens packets";
            return Err(Error::new(ErrorKind::InvalidArgument(why.into()), 0, ""));
        }
        let mut out = DynValue::Null;
        frame(s, &self.protocol, t, |s, t| {
            *seen = Some(t);
            let sid = *self.packets.get(t as usize).ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownPacketType(t),
                    s.bit_position(),
                    "packet_type",
                )
            })?;
            out = self.struct_value(s, &self.structs[sid], value, 0, None)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// The fields of `sd` (no scope of their own). `prefix` is the sparse array's index value or
    /// a union's tag, which takes slot 0 of the value's layout (and shifts the struct's slots by
    /// one).
    pub(crate) fn struct_value<S: Stream>(
        &self,
        s: &mut S,
        sd: &StructDef,
        value: &DynValue,
        base: usize,
        prefix: Option<(&Arc<[Arc<str>]>, DynValue)>,
    ) -> Result<DynValue> {
        let layout = prefix.as_ref().map_or(&sd.layout, |(l, _)| *l);
        if S::WRITING {
            let src = canonical(layout, value, s.bit_position())?;
            self.fields(s, sd, &src, &mut Vec::new(), base)?;
            return Ok(DynValue::Null);
        }
        let mut out = Vec::with_capacity(layout.len());
        if let Some((_, first)) = prefix {
            out.push(first);
        }
        self.fields(s, sd, &[], &mut out, base)?;
        Ok(DynValue::Struct(DynStruct {
            names: layout.clone(),
            values: out,
        }))
    }

    /// Serializes `sd`'s fields: values come from `src` (write) or go to `out` (read); slots
    /// start at `base` in either.
    fn fields<S: Stream>(
        &self,
        s: &mut S,
        sd: &StructDef,
        src: &[DynValue],
        out: &mut Vec<DynValue>,
        base: usize,
    ) -> Result<()> {
        for f in &sd.fields {
            let slot_value = |slot: usize| -> &DynValue {
                if S::READING {
                    &out[base + slot]
                } else {
                    &src[base + slot]
                }
            };
            if let Some((g, when)) = f.guard {
                let present = matches!(slot_value(g), DynValue::Bool(b) if *b == when);
                if !present {
                    if let Some(slot) = f.slot {
                        if S::WRITING && !src[base + slot].is_null() {
                            let guard = &sd.layout[g];
                            let why = format!(
                                "field given while \"{guard}\" says it is absent (leave it out)"
                            );
                            return Err(Error::new(
                                ErrorKind::InvalidArgument(why),
                                s.bit_position(),
                                &f.name,
                            ));
                        }
                        if S::READING {
                            out.push(DynValue::Null);
                        }
                    }
                    continue;
                }
            }
            let prev = match f.kind {
                Kind::ObjectIndex { previous, .. } | Kind::IntRelative { previous } => {
                    match previous {
                        Prev::Const(c) => c,
                        Prev::Slot(p) => slot_value(p).as_i64().unwrap_or(0),
                    }
                }
                Kind::BitRun { by, ref table } => {
                    crate::bit_run::index(slot_value(by), table.len())
                }
                _ => 0,
            };
            let v_src = match f.slot {
                Some(slot) if S::WRITING => &src[base + slot],
                _ => &NULL,
            };
            let v = self.value(s, f, &f.kind, v_src, prev)?;
            if S::READING && f.slot.is_some() {
                out.push(v);
            }
        }
        Ok(())
    }

    /// Serializes one value of `kind` named `f.name` (or `""` for an array element).
    fn value<S: Stream>(
        &self,
        s: &mut S,
        f: &Field,
        kind: &Kind,
        src: &DynValue,
        prev: i64,
    ) -> Result<DynValue> {
        let name: &str = if std::ptr::eq(kind, &f.kind) {
            &f.name
        } else {
            ""
        };
        let read = |v: DynValue| if S::READING { v } else { DynValue::Null };
        Ok(match kind {
            Kind::Bool => {
                let mut b = if S::WRITING {
                    want_bool(s, name, src)?
                } else {
                    false
                };
                s.bool(name, &mut b)?;
                read(DynValue::Bool(b))
            }
            Kind::Int { min, max } => {
                let mut x = if S::WRITING {
                    want_i64(s, name, src)?
                } else {
                    0
                };
                s.int(name, &mut x, *min, *max)?;
                read(DynValue::Int(x))
            }
            Kind::Enum(e) => {
                let def = &self.enums[*e];
                let mut x = if S::WRITING {
                    match src {
                        DynValue::Enum(n) => enum_value(s, name, def, n)?,
                        DynValue::Str(n) => enum_value(s, name, def, n)?,
                        other => want_i64(s, name, other)?,
                    }
                } else {
                    0
                };
                s.int(name, &mut x, def.min, def.max)?;
                match def.name_of(x) {
                    Some(n) if S::READING => {
                        let n = n.clone();
                        s.annotate(|| Value::Str(n.to_string()));
                        DynValue::Enum(n)
                    }
                    _ => read(DynValue::Int(x)),
                }
            }
            Kind::Bits(n) => {
                let mut x = if S::WRITING {
                    want_u64(s, name, src)?
                } else {
                    0
                };
                s.bits(name, &mut x, *n)?;
                read(DynValue::U64(x))
            }
            Kind::U64 => {
                let mut x = if S::WRITING {
                    want_u64(s, name, src)?
                } else {
                    0
                };
                s.u64(name, &mut x)?;
                read(DynValue::U64(x))
            }
            Kind::Int128 { min, max } => {
                let mut x = if S::WRITING {
                    want_i128(s, name, src)?
                } else {
                    0
                };
                s.int128(name, &mut x, *min, *max)?;
                read(DynValue::I128(x))
            }
            Kind::U128 => {
                let mut x = if S::WRITING {
                    want_u128(s, name, src)?
                } else {
                    0
                };
                s.u128(name, &mut x)?;
                read(DynValue::U128(x))
            }
            Kind::Fixed(q) => {
                let mut raw = if S::WRITING {
                    want_fixed(s, name, src, q)?
                } else {
                    0
                };
                s.fixed(name, &mut raw, q)?;
                read(DynValue::Fixed(Fixed::new(raw, q.fraction_bits())))
            }
            Kind::WStr { max_len } => {
                let mut text = match src {
                    DynValue::Str(t) if S::WRITING => t.clone(),
                    other if S::WRITING => return Err(wrong(s, name, "a string", other)),
                    _ => String::new(),
                };
                s.wstring(name, &mut text, *max_len)?;
                read(DynValue::Str(text))
            }
            Kind::F32 => {
                let mut x = if S::WRITING {
                    want_f32(s, name, src)?
                } else {
                    0.0
                };
                s.f32(name, &mut x)?;
                read(DynValue::F32(x))
            }
            Kind::F64 => {
                let mut x = match src {
                    DynValue::F64(x) => *x,
                    other if S::WRITING => f64::from(want_f32(s, name, other)?),
                    _ => 0.0,
                };
                s.f64(name, &mut x)?;
                read(DynValue::F64(x))
            }
            Kind::CompressedFloat(spec) => {
                let mut x = if S::WRITING {
                    want_f32(s, name, src)?
                } else {
                    0.0
                };
                s.compressed_f32(name, &mut x, spec)?;
                read(DynValue::F32(x))
            }
            Kind::CompressedVector(spec) => {
                let mut v = if S::WRITING {
                    want_floats::<3, S>(s, name, src)?
                } else {
                    [0.0; 3]
                };
                s.compressed_vec3(name, &mut v, spec)?;
                read(DynValue::Vec3(v))
            }
            Kind::Quaternion(spec) => {
                let mut q = if S::WRITING {
                    want_floats::<4, S>(s, name, src)?
                } else {
                    [0.0; 4]
                };
                s.quaternion(name, &mut q, spec)?;
                read(DynValue::Quat(q))
            }
            Kind::Str { max_len } => {
                let mut text = match src {
                    DynValue::Str(t) if S::WRITING => t.clone(),
                    other if S::WRITING => return Err(wrong(s, name, "a string", other)),
                    _ => String::new(),
                };
                s.string(name, &mut text, *max_len)?;
                read(DynValue::Str(text))
            }
            Kind::BitRun { table, .. } => crate::bit_run::serialize(s, name, table, prev, src)?,
            Kind::Bytes { len } => {
                let mut b = match src {
                    DynValue::Bytes(b) if S::WRITING => b.clone(),
                    other if S::WRITING => return Err(wrong(s, name, "bytes", other)),
                    _ => Vec::new(),
                };
                s.bytes_vec(name, &mut b, *len)?;
                read(DynValue::Bytes(b))
            }
            Kind::Align => {
                s.align(name)?;
                DynValue::Null
            }
            Kind::Check(label) => {
                s.check(label)?;
                DynValue::Null
            }
            Kind::End => {
                s.end()?;
                DynValue::Null
            }
            Kind::ObjectIndex { max_objects, .. } => {
                let mut x = if S::WRITING {
                    want_i64(s, name, src)?
                } else {
                    0
                };
                s.object_index(name, prev, &mut x, *max_objects)?;
                read(DynValue::Int(x))
            }
            Kind::IntRelative { .. } => {
                let mut x = if S::WRITING {
                    want_i64(s, name, src)?
                } else {
                    0
                };
                s.int_relative(name, prev, &mut x)?;
                read(DynValue::Int(x))
            }
            Kind::Struct(sid) => {
                let sd = &self.structs[*sid];
                s.scope(name, |s| self.struct_value(s, sd, src, 0, None))?
            }
            Kind::Union(u) => {
                let def = &self.unions[*u];
                s.scope(name, |s| self.union_value(s, def, src))?
            }
            Kind::Array {
                max_len,
                min_element_bits,
                element,
            } => s.scope(name, |s| {
                self.array(s, f, *max_len, *min_element_bits, element, src)
            })?,
            Kind::Sparse {
                max_objects,
                element,
                layout,
            } => s.scope(name, |s| {
                self.sparse(s, *max_objects, &self.structs[*element], layout, src)
            })?,
        })
    }

    /// An array, exactly as [`Stream::array`] sends it: `len` then each element under `[i]`.
    fn array<S: Stream>(
        &self,
        s: &mut S,
        f: &Field,
        max_len: usize,
        min_element_bits: usize,
        element: &Kind,
        src: &DynValue,
    ) -> Result<DynValue> {
        let items: &[DynValue] = match src {
            DynValue::Array(items) if S::WRITING => items,
            other if S::WRITING => return Err(wrong(s, "len", "an array", other)),
            _ => &[],
        };
        let mut len = items.len() as i64;
        let len_bit = s.bit_position();
        s.int("len", &mut len, 0, max_len.min(i64::MAX as usize) as i64)?;
        if S::WRITING {
            for (i, item) in items.iter().enumerate() {
                s.index(i, |s| self.element(s, f, element, item))?;
            }
            return Ok(DynValue::Null);
        }
        let len = len as usize;
        // As `Stream::array`: an element counts at least one bit against what remains.
        bitlens_codec::stream::check_len_fits(s, len, min_element_bits, len_bit)?;
        let mut out = Vec::new();
        if min_element_bits > 0 {
            out.reserve(len);
        }
        for i in 0..len {
            out.push(s.index(i, |s| self.element(s, f, element, &NULL))?);
        }
        Ok(DynValue::Array(out))
    }

    /// One array element: a struct's fields go straight into the `[i]` scope. A relative
    /// element (object index, relative integer) is sent after its declared constant `previous`,
    /// every element on its own, as a loop calling `object_index(.., PREVIOUS, ..)` per element
    /// sends them (the derive's `element(...)` does).
    fn element<S: Stream>(
        &self,
        s: &mut S,
        f: &Field,
        element: &Kind,
        src: &DynValue,
    ) -> Result<DynValue> {
        match element {
            Kind::Struct(sid) => self.struct_value(s, &self.structs[*sid], src, 0, None),
            Kind::Union(u) => self.union_value(s, &self.unions[*u], src),
            k => self.value(s, f, k, src, element_previous(k)),
        }
    }

    /// A tagged union's value (no scope of its own): the tag as `int(0, variants - 1)` (the trace
    /// shows the variant's name over it), then the variant's body fields.
    fn union_value<S: Stream>(
        &self,
        s: &mut S,
        def: &UnionDef,
        src: &DynValue,
    ) -> Result<DynValue> {
        let tag: &str = &def.tag;
        let last = def.variants.len() as i64 - 1;
        let mut t = 0i64;
        if S::WRITING {
            let given = match src {
                DynValue::Struct(st) => st.get(tag).cloned().unwrap_or_default(),
                other => return Err(wrong(s, tag, "a struct with its variant", other)),
            };
            t = match &given {
                DynValue::Enum(n) => union_variant(s, tag, def, n)?,
                DynValue::Str(n) => union_variant(s, tag, def, n)?,
                other => want_i64(s, tag, other)?,
            };
        }
        s.int(tag, &mut t, 0, last)?;
        let Some(v) = def.variants.get(t as usize) else {
            let kind = ErrorKind::OutOfRange {
                value: i128::from(t),
                min: 0,
                max: i128::from(last),
            };
            return Err(Error::new(kind, s.bit_position(), tag));
        };
        if S::READING {
            let n = v.name.to_string();
            s.annotate(|| Value::Str(n));
        }
        let first = DynValue::Enum(v.name.clone());
        match v.body {
            Some(sid) => {
                let sd = &self.structs[sid];
                self.struct_value(s, sd, src, 1, Some((&v.layout, first)))
            }
            None if S::READING => Ok(DynValue::Struct(DynStruct {
                names: v.layout.clone(),
                values: vec![first],
            })),
            None => {
                canonical(&v.layout, src, s.bit_position())?;
                Ok(DynValue::Null)
            }
        }
    }

    /// A sparse array (seed 000, "Serializing Array Subsets"), as [`crate::demo::SceneUpdate`]
    /// sends its objects: under `[i]`, the relative object index, then the element's fields;
    /// closed by the sentinel index `max_objects` under `[len]`.
    fn sparse<S: Stream>(
        &self,
        s: &mut S,
        max_objects: i64,
        sd: &StructDef,
        layout: &Arc<[Arc<str>]>,
        src: &DynValue,
    ) -> Result<DynValue> {
        let index_name: &str = &layout[0];
        let mut previous = -1i64;
        if S::WRITING {
            let items = match src {
                DynValue::Array(items) => items,
                other => return Err(wrong(s, index_name, "an array", other)),
            };
            for (i, item) in items.iter().enumerate() {
                previous = s.index(i, |s| {
                    let values = canonical(layout, item, s.bit_position())?;
                    let mut current = want_i64(s, index_name, &values[0])?;
                    s.object_index(index_name, previous, &mut current, max_objects)?;
                    self.fields(s, sd, &values, &mut Vec::new(), 1)?;
                    Ok(current)
                })?;
            }
            let mut end = max_objects;
            s.index(items.len(), |s| {
                s.object_index(index_name, previous, &mut end, max_objects)
            })?;
            return Ok(DynValue::Null);
        }
        // Bounded: indices strictly increase up to the sentinel, so at most max_objects
        // elements, and each consumes at least one bit.
        let mut out = Vec::new();
        loop {
            let i = out.len();
            let item = s.index(i, |s| {
                let mut current = 0;
                s.object_index(index_name, previous, &mut current, max_objects)?;
                if current == max_objects {
                    return Ok(None);
                }
                previous = current;
                self.struct_value(s, sd, &NULL, 1, Some((layout, DynValue::Int(current))))
                    .map(Some)
            })?;
            match item {
                Some(v) => out.push(v),
                None => return Ok(DynValue::Array(out)),
            }
        }
    }
}

/// The values of a struct in `layout` order: borrowed when `value` was built with this layout,
/// else matched by name (absent names are `Null`; unknown ones are an error).
fn canonical<'v>(
    layout: &Arc<[Arc<str>]>,
    value: &'v DynValue,
    bit: usize,
) -> Result<Cow<'v, [DynValue]>> {
    let st = match value {
        DynValue::Struct(st) => st,
        other => {
            let why = format!("expected a struct, found {}", other.kind_name());
            return Err(Error::new(ErrorKind::InvalidArgument(why), bit, ""));
        }
    };
    if Arc::ptr_eq(&st.names, layout) || st.names == *layout {
        return Ok(Cow::Borrowed(&st.values));
    }
    if let Some(extra) = st.names.iter().find(|n| !layout.contains(n)) {
        let why = format!(
            "no field \"{extra}\" in this struct (it has {})",
            layout.join(", ")
        );
        return Err(Error::new(ErrorKind::InvalidArgument(why), bit, ""));
    }
    Ok(Cow::Owned(
        layout
            .iter()
            .map(|n| st.get(n).cloned().unwrap_or_default())
            .collect(),
    ))
}

#[cold]
fn wrong<S: Stream>(s: &S, name: &str, want: &str, found: &DynValue) -> Error {
    let why = if found.is_null() {
        format!("missing value: expected {want}")
    } else {
        format!("expected {want}, found {}", found.kind_name())
    };
    Error::new(ErrorKind::InvalidArgument(why), s.bit_position(), name)
}

fn want_bool<S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<bool> {
    match v {
        DynValue::Bool(b) => Ok(*b),
        other => Err(wrong(s, name, "a bool", other)),
    }
}

fn want_i64<S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<i64> {
    v.as_i64().ok_or_else(|| wrong(s, name, "an integer", v))
}

fn want_u64<S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<u64> {
    match *v {
        DynValue::U64(x) => Ok(x),
        DynValue::Int(x) if x >= 0 => Ok(x as u64),
        ref other => Err(wrong(s, name, "an unsigned integer", other)),
    }
}

fn want_i128<S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<i128> {
    match *v {
        DynValue::I128(x) => Ok(x),
        DynValue::Int(x) => Ok(i128::from(x)),
        DynValue::U64(x) => Ok(i128::from(x)),
        DynValue::U128(x) => i128::try_from(x).map_err(|_| out_of_range_u128(s, name, x)),
        ref other => Err(wrong(s, name, "an integer", other)),
    }
}

#[cold]
fn out_of_range_u128<S: Stream>(s: &S, name: &str, x: u128) -> Error {
    let why = format!("{x} does not fit a 128-bit signed integer");
    Error::new(ErrorKind::InvalidArgument(why), s.bit_position(), name)
}

fn want_u128<S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<u128> {
    match *v {
        DynValue::U128(x) => Ok(x),
        DynValue::U64(x) => Ok(u128::from(x)),
        DynValue::Int(x) if x >= 0 => Ok(x as u128),
        DynValue::I128(x) if x >= 0 => Ok(x as u128),
        ref other => Err(wrong(s, name, "an unsigned integer", other)),
    }
}

/// The raw value of a fixed-point field: a [`Fixed`] (rescaled to the field's fraction bits,
/// rounding half away from zero when that drops bits), whole units, or a float quantized
/// half away from zero.
fn want_fixed<S: Stream>(s: &S, name: &str, v: &DynValue, q: &FixedPoint) -> Result<i128> {
    let f = q.fraction_bits();
    let fixed = match *v {
        DynValue::Fixed(x) => x.rescale(f),
        DynValue::Int(units) => Fixed::new(i128::from(units), 0).rescale(f),
        DynValue::F64(x) => q.from_f64(x).ok(),
        DynValue::F32(x) => q.from_f64(f64::from(x)).ok(),
        ref other => return Err(wrong(s, name, "a fixed-point number", other)),
    };
    fixed.map(|x| x.raw).ok_or_else(|| {
        let why = format!(
            "{} has no Q{}.{} value",
            v,
            q.integer_bits(),
            q.fraction_bits()
        );
        Error::new(ErrorKind::InvalidArgument(why), s.bit_position(), name)
    })
}

fn want_f32<S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<f32> {
    match *v {
        DynValue::F32(x) => Ok(x),
        DynValue::F64(x) => Ok(x as f32),
        DynValue::Int(x) => Ok(x as f32),
        ref other => Err(wrong(s, name, "a number", other)),
    }
}

fn want_floats<const N: usize, S: Stream>(s: &S, name: &str, v: &DynValue) -> Result<[f32; N]> {
    match v {
        DynValue::Vec3(a) if N == 3 => Ok(std::array::from_fn(|i| a[i])),
        DynValue::Quat(a) if N == 4 => Ok(std::array::from_fn(|i| a[i])),
        DynValue::Array(items) if items.len() == N => {
            let mut out = [0.0; N];
            for (o, item) in out.iter_mut().zip(items) {
                *o = want_f32(s, name, item)?;
            }
            Ok(out)
        }
        other => Err(wrong(s, name, &format!("{N} numbers"), other)),
    }
}

fn union_variant<S: Stream>(s: &S, name: &str, def: &UnionDef, n: &str) -> Result<i64> {
    match def.by_name.get(n) {
        Some(&i) => Ok(i as i64),
        None => {
            let names: Vec<&str> = def.variants.iter().map(|v| &*v.name).collect();
            let why = format!(
                "no variant named {n:?} (expected one of {})",
                names.join(", ")
            );
            Err(Error::new(
                ErrorKind::InvalidArgument(why),
                s.bit_position(),
                name,
            ))
        }
    }
}

fn enum_value<S: Stream>(s: &S, name: &str, def: &EnumDef, n: &str) -> Result<i64> {
    def.value_of(n).ok_or_else(|| {
        let names: Vec<&str> = def.values.iter().map(|(_, n)| &**n).collect();
        let why = format!(
            "no enum value named {n:?} (expected one of {})",
            names.join(", ")
        );
        Error::new(ErrorKind::InvalidArgument(why), s.bit_position(), name)
    })
}
