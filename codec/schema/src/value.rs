//! The dynamic value tree the schema interpreter reads into and writes from.

use bitlens_codec::fixed::Fixed;
use bitlens_codec::float_text;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::sync::Arc;

/// The value a read starts from and a write of a field without a value sends.
pub(crate) static NULL: DynValue = DynValue::Null;

/// A value of a schema-described field: what `Schema::read` returns and `Schema::write` takes.
///
/// Serializes (serde) to the natural JSON: structs as objects (absent optional fields left out),
/// arrays and vectors as arrays, bytes as a lower-case hex string, enums as their value name.
/// Floats that JSON cannot spell are strings (`"nan"`, `"inf"`, `"-inf"`, `"nan:0x7fc00001"`:
/// [`bitlens_codec::float_text`]); 128-bit integers and fixed-point values are numbers where a JSON
/// reader gets them back exactly (within `i64`/`u64`, or exact in `f64`), else strings of their
/// exact decimal. Equality compares floats by their bits, so `NaN == NaN` and `-0.0 != 0.0`: two
/// values are equal exactly when they write the same bytes.
#[derive(Debug, Clone, Default)]
pub enum DynValue {
    /// An optional field that is absent (its guard says so), or no value at all.
    #[default]
    Null,
    /// A `bool`.
    Bool(bool),
    /// A ranged integer (`int`, `i8` .. `u32`, `i64`, object indices, relative ints).
    Int(i64),
    /// A `u64` or a `bits` field.
    U64(u64),
    /// An `f32` or a decoded `compressed_float`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A `string`.
    Str(String),
    /// A `bytes` field.
    Bytes(Vec<u8>),
    /// A decoded `compressed_vector`: `[x, y, z]`.
    Vec3([f32; 3]),
    /// A decoded `quaternion`: `[x, y, z, w]`.
    Quat([f32; 4]),
    /// A named enum value (a value without a name reads as [`DynValue::Int`]).
    Enum(Arc<str>),
    /// An `int128`.
    I128(i128),
    /// A `u128`.
    U128(u128),
    /// A `fixed` field: its raw value and fraction bits.
    Fixed(Fixed),
    /// An `array` or a `sparse_array`.
    Array(Vec<DynValue>),
    /// A struct: named fields in schema order.
    Struct(DynStruct),
}

/// The fields of a struct value, in schema order: names shared with the schema, one value each.
#[derive(Debug, Clone)]
pub struct DynStruct {
    pub(crate) names: Arc<[Arc<str>]>,
    pub(crate) values: Vec<DynValue>,
}

impl DynStruct {
    /// A struct from `(name, value)` pairs. Values built by `Schema::read` or
    /// `Schema::value_from_json` share the schema's name list and write fastest; hand-built ones
    /// are matched by name.
    pub fn new<N: Into<Arc<str>>>(fields: impl IntoIterator<Item = (N, DynValue)>) -> Self {
        let (names, values): (Vec<Arc<str>>, Vec<DynValue>) =
            fields.into_iter().map(|(n, v)| (n.into(), v)).unzip();
        DynStruct {
            names: names.into(),
            values,
        }
    }

    /// The value of field `name` (`Null` for an absent optional field), if the struct has it.
    pub fn get(&self, name: &str) -> Option<&DynValue> {
        self.names
            .iter()
            .position(|n| &**n == name)
            .map(|i| &self.values[i])
    }

