//! The measure stream of serialize 1.0 ("The Measure Stream"): a bound on the bits a message
//! takes, sufficient at any starting bit position, which never refuses.
//!
//! Every operation costs its exact width, except the ones that align: `align`, `bytes`,
//! `string` and bitlens's check markers each charge the worst case, 7 bits of padding, as the
//! standard says a measure must (alignment depends on where the message is later written, which
//! a measure does not know). So for any starting position `k`, the bits a write produces are at
//! most the measure, and at least the measure minus 7 per aligning operation.
//!
//! A measure sits on the trusted side: it checks nothing and refuses nothing at run time (the
//! standard's rule). A value outside its range costs the width of its field; a relative
//! integer or object index that a writer would refuse costs its longest encoding; a wide string
//! costs its UTF-16 code units, a NUL or too many of them included.
//!
//! For the exact bits of a write from an aligned start (what an MTU check needs), use
//! [`CountStream`](crate::CountStream): it counts exactly what a [`WriteStream`](crate::WriteStream)
//! writes from bit 0, and refuses what it refuses.

use crate::bits::{bits_required, bits_required128};
use crate::checksum::ProtocolId;
use crate::error::Result;
use crate::fixed::{FixedPoint, FixedStorage};
use crate::quantize::{CompressedFloat, SmallestThree};
use crate::stream::{OBJECT_INDEX_TIERS, RELATIVE_TIERS, Stream};

/// Bits a measure charges for the padding of one aligning operation.
pub const ALIGN_BOUND: usize = 7;

/// The measure stream: counts a bound on the bits of a message (see the module documentation).
///
/// ```
/// use bitlens_codec::{MeasureStream, Stream};
/// // The standard's worked example: { bits(8); align; bits(8) } measures 23 bits, enough at
/// // every starting position (written from bit 1, the align pads 7 bits).
/// fn message<S: Stream>(s: &mut S) -> bitlens_codec::Result<()> {
///     s.bits("a", &mut 0xAB, 8)?;
///     s.align("pad")?;
///     s.bits("b", &mut 0xCD, 8)
/// }
/// let mut m = MeasureStream::new();
/// message(&mut m)?;
/// assert_eq!(m.bits(), 23);
/// # Ok::<(), bitlens_codec::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct MeasureStream {
    bits: u64,
}

/// Where a measure stops counting exactly: `2^63` bits (1 EiB), more than any buffer holds. A
/// measure at or past it only says "larger than any buffer", which is all an MTU or capacity
/// test needs.
pub const MEASURE_LIMIT: u64 = 1 << 63;

/// The largest charge added with a plain (wrapping) add; larger ones saturate at
/// [`MEASURE_LIMIT`].
const SMALL_CHARGE: u64 = 1 << 8;

impl MeasureStream {
    /// A measure of nothing yet.
    pub fn new() -> Self {
        MeasureStream { bits: 0 }
    }

    /// The bound so far, in bits: exact below [`MEASURE_LIMIT`], at least that past it (and
    /// `usize::MAX` where `usize` cannot hold it). (The [`Stream::bits`] primitive of a measure
    /// is called as `Stream::bits(&mut m, ...)` on a `MeasureStream` itself, or through a
    /// generic function.)
    #[inline(always)]
    pub fn bits(&self) -> usize {
        usize::try_from(self.bits).unwrap_or(usize::MAX)
    }

    /// Adds a charge of at most [`SMALL_CHARGE`] bits (every fixed-width operation: a value of
    /// up to 128 bits, a ladder, a check marker) with a plain add, which LLVM folds into one
    /// add per message when the widths are constants.
    ///
    /// Why no saturation is needed here: the counter is a `u64`, at most [`MEASURE_LIMIT`]
    /// plus what was added since by charges of at most 2^8 bits, so wrapping it needs 2^55 of
    /// these operations in one measure: at the nanosecond an operation costs at least, over a
    /// year of measuring one message. No message a program can hold gets there: a message
    /// whose measure passes 2^63 bits through large charges (`bytes` of a slice, a string) is
    /// clamped by [`charge_len`](Self::charge_len), not by this add.
    #[inline(always)]
    fn charge(&mut self, bits: u64) -> Result<()> {
        debug_assert!(bits <= SMALL_CHARGE);
        self.bits = self.bits.wrapping_add(bits);
        Ok(())
    }

