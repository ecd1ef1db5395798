//! How each Rust type is laid out as a field value (the `SerializeImpl` of seed 001).

use std::collections::BTreeMap;

use super::reporter::{ZeroCheck, decode_struct, encode_struct};
use super::varint::{unzigzag, zigzag};
use super::{DumpValue, Dumper, Error, Reader, Reporter, Tagged, WireType, Writer};

/// A type that can be a field value: its wire type, its zero value, and its encoding.
///
/// Implemented for the primitives, strings, arrays, options, tuples, maps and every [`Tagged`]
/// struct. Methods take `&mut self` because a struct's one `report` function serves reading and
/// writing alike; writing does not change the value.
pub trait Value: Sized {
    /// The wire type written in the field header.
    const WIRE: WireType;

    /// The value a missing field reads as (0, false, +0.0, empty, `None`, a struct of zeros).
    fn zero() -> Self;

    /// Whether this is the zero value, which a field omits.
    fn is_zero(&mut self) -> bool;

    /// Writes the value (without field header).
    ///
    /// # Errors
    /// Values with no encoding: too deep, `None` in a sequence, ids out of order.
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error>;

    /// Reads a value of this type at the reader's position.
    ///
    /// # Errors
    /// Any malformed or out-of-range input.
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error>;

    /// The value for a typed dump.
    fn dump(&mut self) -> DumpValue;
}

#[cold]
#[inline(never)]
fn out_of_range(r: &Reader<'_>, offset: usize, value: i128, ty: &'static str) -> Error {
    Error::OutOfRange {
        offset,
        field: r.field(),
        value,
        ty,
    }
}

macro_rules! unsigned_varint {
    ($($t:ty),*) => {$(
        impl Value for $t {
            const WIRE: WireType = WireType::Varint;
            #[inline]
            fn zero() -> Self {
                0
            }
            #[inline]
            fn is_zero(&mut self) -> bool {
                *self == 0
            }
            #[inline]
            fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
                w.varint(*self as u64);
                Ok(())
            }
            #[inline]
            fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
                let offset = r.offset();
                let x = r.varint()?;
                <$t>::try_from(x).map_err(|_| out_of_range(r, offset, i128::from(x), stringify!($t)))
            }
            fn dump(&mut self) -> DumpValue {
                DumpValue::Scalar(self.to_string())
            }
        }
    )*};
}

macro_rules! signed_varint {
    ($($t:ty),*) => {$(
        impl Value for $t {
            const WIRE: WireType = WireType::Varint;
            #[inline]
            fn zero() -> Self {
                0
            }
            #[inline]
            fn is_zero(&mut self) -> bool {
                *self == 0
            }
            #[inline]
            fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
                w.varint(zigzag(*self as i64));
                Ok(())
            }
            #[inline]
            fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
                let offset = r.offset();
                let x = unzigzag(r.varint()?);
                <$t>::try_from(x).map_err(|_| out_of_range(r, offset, i128::from(x), stringify!($t)))
            }
            fn dump(&mut self) -> DumpValue {
                DumpValue::Scalar(self.to_string())
            }
        }
    )*};
}

unsigned_varint!(u16, u32, u64, usize);
signed_varint!(i16, i32, i64, isize);

impl Value for u8 {
    const WIRE: WireType = WireType::Byte;
    #[inline]
    fn zero() -> Self {
        0
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        *self == 0
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.byte(*self);
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        r.byte()
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::Scalar(self.to_string())
    }
}

impl Value for i8 {
    const WIRE: WireType = WireType::Byte;
    #[inline]
    fn zero() -> Self {
        0
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        *self == 0
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.byte(self.to_le_bytes()[0]);
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        Ok(i8::from_le_bytes([r.byte()?]))
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::Scalar(self.to_string())
    }
}

impl Value for bool {
    const WIRE: WireType = WireType::Byte;
    #[inline]
    fn zero() -> Self {
        false
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        !*self
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.byte(u8::from(*self));
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        let offset = r.offset();
        match r.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            byte => Err(Error::InvalidBool {
                offset,
                field: r.field(),
                byte,
            }),
        }
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::Scalar(self.to_string())
    }
}

#[inline]
fn read_octet(r: &mut Reader<'_>) -> Result<f64, Error> {
    let mut bits = [0u8; 8];
    bits.copy_from_slice(r.bytes(8)?);
    Ok(f64::from_le_bytes(bits))
}

