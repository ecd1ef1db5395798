//! The [`Stream`] trait and its four streams: one `serialize` function per message drives them all.
//!
//! - [`WriteStream`]: packs into a caller-owned buffer; out-of-range values are errors.
//! - [`ReadStream`]: unpacks from a slice; every value is range-checked, every length bounded by
//!   what remains before anything is allocated, and the first violation aborts the read.
//! - [`MeasureStream`]: counts the exact bits a write would take, alignment included.
//! - [`TraceStream`]: reads like [`ReadStream`] and records every field (path, bit offset, width,
//!   value, allowed range) and every check marker into a [`Trace`].
//!
//! The write side is one implementation ([`Encoder`]) over a [`BitSink`]; the read side is one
//! implementation ([`Decoder`]) over a [`Tracer`], so read and trace cannot disagree.
//!
//! Names cost reads nothing: a failing primitive names its own field, and each enclosing
//! [`Stream::scope`] and [`Stream::index`] prefixes its part of the path while the error unwinds.

use crate::bits::{BitCounter, BitReader, BitSink, BitWriter, Overflow, PastEnd, bits_required};
use crate::error::{Error, ErrorKind, Result};
use crate::packet::{ProtocolId, check_hash, packet_crc};
use crate::quantize::{CompressedFloat, SmallestThree};
pub use compact_str::CompactString;
use serde::Serialize;

/// Integers that [`Stream::int_as`] can send: every primitive integer up to 64 bits except `u64`
/// (whose values above `i64::MAX` need [`Stream::u64`]).
pub trait Integer: Copy {
    /// Widens to `i64`.
    fn to_i64(self) -> i64;
    /// Narrows from an `i64` already checked to lie within a range of this type.
    fn from_i64(v: i64) -> Self;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            #[inline(always)]
            fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
        }
    )*};
}
integer!(i8, i16, i32, i64, u8, u16, u32, usize, isize);

/// A decoded value as the trace records it (and as the schema interpreter represents data).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// No value of its own (a struct or array scope).
    None,
    /// A bool.
    Bool(bool),
    /// Any integer (i64 and u64 both fit).
    Int(i128),
    /// A 32-bit float (also compressed floats, after decoding).
    F32(f32),
    /// A 64-bit float.
    F64(f64),
    /// A string.
    Str(String),
    /// Raw bytes (serialized as a hex string).
    Bytes(#[serde(serialize_with = "hex_string")] Vec<u8>),
    /// Several floats: a compressed vector or a quaternion `[x, y, z, w]`.
    Floats(Vec<f32>),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::None => Ok(()),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::F32(x) => write!(f, "{x}"),
            Value::F64(x) => write!(f, "{x}"),
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
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
        }
    }
}

fn hex_string<S: serde::Serializer>(bytes: &[u8], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&Value::Bytes(bytes.to_vec()))
}

/// One serialize function drives every stream through this trait.
///
/// Every primitive takes the field's name (`&str`, so names read from a schema file work too),
/// and documents its exact bit layout. On a read stream a primitive fills `v`; on a write stream
/// it sends `v` and leaves it alone. Branches on [`Stream::READING`] vanish after
/// monomorphization.
pub trait Stream: Sized {
    /// True for the read and trace streams.
    const READING: bool;
    /// True for the write and measure streams.
    const WRITING: bool = !Self::READING;

    /// `n` bits (1..=64) of `v`: the low 32 bits first, then the rest.
    ///
    /// # Errors
    /// Write: `v` does not fit in `n` bits (out_of_range), the buffer is full. Read: past_end.
    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> Result<()>;

    /// One bit, 1 for true.
    ///
    /// # Errors
    /// Buffer full on write, past_end on read.
    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()>;

    /// `v - min` in `bits_required(min, max)` bits; no bits at all when `min == max`.
    ///
    /// # Errors
    /// Out_of_range when `v` (written or read) is outside `min..=max`; invalid_argument when
    /// `min > max`; buffer full / past_end.
    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()>;

    /// 64 bits: the low 32 bits, then the high 32 bits.
    ///
    /// # Errors
    /// Buffer full / past_end.
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()>;

    /// The raw IEEE-754 bits in 32 bits (NaN payloads, -0 and subnormals kept exactly).
    ///
    /// # Errors
    /// Buffer full / past_end.
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()>;

    /// The raw IEEE-754 bits in 64 bits, low word first.
    ///
    /// # Errors
    /// Buffer full / past_end.
    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()>;

    /// Zero bits up to the next byte boundary; nothing when aligned.
    ///
    /// # Errors
    /// Nonzero_padding when a reader finds a set bit; buffer full / past_end.
    fn align(&mut self, name: &str) -> Result<()>;

    /// Aligns, then `buf.len()` raw bytes. The length itself is not sent.
    ///
    /// # Errors
    /// Nonzero_padding, buffer full / past_end.
    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()>;

    /// A serialization check marker: aligns, then 32 bits of [`check_hash`]`(label)`.
    ///
    /// # Errors
    /// Check_mismatch when the reader finds another value (reader and writer desynced),
    /// nonzero_padding, buffer full / past_end.
    fn check(&mut self, label: &str) -> Result<()>;

    /// The end of the data: a reader insists that only zero bits follow in the last byte and that
    /// no byte follows it. Writers do nothing.
    ///
    /// # Errors
    /// Trailing_data.
    fn end(&mut self) -> Result<()>;

    /// The 32-bit CRC of packet framing (WIRE.md): must be the first field. Writers reserve 32
    /// bits that [`WriteStream::finish`] fills in; readers verify the CRC over the whole data
    /// (with `protocol_id` folded in) before reading anything else.
    ///
    /// # Errors
    /// Crc_mismatch; past_end for data under 4 bytes; invalid_argument when not at bit 0.
    fn packet_crc(&mut self, protocol_id: ProtocolId) -> Result<()>;

