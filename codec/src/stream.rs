//! The [`Stream`] trait and its four streams: one `serialize` function per message drives them all.
//!
//! - [`WriteStream`](crate::WriteStream): packs into a caller-owned buffer; out-of-range values are errors.
//! - [`ReadStream`](crate::ReadStream): unpacks from a slice; every value is range-checked, every length bounded by
//!   what remains before anything is allocated, and the first violation aborts the read.
//! - [`MeasureStream`](crate::MeasureStream): serialize 1.0's measure, a bound sufficient at any
//!   starting bit (7 bits per aligning operation), which refuses nothing.
//! - [`CountStream`](crate::CountStream): counts the exact bits a write from bit 0 takes, and
//!   refuses what a write refuses.
//! - [`TraceStream`](crate::TraceStream): reads like [`ReadStream`](crate::ReadStream) and records every field (path, bit offset, width,
//!   value, allowed range) and every check marker into a [`Trace`](crate::Trace).
//!
//! The write side is one implementation ([`Encoder`](crate::write::Encoder)) over a [`BitSink`](crate::bits::BitSink); the read side is one
//! implementation ([`Decoder`](crate::read::Decoder)) over a [`Tracer`](crate::trace::Tracer), so read and trace cannot disagree.
//!
//! Names cost reads nothing: a failing primitive names its own field, and each enclosing
//! [`Stream::scope`] and [`Stream::index`] prefixes its part of the path while the error unwinds.
//!
//! This module holds the trait, its typed conveniences and the helpers both directions share;
//! [`crate::write`] and [`crate::read`] implement it, [`crate::trace`] records what a read saw.