impl Value for f64 {
    const WIRE: WireType = WireType::Octet;
    #[inline]
    fn zero() -> Self {
        0.0
    }
    /// Only +0.0 is zero: -0.0 and NaN payloads are written, so they come back bit-exact.
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.to_bits() == 0
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.bytes(&self.to_le_bytes());
        Ok(())
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        read_octet(r)
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::Scalar(format!("{self:?}"))
    }
}

impl Value for f32 {
    const WIRE: WireType = WireType::Octet;
    #[inline]
    fn zero() -> Self {
        0.0
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.to_bits() == 0
    }
    /// Widened to f64 (exact for every f32), as seed 001 does to keep two wire-type bits.
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.bytes(&f64::from(*self).to_le_bytes());
        Ok(())
    }
    /// Narrowed from f64 with Rust's `as` (nearest f32), so a file written with f64 still reads.
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        Ok(read_octet(r)? as f32)
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::Scalar(format!("{self:?}"))
    }
}

impl Value for String {
    const WIRE: WireType = WireType::Sized;
    #[inline]
    fn zero() -> Self {
        String::new()
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.is_empty()
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.sized(|w| {
            w.bytes(self.as_bytes());
            Ok(())
        })
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        r.sized(|r| {
            let offset = r.offset();
            let bytes = r.bytes(r.remaining())?;
            match std::str::from_utf8(bytes) {
                Ok(s) => Ok(s.to_owned()),
                Err(e) => Err(Error::InvalidUtf8 {
                    offset: offset + e.valid_up_to(),
                    field: r.field(),
                }),
            }
        })
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::Scalar(format!("{self:?}"))
    }
}

/// Most elements a decoder reserves room for up front; more grow the vector as they are read.
/// Each element consumes at least one input byte, so the reservation is bounded by the input too
/// (`codec/tests/alloc_bound.rs` pins the total: a smaller reservation would only add doubling
/// reallocations on large regions).
const RESERVE_LIMIT: usize = 1024;

impl<T: Value> Value for Vec<T> {
    const WIRE: WireType = WireType::Sized;
    #[inline]
    fn zero() -> Self {
        Vec::new()
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.is_empty()
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.sized(|w| self.iter_mut().try_for_each(|item| item.encode(w)))
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        r.sized(|r| {
            // Every element takes at least one byte, so the region bounds the count.
            let mut out = Vec::with_capacity(r.remaining().min(RESERVE_LIMIT));
            while !r.is_empty() {
                out.push(T::decode(r)?);
            }
            Ok(out)
        })
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::List(self.iter_mut().map(Value::dump).collect())
    }
}

impl<T: Value, const N: usize> Value for [T; N] {
    const WIRE: WireType = WireType::Sized;
    #[inline]
    fn zero() -> Self {
        core::array::from_fn(|_| T::zero())
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.iter_mut().all(Value::is_zero)
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.sized(|w| self.iter_mut().try_for_each(|item| item.encode(w)))
    }
    /// Read in place, with no heap buffer: an element past the `N`th is refused before it is
    /// read, and a region that ends before `N` elements is refused after it.
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        let offset = r.offset();
        let mut out: [T; N] = core::array::from_fn(|_| T::zero());
        let found = r.sized(|r| {
            let mut found = 0;
            while !r.is_empty() {
                let Some(slot) = out.get_mut(found) else {
                    return Err(Error::ArrayLength {
                        offset,
                        field: r.field(),
                        expected: N,
                        found: N + 1,
                    });
                };
                *slot = T::decode(r)?;
                found += 1;
            }
            Ok(found)
        })?;
        if found != N {
            return Err(Error::ArrayLength {
                offset,
                field: r.field(),
                expected: N,
                found,
            });
        }
        Ok(out)
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::List(self.iter_mut().map(Value::dump).collect())
    }
}

/// A field that may be absent: `Some(x)` is written even when `x` is zero, `None` is omitted.
impl<T: Value> Value for Option<T> {
    const WIRE: WireType = T::WIRE;
    #[inline]
    fn zero() -> Self {
        None
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.is_none()
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        match self {
            Some(value) => value.encode(w),
            None => Err(Error::NoneInSequence {
                offset: w.offset(),
                field: w.field(),
            }),
        }
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        T::decode(r).map(Some)
    }
    fn dump(&mut self) -> DumpValue {
        match self {
            Some(value) => value.dump(),
            None => DumpValue::Scalar("None".to_owned()),
        }
    }
}