    /// Serializes a named group of fields (a struct): errors inside get `name.` prefixed to
    /// their path, and the trace records a nested scope.
    ///
    /// # Errors
    /// Whatever `f` returns.
    #[inline(always)]
    fn scope<R>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        f(self).map_err(|e| e.within(name))
    }

    /// Serializes array element `i`: its path becomes `[i]`.
    ///
    /// # Errors
    /// Whatever `f` returns.
    #[inline(always)]
    fn index<R>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        f(self).map_err(|e| e.at_index(i))
    }

    /// Bits consumed (read) or produced (write) so far.
    fn bit_position(&self) -> usize;

    /// Bits left to read, or free to write (`usize::MAX` for an unbounded measure).
    fn remaining_bits(&self) -> usize;

    /// Gives the field or scope that ended last a display value (a compressed float's decoded
    /// value over its code, a string over its bytes). Only the trace stream keeps it.
    #[inline(always)]
    fn annotate(&mut self, _value: impl FnOnce() -> Value) {}

    // ---- typed conveniences, built only from the primitives above ----

    /// [`Stream::int`] for any primitive integer type (not `u64`).
    ///
    /// # Errors
    /// As [`Stream::int`].
    #[inline(always)]
    fn int_as<T: Integer>(&mut self, name: &str, v: &mut T, min: T, max: T) -> Result<()> {
        let mut x = v.to_i64();
        self.int(name, &mut x, min.to_i64(), max.to_i64())?;
        if Self::READING {
            *v = T::from_i64(x);
        }
        Ok(())
    }

    /// A compressed float: its code as `int(code, 0, M)` (see [`CompressedFloat`] for the
    /// arithmetic). Writers clamp `v` into range, as the reference does.
    ///
    /// # Errors
    /// Out_of_range when a reader finds a code above `M`; non_canonical for a code of an inexact
    /// range that no writer sends ([`CompressedFloat::is_canonical`]); buffer full / past_end.
    #[inline]
    fn compressed_f32(&mut self, name: &str, v: &mut f32, spec: &CompressedFloat) -> Result<()> {
        compressed_f32_as_int(self, name, v, spec)
    }

    /// A compressed vector: `x`, `y`, `z` as three compressed floats of the same range.
    ///
    /// # Errors
    /// As [`Stream::compressed_f32`].
    fn compressed_vec3(
        &mut self,
        name: &str,
        v: &mut [f32; 3],
        spec: &CompressedFloat,
    ) -> Result<()> {
        self.scope(name, |s| {
            s.compressed_f32("x", &mut v[0], spec)?;
            s.compressed_f32("y", &mut v[1], spec)?;
            s.compressed_f32("z", &mut v[2], spec)
        })?;
        let value = *v;
        self.annotate(|| Value::Floats(value.to_vec()));
        Ok(())
    }

    /// A rotation `[x, y, z, w]` as smallest three ([`SmallestThree`]): `largest` in 2 bits, then
    /// the other three components as `int(code, 0, 2^bits - 1)` each, in index order.
    ///
    /// # Errors
    /// Non_canonical when a reader finds an encoding a writer cannot produce; buffer full /
    /// past_end.
    fn quaternion(&mut self, name: &str, q: &mut [f32; 4], spec: &SmallestThree) -> Result<()> {
        let start = self.bit_position();
        let (mut largest, mut codes) = if Self::WRITING {
            spec.encode(*q)
        } else {
            (0, [0; 3])
        };
        self.scope(name, |s| {
            let max = i64::from(spec.max_code());
            let mut l = i64::from(largest);
            s.int("largest", &mut l, 0, 3)?;
            let mut c = codes.map(i64::from);
            s.int("a", &mut c[0], 0, max)?;
            s.int("b", &mut c[1], 0, max)?;
            s.int("c", &mut c[2], 0, max)?;
            largest = l as u32;
            codes = c.map(|x| x as u32);
            Ok(())
        })?;
        if Self::READING {
            *q = spec.decode(largest, codes).ok_or_else(|| {
                Error::new(
                    ErrorKind::NonCanonical(
                        "quaternion: a sent component is larger than the rebuilt largest one",
                    ),
                    start,
                    name,
                )
            })?;
        }
        let value = *q;
        self.annotate(|| Value::Floats(value.to_vec()));
        Ok(())
    }

    /// `len` raw bytes into a vector: on read the vector is sized only after `len` has been
    /// checked against the bits that remain. On write `v.len()` must equal `len`.
    ///
    /// # Errors
    /// Past_end (before any allocation), invalid_argument, as [`Stream::bytes`].
    fn bytes_vec(&mut self, name: &str, v: &mut Vec<u8>, len: usize) -> Result<()> {
        if Self::READING {
            let pad = (8 - self.bit_position() % 8) % 8;
            let needed = len.saturating_mul(8).saturating_add(pad);
            if needed > self.remaining_bits() {
                let kind = ErrorKind::PastEnd {
                    needed,
                    remaining: self.remaining_bits(),
                };
                return Err(Error::new(kind, self.bit_position(), name));
            }
            v.clear();
            v.resize(len, 0);
        } else if v.len() != len {
            let why = format!("{} bytes given for a field of {len}", v.len());
            return Err(Error::new(
                ErrorKind::InvalidArgument(why),
                self.bit_position(),
                name,
            ));
        }
        self.bytes(name, v)
    }

    /// A string: `int(len, 0, max_len)` (path `name.len`), then `bytes(len)` of UTF-8 (path
    /// `name.utf8`). No terminator.
    ///
    /// # Errors
    /// Out_of_range for a length over `max_len` (written or read), invalid_utf8, past_end.
    fn string(&mut self, name: &str, s: &mut String, max_len: usize) -> Result<()> {
        self.scope(name, |st| {
            let mut len = s.len() as i64;
            st.int("len", &mut len, 0, max_len.min(i64::MAX as usize) as i64)?;
            let start = st.bit_position();
            // Move the string's buffer out and back: no copy on write, one buffer on read.
            let mut bytes = std::mem::take(s).into_bytes();
            let r = st.bytes_vec("utf8", &mut bytes, len as usize);
            match String::from_utf8(bytes) {
                Ok(text) => *s = text,
                Err(_) if r.is_ok() => {
                    let bit = start + (8 - start % 8) % 8;
                    return Err(Error::new(ErrorKind::InvalidUtf8, bit, "utf8"));
                }
                Err(_) => {}
            }
            r
        })?;
        if Self::READING {
            let text = s.clone();
            self.annotate(|| Value::Str(text));
        }
        Ok(())
    }

    /// A relative object index (seed 000, "Serializing Array Subsets"): the difference
    /// `d = current - previous >= 1` in tiers: a 1 flag for `d = 1`; else 0 then a 1 flag and
    /// `d` in `[2,5]` (2 bits); 0,0,1 and `[6,13]` (3 bits); 0,0,0,1 and `[14,29]` (4 bits);
    /// four 0s, 1 and `[30,61]` (5 bits); five 0s, 1 and `[62,125]` (6 bits); six 0s and
    /// `int(d, 126, max_objects + 1)`. `current == max_objects` is the end-of-list sentinel.
    ///
    /// # Errors
    /// Out_of_range when `current` is not in `previous + 1 ..= max_objects` (checked in every
    /// tier, unlike the reference sample code); buffer full / past_end.
    fn object_index(
        &mut self,
        name: &str,
        previous: i64,
        current: &mut i64,
        max_objects: i64,
    ) -> Result<()> {
        const TIERS: [(i64, i64); 5] = [(2, 5), (6, 13), (14, 29), (30, 61), (62, 125)];
        let start = self.bit_position();
        let out_of_range = |value: i64| {
            let kind = ErrorKind::OutOfRange {
                value: i128::from(value),
                min: i128::from(previous) + 1,
                max: i128::from(max_objects),
            };
            Error::new(kind, start, name)
        };
        let mut d = 0i64;
        if Self::WRITING {
            if *current <= previous || *current > max_objects {
                return Err(out_of_range(*current));
            }
            d = *current - previous;
        }
        self.scope(name, |s| {
            let mut one = d == 1;
            s.bool("d=1", &mut one)?;
            if one {
                d = 1;
                return Ok(());
            }
            for (lo, hi) in TIERS {
                let mut here = d <= hi;
                s.bool(tier_name(hi), &mut here)?;
                if here {
                    return s.int("d", &mut d, lo, hi);
                }
            }
            let top = max_objects.saturating_add(1);
            if top < 126 {
                // Only reachable when reading: no difference this large can be valid.
                return Err(out_of_range(previous.saturating_add(126)));
            }
            s.int("d", &mut d, 126, top)
        })?;
        if Self::READING {
            let c = previous.saturating_add(d);
            if c > max_objects {
                return Err(out_of_range(c));
            }
            *current = c;
        }
        let value = *current;
        self.annotate(|| Value::Int(i128::from(value)));
        Ok(())
    }

    /// The reference library's relative integer (`serialize_int_relative`): `d = current -
    /// previous >= 1` as a 1 flag for `d = 1`; else flags and `d` in `[2,6]`, `[7,23]`,
    /// `[24,280]`, `[281,4377]`, `[4378,69914]` ([`RELATIVE_TIERS`]; each tier's flag is 1,
    /// after as many 0 flags as tiers before it); after six 0 flags, `current` itself in 32
    /// bits. `current` must fit in a `u32`.
    ///
    /// # Errors
    /// Out_of_range when `current <= previous`, when `current` does not fit 32 bits, or when a
    /// reader finds an absolute value a smaller tier should have carried; buffer full / past_end.
    #[inline(always)]
    fn int_relative(&mut self, name: &str, previous: i64, current: &mut i64) -> Result<()> {
        int_relative_as_flags(self, name, previous, current)
    }

    /// A vector with a ranged count: `int(len, 0, max_len)` (path `name.len`), then each element
    /// (path `name[i]`). A reader checks `len × min_element_bits` against the bits that remain
    /// before the vector grows; pass the fewest bits one element can take. An element that can
    /// take no bits still counts one bit, so a few bytes can never claim a long loop.
    ///
    /// # Errors
    /// Out_of_range for a count over `max_len`, past_end, and whatever `f` returns.
    fn array<T: Default>(
        &mut self,
        name: &str,
        v: &mut Vec<T>,
        max_len: usize,
        min_element_bits: usize,
        f: impl FnMut(&mut Self, &mut T) -> Result<()>,
    ) -> Result<()> {
        array_impl(self, name, v, max_len, min_element_bits, f)
    }
}

