//! JSON -> [`DynValue`], guided by the schema (the inverse of `DynValue`'s serde output).

use crate::batch::schema::{BKind, BStruct, BatchSchema, Prim};
use crate::defs::{Kind, StructDef, UnionDef};
use crate::schema::Schema;
use crate::value::{DynStruct, DynValue};
use bitlens_codec::fixed::{Fixed, FixedPoint};
use bitlens_codec::float_text;
use serde_json::Value as Json;
use std::sync::Arc;

fn at(path: &str, name: &str) -> String {
    match (path.is_empty(), name.is_empty()) {
        (true, _) => name.to_owned(),
        (false, true) => path.to_owned(),
        (false, false) => format!("{path}.{name}"),
    }
}

fn err(path: &str, want: &str, found: &Json) -> String {
    let shown = found.to_string();
    let shown = if shown.len() > 40 {
        format!("{}...", &shown[..shown.floor_char_boundary(40)])
    } else {
        shown
    };
    let place = if path.is_empty() { "the value" } else { path };
    format!("{place}: expected {want}, found {shown}")
}

/// A struct value from a JSON object; `prefix` is a sparse element's (layout, index) pair.
pub(super) fn struct_from_json(
    schema: &Schema,
    sd: &StructDef,
    prefix: Option<&Arc<[Arc<str>]>>,
    json: &Json,
    path: &str,
) -> Result<DynValue, String> {
    let obj = json
        .as_object()
        .ok_or_else(|| err(path, "an object", json))?;
    let layout = prefix.unwrap_or(&sd.layout);
    if let Some(k) = obj.keys().find(|k| !layout.iter().any(|n| **n == ***k)) {
        return Err(format!(
            "{}: no such field (the struct has {})",
            at(path, k),
            layout.join(", ")
        ));
    }
    let mut values = Vec::with_capacity(layout.len());
    if let Some(l) = prefix {
        let name: &str = &l[0];
        let p = at(path, name);
        let v = obj
            .get(name)
            .ok_or_else(|| format!("{p}: missing (every element needs its object index)"))?;
        values.push(DynValue::Int(
            v.as_i64().ok_or_else(|| err(&p, "an integer", v))?,
        ));
    }
    for f in sd.fields.iter().filter(|f| f.slot.is_some()) {
        let p = at(path, &f.name);
        match obj.get(&*f.name) {
            None | Some(Json::Null) if f.guard.is_some() => values.push(DynValue::Null),
            None => return Err(format!("{p}: missing")),
            Some(v) => values.push(value_from_json(schema, &f.kind, v, &p)?),
        }
    }
    Ok(DynValue::Struct(DynStruct {
        names: layout.clone(),
        values,
    }))
}

/// A tagged union's value from a JSON object: its tag names the variant (or gives its number),
/// the other keys are the variant's fields.
fn union_from_json(
    schema: &Schema,
    def: &UnionDef,
    j: &Json,
    path: &str,
) -> Result<DynValue, String> {
    let obj = j.as_object().ok_or_else(|| err(path, "an object", j))?;
    let tag: &str = &def.tag;
    let p = at(path, tag);
    let given = obj
        .get(tag)
        .ok_or_else(|| format!("{p}: missing (name the variant)"))?;
    let variant = match given {
        Json::String(n) => def.by_name.get(n.as_str()).map(|&i| &def.variants[i]),
        other => other
            .as_u64()
            .and_then(|i| def.variants.get(usize::try_from(i).ok()?)),
    }
    .ok_or_else(|| {
        let names: Vec<&str> = def.variants.iter().map(|v| &*v.name).collect();
        format!(
            "{p}: no variant {given} (expected one of {})",
            names.join(", ")
        )
    })?;
    let first = DynValue::Enum(variant.name.clone());
    match variant.body {
        None => {
            if let Some(k) = obj.keys().find(|k| **k != tag) {
                return Err(format!(
                    "{}: no such field (variant {} has none)",
                    at(path, k),
                    variant.name
                ));
            }
            Ok(DynValue::Struct(DynStruct {
                names: variant.layout.clone(),
                values: vec![first],
            }))
        }
        Some(sid) => {
            let mut rest = obj.clone();
            rest.remove(tag);
            let sd = &schema.structs[sid];
            let DynValue::Struct(mut st) =
                struct_from_json(schema, sd, None, &Json::Object(rest), path)?
            else {
                return Err(err(path, "an object", j));
            };
            st.values.insert(0, first);
            st.names = variant.layout.clone();
            Ok(DynValue::Struct(st))
        }
    }
}

