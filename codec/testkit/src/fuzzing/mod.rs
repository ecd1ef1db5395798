//! Harness functions for the fuzz targets (`fuzz/fuzz_targets/*.rs` are one-line wrappers) and
//! for the stable tests that replay the committed corpus: both run exactly the same code on
//! exactly the same bytes. Every function panics (a finding) when a property breaks.
//!
//! Not a stable API.

use crate::demo::{DemoPacket, MTU, PROTOCOL_ID};
use crate::vectors::{Op, drive};
use arbitrary::{Arbitrary, Unstructured};
use bitlens_codec::error::ErrorKind;
use bitlens_codec::fixed::FixedPoint;
use bitlens_codec::packet::{
    Packet, measure_packet, packet_crc, read_packet, trace_packet, write_packet,
};
use bitlens_codec::quantize::CompressedFloat;
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_codec::trace::FieldKind;
use bitlens_codec::write::{MeasureStream, WriteStream};

pub mod batch;
pub mod bits;
pub mod derive;
pub mod receive;
pub mod schema;
pub mod schema_load;
pub mod tagged;

/// `packet_read`: raw bytes read as a demo packet never panic; an accepted packet re-encodes to
/// the identical bytes; the trace stream reaches the same verdict, error and values.
///
/// The same holds for the bytes with their CRC recomputed: random bytes almost never carry a
/// valid CRC, so without this second read the fuzzer would rarely get past the framing.
pub fn packet_read(data: &[u8]) {
    check_read(data);
    if data.len() >= 4 {
        let mut fixed = data.to_vec();
        let crc = packet_crc(PROTOCOL_ID, &fixed);
        fixed[..4].copy_from_slice(&crc.to_le_bytes());
        if fixed != data {
            check_read(&fixed);
        }
    }
}

fn check_read(data: &[u8]) {
    let read = read_packet::<DemoPacket>(data);
    let (traced, trace) = trace_packet::<DemoPacket>(data);
    match &read {
        Ok(p) => {
            assert_eq!(traced.as_ref(), Some(p), "trace read other values");
            assert!(trace.error.is_none());
            let mut p = p.clone();
            let mut buf = [0u8; MTU];
            let n = write_packet(&mut p, &mut buf).expect("an accepted packet re-encodes");
            assert_eq!(
                &buf[..n],
                data,
                "an accepted packet re-encodes to the same bytes"
            );
        }
        Err(e) => {
            assert!(traced.is_none());
            assert_eq!(
                trace.error.as_ref(),
                Some(e),
                "trace and read disagree on the error"
            );
            assert!(e.bit() <= data.len() * 8, "error bit past the data");
        }
    }
}

/// `packet_roundtrip`: arbitrary demo packets (within their declared ranges) write, read back
/// equal, measure exactly the bits written, and trace the same values; a packet over the MTU is
/// a write error, never a truncated packet.
pub fn packet_roundtrip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(mut packet) = DemoPacket::arbitrary(&mut u) else {
        return;
    };
    let bits = measure_packet(&mut packet).expect("in-range values measure");
    let mut buf = [0u8; MTU];
    match write_packet(&mut packet, &mut buf) {
        Ok(n) => {
            assert_eq!(n, bits.div_ceil(8), "measure == bytes written");
            let back = read_packet::<DemoPacket>(&buf[..n]).expect("a written packet reads");
            assert_eq!(back, packet, "read(write(x)) == x");
            let (traced, trace) = trace_packet::<DemoPacket>(&buf[..n]);
            assert_eq!(traced.as_ref(), Some(&packet));
            assert_eq!(trace.bits_read, bits);
        }
        Err(e) => {
            assert!(bits > MTU * 8, "write failed under the MTU: {e}");
            assert!(matches!(e.kind(), ErrorKind::BufferFull { .. }), "{e}");
        }
    }
}