/// A reader's check that `len` elements of at least `min_element_bits` bits each (one at the
/// least) fit in what remains, before anything is sized by `len`: a hostile length is a
/// `past_end` error at the length field, never an allocation.
///
/// # Errors
/// PastEnd naming `len`.
pub(crate) fn check_len_fits<S: Stream>(s: &S, len: usize, min_element_bits: usize) -> Result<()> {
    let needed = len.saturating_mul(min_element_bits.max(1));
    if needed > s.remaining_bits() {
        let kind = ErrorKind::PastEnd {
            needed,
            remaining: s.remaining_bits(),
        };
        return Err(Error::new(kind, s.bit_position(), "len"));
    }
    Ok(())
}

/// The body of [`Stream::array`].
#[inline(always)]
fn array_impl<S: Stream, T: Default>(
    s: &mut S,
    name: &str,
    v: &mut Vec<T>,
    max_len: usize,
    min_element_bits: usize,
    mut f: impl FnMut(&mut S, &mut T) -> Result<()>,
) -> Result<()> {
    s.scope(name, |s| {
        let mut len = v.len() as i64;
        s.int("len", &mut len, 0, max_len.min(i64::MAX as usize) as i64)?;
        if S::READING {
            let len = len as usize;
            check_len_fits(s, len, min_element_bits)?;
            v.clear();
            if min_element_bits > 0 {
                // Every element read in place: no capacity check, length update or copy per
                // element. On an error the vector keeps the elements read before it, as below.
                v.resize_with(len, T::default);
                for (i, item) in v.iter_mut().enumerate() {
                    if let Err(e) = s.index(i, |s| f(s, item)) {
                        v.truncate(i);
                        return Err(e);
                    }
                }
            } else {
                for i in 0..len {
                    let mut item = T::default();
                    s.index(i, |s| f(s, &mut item))?;
                    v.push(item);
                }
            }
        } else {
            for (i, item) in v.iter_mut().enumerate() {
                s.index(i, |s| f(s, item))?;
            }
        }
        Ok(())
    })
}