    /// Adds a charge that depends on a length (bytes, strings): exactly when it is small (a
    /// constant length of up to 31 bytes folds like [`charge`](Self::charge)), else saturating
    /// at [`MEASURE_LIMIT`].
    ///
    /// Saturation is needed here, unlike for the fixed-width operations: a measure cannot hold
    /// 2^64 bits of distinct memory, but it can charge the same slice many times, and a
    /// message that writes one 1 GiB buffer 2^31 times would wrap a plain `u64` sum after a few
    /// seconds of measuring, to a small number that would pass an MTU test it fails.
    #[inline(always)]
    fn charge_len(&mut self, bits: u64) -> Result<()> {
        if bits <= SMALL_CHARGE {
            return self.charge(bits);
        }
        self.bits = self.bits.saturating_add(bits).min(MEASURE_LIMIT);
        Ok(())
    }
}

/// `8 * len + extra` bits, saturating (a length in bytes is at most `isize::MAX`).
#[inline(always)]
fn len_bits(len: usize, per: u64, extra: u64) -> u64 {
    (len as u64).saturating_mul(per).saturating_add(extra)
}

/// The bits of a ladder of tiers: a 1 flag for `d = 1`; else a 0 flag, then per tier a flag,
/// and the tier's `int(d, lo, hi)` in the first one that holds `d`; past the last one, six 0
/// flags and `last` bits.
fn ladder_bits(d: i64, tiers: &[(i64, i64); 5], last: u32) -> u64 {
    if d == 1 {
        return 1;
    }
    let mut bits = 1;
    for &(lo, hi) in tiers {
        bits += 1;
        if d <= hi {
            return bits + u64::from(bits_required(lo, hi));
        }
    }
    bits + u64::from(last)
}

impl Stream for MeasureStream {
    const READING: bool = false;

    #[inline]
    fn bits(&mut self, _: &str, _: &mut u64, n: u32) -> Result<()> {
        self.charge(u64::from(n.min(64)))
    }

    #[inline]
    fn bool(&mut self, _: &str, _: &mut bool) -> Result<()> {
        self.charge(1)
    }

    #[inline]
    fn int(&mut self, _: &str, _: &mut i64, min: i64, max: i64) -> Result<()> {
        self.charge(u64::from(bits_required(min.min(max), max.max(min))))
    }

    #[inline]
    fn u64(&mut self, _: &str, _: &mut u64) -> Result<()> {
        self.charge(64)
    }

    #[inline]
    fn f32(&mut self, _: &str, _: &mut f32) -> Result<()> {
        self.charge(32)
    }

    #[inline]
    fn f64(&mut self, _: &str, _: &mut f64) -> Result<()> {
        self.charge(64)
    }

    #[inline]
    fn align(&mut self, _: &str) -> Result<()> {
        self.charge(ALIGN_BOUND as u64)
    }

    #[inline]
    fn bytes(&mut self, _: &str, buf: &mut [u8]) -> Result<()> {
        self.charge_len(len_bits(buf.len(), 8, ALIGN_BOUND as u64))
    }

    #[inline]
    fn check(&mut self, _: &str) -> Result<()> {
        self.charge(ALIGN_BOUND as u64 + 32)
    }

    #[inline]
    fn end(&mut self) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn packet_crc(&mut self, _: ProtocolId) -> Result<()> {
        self.charge(32)
    }

    #[inline]
    fn compressed_f32(&mut self, _: &str, _: &mut f32, spec: &CompressedFloat) -> Result<()> {
        self.charge(u64::from(spec.width()))
    }

    #[inline]
    fn quaternion(&mut self, _: &str, _: &mut [f32; 4], spec: &SmallestThree) -> Result<()> {
        self.charge(u64::from(spec.width()))
    }

    #[inline]
    fn bytes_vec(&mut self, _: &str, v: &mut Vec<u8>, len: usize) -> Result<()> {
        self.charge_len(len_bits(len.max(v.len()), 8, ALIGN_BOUND as u64))
    }