fn arb_op(
    u: &mut Unstructured<'_>,
    previous_index: &mut i64,
    previous_int: &mut i64,
) -> arbitrary::Result<Op> {
    Ok(match u.int_in_range(0..=17u8)? {
        0 => {
            let n = u.int_in_range(1..=64u32)?;
            let v: u64 = u.arbitrary()?;
            Op::Bits {
                n,
                value: if n == 64 { v } else { v & ((1 << n) - 1) },
            }
        }
        1 => Op::Bool(u.arbitrary()?),
        2 => {
            let a: i64 = u.arbitrary()?;
            let b: i64 = if u.arbitrary()? {
                u.arbitrary()?
            } else {
                a.saturating_add(u.int_in_range(0..=1000)?)
            };
            let (min, max) = (a.min(b), a.max(b));
            Op::Int {
                min,
                max,
                value: u.int_in_range(min..=max)?,
            }
        }
        3 => Op::U64(u.arbitrary()?),
        4 => Op::Float(u.arbitrary()?),
        5 => Op::Double(u.arbitrary()?),
        6 => {
            let min = f32::from(u.int_in_range(-4000i16..=4000)?) / 4.0;
            let span = f32::from(u.int_in_range(1u16..=8000)?) / 4.0;
            let res = [1.0, 0.5, 0.1, 0.01, 0.001, 1.0 / 512.0][u.int_in_range(0..=5usize)?];
            let Ok(spec) = CompressedFloat::new(min, min + span, res) else {
                return Ok(Op::Align);
            };
            // Any input, also NaN and out of range: writers clamp.
            let value = if u.arbitrary()? {
                u.arbitrary()?
            } else {
                spec.decode(u.int_in_range(0..=spec.steps())?).to_bits()
            };
            Op::CompressedFloat {
                spec,
                value,
                code: None,
                decoded: None,
            }
        }
        7 => Op::Align,
        8 => {
            let n = u.int_in_range(0..=40usize)?;
            Op::Bytes(u.bytes(n)?.to_vec())
        }
        9 => {
            let max_len = u.int_in_range(0..=64usize)?;
            let mut value: String = u.arbitrary()?;
            while value.len() > max_len {
                value.pop();
            }
            Op::Str { max_len, value }
        }
        10 => {
            let max_objects = u.int_in_range(1..=5000i64)?;
            if *previous_index >= max_objects {
                *previous_index = -1;
            }
            let value = u.int_in_range(*previous_index + 1..=max_objects)?;
            let op = Op::ObjectIndex {
                max_objects,
                previous: *previous_index,
                value,
            };
            *previous_index = if value == max_objects { -1 } else { value };
            op
        }
        11 => {
            if *previous_int >= i64::from(u32::MAX) - 1 {
                *previous_int = -1;
            }
            let hop = [1i64, 6, 23, 280, 4377, 69914, 1 << 24][u.int_in_range(0..=6usize)?];
            let value =
                u.int_in_range(*previous_int + 1..=(*previous_int + hop).min(i64::from(u32::MAX)))?;
            let op = Op::IntRelative {
                previous: *previous_int,
                value,
            };
            *previous_int = value;
            op
        }
        12 => Op::Check(
            ["section", "header", "end of packet", "x"][u.int_in_range(0..=3usize)?].to_owned(),
        ),
        13 => {
            let a: i128 = u.arbitrary()?;
            let b: i128 = if u.arbitrary()? {
                u.arbitrary()?
            } else {
                a.saturating_add(u.int_in_range(0..=1000)?)
            };
            let (min, max) = (a.min(b), a.max(b));
            Op::Int128 {
                min,
                max,
                value: u.int_in_range(min..=max)?,
            }
        }
        14 => Op::U128(u.arbitrary()?),
        15 => {
            // Storage widths, signedness and bounds across the group structures.
            let (ib, fb, signed, min, max) = [
                (8, 8, true, -100, 100),
                (16, 16, false, 0, 30000),
                (48, 16, true, -100_000, 100_000),
                (112, 16, true, -(1 << 57), 1 << 57),
                (64, 64, true, i64::MIN, i64::MAX),
                (64, 64, true, 7, 7),
            ][u.int_in_range(0..=5usize)?];
            let Some(spec) = FixedPoint::new_const(ib, fb, signed, min, max) else {
                return Ok(Op::Align);
            };
            Op::Fixed {
                spec,
                raw: u.int_in_range(spec.raw_min()..=spec.raw_max())?,
                decimal: None,
                f64_bits: None,
            }
        }
        16 => {
            let max_len = u.int_in_range(0..=16usize)?;
            let text: String = u.arbitrary()?;
            let mut value = String::new();
            for c in text.chars().filter(|&c| c != '\0') {
                if value.encode_utf16().count() + c.len_utf16() > max_len {
                    break;
                }
                value.push(c);
            }
            Op::WStr { max_len, value }
        }
        _ => Op::Bool(true),
    })
}