/// One tier of [`Stream::int_relative`]: its flag (1 when `d <= hi`), then, when set, `d` as
/// `int(d, lo, hi)`. Whether the flag was set.
#[inline(always)]
fn relative_tier<S: Stream>(s: &mut S, d: &mut i64, lo: i64, hi: i64) -> Result<bool> {
    let mut here = *d <= hi;
    s.bool(tier_name(hi), &mut here)?;
    if here {
        s.int("d", d, lo, hi)?;
    }
    Ok(here)
}

/// The bits of [`Stream::int_relative`] for the smallest differences, in one piece: `d = 1` is
/// the single flag 1; `d` in 2..=6 is the flags 0, 1 and `d - 2` in 3 bits (LSB first: 0b10 then
/// the value from bit 2). `None` for anything else (larger differences, and everything the writer
/// rejects), which goes flag by flag.
#[inline(always)]
fn relative_short(previous: i64, current: i64) -> Option<(u64, u32)> {
    if current > i64::from(u32::MAX) || current <= previous {
        return None;
    }
    // A branch, not selects: measured faster here (the reader is the other way round).
    match current.checked_sub(previous)? {
        1 => Some((1, 1)),
        d @ 2..=6 => Some((0b10 | ((d - 2) as u64) << 2, 5)),
        _ => None,
    }
}

/// [`Stream::int_relative`] flag by flag: the default (and so the trace stream's path), and the
/// encoder's and reader's path for all but the smallest differences (so every error is this
/// function's).
#[inline(always)]
fn int_relative_as_flags<S: Stream>(
    s: &mut S,
    name: &str,
    previous: i64,
    current: &mut i64,
) -> Result<()> {
    let start = s.bit_position();
    let out_of_range = |value: i64, min: i64| {
        let kind = ErrorKind::OutOfRange {
            value: i128::from(value),
            min: i128::from(min),
            max: i128::from(u32::MAX),
        };
        Error::new(kind, start, name)
    };
    let mut d = 0i64;
    if S::WRITING {
        if *current > i64::from(u32::MAX) {
            return Err(out_of_range(*current, 0));
        }
        if *current <= previous {
            return Err(out_of_range(*current, previous.saturating_add(1)));
        }
        d = *current - previous;
    }
    let mut absolute = None;
    s.scope(name, |t| {
        let mut one = d == 1;
        t.bool("d=1", &mut one)?;
        if one {
            d = 1;
            return Ok(());
        }
        // Tier by tier with constant bounds (a loop over them stays a loop, with a computed
        // width and mask for every value).
        let [t0, t1, t2, t3, t4] = RELATIVE_TIERS;
        if relative_tier(t, &mut d, t0.0, t0.1)?
            || relative_tier(t, &mut d, t1.0, t1.1)?
            || relative_tier(t, &mut d, t2.0, t2.1)?
            || relative_tier(t, &mut d, t3.0, t3.1)?
            || relative_tier(t, &mut d, t4.0, t4.1)?
        {
            return Ok(());
        }
        let mut v = *current as u64;
        t.bits("value", &mut v, 32)?;
        absolute = Some(v as i64);
        Ok(())
    })?;
    if S::READING {
        match absolute {
            Some(v) => {
                // Canonical: the writer uses the absolute form only past the last tier.
                let min = previous.saturating_add(RELATIVE_TIERS[4].1 + 1);
                if v < min {
                    return Err(out_of_range(v, min));
                }
                *current = v;
            }
            None => {
                // A tier past u32::MAX is a value no writer can send.
                let c = previous.saturating_add(d);
                if c > i64::from(u32::MAX) {
                    return Err(out_of_range(c, 0));
                }
                *current = c;
            }
        }
    }
    let value = *current;
    s.annotate(|| Value::Int(i128::from(value)));
    Ok(())
}

/// The tiers of [`Stream::int_relative`] after `d = 1`, in wire order: `(lo, hi)` of `d`, sent as
/// `int(d, lo, hi)` after the tier's flag. Past the last one, the value goes absolute.
pub const RELATIVE_TIERS: [(i64, i64); 5] =
    [(2, 6), (7, 23), (24, 280), (281, 4377), (4378, 69914)];

/// Flag names of the relative tiers, for traces: the tier's upper bound.
fn tier_name(hi: i64) -> &'static str {
    match hi {
        5 => "d<=5",
        6 => "d<=6",
        13 => "d<=13",
        23 => "d<=23",
        29 => "d<=29",
        61 => "d<=61",
        125 => "d<=125",
        280 => "d<=280",
        4377 => "d<=4377",
        _ => "d<=69914",
    }
}

/// [`Stream::compressed_f32`] built from [`Stream::int`]: the default, and the trace stream's
/// path (a wrapper stream sees the code as an `int`). [`Encoder`] and [`ReadStream`] send and
/// take the code directly, with the same bits and errors.
#[inline(always)]
fn compressed_f32_as_int<S: Stream>(
    s: &mut S,
    name: &str,
    v: &mut f32,
    spec: &CompressedFloat,
) -> Result<()> {
    let start = s.bit_position();
    let mut code = if S::WRITING {
        i64::from(spec.encode(*v))
    } else {
        0
    };
    s.int(name, &mut code, 0, i64::from(spec.steps()))?;
    if S::READING {
        if !spec.is_canonical(code as u32) {
            return Err(non_canonical_code(start, name));
        }
        *v = spec.decode(code as u32);
    }
    let value = *v;
    s.annotate(|| Value::F32(value));
    Ok(())
}

