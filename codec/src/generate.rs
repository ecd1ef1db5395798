//! Arbitrary values of any serializable type, drawn through its own serialize function (feature
//! `arbitrary`): [`Generator`] is a read stream whose every primitive draws a value within its
//! declared range from an [`Unstructured`], so a derived (or hand-written) type gets values that
//! respect every attribute without an `Arbitrary` impl of its own.
//!
//! Compressed floats and quaternions are drawn as codes and decoded (values a writer sends as
//! they are), strings as valid UTF-8 within their length and without a NUL (writers refuse
//! one), relative indices and integers within their tiers and the standard's `i32` domain,
//! arrays within their counts and within a bit budget (the MTU of a packet), so
//! fuzz harnesses spend their input on values, not on refusals.
//!
//! ```
//! use arbitrary::Unstructured;
//! use bitlens_codec::{BitPacked, generate};
//!
//! #[derive(BitPacked, Debug, Default)]
//! struct Player {
//!     #[bitlens(range = 0..=100)]
//!     health: i32,
//!     #[bitlens(max_len = 8)]
//!     name: String,
//! }
//!
//! let mut u = Unstructured::new(&[200, 7, 3, b'a', b'b', b'c']);
//! let p: Player = generate::value(&mut u, 1200 * 8)?;
//! assert!((0..=100).contains(&p.health) && p.name.len() <= 8);
//! # Ok::<(), bitlens_codec::Error>(())
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::packed::BitPacked;
use crate::packet::{Packet, ProtocolId, serialize_packet};
use crate::quantize::{CompressedFloat, SmallestThree};
use crate::stream::{RELATIVE_TIERS, Stream};
use arbitrary::Unstructured;

/// A read stream that draws every value from an [`Unstructured`] (see the module doc).
pub struct Generator<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    bits: usize,
    budget: usize,
}

impl<'u, 'a> Generator<'u, 'a> {
    /// A generator drawing from `u`, with `budget` bits for the counts of arrays to fit in.
    pub fn new(u: &'u mut Unstructured<'a>, budget: usize) -> Self {
        Generator { u, bits: 0, budget }
    }

    fn take(&mut self, n: usize) {
        self.bits = self.bits.saturating_add(n);
    }
}

/// A drawn value, or the draw's error at `bit` of field `name`.
fn draw<T>(bit: usize, name: &str, r: arbitrary::Result<T>) -> Result<T> {
    r.map_err(|e| {
        let why = format!("no arbitrary value: {e}");
        Error::new(ErrorKind::InvalidArgument(why), bit, name)
    })
}

/// An arbitrary value of `T`, drawn through its serialize function with `budget` bits for its
/// arrays.
///
/// # Errors
/// What the type's serialize function refuses of the values drawn (rare: a quaternion that does
/// not rebuild, an index with no room left).
pub fn value<T: BitPacked + Default>(u: &mut Unstructured<'_>, budget: usize) -> Result<T> {
    let mut v = T::default();
    v.serialize(&mut Generator::new(u, budget))?;
    Ok(v)
}

/// An arbitrary packet of `P`: its type and body, drawn through its framing (the budget is the
/// protocol's MTU, less the framing).
///
/// A ready `Arbitrary` impl for a packet set, within every attribute, for the fuzz harnesses of
/// [`fuzzing`](crate::fuzzing) (`bitlens fuzz-init` writes the targets):
///
/// ```
/// use bitlens_codec::{BitPacked, PacketSet, generate};
///
/// #[derive(BitPacked, Debug, Clone, Default, PartialEq)]
/// struct Hello {
///     #[bitlens(max_len = 16)]
///     name: String,
/// }
///
/// #[derive(PacketSet, Debug, Clone, Default, PartialEq)]
/// #[bitlens(protocol = "mygame", id = 0x4d59_4741, mtu = 1200)]
/// enum Packet {
///     #[default]
///     Ping,
///     Hello(Hello),
/// }
///
/// impl<'a> arbitrary::Arbitrary<'a> for Packet {
///     fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
///         generate::packet(u).map_err(|_| arbitrary::Error::IncorrectFormat)
///     }
/// }
///
/// // A cargo-fuzz target's body: every drawn packet writes and reads back the same.
/// bitlens_codec::fuzzing::packet_roundtrip::<Packet>(&[0x00, 0x00, 0x00, 0xf7]);
/// bitlens_codec::fuzzing::packet_roundtrip::<Packet>(b"any bytes at all");
/// ```
///
/// # Errors
/// As [`value`].
pub fn packet<P: Packet + Default>(u: &mut Unstructured<'_>) -> Result<P> {
    let mut p = P::default();
    let budget = P::protocol().mtu.saturating_mul(8);
    serialize_packet(&mut Generator::new(u, budget), &mut p)?;
    Ok(p)
}