/// An arbitrary sequence of primitive operations with arbitrary ranges, widths and values.
///
/// # Errors
/// When the input runs out before the first op.
pub fn arb_ops(u: &mut Unstructured<'_>) -> arbitrary::Result<Vec<Op>> {
    let mut ops = Vec::new();
    let (mut pi, mut pr) = (-1, -1);
    while ops.len() < 64 && !u.is_empty() {
        ops.push(arb_op(u, &mut pi, &mut pr)?);
    }
    Ok(ops)
}

/// `stream_ops`: an arbitrary op sequence written then read back with the same ops gives equal
/// values (compressed floats quantized) and measure == bits written; the bytes read with a
/// different op sequence, and the fuzz input itself read with the ops, give an error or values,
/// never a panic, and the trace stream agrees with the read stream.
pub fn stream_ops(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(ops) = arb_ops(&mut u) else { return };
    let other = arb_ops(&mut u).unwrap_or_default();

    // The fuzz input itself read with the ops: arbitrary bits reach every read error path
    // (out-of-range object indexes, non-canonical relative ints, invalid UTF-8, bad padding),
    // which the well-formed bytes below rarely do. Any verdict, no panic, and read == trace.
    let mut a = ops.clone();
    let ra = drive(&mut ReadStream::new(data), &mut a);
    let mut b = ops.clone();
    let rb = drive(&mut TraceStream::new(data), &mut b);
    assert_eq!(ra, rb, "read and trace disagree on arbitrary bytes");
    if ra.is_ok() {
        assert_eq!(a, b, "read and trace read different values");
    }

    let mut buf = vec![0u8; 2048];
    let mut w = WriteStream::new(&mut buf);
    let mut written = ops.clone();
    let result = drive(&mut w, &mut written);
    let bits = w.bits_written();
    let n = w.finish();
    if let Err(e) = result {
        assert!(
            matches!(e.kind(), ErrorKind::BufferFull { .. }),
            "valid ops failed to write: {e}"
        );
        return;
    }
    let mut measured = ops.clone();
    let mut m = MeasureStream::new();
    drive(&mut m, &mut measured).expect("measure accepts what write accepted");
    assert_eq!(m.bits(), bits, "measure == bits written");

    let mut read = ops.clone();
    let mut r = ReadStream::new(&buf[..n]);
    drive(&mut r, &mut read).expect("written ops read back");
    assert_eq!(r.bits_read(), bits);
    for (a, b) in read.iter().zip(&ops) {
        match (a, b) {
            (
                Op::CompressedFloat {
                    spec, value: got, ..
                },
                Op::CompressedFloat { value: sent, .. },
            ) => {
                assert_eq!(
                    *got,
                    spec.decode(spec.encode(f32::from_bits(*sent))).to_bits()
                );
            }
            _ => assert_eq!(a, b),
        }
    }
    let mut traced = ops.clone();
    let mut t = TraceStream::new(&buf[..n]);
    drive(&mut t, &mut traced).expect("trace agrees with read");
    assert_eq!(traced, read);

    // The same bytes through another op sequence: any verdict, no panic, and read == trace.
    let mut a = other.clone();
    let ra = drive(&mut ReadStream::new(&buf[..n]), &mut a);
    let mut b = other;
    let rb = drive(&mut TraceStream::new(&buf[..n]), &mut b);
    assert_eq!(ra, rb);
}

fn set_bits(data: &mut [u8], bit: usize, width: usize, value: u64) {
    for k in 0..width {
        let b = bit + k;
        if let Some(byte) = data.get_mut(b / 8) {
            let mask = 1u8 << (b % 8);
            if (value >> k) & 1 == 1 {
                *byte |= mask
            } else {
                *byte &= !mask
            }
        }
    }
}