#[cold]
fn non_canonical_code(bit: usize, name: &str) -> Error {
    let why = "compressed float code that no writer sends (its value re-encodes to another code)";
    Error::new(ErrorKind::NonCanonical(why), bit, name)
}

#[cold]
fn overflow(e: Overflow, bit: usize, name: &str) -> Error {
    Error::new(
        ErrorKind::BufferFull {
            needed: e.needed,
            available: e.available,
        },
        bit,
        name,
    )
}

#[cold]
fn past_end(e: PastEnd, bit: usize, name: &str) -> Error {
    Error::new(
        ErrorKind::PastEnd {
            needed: e.needed,
            remaining: e.remaining,
        },
        bit,
        name,
    )
}

#[cold]
fn invalid(why: String, bit: usize, name: &str) -> Error {
    Error::new(ErrorKind::InvalidArgument(why), bit, name)
}

#[cold]
fn out_of_range(value: i128, min: i128, max: i128, bit: usize, name: &str) -> Error {
    Error::new(ErrorKind::OutOfRange { value, min, max }, bit, name)
}

#[inline(always)]
fn span(min: i64, max: i64) -> u64 {
    (max as u64).wrapping_sub(min as u64)
}

/// Runs `f` on `home` moved into a local variable (`placeholder` stands in meanwhile), then moves
/// it back.
///
/// The loop of an array then works on a stream whose address the rest of the program never sees,
/// so the compiler keeps the bit position, scratch word and buffer bounds in registers across
/// elements. Behind `&mut self` it cannot: any store the element closure makes (to the element,
/// to a captured `previous` id) or any call it cannot see into (a `LazyLock`'s first-use check)
/// might change them, so each field went back to memory after every value and was loaded again
/// before the next.
///
/// No drop guard: unwinding would need the local's address, which is what this avoids. If `f`
/// panics, `home` keeps the placeholder (a writer over no buffer, a reader of no data); a packet
/// whose serialize function panicked has no meaningful bytes anyway.
#[inline(always)]
fn on_local<S, R>(home: &mut S, placeholder: S, f: impl FnOnce(&mut S) -> R) -> R {
    let mut local = std::mem::replace(home, placeholder);
    let r = f(&mut local);
    *home = local;
    r
}

/// A writer over no buffer: the stand-in of [`on_local`] while an array writes on a local copy.
impl Default for BitWriter<'_> {
    fn default() -> Self {
        BitWriter::new(&mut [])
    }
}

// ------------------------------------------------------------------------------------------------
// Write side
// ------------------------------------------------------------------------------------------------

/// The write-side stream over any [`BitSink`]: [`WriteStream`] stores bits, [`MeasureStream`]
/// only counts them. Both check every value exactly the same way.
#[derive(Debug)]
pub struct Encoder<K: BitSink> {
    sink: K,
    crc: Option<ProtocolId>,
}

/// Writes a packet into a caller-owned buffer.
pub type WriteStream<'a> = Encoder<BitWriter<'a>>;

/// Counts the bits a write would produce, alignment included: measure == bits written.
pub type MeasureStream = Encoder<BitCounter>;

impl<'a> WriteStream<'a> {
    /// A write stream over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Encoder {
            sink: BitWriter::new(buf),
            crc: None,
        }
    }

    /// Bits written so far.
    pub fn bits_written(&self) -> usize {
        self.sink.position()
    }

    /// Flushes the last partial word, fills in the packet CRC if [`Stream::packet_crc`] was
    /// written, and returns the bytes used.
    pub fn finish(self) -> usize {
        let crc = self.crc;
        let bytes = self.sink.finish();
        if let Some(id) = crc
            && bytes.len() >= 4
        {
            let c = packet_crc(id, bytes);
            bytes[..4].copy_from_slice(&c.to_le_bytes());
        }
        bytes.len()
    }
}

impl MeasureStream {
    /// A measuring stream with no size limit.
    pub fn new() -> Self {
        Encoder {
            sink: BitCounter::new(),
            crc: None,
        }
    }

    /// A measuring stream that fails like a writer over a buffer of `limit_bits` would.
    pub fn with_limit(limit_bits: usize) -> Self {
        Encoder {
            sink: BitCounter::with_limit(limit_bits),
            crc: None,
        }
    }

    /// Bits counted so far.
    pub fn bits(&self) -> usize {
        self.sink.position()
    }
}

impl Default for MeasureStream {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: BitSink> Encoder<K> {
    #[inline(always)]
    fn put(&mut self, name: &str, value: u64, n: u32) -> Result<()> {
        let bit = self.sink.position();
        self.sink.put(value, n).map_err(|e| overflow(e, bit, name))
    }
}

impl<K: BitSink + Default> Stream for Encoder<K> {
    const READING: bool = false;

    /// As the default, on the stream moved into a local ([`on_local`]).
    #[inline]
    fn array<T: Default>(
        &mut self,
        name: &str,
        v: &mut Vec<T>,
        max_len: usize,
        min_element_bits: usize,
        f: impl FnMut(&mut Self, &mut T) -> Result<()>,
    ) -> Result<()> {
        let placeholder = Encoder {
            sink: K::default(),
            crc: None,
        };
        on_local(self, placeholder, |s| {
            array_impl(s, name, v, max_len, min_element_bits, f)
        })
    }

    #[inline]
    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> Result<()> {
        if n == 0 || n > 64 {
            return Err(invalid(
                format!("bit width {n} is outside 1..=64"),
                self.sink.position(),
                name,
            ));
        }
        if n < 64 && *v >> n != 0 {
            let max = (1i128 << n) - 1;
            return Err(out_of_range(
                i128::from(*v),
                0,
                max,
                self.sink.position(),
                name,
            ));
        }
        self.put(name, *v, n)
    }

    #[inline(always)]
    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()> {
        self.put(name, u64::from(*v), 1)
    }