fn int(j: &Json, path: &str) -> Result<i64, String> {
    j.as_i64().ok_or_else(|| err(path, "an integer", j))
}

fn float(j: &Json, path: &str) -> Result<f32, String> {
    match j {
        // Through the decimal, so "0.01" gives the f32 nearest 0.01.
        Json::Number(n) => n
            .to_string()
            .parse::<f32>()
            .map_err(|_| err(path, "a number", j)),
        Json::String(s) => float_text::parse_f32(s).ok_or_else(|| {
            err(
                path,
                "a number (or \"nan\", \"inf\", \"-inf\", \"nan:0x7fc00001\")",
                j,
            )
        }),
        _ => Err(err(path, "a number", j)),
    }
}

fn floats<const N: usize>(j: &Json, path: &str) -> Result<[f32; N], String> {
    let items = j
        .as_array()
        .filter(|a| a.len() == N)
        .ok_or_else(|| err(path, &format!("an array of {N} numbers"), j))?;
    let mut out = [0.0; N];
    for (i, (o, item)) in out.iter_mut().zip(items).enumerate() {
        *o = float(item, &format!("{path}[{i}]"))?;
    }
    Ok(out)
}

/// A fixed-point value: a JSON number (a float is quantized half away from zero; an integer is
/// exact), or a string holding the exact decimal (rounded half away from zero if it has more
/// digits than the format).
fn fixed(q: &FixedPoint, j: &Json, path: &str) -> Result<Fixed, String> {
    let want = "a number or a decimal string";
    let parsed = match j {
        Json::Number(n) if n.is_f64() => q.from_f64(n.as_f64().unwrap_or(f64::NAN)),
        Json::Number(n) => q.from_decimal(&n.to_string()),
        Json::String(s) => q.from_decimal(s),
        _ => return Err(err(path, want, j)),
    };
    parsed.map_err(|why| format!("{}: {why}", err(path, want, j)))
}

fn float64(j: &Json, path: &str) -> Result<f64, String> {
    let want = "a number (or \"nan\", \"inf\", \"-inf\", \"nan:0x7ff8000000000001\")";
    match j {
        Json::Number(n) => n.as_f64().ok_or_else(|| err(path, want, j)),
        Json::String(s) => float_text::parse_f64(s).ok_or_else(|| err(path, want, j)),
        _ => Err(err(path, want, j)),
    }
}

/// Bytes: a hex string (as the outputs write them) or an array of byte values.
fn bytes(j: &Json, path: &str) -> Result<Vec<u8>, String> {
    match j {
        Json::String(s) => hex::decode(s).map_err(|_| err(path, "a hex string", j)),
        Json::Array(items) => items
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| err(path, "an array of bytes 0..=255", j)),
        _ => Err(err(path, "a hex string", j)),
    }
}

fn string(j: &Json, path: &str) -> Result<String, String> {
    j.as_str()
        .map(str::to_owned)
        .ok_or_else(|| err(path, "a string", j))
}

fn unsigned(j: &Json, path: &str) -> Result<u64, String> {
    match j {
        Json::Number(n) => n.as_u64(),
        Json::String(s) => s
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok()),
        _ => None,
    }
    .ok_or_else(|| err(path, "an unsigned integer (or \"0x...\")", j))
}

