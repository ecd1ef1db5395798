//! The write side of [`Stream`]: one implementation ([`Encoder`]) over a [`BitSink`] serves
//! [`WriteStream`] (bits into a caller-owned buffer) and [`CountStream`] (bits counted exactly,
//! from bit 0), so a count checks every value exactly as a write does. The standard's measure,
//! a bound that refuses nothing, is [`MeasureStream`](crate::MeasureStream).

use crate::bits::{BitCounter, BitSink, BitWriter, Overflow, bits_required};
use crate::checksum::{ProtocolId, check_hash, seal_crc};
use crate::error::Result;
use crate::quantize::CompressedFloat;
use crate::stream::{
    Stream, array_impl, int_relative_as_flags, int128_args, invalid, on_local, out_of_range,
    overflow, relative_short, span, span128,
};

/// A writer over no buffer: the stand-in of `on_local` while an array writes on a local copy.
impl Default for BitWriter<'_> {
    fn default() -> Self {
        BitWriter::new(&mut [])
    }
}

/// The write-side stream over any [`BitSink`]: [`WriteStream`] stores bits, [`CountStream`]
/// only counts them. Both check every value exactly the same way.
#[derive(Debug)]
pub struct Encoder<K: BitSink> {
    sink: K,
    crc: Option<ProtocolId>,
}

/// Writes a packet into a caller-owned buffer.
pub type WriteStream<'a> = Encoder<BitWriter<'a>>;

/// Counts exactly the bits a [`WriteStream`] would produce from bit 0 (an aligned start),
/// alignment included, and refuses what it refuses: count == bits written. What an MTU check
/// needs; the standard's measure (a bound for any start) is [`MeasureStream`](crate::MeasureStream).
pub type CountStream = Encoder<BitCounter>;

impl<'a> WriteStream<'a> {
    /// A write stream over `buf`.
    #[inline]
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
    #[inline]
    pub fn finish(self) -> usize {
        let crc = self.crc;
        let bytes = self.sink.finish();
        if let Some(id) = crc {
            seal_crc(id, bytes);
        }
        bytes.len()
    }
}

impl CountStream {
    /// A counting stream with no size limit.
    #[inline]
    pub fn new() -> Self {
        Encoder {
            sink: BitCounter::new(),
            crc: None,
        }
    }

    /// A counting stream that fails like a writer over a buffer of `limit_bits` would.
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

impl Default for CountStream {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: BitSink> Encoder<K> {
    #[inline(always)]
    fn put(&mut self, name: &str, value: u64, n: u32) -> Result<()> {
        // A refused write leaves the position where it was: it is the field's bit.
        self.sink
            .put(value, n)
            .map_err(|e| overflow(e, self.sink.position(), name))
    }

    /// The low `n` (1..=128) bits of `value`, LSB first, after one capacity check for all of
    /// them (so a field never goes out half written).
    #[inline]
    fn put_wide(&mut self, name: &str, value: u128, n: u32) -> Result<()> {
        let bit = self.sink.position();
        let available = self.sink.available();
        if n as usize > available {
            let e = Overflow {
                needed: n as usize,
                available,
            };
            return Err(overflow(e, bit, name));
        }
        if n <= 64 {
            self.put(name, value as u64, n)
        } else {
            self.put(name, value as u64, 64)?;
            self.put(name, (value >> 64) as u64, n - 64)
        }
    }
}

impl<K: BitSink + Default> Stream for Encoder<K> {
    const READING: bool = false;

    /// As the default, on the stream moved into a local (`on_local`).
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

    #[inline(always)]
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

    /// The smallest differences (1 to 6) in one access when they fit (`relative_short`); the
    /// rest, a full buffer and every error flag by flag, as the default.
    #[inline(always)]
    fn int_relative(&mut self, name: &str, previous: i64, current: &mut i64) -> Result<()> {
        // A short form that does not fit writes nothing: the flags then fail where they should.
        if let Some((bits, n)) = relative_short(previous, *current)
            && self.sink.put(bits, n).is_ok()
        {
            return Ok(());
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

    #[inline(always)]
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        self.put(name, *v, 64)
    }

    /// The offset in one piece (two above 64 bits) after one capacity check.
    #[inline]
    fn int128(&mut self, name: &str, v: &mut i128, min: i128, max: i128) -> Result<()> {
        int128_args(self, name, *v, min, max)?;
        let (_, width) = span128(min, max);
        if width == 0 {
            return Ok(());
        }
        self.put_wide(name, (*v as u128).wrapping_sub(min as u128), width)
    }

    #[inline]
    fn u128(&mut self, name: &str, v: &mut u128) -> Result<()> {
        self.put_wide(name, *v, 128)
    }

    #[inline(always)]
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        self.put(name, u64::from(v.to_bits()), 32)
    }

    #[inline(always)]
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

    #[inline(always)]
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