    /// The code in `spec.width()` bits, as [`Stream::int`]`(code, 0, M)` sends it: the code
    /// never exceeds `M`, so there is no range to check.
    #[inline(always)]
    fn compressed_f32(&mut self, name: &str, v: &mut f32, spec: &CompressedFloat) -> Result<()> {
        self.put(name, u64::from(spec.encode(*v)), spec.width())
    }

    /// The smallest differences (1 to 6) in one access when they fit ([`relative_short`]); the
    /// rest, a full buffer and every error flag by flag, as the default.
    #[inline(always)]
    fn int_relative(&mut self, name: &str, previous: i64, current: &mut i64) -> Result<()> {
        if let Some((bits, n)) = relative_short(previous, *current)
            && n as usize <= self.sink.available()
        {
            return self.put(name, bits, n);
        }
        int_relative_as_flags(self, name, previous, current)
    }

    #[inline(always)]
    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()> {
        if min > max {
            return Err(invalid(
                format!("range {min}..={max} is empty"),
                self.sink.position(),
                name,
            ));
        }
        if *v < min || *v > max {
            let bit = self.sink.position();
            return Err(out_of_range(
                i128::from(*v),
                i128::from(min),
                i128::from(max),
                bit,
                name,
            ));
        }
        let width = bits_required(min, max);
        if width == 0 {
            return Ok(());
        }
        self.put(name, span(min, *v), width)
    }

    #[inline]
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        self.put(name, *v, 64)
    }

    #[inline]
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        self.put(name, u64::from(v.to_bits()), 32)
    }

    #[inline]
    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()> {
        self.put(name, v.to_bits(), 64)
    }

    #[inline]
    fn align(&mut self, name: &str) -> Result<()> {
        let pad = ((8 - self.sink.position() % 8) % 8) as u32;
        if pad == 0 {
            Ok(())
        } else {
            self.put(name, 0, pad)
        }
    }

    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()> {
        self.align(name)?;
        let bit = self.sink.position();
        self.sink.put_bytes(buf).map_err(|e| overflow(e, bit, name))
    }

    fn check(&mut self, label: &str) -> Result<()> {
        self.align(label)?;
        self.put(label, u64::from(check_hash(label)), 32)
    }

    fn end(&mut self) -> Result<()> {
        Ok(())
    }

    fn packet_crc(&mut self, protocol_id: ProtocolId) -> Result<()> {
        if self.sink.position() != 0 {
            return Err(invalid(
                "the CRC must be the first field".into(),
                self.sink.position(),
                "crc32",
            ));
        }
        self.crc = Some(protocol_id);
        self.put("crc32", 0, 32)
    }

    #[inline(always)]
    fn bit_position(&self) -> usize {
        self.sink.position()
    }

    #[inline(always)]
    fn remaining_bits(&self) -> usize {
        self.sink.available()
    }
}

// ------------------------------------------------------------------------------------------------
// Read side
// ------------------------------------------------------------------------------------------------

/// What a field is, in a [`Trace`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
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
        label: CompactString,
        /// The 32 bits the reader expected.
        expected: u32,
        /// The 32 bits found.
        found: u32,
    },
}

/// One recorded field of a [`Trace`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceField {
    /// Full path, outermost first: `objects[17].position.x`. Inline up to 24 bytes: a trace
    /// records a path per field, and most fit without an allocation.
    pub path: CompactString,
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
    #[serde(flatten)]
    pub kind: FieldKind,
    /// The read stopped at this field: its value is what was found, not an accepted value.
    pub failed: bool,
}

impl TraceField {
    /// True for a check marker whose found bits differ from the expected ones.
    pub fn check_failed(&self) -> bool {
        matches!(&self.kind, FieldKind::Check { expected, found, .. } if expected != found)
    }
}

/// Everything a [`TraceStream`] saw: the fields in stream order, and how the read ended.
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
}

/// What a [`Decoder`] does with what it reads: nothing ([`NoTrace`]) or record it ([`Recorder`]).
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
    /// A scope (`Some(name)`) or array element (`index`) begins.
    fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize);
    /// The innermost scope ends at `bit`.
    fn exit(&mut self, bit: usize);
    /// Replaces the display value of the entry that ended last.
    fn annotate(&mut self, value: Value);
}

/// The tracer of [`ReadStream`]: records nothing and costs nothing.
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
    fn enter(&mut self, _: Option<&str>, _: Option<usize>, _: usize) {}
    #[inline(always)]
    fn exit(&mut self, _: usize) {}
    #[inline(always)]
    fn annotate(&mut self, _: Value) {}
}