fn value_from_json(schema: &Schema, kind: &Kind, j: &Json, path: &str) -> Result<DynValue, String> {
    Ok(match kind {
        Kind::Bool => DynValue::Bool(j.as_bool().ok_or_else(|| err(path, "true or false", j))?),
        Kind::Int { .. } | Kind::ObjectIndex { .. } | Kind::IntRelative { .. } => {
            DynValue::Int(int(j, path)?)
        }
        Kind::Enum(e) => match j {
            Json::String(s) => {
                let def = &schema.enums[*e];
                let name = def
                    .values
                    .iter()
                    .find(|(_, n)| **n == **s)
                    .map(|(_, n)| n.clone())
                    .ok_or_else(|| {
                        let names: Vec<&str> = def.values.iter().map(|(_, n)| &**n).collect();
                        format!(
                            "{path}: no enum value {s:?} (expected one of {})",
                            names.join(", ")
                        )
                    })?;
                DynValue::Enum(name)
            }
            _ => DynValue::Int(int(j, path)?),
        },
        Kind::Bits(_) | Kind::U64 => DynValue::U64(unsigned(j, path)?),
        Kind::Int128 { .. } => DynValue::I128(
            match j {
                Json::Number(n) => n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)),
                Json::String(s) => crate::source::parse_i128(s),
                _ => None,
            }
            .ok_or_else(|| err(path, "an integer (or a string of digits, or \"0x...\")", j))?,
        ),
        Kind::U128 => DynValue::U128(
            match j {
                Json::Number(n) => n.as_u64().map(u128::from),
                Json::String(s) => crate::source::parse_u128(s),
                _ => None,
            }
            .ok_or_else(|| {
                err(
                    path,
                    "an unsigned integer (or a string of digits, or \"0x...\")",
                    j,
                )
            })?,
        ),
        Kind::Fixed(q) => DynValue::Fixed(fixed(q, j, path)?),
        Kind::WStr { .. } => DynValue::Str(string(j, path)?),
        Kind::F32 | Kind::CompressedFloat(_) => DynValue::F32(float(j, path)?),
        Kind::F64 => DynValue::F64(float64(j, path)?),
        Kind::CompressedVector(_) => DynValue::Vec3(floats::<3>(j, path)?),
        Kind::Quaternion(_) => DynValue::Quat(floats::<4>(j, path)?),
        Kind::Str { .. } => DynValue::Str(string(j, path)?),
        Kind::Bytes { .. } => DynValue::Bytes(bytes(j, path)?),
        Kind::BitRun { .. } => DynValue::Array(
            j.as_array()
                .ok_or_else(|| err(path, "a list of bit groups", j))?
                .iter()
                .enumerate()
                .map(|(i, x)| unsigned(x, &format!("{path}[{i}]")).map(DynValue::U64))
                .collect::<Result<_, _>>()?,
        ),
        Kind::Align | Kind::Check(_) | Kind::End => DynValue::Null,
        Kind::Struct(sid) => struct_from_json(schema, &schema.structs[*sid], None, j, path)?,
        Kind::Union(u) => union_from_json(schema, &schema.unions[*u], j, path)?,
        Kind::Array { element, .. } => {
            let items = j.as_array().ok_or_else(|| err(path, "an array", j))?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                out.push(match &**element {
                    Kind::Struct(sid) => {
                        struct_from_json(schema, &schema.structs[*sid], None, item, &p)?
                    }
                    Kind::Union(u) => union_from_json(schema, &schema.unions[*u], item, &p)?,
                    k => value_from_json(schema, k, item, &p)?,
                });
            }
            DynValue::Array(out)
        }
        Kind::Sparse {
            element, layout, ..
        } => {
            let items = j.as_array().ok_or_else(|| err(path, "an array", j))?;
            let sd = &schema.structs[*element];
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                out.push(struct_from_json(schema, sd, Some(layout), item, &p)?);
            }
            DynValue::Array(out)
        }
    })
}

// ---- batch messages ----------------------------------------------------------------------------

/// The body of a `[batch]` message of type `t` from a JSON object. Range checks are the
/// writer's: this only gives each field the shape its kind takes.
pub(super) fn batch_body_from_json(
    batch: &BatchSchema,
    t: u8,
    j: &Json,
    path: &str,
) -> Result<DynValue, String> {
    let def = batch
        .def(t)
        .ok_or_else(|| format!("{path}: no message type {t} in the schema"))?;
    batch_struct_from_json(batch, &batch.structs[def.body], j, path)
}

fn batch_struct_from_json(
    batch: &BatchSchema,
    sd: &BStruct,
    j: &Json,
    path: &str,
) -> Result<DynValue, String> {
    let obj = j.as_object().ok_or_else(|| err(path, "an object", j))?;
    if let Some(k) = obj.keys().find(|k| !sd.layout.iter().any(|n| **n == ***k)) {
        return Err(format!(
            "{}: no such field (the struct has {})",
            at(path, k),
            sd.layout.join(", ")
        ));
    }
    let mut values = Vec::with_capacity(sd.fields.len());
    for f in &sd.fields {
        let p = at(path, f.name);
        match obj.get(f.name) {
            None | Some(Json::Null) if f.guard.is_some() => values.push(DynValue::Null),
            None => return Err(format!("{p}: missing")),
            Some(v) => values.push(batch_value_from_json(batch, &f.kind, v, &p)?),
        }
    }
    Ok(DynValue::Struct(DynStruct {
        names: sd.layout.clone(),
        values,
    }))
}