use crate::bits::{Overflow, PastEnd};
use crate::checksum::ProtocolId;
use crate::error::{Error, ErrorKind, Result};
use crate::fixed::{Fixed, FixedPoint, FixedStorage};
use crate::quantize::{CompressedFloat, SmallestThree};
use crate::trace::Value;

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

    /// A serialization check marker: aligns, then 32 bits of [`check_hash`](crate::check_hash)`(label)`.
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
    /// bits that [`WriteStream::finish`](crate::WriteStream::finish) fills in; readers verify the CRC over the whole data
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

    /// [`Stream::annotate`] with a text: the trace stream copies it (no `String` built).
    #[inline(always)]
    fn annotate_str(&mut self, value: &str) {
        self.annotate(|| Value::Str(value.to_owned()));
    }

    /// [`Stream::annotate`] with floats: the trace stream copies them (no `Vec` built).
    #[inline(always)]
    fn annotate_floats(&mut self, value: &[f32]) {
        self.annotate(|| Value::Floats(value.to_vec()));
    }

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

    /// A compressed float (serialize 1.0): its code as `int(code, 0, M)` (see
    /// [`CompressedFloat`] for the arithmetic). Writers clamp `v` into range, as the standard
    /// does; readers accept every code up to `M`.
    ///
    /// # Errors
    /// Out_of_range when a reader finds a code above `M`; buffer full / past_end.
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
        self.annotate_floats(&value);
        Ok(())
    }

    /// A rotation `[x, y, z, w]` as smallest three ([`SmallestThree`], seed 000): `largest` in
    /// 2 bits, then the other three components as `int(code, 0, 2^bits - 1)` each, in index
    /// order. A reader accepts every encoding, near ties included.
    ///
    /// # Errors
    /// Buffer full / past_end.
    fn quaternion(&mut self, name: &str, q: &mut [f32; 4], spec: &SmallestThree) -> Result<()> {
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
            // Every index and code was range-checked above, so the decode always gives a value.
            if let Some(value) = spec.decode(largest, codes) {
                *q = value;
            }
        }
        let value = *q;
        self.annotate_floats(&value);
        Ok(())
    }

    /// `len` raw bytes into a vector: on read the vector is sized only after `len` has been
    /// checked against the bits that remain. On write `v.len()` must equal `len`.
    ///
    /// # Errors
    /// Past_end (before any allocation), invalid_argument, as [`Stream::bytes`].
    fn bytes_vec(&mut self, name: &str, v: &mut Vec<u8>, len: usize) -> Result<()> {
        if Self::READING {
            // At the bytes' first bit, after the padding (which always fits: data is whole
            // bytes): what they need and what remains from there.
            let pad = (8 - self.bit_position() % 8) % 8;
            let needed = len.saturating_mul(8);
            let remaining = self.remaining_bits().saturating_sub(pad);
            if needed > remaining {
                let kind = ErrorKind::PastEnd { needed, remaining };
                return Err(Error::new(kind, self.bit_position() + pad, name));
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

    /// A string: serialize 1.0's `string` with `buffer_size = max_len + 1`. `int(len, 0,
    /// max_len)` (path `name.len`), then `bytes(len)` of UTF-8 (path `name.utf8`): aligned, no
    /// terminator. Up to `max_len = 2^31 - 2` this is the standard's operation (its length is a
    /// 32-bit `int`); a larger `max_len` is bitlens's extension, the length sent as
    /// [`Stream::int`] over the wider bounds.
    ///
    /// A reader refuses the standard's two malformed payloads: bytes that are not UTF-8, and a
    /// NUL byte among them (it would give the payload two lengths). A writer refuses a NUL too.
    ///
    /// # Errors
    /// Out_of_range for a length over `max_len` (written or read), invalid_utf8, interior_nul
    /// (at the NUL's bit on read), past_end / buffer full.
    fn string(&mut self, name: &str, s: &mut String, max_len: usize) -> Result<()> {
        self.scope(name, |st| {
            if Self::WRITING && s.as_bytes().contains(&0) {
                return Err(Error::new(
                    ErrorKind::InteriorNul,
                    st.bit_position(),
                    "utf8",
                ));
            }
            let mut len = s.len() as i64;
            st.int("len", &mut len, 0, max_len.min(i64::MAX as usize) as i64)?;
            let start = st.bit_position();
            let bit = start + (8 - start % 8) % 8;
            // Move the string's buffer out and back: no copy on write, one buffer on read.
            let mut bytes = std::mem::take(s).into_bytes();
            let r = st.bytes_vec("utf8", &mut bytes, len as usize);
            let nul = if Self::READING && r.is_ok() {
                bytes.iter().position(|&b| b == 0)
            } else {
                None
            };
            match String::from_utf8(bytes) {
                Ok(text) => *s = text,
                Err(_) if r.is_ok() => {
                    return Err(Error::new(ErrorKind::InvalidUtf8, bit, "utf8"));
                }
                Err(_) => {}
            }
            if let Some(i) = nul {
                return Err(Error::new(ErrorKind::InteriorNul, bit + 8 * i, "utf8"));
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
        let start = self.bit_position();
        // `field` is the index's name outside its scope, and empty inside it (the scope adds
        // the name on the way out).
        let out_of_range = |value: i64, field: &str| {
            let kind = ErrorKind::OutOfRange {
                value: i128::from(value),
                min: i128::from(previous) + 1,
                max: i128::from(max_objects),
            };
            Error::new(kind, start, field)
        };
        let mut d = 0i64;
        if Self::WRITING {
            if *current <= previous || *current > max_objects {
                return Err(out_of_range(*current, name));
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
            for (lo, hi) in OBJECT_INDEX_TIERS {
                let mut here = d <= hi;
                s.bool(tier_name(hi), &mut here)?;
                if here {
                    return s.int("d", &mut d, lo, hi);
                }
            }
            let top = max_objects.saturating_add(1);
            if top < 126 {
                // Only reachable when reading: no difference this large can be valid.
                return Err(out_of_range(previous.saturating_add(126), ""));
            }
            s.int("d", &mut d, 126, top)
        })?;
        if Self::READING {
            let c = previous.saturating_add(d);
            if c > max_objects {
                return Err(out_of_range(c, name));
            }
            *current = c;
        }
        let value = *current;
        self.annotate(|| Value::Int(i128::from(value)));
        Ok(())
    }

    /// serialize 1.0's relative integer (`serialize_int_relative`): a strictly increasing
    /// 32-bit signed sequence, `i32::MIN <= previous < current <= i32::MAX`, with no wrapping.
    /// `d = current - previous` as a 1 flag for `d = 1`; else flags and `d` in `[2,6]`,
    /// `[7,23]`, `[24,280]`, `[281,4377]`, `[4378,69914]` ([`RELATIVE_TIERS`]; each tier's flag
    /// is 1, after as many 0 flags as tiers before it); after six 0 flags, `current` itself as
    /// 32 raw bits (two's complement).
    ///
    /// A reader refuses exactly what the standard refuses: a tier's `previous + d` past
    /// `i32::MAX`, and an absolute `current` that is not greater than `previous` (any greater
    /// one is accepted, also one a smaller tier could have carried).
    ///
    /// # Errors
    /// Out_of_range (the range `previous + 1 ..= i32::MAX`) when a writer is given, or a reader
    /// finds, a `current` outside it; invalid_argument when `previous` is not an `i32`; buffer
    /// full / past_end.
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

    // ---- serialize 1.0's remaining operations (STANDARD.md), built from the primitives ----

    /// serialize 1.0's `int64`, which is [`Stream::int`] (its bounds are `i64`): `v - min` in
    /// `bits_required(min, max)` bits, up to 32 bits as one group, wider as the low 32 bits then
    /// the other `bits - 32` (the same bits as one LSB-first group of that width); no bits when
    /// `min == max`.
    ///
    /// # Errors
    /// As [`Stream::int`].
    #[inline(always)]
    fn int64(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()> {
        self.int(name, v, min, max)
    }

    /// serialize 1.0's `int128`: `v - min`, computed in the unsigned 128-bit domain, in
    /// [`bits_required128`](crate::bits_required128)`(min, max)` bits (0 when `min == max`),
    /// as 32-bit groups from the least significant up, the last carrying the remainder. LSB-first
    /// that is the offset's low `bits` bits in one run, so where the span fits 64 bits the bytes
    /// are those of [`Stream::int`] over the same bounds.
    ///
    /// # Errors
    /// Out_of_range when `v` (written) or the offset read is outside the range (reject, never
    /// clamp); invalid_argument when `min > max`; buffer full / past_end.
    #[inline]
    fn int128(&mut self, name: &str, v: &mut i128, min: i128, max: i128) -> Result<()> {
        int128_as_bits(self, name, v, min, max)
    }

    /// serialize 1.0's `uint8`: [`Stream::bits`] of 8.
    ///
    /// # Errors
    /// Buffer full / past_end.
    #[inline(always)]
    fn u8(&mut self, name: &str, v: &mut u8) -> Result<()> {
        let mut x = u64::from(*v);
        self.bits(name, &mut x, 8)?;
        if Self::READING {
            *v = x as u8;
        }
        Ok(())
    }

    /// serialize 1.0's `uint16`: [`Stream::bits`] of 16.
    ///
    /// # Errors
    /// Buffer full / past_end.
    #[inline(always)]
    fn u16(&mut self, name: &str, v: &mut u16) -> Result<()> {
        let mut x = u64::from(*v);
        self.bits(name, &mut x, 16)?;
        if Self::READING {
            *v = x as u16;
        }
        Ok(())
    }

    /// serialize 1.0's `uint32`: [`Stream::bits`] of 32.
    ///
    /// # Errors
    /// Buffer full / past_end.
    #[inline(always)]
    fn u32(&mut self, name: &str, v: &mut u32) -> Result<()> {
        let mut x = u64::from(*v);
        self.bits(name, &mut x, 32)?;
        if Self::READING {
            *v = x as u32;
        }
        Ok(())
    }

    /// serialize 1.0's `uint128`: always 128 bits, the low 64-bit half first, each half as
    /// [`Stream::u64`] (four 32-bit groups from the least significant up); from an aligned
    /// start, the 16 little-endian bytes of `v`. Not ranged (see [`Stream::int128`]).
    ///
    /// # Errors
    /// Buffer full / past_end.
    #[inline]
    fn u128(&mut self, name: &str, v: &mut u128) -> Result<()> {
        need_bits(self, name, 128)?;
        let mut lo = *v as u64;
        let mut hi = (*v >> 64) as u64;
        self.bits(name, &mut lo, 64)?;
        self.bits(name, &mut hi, 64)?;
        if Self::READING {
            *v = u128::from(hi) << 64 | u128::from(lo);
        }
        Ok(())
    }

    /// serialize 1.0's `fixed` (Q format, ranged): the raw value `raw` (the real value times
    /// `2^fraction_bits`) as [`Stream::int128`] over the raw bounds `min << fraction_bits ..=
    /// max << fraction_bits` (see [`FixedPoint`]): up to 64 bits these are the bytes of
    /// [`Stream::int`]; a degenerate range (`min == max`) takes no bits on every storage width.
    /// The trace shows the exact decimal value over the raw integer.
    ///
    /// # Errors
    /// Out_of_range when `raw` (written) or the offset read is outside the raw bounds; buffer
    /// full / past_end.
    #[inline]
    fn fixed(&mut self, name: &str, raw: &mut i128, spec: &FixedPoint) -> Result<()> {
        self.int128(name, raw, spec.raw_min(), spec.raw_max())?;
        let value = Fixed::new(*raw, spec.fraction_bits());
        self.annotate(|| Value::Fixed(value));
        Ok(())
    }

    /// [`Stream::fixed`] for a value held in its storage type (`i16` for Q8.8, `i128` for
    /// Q112.16, `u32` for an unsigned Q16.16).
    ///
    /// # Errors
    /// Invalid_argument when `T` is not the spec's storage (width and signedness); as
    /// [`Stream::fixed`].
    #[inline]
    fn fixed_as<T: FixedStorage>(
        &mut self,
        name: &str,
        v: &mut T,
        spec: &FixedPoint,
    ) -> Result<()> {
        if T::BITS != spec.storage_bits() || T::SIGNED != spec.signed() {
            let why = format!(
                "a {}-bit {} value for Q{}.{} in {}-bit {} storage",
                T::BITS,
                if T::SIGNED { "signed" } else { "unsigned" },
                spec.integer_bits(),
                spec.fraction_bits(),
                spec.storage_bits(),
                if spec.signed() { "signed" } else { "unsigned" },
            );
            return Err(invalid(why, self.bit_position(), name));
        }
        let mut raw = v.to_raw();
        self.fixed(name, &mut raw, spec)?;
        if Self::READING {
            *v = T::from_raw(raw);
        }
        Ok(())
    }

    /// serialize 1.0's `wstring`: `int(len, 0, max_len)` (path `name.len`) with `len` in UTF-16
    /// code units, then each code unit in a 32-bit group (path `name.utf16[i]`). No alignment
    /// anywhere. `max_len` is the C `buffer_size - 1`. Astral characters travel as surrogate
    /// pairs (two groups).
    ///
    /// A reader refuses, in this order per group: a group above `0xFFFF` (out_of_range: not a
    /// code unit), a zero group (interior_nul), a low surrogate without a high one before it and
    /// a high surrogate without a low one after it, also as the last group (invalid_utf16).
    ///
    /// # Errors
    /// As above on read; out_of_range for more than `max_len` code units and interior_nul for a
    /// `'\0'` character on write (readers refuse it); past_end before anything is allocated for
    /// a length the remaining bits cannot hold; buffer full.
    fn wstring(&mut self, name: &str, s: &mut String, max_len: usize) -> Result<()> {
        wstring_impl(self, name, s, max_len, |st, group| st.bits("", group, 32))
    }
}

/// A reader's check that `len` elements of at least `min_element_bits` bits each (one at the
/// least) fit in what remains, before anything is sized by `len`: a hostile length is a
/// `past_end` error at the length field (`len_bit`, its first bit), never an allocation.
///
/// # Errors
/// PastEnd naming `len`: the bits the elements need and the bits that remain after the length.
pub fn check_len_fits<S: Stream>(
    s: &S,
    len: usize,
    min_element_bits: usize,
    len_bit: usize,
) -> Result<()> {
    let needed = len.saturating_mul(min_element_bits.max(1));
    if needed > s.remaining_bits() {
        let kind = ErrorKind::PastEnd {
            needed,
            remaining: s.remaining_bits(),
        };
        return Err(Error::new(kind, len_bit, "len"));
    }
    Ok(())
}

/// The body of [`Stream::array`].
#[inline(always)]
pub(crate) fn array_impl<S: Stream, T: Default>(
    s: &mut S,
    name: &str,
    v: &mut Vec<T>,
    max_len: usize,
    min_element_bits: usize,
    mut f: impl FnMut(&mut S, &mut T) -> Result<()>,
) -> Result<()> {
    s.scope(name, |s| {
        let mut len = v.len() as i64;
        let len_bit = s.bit_position();
        s.int("len", &mut len, 0, max_len.min(i64::MAX as usize) as i64)?;
        if S::READING {
            let len = len as usize;
            check_len_fits(s, len, min_element_bits, len_bit)?;
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
pub(crate) fn relative_short(previous: i64, current: i64) -> Option<(u64, u32)> {
    // One range check stands for both ends of the i32 domain: with d in 1..=6, a `current` in
    // `i32::MIN + 6 ..= i32::MAX` puts `previous` in it too (the few values below go flag by flag).
    if !(SHORT_CURRENT_MIN..=i64::from(i32::MAX)).contains(&current) {
        return None;
    }
    // A branch, not selects: measured faster here (the reader is the other way round).
    match current.wrapping_sub(previous) {
        1 => Some((1, 1)),
        d @ 2..=6 => Some((0b10 | ((d - 2) as u64) << 2, 5)),
        _ => None,
    }
}

/// The error for an [`Stream::int_relative`] `previous` outside the `i32` domain (the caller's
/// bug), built out of line.
#[cold]
#[inline(never)]
fn previous_not_i32(previous: i64, bit: usize, name: &str) -> Error {
    let why = format!("previous {previous} is not a 32-bit signed integer");
    invalid(why, bit, name)
}

/// The smallest `current` the one-access paths of [`Stream::int_relative`] take: with a
/// difference of at most 6, `previous` is then an `i32` too.
pub(crate) const SHORT_CURRENT_MIN: i64 = i32::MIN as i64 + 6;

/// [`Stream::int_relative`] flag by flag: the default (and so the trace stream's path), and the
/// encoder's and reader's path for all but the smallest differences (so every error is this
/// function's).
#[inline(always)]
pub(crate) fn int_relative_as_flags<S: Stream>(
    s: &mut S,
    name: &str,
    previous: i64,
    current: &mut i64,
) -> Result<()> {
    let start = s.bit_position();
    let out_of_range = |value: i64| {
        let kind = ErrorKind::OutOfRange {
            value: i128::from(value),
            min: i128::from(previous) + 1,
            max: i128::from(i32::MAX),
        };
        Error::new(kind, start, name)
    };
    if i32::try_from(previous).is_err() {
        return Err(previous_not_i32(previous, start, name));
    }
    let mut d = 0i64;
    if S::WRITING {
        if *current <= previous || *current > i64::from(i32::MAX) {
            return Err(out_of_range(*current));
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
        // Two's complement: `current` is an i32 here (checked above on write).
        let mut v = u64::from(*current as u32);
        t.bits("value", &mut v, 32)?;
        absolute = Some(i64::from(v as u32 as i32));
        Ok(())
    })?;
    if S::READING {
        // No wrapping (serialize 1.0): a tier past i32::MAX, or an absolute value that does not
        // increase, is refused.
        let c = absolute.unwrap_or(previous + d);
        if c <= previous || c > i64::from(i32::MAX) {
            return Err(out_of_range(c));
        }
        *current = c;
    }
    let value = *current;
    s.annotate(|| Value::Int(i128::from(value)));
    Ok(())
}

/// The tiers of [`Stream::object_index`] after `d = 1`, in wire order: `(lo, hi)` of `d`, sent
/// as `int(d, lo, hi)` after the tier's flag. Past the last one, `int(d, 126, max_objects + 1)`.
pub const OBJECT_INDEX_TIERS: [(i64, i64); 5] = [(2, 5), (6, 13), (14, 29), (30, 61), (62, 125)];

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
pub(crate) fn compressed_f32_as_int<S: Stream>(
    s: &mut S,
    name: &str,
    v: &mut f32,
    spec: &CompressedFloat,
) -> Result<()> {
    let mut code = if S::WRITING {
        i64::from(spec.encode(*v))
    } else {
        0
    };
    s.int(name, &mut code, 0, i64::from(spec.steps()))?;
    if S::READING {
        *v = spec.decode(code as u32);
    }
    let value = *v;
    s.annotate(|| Value::F32(value));
    Ok(())
}

#[cold]
pub(crate) fn overflow(e: Overflow, bit: usize, name: &str) -> Error {
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
pub(crate) fn past_end(e: PastEnd, bit: usize, name: &str) -> Error {
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
pub(crate) fn invalid(why: String, bit: usize, name: &str) -> Error {
    Error::new(ErrorKind::InvalidArgument(why), bit, name)
}

#[cold]
pub(crate) fn out_of_range(value: i128, min: i128, max: i128, bit: usize, name: &str) -> Error {
    Error::new(ErrorKind::OutOfRange { value, min, max }, bit, name)
}

#[inline(always)]
pub(crate) fn span(min: i64, max: i64) -> u64 {
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
pub(crate) fn on_local<S, R>(home: &mut S, placeholder: S, f: impl FnOnce(&mut S) -> R) -> R {
    let mut local = std::mem::replace(home, placeholder);
    let r = f(&mut local);
    *home = local;
    r
}

/// The span of a 128-bit range in the unsigned domain, and its width in bits.
#[inline(always)]
pub(crate) fn span128(min: i128, max: i128) -> (u128, u32) {
    let span = (max as u128).wrapping_sub(min as u128);
    (span, 128 - span.leading_zeros())
}

/// The error of a 128-bit ranged read whose offset exceeds the span: out_of_range with the value
/// `min + offset`, or (where that passes `i128::MAX`) with the offset itself.
#[cold]
pub(crate) fn offset_out_of_range(
    min: i128,
    max: i128,
    offset: u128,
    bit: usize,
    name: &str,
) -> Error {
    let kind = match min.checked_add_unsigned(offset) {
        Some(value) => ErrorKind::OutOfRange { value, min, max },
        None => ErrorKind::OffsetOutOfRange { min, max, offset },
    };
    Error::new(kind, bit, name)
}

/// The checks of [`Stream::int128`] before anything moves: the range, and a written value.
#[inline(always)]
pub(crate) fn int128_args<S: Stream>(
    s: &S,
    name: &str,
    v: i128,
    min: i128,
    max: i128,
) -> Result<()> {
    if min > max {
        return Err(invalid(
            format!("range {min}..={max} is empty"),
            s.bit_position(),
            name,
        ));
    }
    if S::WRITING && (v < min || v > max) {
        return Err(out_of_range(v, min, max, s.bit_position(), name));
    }
    Ok(())
}

/// [`Stream::int128`] from [`Stream::bits`]: the default, for streams other than the encoder and
/// decoder (which send and take the offset in one piece and trace it as one field).
pub(crate) fn int128_as_bits<S: Stream>(
    s: &mut S,
    name: &str,
    v: &mut i128,
    min: i128,
    max: i128,
) -> Result<()> {
    int128_args(s, name, *v, min, max)?;
    let (span, width) = span128(min, max);
    if width == 0 {
        if S::READING {
            *v = min;
        }
        return Ok(());
    }
    let bit = s.bit_position();
    need_bits(s, name, width)?;
    let offset = if S::WRITING {
        (*v as u128).wrapping_sub(min as u128)
    } else {
        0
    };
    let mut lo = offset as u64;
    let mut hi = (offset >> 64) as u64;
    if width <= 64 {
        s.bits(name, &mut lo, width)?;
        hi = 0;
    } else {
        s.bits(name, &mut lo, 64)?;
        s.bits(name, &mut hi, width - 64)?;
    }
    if S::READING {
        let offset = u128::from(hi) << 64 | u128::from(lo);
        if offset > span {
            return Err(offset_out_of_range(min, max, offset, bit, name));
        }
        *v = (min as u128).wrapping_add(offset) as i128;
    }
    Ok(())
}

/// A field of `n` bits fits what remains (to read, or free to write): checked once for a field
/// sent in pieces, so that its error names the field's first bit and its whole width.
///
/// # Errors
/// Past_end (reading) or buffer_full (writing).
pub(crate) fn need_bits<S: Stream>(s: &S, name: &str, n: u32) -> Result<()> {
    let (needed, left) = (n as usize, s.remaining_bits());
    if needed <= left {
        return Ok(());
    }
    let kind = if S::READING {
        ErrorKind::PastEnd {
            needed,
            remaining: left,
        }
    } else {
        ErrorKind::BufferFull {
            needed,
            available: left,
        }
    };
    Err(Error::new(kind, s.bit_position(), name))
}

/// The body of [`Stream::wstring`]; `group` sends or takes one code unit's 32-bit group (named
/// `""`, under its `[i]`), so that a reader can trace it with the range it accepts.
pub(crate) fn wstring_impl<S: Stream>(
    s: &mut S,
    name: &str,
    text: &mut String,
    max_len: usize,
    mut group: impl FnMut(&mut S, &mut u64) -> Result<()>,
) -> Result<()> {
    let start = s.bit_position();
    let units: Vec<u16> = if S::WRITING {
        text.encode_utf16().collect()
    } else {
        Vec::new()
    };
    if let Some(i) = units.iter().position(|&u| u == 0) {
        let e = Error::new(ErrorKind::InteriorNul, start, "").at_index(i);
        return Err(e.within("utf16").within(name));
    }
    s.scope(name, |st| {
        let mut len = units.len() as i64;
        let len_bit = st.bit_position();
        st.int("len", &mut len, 0, max_len.min(i64::MAX as usize) as i64)?;
        let len = len as usize;
        if S::READING {
            check_len_fits(st, len, 32, len_bit)?;
        }
        let mut out = String::new();
        st.scope("utf16", |st| {
            // A high surrogate waiting for its low one: the unit and where it was.
            let mut high: Option<(u32, usize, usize)> = None;
            for i in 0..len {
                let bit = st.bit_position();
                let mut g = units.get(i).map_or(0, |&u| u64::from(u));
                st.index(i, |st| group(st, &mut g))?;
                if S::WRITING {
                    continue;
                }
                if g > 0xFFFF {
                    let kind = ErrorKind::OutOfRange {
                        value: i128::from(g),
                        min: 0,
                        max: 0xFFFF,
                    };
                    return refuse_at(kind, bit, i);
                }
                let unit = g as u32;
                if unit == 0 {
                    return refuse_at(ErrorKind::InteriorNul, bit, i);
                }
                let is_low = (0xDC00..=0xDFFF).contains(&unit);
                match (high.take(), is_low) {
                    (Some((h, _, _)), true) => {
                        let c = 0x10000 + ((h - 0xD800) << 10) + (unit - 0xDC00);
                        out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                        continue;
                    }
                    (Some((_, hbit, hi)), false) => {
                        let why = "a high surrogate not followed by a low one";
                        return refuse_at(ErrorKind::InvalidUtf16 { why }, hbit, hi);
                    }
                    (None, true) => {
                        let why = "a low surrogate not preceded by a high one";
                        return refuse_at(ErrorKind::InvalidUtf16 { why }, bit, i);
                    }
                    (None, false) => {}
                }
                if (0xD800..=0xDBFF).contains(&unit) {
                    high = Some((unit, bit, i));
                } else {
                    out.push(char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
            }
            if let Some((_, hbit, hi)) = high {
                let why = "a high surrogate as the last code unit";
                return refuse_at(ErrorKind::InvalidUtf16 { why }, hbit, hi);
            }
            Ok(())
        })?;
        if S::READING {
            *text = out;
        }
        Ok(())
    })?;
    if S::READING {
        let value = text.clone();
        s.annotate(|| Value::Str(value));
    }
    Ok(())
}

#[cold]
fn refuse_at(kind: ErrorKind, bit: usize, i: usize) -> Result<()> {
    Err(Error::new(kind, bit, "").at_index(i))
}