    #[inline]
    fn string(&mut self, _: &str, s: &mut String, max_len: usize) -> Result<()> {
        let len = u64::from(bits_required(0, max_len.min(i64::MAX as usize) as i64));
        self.charge_len(len_bits(s.len(), 8, len + ALIGN_BOUND as u64))
    }

    fn object_index(
        &mut self,
        _: &str,
        previous: i64,
        current: &mut i64,
        max_objects: i64,
    ) -> Result<()> {
        let top = max_objects.saturating_add(1).max(126);
        let last = bits_required(126, top);
        let d = if *current > previous && *current <= max_objects {
            current.saturating_sub(previous)
        } else {
            i64::MAX
        };
        self.charge(ladder_bits(d, &OBJECT_INDEX_TIERS, last))
    }

    fn int_relative(&mut self, _: &str, previous: i64, current: &mut i64) -> Result<()> {
        let d = if *current > previous && *current <= i64::from(i32::MAX) {
            current.saturating_sub(previous)
        } else {
            i64::MAX
        };
        self.charge(ladder_bits(d, &RELATIVE_TIERS, 32))
    }

    #[inline]
    fn int128(&mut self, _: &str, _: &mut i128, min: i128, max: i128) -> Result<()> {
        self.charge(u64::from(bits_required128(min.min(max), max.max(min))))
    }

    #[inline]
    fn fixed(&mut self, _: &str, _: &mut i128, spec: &FixedPoint) -> Result<()> {
        let (min, max) = (spec.raw_min(), spec.raw_max());
        self.charge(u64::from(bits_required128(min.min(max), max.max(min))))
    }

    /// As [`Stream::fixed`]; a value in a storage type the spec does not name is the caller's
    /// bug, which a measure does not refuse either.
    #[inline]
    fn fixed_as<T: FixedStorage>(
        &mut self,
        name: &str,
        _: &mut T,
        spec: &FixedPoint,
    ) -> Result<()> {
        self.fixed(name, &mut 0, spec)
    }

    #[inline]
    fn wstring(&mut self, _: &str, s: &mut String, max_len: usize) -> Result<()> {
        let len = u64::from(bits_required(0, max_len.min(i64::MAX as usize) as i64));
        let units = s.encode_utf16().count();
        self.charge_len(len_bits(units, 32, len))
    }

    #[inline(always)]
    fn bit_position(&self) -> usize {
        self.bits()
    }