/// A valid packet made hostile: one length, count or type field overwritten, the CRC fixed up.
#[derive(Debug, Clone)]
pub struct Hostile {
    /// Trace path of the overwritten field (`mice.len`, `packet_type`, ...).
    pub path: String,
    /// The raw value written into the field's bits.
    pub raw: u64,
    /// The whole packet, CRC recomputed so that it cannot hide the damage.
    pub bytes: Vec<u8>,
}

/// Every hostile variant of the valid demo packet `valid`: for each length, count or type field,
/// the field overwritten by an out-of-range value (or, where its width cannot hold one, by a
/// count larger than the bits that remain can carry), with the CRC fixed up.
pub fn hostile_variants(valid: &[u8]) -> Vec<Hostile> {
    let (_, trace) = trace_packet::<DemoPacket>(valid);
    let mut out = Vec::new();
    for f in trace.fields.iter().filter(|f| {
        f.kind == FieldKind::Value
            && f.bits > 0
            && (f.path().ends_with(".len") || f.path() == "packet_type")
    }) {
        let Some((min, max)) = f.range else { continue };
        let span = u64::try_from(max.abs_diff(min)).unwrap_or(u64::MAX);
        let all_ones = if f.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << f.bits) - 1
        };
        let raw = if all_ones > span {
            // The width can hold an out-of-range value: send the largest one.
            all_ones
        } else {
            // Every value fits the range: claim the maximum count, which must exceed the bits
            // left.
            let elem_bits = if f.path().starts_with("elements") {
                32
            } else if f.path().starts_with("mice") {
                12
            } else {
                8
            };
            let after = trace.total_bits - (f.bit + f.bits);
            if usize::try_from(span).map_or(usize::MAX, |s| s.saturating_mul(elem_bits)) <= after
                || f.path() == "packet_type"
            {
                continue;
            }
            span
        };
        let mut bytes = valid.to_vec();
        set_bits(&mut bytes, f.bit, f.bits, raw);
        let crc = packet_crc(PROTOCOL_ID, &bytes);
        bytes[..4].copy_from_slice(&crc.to_le_bytes());
        out.push(Hostile {
            path: f.path().to_string(),
            raw,
            bytes,
        });
    }
    out
}

/// The hostile packet that `hostile_lengths` builds from `data`, if any: an arbitrary demo
/// packet, written, and one of its [`hostile_variants`] chosen by the remaining input.
pub fn hostile_case(data: &[u8]) -> Option<Hostile> {
    let mut u = Unstructured::new(data);
    let mut packet = DemoPacket::arbitrary(&mut u).ok()?;
    let mut buf = [0u8; MTU];
    let n = write_packet(&mut packet, &mut buf).ok()?;
    let mut variants = hostile_variants(&buf[..n]);
    if variants.is_empty() {
        return None;
    }
    let pick = u.choose_index(variants.len()).ok()?;
    Some(variants.swap_remove(pick))
}

/// `hostile_lengths`: a valid packet with one length, count or type field overwritten by an
/// out-of-range value (or, where its width cannot hold one, by a count larger than the bits that
/// remain can carry), with the CRC fixed up so it cannot hide the damage: the read must fail with
/// out_of_range or past_end.
pub fn hostile_lengths(data: &[u8]) {
    let Some(h) = hostile_case(data) else { return };
    let err = read_packet::<DemoPacket>(&h.bytes).expect_err("a hostile length was accepted");
    assert!(
        matches!(
            err.kind(),
            ErrorKind::OutOfRange { .. } | ErrorKind::PastEnd { .. }
        ),
        "hostile {} = {} gave {err}",
        h.path,
        h.raw
    );
}

/// Every demo sample packet, encoded: seed inputs for the corpora.
pub fn sample_packets() -> Vec<(String, Vec<u8>)> {
    crate::demo::samples()
        .into_iter()
        .map(|mut p| {
            let mut buf = [0u8; MTU];
            let n = write_packet(&mut p, &mut buf).unwrap_or(0);
            let name = DemoPacket::protocol()
                .type_name(p.packet_type())
                .unwrap_or("packet")
                .to_owned();
            (name, buf[..n].to_vec())
        })
        .collect()
}