impl Stream for Generator<'_, '_> {
    const READING: bool = true;

    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> Result<()> {
        let x: u64 = draw(self.bits, name, self.u.arbitrary())?;
        *v = if n >= 64 { x } else { x & ((1u64 << n) - 1) };
        self.take(n as usize);
        Ok(())
    }

    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()> {
        *v = draw(self.bits, name, self.u.arbitrary())?;
        self.take(1);
        Ok(())
    }

    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> Result<()> {
        if min > max {
            let why = format!("range {min}..={max} is empty");
            return Err(Error::new(ErrorKind::InvalidArgument(why), self.bits, name));
        }
        *v = draw(self.bits, name, self.u.int_in_range(min..=max))?;
        self.take(crate::bits::bits_required(min, max) as usize);
        Ok(())
    }

    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        *v = draw(self.bits, name, self.u.arbitrary())?;
        self.take(64);
        Ok(())
    }

    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        *v = f32::from_bits(draw(self.bits, name, self.u.arbitrary())?);
        self.take(32);
        Ok(())
    }

    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()> {
        *v = f64::from_bits(draw(self.bits, name, self.u.arbitrary())?);
        self.take(64);
        Ok(())
    }

    fn align(&mut self, _: &str) -> Result<()> {
        self.bits = self.bits.div_ceil(8) * 8;
        Ok(())
    }

    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()> {
        self.align(name)?;
        let r = self.u.fill_buffer(buf);
        draw(self.bits, name, r)?;
        self.take(buf.len() * 8);
        Ok(())
    }

    fn check(&mut self, label: &str) -> Result<()> {
        self.align(label)?;
        self.take(32);
        Ok(())
    }

    fn end(&mut self) -> Result<()> {
        Ok(())
    }

    fn packet_crc(&mut self, _: ProtocolId) -> Result<()> {
        self.take(32);
        Ok(())
    }

    fn bit_position(&self) -> usize {
        self.bits
    }

    fn remaining_bits(&self) -> usize {
        self.budget.saturating_sub(self.bits)
    }

    fn compressed_f32(&mut self, name: &str, v: &mut f32, spec: &CompressedFloat) -> Result<()> {
        let code = draw(self.bits, name, self.u.int_in_range(0..=spec.steps()))?;
        *v = spec.decode(code);
        self.take(spec.width() as usize);
        Ok(())
    }

    fn quaternion(&mut self, name: &str, q: &mut [f32; 4], spec: &SmallestThree) -> Result<()> {
        let max = spec.max_code();
        let largest = draw(self.bits, name, self.u.int_in_range(0..=3))?;
        let mut codes = [0u32; 3];
        for c in &mut codes {
            // Components in the middle half keep the rebuilt largest the largest.
            *c = draw(
                self.bits,
                name,
                self.u.int_in_range(max / 4..=max - max / 4),
            )?;
        }
        *q = spec.decode(largest, codes).unwrap_or([0.0, 0.0, 0.0, 1.0]);
        self.take(spec.width() as usize);
        Ok(())
    }

    fn string(&mut self, name: &str, s: &mut String, max_len: usize) -> Result<()> {
        let mut text: String = draw(self.bits, name, self.u.arbitrary())?;
        // Writers refuse a NUL inside the length (readers would give the payload two lengths).
        text.retain(|c| c != '\0');
        while text.len() > max_len {
            text.pop();
        }
        self.take(crate::packed::count_bits(max_len) + 8 * text.len());
        *s = text;
        Ok(())
    }

    fn wstring(&mut self, name: &str, s: &mut String, max_len: usize) -> Result<()> {
        let mut text: String = draw(self.bits, name, self.u.arbitrary())?;
        text.retain(|c| c != '\0');
        while text.encode_utf16().count() > max_len {
            text.pop();
        }
        self.take(crate::packed::count_bits(max_len) + 32 * text.encode_utf16().count());
        *s = text;
        Ok(())
    }

    fn object_index(
        &mut self,
        name: &str,
        previous: i64,
        current: &mut i64,
        max_objects: i64,
    ) -> Result<()> {
        let first = previous.saturating_add(1);
        if first > max_objects {
            let why = format!("no object index after {previous} below {max_objects}");
            return Err(Error::new(ErrorKind::InvalidArgument(why), self.bits, name));
        }
        // Half the time the end of the list, else a step of any tier; the end once the input or
        // the bit budget is spent. (A spent input draws `false`: the list ran on to
        // `max_objects`, 4096 rigid bodies for the demo's scene update, far past its MTU.)
        let end: bool = self.u.is_empty()
            || self.remaining_bits() == 0
            || draw(self.bits, name, self.u.arbitrary())?;
        *current = if end {
            max_objects
        } else {
            let step = draw(self.bits, name, self.u.int_in_range(0..=300i64))?;
            first.saturating_add(step).min(max_objects)
        };
        self.take(1);
        Ok(())
    }

    fn int_relative(&mut self, name: &str, previous: i64, current: &mut i64) -> Result<()> {
        // The stream's domain: `i32::MIN <= previous < current <= i32::MAX`.
        let top = i64::from(i32::MAX);
        if previous >= top || previous < i64::from(i32::MIN) {
            let why =
                format!("no relative integer after {previous} within a 32-bit signed integer");
            return Err(Error::new(ErrorKind::InvalidArgument(why), self.bits, name));
        }
        let tier = draw(
            self.bits,
            name,
            self.u.int_in_range(0..=RELATIVE_TIERS.len()),
        )?;
        let hi = RELATIVE_TIERS.get(tier).map_or(top, |t| t.1);
        let d = draw(self.bits, name, self.u.int_in_range(1..=hi))?;
        *current = previous.saturating_add(d).min(top);
        self.take(1);
        Ok(())
    }

    fn int128(&mut self, name: &str, v: &mut i128, min: i128, max: i128) -> Result<()> {
        if min > max {
            let why = format!("range {min}..={max} is empty");
            return Err(Error::new(ErrorKind::InvalidArgument(why), self.bits, name));
        }
        *v = draw(self.bits, name, self.u.int_in_range(min..=max))?;
        self.take(crate::bits::bits_required128(min, max) as usize);
        Ok(())
    }

    fn u128(&mut self, name: &str, v: &mut u128) -> Result<()> {
        *v = draw(self.bits, name, self.u.arbitrary())?;
        self.take(128);
        Ok(())
    }
}
