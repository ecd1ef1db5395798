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
    #[inline(always)]
    pub fn finish(mut self) -> usize {
        if let Some(id) = self.crc {
            return finish_sealed(self.sink, id);
        }
        // No CRC: the flush's count is the length, without taking the bytes' slice.
        self.sink.flush()
    }
}

/// [`WriteStream::finish`] of a packet with a CRC: flushed, then sealed.
#[inline(never)]
fn finish_sealed(sink: BitWriter<'_>, id: ProtocolId) -> usize {
    let bytes = sink.finish();
    seal_crc(id, bytes);
    bytes.len()
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

    /// Far from the buffer's end the padding and the bytes go in as one step after one test
    /// (`try_align_and_bytes`); near it, the padding and then the bytes, each checked, so that
    /// a refusal names the bit it always did.
    #[inline(always)]
    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> Result<()> {
        if self.sink.try_align_and_bytes(buf) {
            return Ok(());
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    /// The next value of a fixed xorshift sequence: the same samples on every run.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// `bytes` after a lead of every bit count from 0 to 140, for runs of 0 to 70 bytes, into
    /// buffers from too small for the padding to 17 bytes of slack: the fast path (padding and
    /// bytes in one step, far from the end) and the checked steps near the end give the bytes of
    /// a bitwise reference and leave the bytes past the packet alone, and a refusal is the one
    /// the two checked steps give: at the field's bit when the padding does not fit, else at the
    /// aligned bit with none of the bytes written, with the same counts.
    #[test]
    fn bytes_agree_with_padding_then_bytes_checked() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for lead in 0..=140usize {
            for len in [0usize, 1, 7, 8, 9, 16, 17, 31, 63, 64, 65, 70] {
                let data: Vec<u8> = (0..len).map(|_| next(&mut x) as u8).collect();
                let pad = (8 - lead % 8) % 8;
                let end = lead + pad + 8 * len;
                for size in lead.div_ceil(8)..=end.div_ceil(8) + 17 {
                    let mut buf = vec![0xA5u8; size + 8];
                    let mut reference = vec![0u8; size];
                    let cap = 8 * size;
                    let mut s = WriteStream::new(&mut buf[..size]);
                    let mut at = 0;
                    while at < lead {
                        let n = (lead - at).min(64);
                        let mut v = next(&mut x) & (u64::MAX >> (64 - n));
                        s.bits("lead", &mut v, n as u32).unwrap();
                        for k in 0..n {
                            reference[(at + k) / 8] |= ((v >> k & 1) as u8) << ((at + k) % 8);
                        }
                        at += n;
                    }
                    let mut field = data.clone();
                    let r = s.bytes("blob", &mut field);
                    let (refused, kept) = if pad > cap - lead {
                        (Some((lead, pad, cap - lead)), lead)
                    } else if 8 * len > cap - lead - pad {
                        (Some((lead + pad, 8 * len, cap - lead - pad)), lead + pad)
                    } else {
                        for (i, &b) in data.iter().enumerate() {
                            reference[(lead + pad) / 8 + i] = b;
                        }
                        (None, end)
                    };
                    let case = format!("lead {lead} len {len} size {size}");
                    match (r, refused) {
                        (Ok(()), None) => {}
                        (Err(e), Some((bit, needed, available))) => {
                            assert_eq!(
                                e.kind(),
                                &ErrorKind::BufferFull { needed, available },
                                "{case}"
                            );
                            assert_eq!((e.bit(), e.field()), (bit, "blob"), "{case}");
                        }
                        (r, want) => panic!("{case}: {r:?}, expected a refusal {want:?}"),
                    }
                    assert_eq!(s.bits_written(), kept, "{case}");
                    let used = s.finish();
                    assert_eq!(used, kept.div_ceil(8), "{case}");
                    assert_eq!(&buf[..used], &reference[..used], "{case}");
                    assert!(buf[used..].iter().all(|&b| b == 0xA5), "{case}: tail");
                }
            }
        }
    }
}
