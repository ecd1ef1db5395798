//! The read side of [`Stream`]: one implementation ([`Decoder`]) over a [`Tracer`] serves
//! [`ReadStream`] (every value range-checked, nothing recorded) and [`TraceStream`] (the same
//! reads, every field recorded into a [`Trace`]), so a trace always reaches the read's verdict.

use crate::bits::{BitReader, PastEnd, bits_required};
use crate::checksum::{ProtocolId, check_hash, packet_crc};
use crate::error::{Error, ErrorKind, Result};
use crate::quantize::CompressedFloat;
use crate::stream::{
    SHORT_CURRENT_MIN, Stream, array_impl, compressed_f32_as_int, int_relative_as_flags,
    int128_args, invalid, offset_out_of_range, on_local, out_of_range, past_end, span, span128,
    wstring_impl,
};
use crate::trace::{FieldKind, NoTrace, Recorder, Trace, Tracer, Value};

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
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        Decoder {
            r: BitReader::new(data),
            tracer: NoTrace,
        }
    }
}

impl<'a> TraceStream<'a> {
    /// A trace stream over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Decoder {
            r: BitReader::new(data),
            tracer: Recorder::recycled(),
        }
    }

    /// The trace, closed with the result the serialize function returned (a past_end marked
    /// where the read stopped: [`Trace::mark_past_end`]).
    #[inline]
    pub fn into_trace(self, result: Result<()>) -> Trace {
        let end = self.r.bits_read();
        let mut trace = Trace {
            fields: self.tracer.close(end),
            error: result.err(),
            bits_read: end,
            total_bits: self.r.data().len() * 8,
        };
        trace.mark_past_end();
        trace
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

    /// `n` (0..=128) bits as one value, LSB first; nothing is consumed when fewer remain.
    #[inline]
    fn take_wide(&mut self, name: &str, n: u32) -> Result<u128> {
        let bit = self.r.bits_read();
        let remaining = self.r.bits_remaining();
        if n as usize > remaining {
            let e = PastEnd {
                needed: n as usize,
                remaining,
            };
            return Err(past_end(e, bit, name));
        }
        Ok(match n {
            0 => 0,
            1..=64 => u128::from(self.take(name, n)?),
            _ => {
                let lo = self.take(name, 64)?;
                let hi = self.take(name, n - 64)?;
                u128::from(hi) << 64 | u128::from(lo)
            }
        })
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

    /// The error of an `int` whose wire offset `raw` is above its range, recorded as a failed
    /// field (with the value `min + raw`, which may lie beyond `i64`) when tracing.
    #[cold]
    fn int_out_of_range(
        &mut self,
        name: &str,
        bit: usize,
        width: u32,
        raw: u64,
        min: i64,
        max: i64,
    ) -> Error {
        let value = i128::from(min) + i128::from(raw);
        let range = (i128::from(min), i128::from(max));
        if T::ACTIVE {
            let kind = FieldKind::Value;
            let shown = Value::Int(value);
            let width = width as usize;
            self.tracer
                .field(name, bit, width, shown, Some(range), kind, true);
        }
        out_of_range(value, range.0, range.1, bit, name)
    }

    /// Aligns, insisting on zero padding; records the padding when tracing.
    #[inline]
    fn read_padding(&mut self, name: &str) -> Result<()> {
        let bit = self.r.bits_read();
        let pad = self.r.align().map_err(|e| past_end(e, bit, name))?;
        let width = self.r.bits_read() - bit;
        if T::ACTIVE && width > 0 {
            self.tracer.padding(name, bit, width, u64::from(pad));
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

    /// One 32-bit group of a wide string, traced with the range of a UTF-16 code unit (what a
    /// reader accepts); a group above it is where the read stops (`wstring_impl` refuses it).
    fn code_unit(&mut self, group: &mut u64) -> Result<()> {
        let bit = self.r.bits_read();
        *group = self.take("", 32)?;
        if T::ACTIVE {
            let value = *group;
            let max = u64::from(u16::MAX);
            self.tracer.uint("", bit, 32, value, Some(max), value > max);
        }
        Ok(())
    }

    /// The read side of [`Stream::check`] with the label's hash already computed.
    fn check_hashed(&mut self, label: &str, expected: u32) -> Result<()> {
        self.read_padding(label)?;
        let bit = self.r.bits_read();
        let found = self.take(label, 32)? as u32;
        if T::ACTIVE {
            self.tracer.check(label, bit, expected, found);
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

    /// As the default, on the stream moved into a local (`on_local`).
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

    #[inline(always)]
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
        if T::ACTIVE {
            let bits = self.r.bits_read() - bit;
            let max = u64::MAX >> (64 - n);
            self.tracer.uint(name, bit, bits, *v, Some(max), false);
        }
        Ok(())
    }

    #[inline(always)]
    fn bool(&mut self, name: &str, v: &mut bool) -> Result<()> {
        let bit = self.r.bits_read();
        *v = self.take(name, 1)? != 0;
        if T::ACTIVE {
            self.tracer.boolean(name, bit, *v);
        }
        Ok(())
    }

    /// Without a trace, the smallest differences in one read: the next 5 bits on a copy of the
    /// reader, then the 1 or 5 bits they take consumed. Anything else (a larger tier, an
    /// out-of-range value, a result past `i32::MAX`, a `previous` below `i32::MIN`, fewer than 5
    /// bits left) reads flag by flag from the start, as the default, for its value or its error.
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
                // `c` within SHORT_CURRENT_MIN..=i32::MAX puts `previous` (c - d, d <= 6) in
                // the i32 domain too: one range check for both.
                if (one || (x & 0b10 != 0 && d <= 6))
                    && (SHORT_CURRENT_MIN..=i64::from(i32::MAX)).contains(&c)
                    && self.r.read_bits(if one { 1 } else { 5 }).is_ok()
                {
                    *current = c;
                    return Ok(());
                }
            }
        }
        int_relative_as_flags(self, name, previous, current)
    }

    /// Without a trace: the code in `spec.width()` (1..=32) bits, refused above `M` with the
    /// error [`Stream::int`] gives (the standard's one refusal); every other code is accepted.
    /// With one: through `int`.
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
        if code > spec.steps() {
            let max = i128::from(spec.steps());
            return Err(out_of_range(i128::from(code), 0, max, bit, name));
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
        if raw > span(min, max) {
            return Err(self.int_out_of_range(name, bit, width, raw, min, max));
        }
        *v = min.wrapping_add(raw as i64);
        if T::ACTIVE {
            let bits = self.r.bits_read() - bit;
            self.tracer
                .int(name, bit, bits, *v, Some((min, max)), false);
        }
        Ok(())
    }

    #[inline(always)]
    fn u64(&mut self, name: &str, v: &mut u64) -> Result<()> {
        let bit = self.r.bits_read();
        *v = self.take(name, 64)?;
        if T::ACTIVE {
            self.tracer.uint(name, bit, 64, *v, None, false);
        }
        Ok(())
    }

    /// The offset in one piece, traced as one field with the range.
    #[inline]
    fn int128(&mut self, name: &str, v: &mut i128, min: i128, max: i128) -> Result<()> {
        let bit = self.r.bits_read();
        int128_args(self, name, *v, min, max)?;
        let (span, width) = span128(min, max);
        let offset = self.take_wide(name, width)?;
        let range = Some((min, max));
        if offset > span {
            if T::ACTIVE {
                let value = min
                    .checked_add_unsigned(offset)
                    .map_or(Value::None, Value::Int);
                let bits = self.r.bits_read() - bit;
                self.tracer
                    .field(name, bit, bits, value, range, FieldKind::Value, true);
            }
            return Err(offset_out_of_range(min, max, offset, bit, name));
        }
        *v = (min as u128).wrapping_add(offset) as i128;
        let value = *v;
        self.record(name, bit, || Value::Int(value), range);
        Ok(())
    }

    #[inline]
    fn u128(&mut self, name: &str, v: &mut u128) -> Result<()> {
        let bit = self.r.bits_read();
        *v = self.take_wide(name, 128)?;
        let value = *v;
        self.record(name, bit, || Value::from_u128(value), None);
        Ok(())
    }

    #[inline(always)]
    fn f32(&mut self, name: &str, v: &mut f32) -> Result<()> {
        let bit = self.r.bits_read();
        *v = f32::from_bits(self.take(name, 32)? as u32);
        if T::ACTIVE {
            self.tracer.float32(name, bit, 32, *v);
        }
        Ok(())
    }

    #[inline(always)]
    fn f64(&mut self, name: &str, v: &mut f64) -> Result<()> {
        let bit = self.r.bits_read();
        *v = f64::from_bits(self.take(name, 64)?);
        if T::ACTIVE {
            self.tracer.float64(name, bit, 64, *v);
        }
        Ok(())
    }

    /// As the default, each code unit traced with the range a reader accepts (`0..=0xFFFF`),
    /// not the `0..=2^32 - 1` of its 32-bit group.
    fn wstring(&mut self, name: &str, s: &mut String, max_len: usize) -> Result<()> {
        wstring_impl(self, name, s, max_len, Self::code_unit)
    }

    #[inline]
    fn align(&mut self, name: &str) -> Result<()> {
        self.read_padding(name)
    }

    #[inline(always)]
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
            self.tracer.check("crc32", 0, expected, found);
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

    #[inline(always)]
    fn annotate_str(&mut self, value: &str) {
        if T::ACTIVE {
            self.tracer.annotate_str(value);
        }
    }

    #[inline(always)]
    fn annotate_floats(&mut self, value: &[f32]) {
        if T::ACTIVE {
            self.tracer.annotate_floats(value);
        }
    }
}