/// The tracer of [`TraceStream`]: builds the [`Trace`].
#[derive(Debug, Default, Clone)]
pub struct Recorder {
    fields: Vec<TraceField>,
    /// Open scopes: index into `fields` and the length of `path` before the scope.
    open: Vec<(usize, usize)>,
    path: String,
    last_ended: Option<usize>,
    /// Depth of the top-level entries (a batch message's fields sit under its scope).
    depth_base: usize,
}

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

    fn child_path(&mut self, name: &str) -> CompactString {
        // Extend the current path in place and copy it once (inline, no allocation, up to 24
        // bytes): traces build a path for every field.
        if name.is_empty() {
            return CompactString::from(self.path.as_str());
        }
        let before = self.path.len();
        if before > 0 {
            self.path.push('.');
        }
        self.path.push_str(name);
        let path = CompactString::from(self.path.as_str());
        self.path.truncate(before);
        path
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
        let path = self.child_path(name);
        self.fields.push(TraceField {
            path,
            depth: self.depth_base + self.open.len(),
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

    fn enter(&mut self, name: Option<&str>, index: Option<usize>, bit: usize) {
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
        let path = CompactString::from(self.path.as_str());
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

/// The read-side stream over a [`Tracer`]: [`ReadStream`] and [`TraceStream`] are one
/// implementation, so a trace always reaches the read's verdict.
#[derive(Debug, Clone)]
pub struct Decoder<'a, T: Tracer> {
    r: BitReader<'a>,
    tracer: T,
}

/// Reads a packet from a byte slice with every value range-checked.
pub type ReadStream<'a> = Decoder<'a, NoTrace>;

/// Reads like [`ReadStream`] and records every field into a [`Trace`].
pub type TraceStream<'a> = Decoder<'a, Recorder>;

impl<'a> ReadStream<'a> {
    /// A read stream over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Decoder {
            r: BitReader::new(data),
            tracer: NoTrace,
        }
    }
}

thread_local! {
    /// Field storage given back by [`Trace::recycle`], for this thread's next trace.
    static SPARE_FIELDS: std::cell::Cell<Vec<TraceField>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Trace {
    /// Gives the trace's field storage back for the next [`TraceStream`] on this thread, so that
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

impl<'a> TraceStream<'a> {
    /// A trace stream over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        let mut fields = SPARE_FIELDS.with(std::cell::Cell::take);
        fields.reserve(64);
        Decoder {
            r: BitReader::new(data),
            tracer: Recorder {
                fields,
                path: String::with_capacity(64),
                ..Recorder::default()
            },
        }
    }

    /// The trace, closed with the result the serialize function returned.
    pub fn into_trace(mut self, result: Result<()>) -> Trace {
        let end = self.r.bits_read();
        while !self.tracer.open.is_empty() {
            self.tracer.exit(end);
        }
        Trace {
            fields: self.tracer.fields,
            error: result.err(),
            bits_read: end,
            total_bits: self.r.data().len() * 8,
        }
    }
}

impl<T: Tracer> Decoder<'_, T> {
    /// Bits consumed so far.
    pub fn bits_read(&self) -> usize {
        self.r.bits_read()
    }

    #[inline(always)]
    fn take(&mut self, name: &str, n: u32) -> Result<u64> {
        let bit = self.r.bits_read();
        self.r.read_wide(n).map_err(|e| past_end(e, bit, name))
    }

    #[inline(always)]
    fn record(
        &mut self,
        name: &str,
        bit: usize,
        value: impl FnOnce() -> Value,
        range: Option<(i128, i128)>,
    ) {
        if T::ACTIVE {
            let bits = self.r.bits_read() - bit;
            self.tracer
                .field(name, bit, bits, value(), range, FieldKind::Value, false);
        }
    }

    /// Aligns, insisting on zero padding; records the padding when tracing.
    #[inline]
    fn read_padding(&mut self, name: &str) -> Result<()> {
        let bit = self.r.bits_read();
        let pad = self.r.align().map_err(|e| past_end(e, bit, name))?;
        let width = self.r.bits_read() - bit;
        if T::ACTIVE && width > 0 {
            self.tracer.field(
                name,
                bit,
                width,
                Value::Int(i128::from(pad)),
                None,
                FieldKind::Padding,
                pad != 0,
            );
        }
        if pad != 0 {
            return Err(Error::new(
                ErrorKind::NonzeroPadding { padding: pad },
                bit,
                name,
            ));
        }
        Ok(())
    }

    /// The read side of [`Stream::check`] with the label's hash already computed.
    fn check_hashed(&mut self, label: &str, expected: u32) -> Result<()> {
        self.read_padding(label)?;
        let bit = self.r.bits_read();
        let found = self.take(label, 32)? as u32;
        if T::ACTIVE {
            let kind = FieldKind::Check {
                label: label.into(),
                expected,
                found,
            };
            let value = Value::Int(i128::from(found));
            self.tracer
                .field(label, bit, 32, value, None, kind, found != expected);
        }
        if found != expected {
            let kind = ErrorKind::CheckMismatch {
                label: label.to_owned(),
                expected,
                found,
            };
            return Err(Error::new(kind, bit, label));
        }
        Ok(())
    }
}

impl<T: Tracer + Default> Stream for Decoder<'_, T> {
    const READING: bool = true;

    /// As the default, on the stream moved into a local ([`on_local`]).
    #[inline]
    fn array<E: Default>(
        &mut self,
        name: &str,
        v: &mut Vec<E>,
        max_len: usize,
        min_element_bits: usize,
        f: impl FnMut(&mut Self, &mut E) -> Result<()>,
    ) -> Result<()> {
        let placeholder = Decoder {
            r: BitReader::new(&[]),
            tracer: T::default(),
        };
        on_local(self, placeholder, |s| {
            array_impl(s, name, v, max_len, min_element_bits, f)
        })
    }

    #[inline]
    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> Result<()> {
        let bit = self.r.bits_read();
        if n == 0 || n > 64 {
            return Err(invalid(
                format!("bit width {n} is outside 1..=64"),
                bit,
                name,
            ));
        }
        *v = self.take(name, n)?;
        let value = *v;
        let max = (1i128 << n) - 1;
        self.record(name, bit, || Value::Int(i128::from(value)), Some((0, max)));
        Ok(())
    }

    #[inline(always)]
    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()> {
        let bit = self.r.bits_read();
        *v = self.take(name, 1)? != 0;
        let value = *v;
        self.record(name, bit, || Value::Bool(value), None);
        Ok(())
    }

    /// Without a trace, the smallest differences in one read: the next 5 bits on a copy of the
    /// reader, then the 1 or 5 bits they take consumed. Anything else (a larger tier, an
    /// out-of-range value, a result past `u32::MAX`, fewer than 5 bits left) reads flag by flag
    /// from the start, as the default, for its value or its error.
    #[inline(always)]
    fn int_relative(&mut self, name: &str, previous: i64, current: &mut i64) -> Result<()> {
        if !T::ACTIVE {
            // The next 5 bits: 1 (d = 1), or 0, 1 and d - 2 in 3 bits. Which one by selects, not a
            // branch (it follows the data); the check after it is almost always true.
            let mut ahead = self.r.clone();
            if let Ok(x) = ahead.read_bits(5) {
                let one = x & 1 == 1;
                let d = if one { 1 } else { 2 + i64::from(x >> 2) };
                let c = previous.saturating_add(d);
                if (one || (x & 0b10 != 0 && d <= 6))
                    && c <= i64::from(u32::MAX)
                    && self.r.read_bits(if one { 1 } else { 5 }).is_ok()
                {
                    *current = c;
                    return Ok(());
                }
            }
        }
        int_relative_as_flags(self, name, previous, current)
    }

    /// Without a trace: the code in `spec.width()` (1..=32) bits, rejected above `M` with the
    /// error [`Stream::int`] gives, then the canonical check. With one: through `int`.
    #[inline(always)]
    fn compressed_f32(&mut self, name: &str, v: &mut f32, spec: &CompressedFloat) -> Result<()> {
        if T::ACTIVE {
            return compressed_f32_as_int(self, name, v, spec);
        }
        let bit = self.r.bits_read();
        let code = self
            .r
            .read_bits(spec.width())
            .map_err(|e| past_end(e, bit, name))?;
        if code < spec.exact_limit() {
            *v = spec.decode_exact(code);
            return Ok(());
        }
        if code > spec.steps() {
            let max = i128::from(spec.steps());
            return Err(out_of_range(i128::from(code), 0, max, bit, name));
        }
        if !spec.is_canonical(code) {
            return Err(non_canonical_code(bit, name));
        }
        *v = spec.decode(code);
        Ok(())
    }

    #[inline(always)]
    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()> {
        let bit = self.r.bits_read();
        if min > max {
            return Err(invalid(format!("range {min}..={max} is empty"), bit, name));
        }
        let width = bits_required(min, max);
        let raw = if width == 0 {
            0
        } else {
            self.take(name, width)?
        };
        let range = (i128::from(min), i128::from(max));
        if raw > span(min, max) {
            let value = i128::from(min) + i128::from(raw);
            if T::ACTIVE {
                let kind = FieldKind::Value;
                self.tracer.field(
                    name,
                    bit,
                    width as usize,
                    Value::Int(value),
                    Some(range),
                    kind,
                    true,
                );
            }
            return Err(out_of_range(value, range.0, range.1, bit, name));
        }
        *v = min.wrapping_add(raw as i64);
        let value = *v;
        self.record(name, bit, || Value::Int(i128::from(value)), Some(range));
        Ok(())
    }

    #[inline]
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        let bit = self.r.bits_read();
        *v = self.take(name, 64)?;
        let value = *v;
        self.record(name, bit, || Value::Int(i128::from(value)), None);
        Ok(())
    }

    #[inline]
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        let bit = self.r.bits_read();
        *v = f32::from_bits(self.take(name, 32)? as u32);
        let value = *v;
        self.record(name, bit, || Value::F32(value), None);
        Ok(())
    }

    #[inline]
    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()> {
        let bit = self.r.bits_read();
        *v = f64::from_bits(self.take(name, 64)?);
        let value = *v;
        self.record(name, bit, || Value::F64(value), None);
        Ok(())
    }

    #[inline]
    fn align(&mut self, name: &str) -> Result<()> {
        self.read_padding(name)
    }

    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()> {
        self.read_padding(name)?;
        let bit = self.r.bits_read();
        self.r.read_bytes(buf).map_err(|e| past_end(e, bit, name))?;
        self.record(name, bit, || Value::Bytes(buf.to_vec()), None);
        Ok(())
    }

    #[inline(always)]
    fn check(&mut self, label: &str) -> Result<()> {
        // Inlined so that the hash of a literal label folds to a constant.
        self.check_hashed(label, check_hash(label))
    }

    fn end(&mut self) -> Result<()> {
        let bit = self.r.bits_read();
        let pad = self.r.align().map_err(|e| past_end(e, bit, "end"))?;
        if pad != 0 {
            return Err(Error::new(ErrorKind::TrailingData { bytes: 0 }, bit, "end"));
        }
        let left = self.r.bits_remaining() / 8;
        if left > 0 {
            let bit = self.r.bits_read();
            return Err(Error::new(
                ErrorKind::TrailingData { bytes: left },
                bit,
                "end",
            ));
        }
        Ok(())
    }

    fn packet_crc(&mut self, protocol_id: ProtocolId) -> Result<()> {
        let bit = self.r.bits_read();
        if bit != 0 {
            return Err(invalid(
                "the CRC must be the first field".into(),
                bit,
                "crc32",
            ));
        }
        let found = self.take("crc32", 32)? as u32;
        let expected = packet_crc(protocol_id, self.r.data());
        if T::ACTIVE {
            let kind = FieldKind::Check {
                label: "crc32".into(),
                expected,
                found,
            };
            let value = Value::Int(i128::from(found));
            self.tracer
                .field("crc32", 0, 32, value, None, kind, found != expected);
        }
        if found != expected {
            return Err(Error::new(
                ErrorKind::CrcMismatch { expected, found },
                0,
                "crc32",
            ));
        }
        Ok(())
    }

    #[inline(always)]
    fn scope<R>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        if T::ACTIVE {
            self.tracer.enter(Some(name), None, self.r.bits_read());
            let r = f(self);
            self.tracer.exit(self.r.bits_read());
            r.map_err(|e| e.within(name))
        } else {
            f(self).map_err(|e| e.within(name))
        }
    }

    #[inline(always)]
    fn index<R>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        if T::ACTIVE {
            self.tracer.enter(None, Some(i), self.r.bits_read());
            let r = f(self);
            self.tracer.exit(self.r.bits_read());
            r.map_err(|e| e.at_index(i))
        } else {
            f(self).map_err(|e| e.at_index(i))
        }
    }

    #[inline(always)]
    fn bit_position(&self) -> usize {
        self.r.bits_read()
    }

    #[inline(always)]
    fn remaining_bits(&self) -> usize {
        self.r.bits_remaining()
    }

    #[inline(always)]
    fn annotate(&mut self, value: impl FnOnce() -> Value) {
        if T::ACTIVE {
            self.tracer.annotate(value());
        }
    }
}