    #[inline(always)]
    fn remaining_bits(&self) -> usize {
        usize::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{CountStream, WriteStream};

    /// The standard's worked example: the bound is 23 bits, the exact count from bit 0 is 16,
    /// and written from bit 1 the message takes 23.
    #[test]
    fn the_standards_worked_example() {
        fn message<S: Stream>(s: &mut S) -> Result<()> {
            s.bits("a", &mut 0xAB, 8)?;
            s.align("pad")?;
            s.bits("b", &mut 0xCD, 8)
        }
        let mut m = MeasureStream::new();
        message(&mut m).unwrap();
        assert_eq!(m.bits(), 23);
        let mut c = CountStream::new();
        message(&mut c).unwrap();
        assert_eq!(c.bits(), 16);
        let mut buf = [0u8; 8];
        let mut w = WriteStream::new(&mut buf);
        w.bool("offset", &mut false).unwrap();
        message(&mut w).unwrap();
        assert_eq!(w.bits_written() - 1, 23);
    }

    /// What a writer refuses, a measure charges: the field's width, or a ladder's longest form.
    #[test]
    fn a_measure_refuses_nothing() {
        let mut m = MeasureStream::new();
        m.int("x", &mut 1000, 0, 100).unwrap();
        assert_eq!(m.bits(), 7);
        m.int_relative("r", 10, &mut 5).unwrap();
        assert_eq!(m.bits(), 7 + 38);
        m.object_index("o", 10, &mut 5000, 4095).unwrap();
        assert_eq!(m.bits(), 7 + 38 + 6 + 12);
        let mut all = u64::MAX;
        Stream::bits(&mut m, "b", &mut all, 3).unwrap();
        m.string("s", &mut "a\0b".to_owned(), 1).unwrap();
        m.bytes_vec("v", &mut vec![1, 2], 5).unwrap();
        m.packet_crc(ProtocolId::U32(1)).unwrap();
        assert_eq!(m.bits(), 7 + 38 + 18 + 3 + (1 + 7 + 24) + (7 + 40) + 32);
    }

    /// serialize 1.0's newer operations measure as written, and refuse nothing either: an
    /// `int128` out of range, a wide string with a NUL or too long, a fixed value in the wrong
    /// storage.
    #[test]
    fn wide_operations_measure_what_is_written_and_refuse_nothing() {
        use crate::fixed::FixedPoint;
        let q = FixedPoint::new(112, 16, true, -(1 << 57), 1 << 57).unwrap();
        let mut buf = [0u8; 64];
        let mut w = WriteStream::new(&mut buf);
        w.int128("i", &mut -5, -1 << 100, 1 << 100).unwrap();
        w.fixed("q", &mut 12345, &q).unwrap();
        w.wstring("s", &mut "a😀".to_owned(), 7).unwrap();
        w.u128("u", &mut 7).unwrap();
        let written = w.bits_written();
        let mut m = MeasureStream::new();
        m.int128("i", &mut -5, -1 << 100, 1 << 100).unwrap();
        m.fixed("q", &mut 12345, &q).unwrap();
        m.wstring("s", &mut "a😀".to_owned(), 7).unwrap();
        m.u128("u", &mut 7).unwrap();
        assert_eq!(m.bits(), written, "no aligning operation: exact");
        let mut m = MeasureStream::new();
        m.int128("i", &mut 300, 0, 255).unwrap();
        m.wstring("s", &mut "a\0bcdefghij".to_owned(), 3).unwrap();
        m.fixed_as("q", &mut 3i32, &q).unwrap();
        assert_eq!(m.bits(), 8 + (2 + 11 * 32) + 75);
    }

    /// Lengths past any buffer saturate at the limit instead of wrapping, however often they
    /// are charged, and the small charges after them do not bring the bound back down.
    #[test]
    fn large_charges_saturate_at_the_limit() {
        let mut m = MeasureStream::new();
        let mut v = Vec::new();
        for _ in 0..20 {
            m.bytes_vec("huge", &mut v, 1 << 61).unwrap();
        }
        assert_eq!(m.bits, MEASURE_LIMIT);
        m.u64("x", &mut 0).unwrap();
        assert_eq!(m.bits, MEASURE_LIMIT + 64);
        m.bytes_vec("max", &mut v, usize::MAX).unwrap();
        assert_eq!(m.bits, MEASURE_LIMIT);
        assert_eq!(
            m.bits(),
            usize::try_from(MEASURE_LIMIT).unwrap_or(usize::MAX)
        );
        // Below the limit a length is charged exactly, small or large.
        let mut m = MeasureStream::new();
        m.bytes("b", &mut [0; 31]).unwrap();
        m.bytes_vec("v", &mut v, 1000).unwrap();
        assert_eq!(m.bits(), (7 + 248) + (7 + 8000));
    }

    /// The ladders cost what the writer writes, tier by tier.
    #[test]
    fn ladders_cost_what_is_written() {
        for previous in [-1i64, 0, 1000, -70_000] {
            for d in [
                1i64,
                2,
                6,
                7,
                23,
                24,
                280,
                281,
                4377,
                4378,
                69914,
                69915,
                1 << 20,
            ] {
                let mut current = previous + d;
                let mut buf = [0u8; 16];
                let mut w = WriteStream::new(&mut buf);
                w.int_relative("r", previous, &mut current).unwrap();
                let mut m = MeasureStream::new();
                m.int_relative("r", previous, &mut current).unwrap();
                assert_eq!(m.bits(), w.bits_written(), "d = {d}");
                let max_objects = 4096;
                if previous + d <= max_objects && previous >= -1 {
                    let mut w = WriteStream::new(&mut buf);
                    w.object_index("o", previous, &mut current, max_objects)
                        .unwrap();
                    let mut m = MeasureStream::new();
                    m.object_index("o", previous, &mut current, max_objects)
                        .unwrap();
                    assert_eq!(m.bits(), w.bits_written(), "d = {d}");
                }
            }
        }
    }
}