fn batch_prim_from_json(p: Prim, j: &Json, path: &str) -> Result<DynValue, String> {
    Ok(match p {
        Prim::Bool => DynValue::Bool(j.as_bool().ok_or_else(|| err(path, "true or false", j))?),
        Prim::U64 => DynValue::U64(unsigned(j, path)?),
        Prim::F32 => DynValue::F32(float(j, path)?),
        Prim::F64 => DynValue::F64(float64(j, path)?),
        Prim::U8 | Prim::U16 | Prim::U32 | Prim::I8 | Prim::I16 | Prim::I32 | Prim::I64 => {
            DynValue::Int(int(j, path)?)
        }
    })
}

fn batch_value_from_json(
    batch: &BatchSchema,
    kind: &BKind,
    j: &Json,
    path: &str,
) -> Result<DynValue, String> {
    let items = || j.as_array().ok_or_else(|| err(path, "an array", j));
    Ok(match kind {
        BKind::Prim(p, _) => batch_prim_from_json(*p, j, path)?,
        BKind::Packed {
            signed: false,
            wide: true,
            ..
        } => DynValue::U64(unsigned(j, path)?),
        BKind::Packed { .. } => DynValue::Int(int(j, path)?),
        BKind::Str { .. } => DynValue::Str(string(j, path)?),
        BKind::Bytes { .. } | BKind::ByteVec { .. } => DynValue::Bytes(bytes(j, path)?),
        BKind::Pod { element, .. } => DynValue::Array(
            items()?
                .iter()
                .enumerate()
                .map(|(i, item)| batch_prim_from_json(*element, item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        BKind::PodStruct { sid, .. } | BKind::Struct(sid) => {
            batch_struct_from_json(batch, &batch.structs[*sid], j, path)?
        }
        BKind::Array { element, .. } => DynValue::Array(
            items()?
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    batch_value_from_json(batch, element, item, &format!("{path}[{i}]"))
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

impl Schema {
    /// Converts JSON (as [`DynValue`] serializes) into the value of packet `packet_type`'s body:
    /// objects for structs, arrays for arrays and vectors, enum names or numbers, hex strings or
    /// arrays of numbers for bytes; absent optional fields may be left out or `null`.
    ///
    /// # Errors
    /// A message naming the JSON path that does not fit the schema.
    pub fn value_from_json(
        &self,
        packet_type: &str,
        json: &serde_json::Value,
    ) -> Result<DynValue, String> {
        let t = self
            .protocol
            .packet_types
            .iter()
            .position(|n| n == packet_type)
            .ok_or_else(|| self.unknown_type_message(packet_type))?;
        struct_from_json(self, &self.structs[self.packets[t]], None, json, "")
    }

    /// Converts JSON into the body of the `[batch]` message type named `message` (or given by
    /// its number), for [`batch::BatchSchema::push`]: an object of the body's fields, bytes as
    /// hex strings, floats as numbers or `"nan"`/`"inf"`, a guarded field absent or `null` when
    /// its guard leaves it out. Returns the message type and the body.
    ///
    /// # Errors
    /// A schema without a `[batch]` section, an unknown message type, or JSON that does not
    /// have the body's shape (naming the JSON path). Ranges are checked when the body is
    /// written.
    pub fn batch_message_from_json(
        &self,
        message: &str,
        json: &serde_json::Value,
    ) -> Result<(u8, DynValue), String> {
        let b = self
            .batch
            .as_ref()
            .ok_or("the schema has no [batch] section")?;
        let t = b
            .message_type(message)
            .or_else(|| {
                message
                    .parse()
                    .ok()
                    .filter(|t| b.message_name(*t).is_some())
            })
            .ok_or_else(|| {
                let names: Vec<&str> = b.message_types().map(|(_, n)| n).collect();
                format!(
                    "no batch message type {message:?} (the schema has {})",
                    names.join(", ")
                )
            })?;
        Ok((t, batch_body_from_json(b, t, json, "")?))
    }

    /// Converts JSON into a value of struct `name` (for [`Schema::serialize_struct`]).
    ///
    /// # Errors
    /// An unknown struct, or as [`Schema::value_from_json`].
    pub fn struct_from_json(
        &self,
        name: &str,
        json: &serde_json::Value,
    ) -> Result<DynValue, String> {
        let sid = self
            .struct_ids
            .get(name)
            .ok_or_else(|| format!("no struct named {name:?} in the schema"))?;
        struct_from_json(self, &self.structs[*sid], None, json, "")
    }
}