    /// The fields in schema order, absent optional ones included (as `Null`).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &DynValue)> {
        self.names.iter().map(|n| &**n).zip(&self.values)
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the struct has no fields.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl PartialEq for DynStruct {
    fn eq(&self, other: &Self) -> bool {
        (Arc::ptr_eq(&self.names, &other.names) || self.names == other.names)
            && self.values == other.values
    }
}

impl PartialEq for DynValue {
    fn eq(&self, other: &Self) -> bool {
        use DynValue::*;
        let bits3 = |a: &[f32; 3]| a.map(f32::to_bits);
        let bits4 = |a: &[f32; 4]| a.map(f32::to_bits);
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (U64(a), U64(b)) => a == b,
            (F32(a), F32(b)) => a.to_bits() == b.to_bits(),
            (F64(a), F64(b)) => a.to_bits() == b.to_bits(),
            (Str(a), Str(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (Vec3(a), Vec3(b)) => bits3(a) == bits3(b),
            (Quat(a), Quat(b)) => bits4(a) == bits4(b),
            (Enum(a), Enum(b)) => a == b,
            (I128(a), I128(b)) => a == b,
            (U128(a), U128(b)) => a == b,
            (Fixed(a), Fixed(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Struct(a), Struct(b)) => a == b,
            _ => false,
        }
    }
}

impl DynValue {
    /// True for [`DynValue::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, DynValue::Null)
    }

    /// The struct's fields, for a struct.
    pub fn as_struct(&self) -> Option<&DynStruct> {
        match self {
            DynValue::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// The field `name` of a struct value.
    pub fn get(&self, name: &str) -> Option<&DynValue> {
        self.as_struct().and_then(|s| s.get(name))
    }

    /// The value as an `i64`, for the integer variants that hold one.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            DynValue::Int(v) => Some(v),
            DynValue::U64(v) => i64::try_from(v).ok(),
            DynValue::I128(v) => i64::try_from(v).ok(),
            DynValue::U128(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// A short description of the variant, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            DynValue::Null => "nothing",
            DynValue::Bool(_) => "a bool",
            DynValue::Int(_) | DynValue::U64(_) | DynValue::I128(_) | DynValue::U128(_) => {
                "an integer"
            }
            DynValue::Fixed(_) => "a fixed-point number",
            DynValue::F32(_) | DynValue::F64(_) => "a float",
            DynValue::Str(_) => "a string",
            DynValue::Bytes(_) => "bytes",
            DynValue::Vec3(_) => "a vector",
            DynValue::Quat(_) => "a quaternion",
            DynValue::Enum(_) => "an enum name",
            DynValue::Array(_) => "an array",
            DynValue::Struct(_) => "a struct",
        }
    }
}

impl Serialize for DynValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DynValue::Null => s.serialize_unit(),
            DynValue::Bool(b) => s.serialize_bool(*b),
            DynValue::Int(v) => s.serialize_i64(*v),
            DynValue::U64(v) => s.serialize_u64(*v),
            DynValue::F32(v) => float_text::serialize_f32(v, s),
            DynValue::F64(v) => float_text::serialize_f64(v, s),
            DynValue::Str(v) => s.serialize_str(v),
            DynValue::Bytes(b) => s.serialize_str(&hex::encode(b)),
            DynValue::Vec3(v) => float_text::serialize_f32s(v, s),
            DynValue::Quat(v) => float_text::serialize_f32s(v, s),
            DynValue::Enum(n) => s.serialize_str(n),
            DynValue::I128(v) => match i64::try_from(*v) {
                Ok(small) => s.serialize_i64(small),
                Err(_) => s.collect_str(v),
            },
            DynValue::U128(v) => match u64::try_from(*v) {
                Ok(small) => s.serialize_u64(small),
                Err(_) => s.collect_str(v),
            },
            DynValue::Fixed(x) => x.serialize(s),
            DynValue::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            DynValue::Struct(st) => {
                let present = st.values.iter().filter(|v| !v.is_null()).count();
                let mut map = s.serialize_map(Some(present))?;
                for (name, value) in st.iter().filter(|(_, v)| !v.is_null()) {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
        }
    }
}

impl std::fmt::Display for DynValue {
    /// Compact JSON.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_string(self) {
            Ok(s) => f.write_str(&s),
            Err(_) => Err(std::fmt::Error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_to_natural_json() {
        let v = DynValue::Struct(DynStruct::new([
            ("a", DynValue::Int(-3)),
            ("gone", DynValue::Null),
            ("b", DynValue::Bytes(vec![0xab, 1])),
            ("q", DynValue::Vec3([1.0, 0.5, -2.0])),
            ("e", DynValue::Enum("rifle".into())),
        ]));
        assert_eq!(
            v.to_string(),
            r#"{"a":-3,"b":"ab01","q":[1.0,0.5,-2.0],"e":"rifle"}"#
        );
        assert_eq!(v.get("a"), Some(&DynValue::Int(-3)));
        assert!(DynValue::F32(f32::NAN) == DynValue::F32(f32::NAN));
        let special = DynValue::Struct(DynStruct::new([
            ("f", DynValue::F32(f32::NEG_INFINITY)),
            ("d", DynValue::F64(f64::from_bits(0x7ff8000000000001))),
            ("v", DynValue::Vec3([f32::NAN, -0.0, f32::INFINITY])),
            ("i", DynValue::I128(i128::MIN)),
            ("j", DynValue::I128(-5)),
            ("u", DynValue::U128(u128::MAX)),
            ("q", DynValue::Fixed(Fixed::new(-832, 8))),
        ]));
        assert_eq!(
            special.to_string(),
            r#"{"f":"-inf","d":"nan:0x7ff8000000000001","v":["nan",-0.0,"inf"],"i":"-170141183460469231731687303715884105728","j":-5,"u":"340282366920938463463374607431768211455","q":-3.25}"#
        );
        assert!(DynValue::F32(0.0) != DynValue::F32(-0.0));
    }
}