/// Every `Tagged` struct is a sized value: its fields, prefixed by their byte length.
impl<T: Tagged> Value for T {
    const WIRE: WireType = WireType::Sized;
    #[inline]
    fn zero() -> Self {
        let mut value = T::default();
        // Fields outside `report` keep their `Default`; reported ones get their zero.
        let _ = value.report(&mut ZeroFill);
        value
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        let mut check = ZeroCheck { zero: true };
        let _ = self.report(&mut check);
        check.zero
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        encode_struct(w, |e| self.report(e))
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        let mut value = T::default();
        decode_struct(r, |d| value.report(d))?;
        Ok(value)
    }
    fn dump(&mut self) -> DumpValue {
        let mut dumper = Dumper::default();
        let _ = self.report(&mut dumper);
        DumpValue::Struct(dumper.into_dump().fields)
    }
}

/// Sets every reported field to its zero value.
struct ZeroFill;

impl Reporter for ZeroFill {
    fn field<T: Value>(&mut self, _id: u64, _name: &str, value: &mut T) -> Result<(), Error> {
        *value = T::zero();
        Ok(())
    }
}

macro_rules! tuple_value {
    ($($idx:tt $t:ident),+) => {
        /// A small struct whose fields have ids 0, 1, ... in tuple order.
        impl<$($t: Value),+> Value for ($($t,)+) {
            const WIRE: WireType = WireType::Sized;
            #[inline]
            fn zero() -> Self {
                ($($t::zero(),)+)
            }
            #[inline]
            fn is_zero(&mut self) -> bool {
                $(self.$idx.is_zero())&&+
            }
            #[inline]
            fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
                encode_struct(w, |e| {
                    $(e.field($idx, stringify!($idx), &mut self.$idx)?;)+
                    Ok(())
                })
            }
            #[inline]
            fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
                let mut value = Self::zero();
                decode_struct(r, |d| {
                    $(d.field($idx, stringify!($idx), &mut value.$idx)?;)+
                    Ok(())
                })?;
                Ok(value)
            }
            fn dump(&mut self) -> DumpValue {
                let mut dumper = Dumper::default();
                $(let _ = dumper.field($idx, stringify!($idx), &mut self.$idx);)+
                DumpValue::Struct(dumper.into_dump().fields)
            }
        }
    };
}

tuple_value!(0 A, 1 B);
tuple_value!(0 A, 1 B, 2 C);

/// A map is an array of (key, value) pairs in key order; a repeated key keeps the last value.
impl<K: Value + Ord + Clone, V: Value> Value for BTreeMap<K, V> {
    const WIRE: WireType = WireType::Sized;
    #[inline]
    fn zero() -> Self {
        BTreeMap::new()
    }
    #[inline]
    fn is_zero(&mut self) -> bool {
        self.is_empty()
    }
    #[inline]
    fn encode(&mut self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.sized(|w| {
            for (key, value) in self.iter_mut() {
                // Keys cannot be borrowed mutably from a map; `Value` methods need `&mut`.
                let mut key = key.clone();
                encode_struct(w, |e| {
                    e.field(0, "key", &mut key)?;
                    e.field(1, "value", value)
                })?;
            }
            Ok(())
        })
    }
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        r.sized(|r| {
            let mut out = BTreeMap::new();
            while !r.is_empty() {
                let mut key = K::zero();
                let mut value = V::zero();
                decode_struct(r, |d| {
                    d.field(0, "key", &mut key)?;
                    d.field(1, "value", &mut value)
                })?;
                out.insert(key, value);
            }
            Ok(out)
        })
    }
    fn dump(&mut self) -> DumpValue {
        DumpValue::List(
            self.iter_mut()
                .map(|(key, value)| {
                    let mut dumper = Dumper::default();
                    let _ = dumper.field(0, "key", &mut key.clone());
                    let _ = dumper.field(1, "value", value);
                    DumpValue::Struct(dumper.into_dump().fields)
                })
                .collect(),
        )
    }
}
