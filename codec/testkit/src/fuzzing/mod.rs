//! Harness functions for the fuzz targets (`fuzz/fuzz_targets/*.rs` are one-line wrappers) and
//! for the stable tests that replay the committed corpus: both run exactly the same code on
//! exactly the same bytes. Every function panics (a finding) when a property breaks.
//!
//! The packet harnesses are the public ones of [`bitlens_codec::fuzzing`] (what a user's own
//! packet set gets), instantiated for the demo protocol; the rest are bitlens's own.
//!
//! Not a stable API.

use crate::demo::{DemoPacket, MTU, ORIENTATION};
use crate::vectors::{Op, drive};
use arbitrary::Unstructured;
use bitlens_codec::error::ErrorKind;
use bitlens_codec::fixed::FixedPoint;
use bitlens_codec::fuzzing::{self as harness};
use bitlens_codec::measure::MeasureStream;
use bitlens_codec::packet::{Packet, write_packet};
use bitlens_codec::quantize::{CompressedFloat, SmallestThree};
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_codec::stream::Stream;
use bitlens_codec::trace::{FieldKind, Trace, TraceField, Value};
use bitlens_codec::write::{CountStream, WriteStream};

pub use bitlens_codec::fuzzing::{Hostile, NearTie, absolute_relatives, near_ties};

pub mod batch;

/// The per-input allocation budget of a harness that records a field tree of arbitrary bytes
/// (`pipeline`, `schema_load`, `derive_vs_schema`): the guard's reader budget
/// ([`bitlens_fuzz_guard::budget`], 64 x input + 1 MiB) plus one trace entry per input bit
/// (`size_of::<TraceField>()`, 224 bytes, x 8 per byte). A tree of a densely packed datagram
/// (a bool or a 1-bit field per bit) legitimately takes that much: it is what `decode` shows.
/// Found by the 10-minute campaigns, where inputs of 418, 1010 and 1084 bytes took 115%, 100.3%
/// and 102% of the reader budget with their traces.
pub const fn traced_budget(len: usize) -> usize {
    let entry = std::mem::size_of::<bitlens_codec::trace::TraceField>();
    bitlens_fuzz_guard::budget(len).saturating_add(len.saturating_mul(8).saturating_mul(entry))
}
pub mod bits;
pub mod derive;
pub mod quantize;
pub mod receive;
pub mod schema;
pub mod schema_load;
pub mod tagged;

/// `packet_read`: raw bytes read as a demo packet, then with their CRC made valid: the public
/// harness [`bitlens_codec::fuzzing::packet_read`] for [`DemoPacket`].
pub fn packet_read(data: &[u8]) {
    harness::packet_read::<DemoPacket>(data);
}

/// The bit spans of the quaternions in `trace` that do not write back as they were read: the
/// near ties a seed-style writer sends and readers accept ([`SmallestThree::reencodes`]).
pub fn near_tie_spans(trace: &Trace, spec: &SmallestThree) -> Vec<std::ops::Range<usize>> {
    let int = |f: &TraceField| match f.value {
        Value::Int(v) => u32::try_from(v).ok(),
        _ => None,
    };
    let mut spans = Vec::new();
    for w in trace.fields.windows(4) {
        let [l, a, b, c] = w else { continue };
        let Some(scope) = l.path().strip_suffix(".largest") else {
            continue;
        };
        let parts = [(a, ".a"), (b, ".b"), (c, ".c")];
        if l.range != Some((0, 3))
            || !parts
                .iter()
                .all(|(f, end)| f.path().strip_suffix(end) == Some(scope))
        {
            continue;
        }
        let (Some(largest), Some(a), Some(b), Some(c)) = (int(l), int(a), int(b), int(c)) else {
            continue;
        };
        if !spec.reencodes(largest, [a, b, c]) {
            spans.push(l.bit..l.bit + spec.width() as usize);
        }
    }
    spans
}

/// Asserts that a demo packet written back from what was read from `original` (traced as
/// `trace`) is the same bytes, except inside near-tie quaternions ([`near_tie_spans`]) and the
/// CRC that covers them.
pub fn assert_reencodes(original: &[u8], reencoded: &[u8], trace: &Trace) {
    let spans = near_tie_spans(trace, &ORIENTATION);
    if spans.is_empty() {
        assert_eq!(
            reencoded, original,
            "an accepted packet re-encodes to the same bytes"
        );
        return;
    }
    assert_eq!(reencoded.len(), original.len(), "re-encoded length");
    for bit in 32..original.len() * 8 {
        if spans.iter().any(|s| s.contains(&bit)) {
            continue;
        }
        let get = |d: &[u8]| d[bit / 8] >> (bit % 8) & 1;
        assert_eq!(
            get(reencoded),
            get(original),
            "bit {bit} differs outside the near-tie quaternions {spans:?}"
        );
    }
}

/// `packet_roundtrip`: an arbitrary demo packet round-trips ([`harness::packet_roundtrip`]).
pub fn packet_roundtrip(data: &[u8]) {
    harness::packet_roundtrip::<DemoPacket>(data);
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
            value.retain(|c| c != '\0');
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
            if *previous_int >= i64::from(i32::MAX) - 1 {
                // Start again anywhere in the i32 domain, negative values too.
                *previous_int = i64::from(u.arbitrary::<i32>()?).min(i64::from(i32::MAX) - 1);
            }
            let hop =
                [1i64, 6, 23, 280, 4377, 69914, 1 << 24, 1 << 32][u.int_in_range(0..=7usize)?];
            let value =
                u.int_in_range(*previous_int + 1..=(*previous_int + hop).min(i64::from(i32::MAX)))?;
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
    // Relative integers start anywhere in their i32 domain, negative values too.
    let (mut pi, mut pr) = (-1, i64::from(u.arbitrary::<i16>()?) << 16);
    while ops.len() < 64 && !u.is_empty() {
        ops.push(arb_op(u, &mut pi, &mut pr)?);
    }
    Ok(ops)
}

/// `stream_ops`: an arbitrary op sequence written then read back with the same ops gives equal
/// values (compressed floats quantized), count == bits written, and a measure at least the bits
/// written from a starting bit the input picks (serialize 1.0's bound); the bytes read with a
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
    let mut counted = ops.clone();
    let mut c = CountStream::new();
    drive(&mut c, &mut counted).expect("count accepts what write accepted");
    assert_eq!(c.bits(), bits, "count == bits written");
    let mut measured = ops.clone();
    let mut m = MeasureStream::new();
    drive(&mut m, &mut measured).expect("a measure refuses nothing");
    let start = u.int_in_range(0..=7u32).unwrap_or(0);
    let mut shifted = vec![0u8; 2048];
    let mut w = WriteStream::new(&mut shifted);
    let mut again = ops.clone();
    let r = w
        .bits("start", &mut 0, start.max(1))
        .and_then(|()| drive(&mut w, &mut again));
    if r.is_ok() {
        let written = w.bits_written() - start.max(1) as usize;
        assert!(
            m.bits() >= written,
            "measure {} < {written} bits written from bit {}",
            m.bits(),
            start.max(1)
        );
    }

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

/// The fewest bits an element of each demo count takes: `elements` are `i32`s, `mice` 12-bit
/// indices; others (a string's bytes) 8.
fn demo_element_bits(path: &str) -> usize {
    if path.starts_with("elements") {
        32
    } else if path.starts_with("mice") {
        12
    } else {
        8
    }
}

/// Every hostile variant of the valid demo packet `valid`
/// ([`harness::hostile_variants_with`] with the demo's element widths).
pub fn hostile_variants(valid: &[u8]) -> Vec<Hostile> {
    harness::hostile_variants_with::<DemoPacket>(valid, demo_element_bits)
}

/// The hostile packet that `hostile_lengths` builds from `data`, if any.
pub fn hostile_case(data: &[u8]) -> Option<Hostile> {
    harness::hostile_case_with::<DemoPacket>(data, demo_element_bits)
}

/// `hostile_lengths`: a valid demo packet with one length, count or type field made hostile,
/// CRC fixed, is refused at that field with out_of_range or past_end
/// ([`harness::assert_hostile_refused`]).
pub fn hostile_lengths(data: &[u8]) {
    if let Some(h) = hostile_case(data) {
        harness::assert_hostile_refused::<DemoPacket>(&h);
    }
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

/// For the differential targets (derive against schema), a value-level check: asserts what
/// serialize 1.0 lets a re-encoding promise, for a packet read from `original`
/// (traced as `read`) and written back as `reencoded` (traced as `again`): the identical bytes,
/// unless the packet holds a near-tie quaternion ([`near_ties`]) or a relative integer sent in
/// the absolute tier below it ([`absolute_relatives`]). Then every value reads back the same,
/// except each near tie, which reads back as the writer's formula gives it (its value encoded
/// and decoded again). Compressed floats must be on stable ranges (the schemas of the
/// protocols this is used on load without warnings; the `compressed_float` target checks the
/// others against the formula).
pub fn assert_reencoding(original: &[u8], reencoded: &[u8], read: &Trace, again: &Trace) {
    let ties = near_ties(read);
    let absolute = absolute_relatives(read);
    if ties.is_empty() && absolute.len() == absolute_relatives(again).len() {
        assert_eq!(
            reencoded, original,
            "an accepted packet re-encodes to the same bytes"
        );
        return;
    }
    assert!(
        again.error.is_none(),
        "the re-encoded packet reads: {:?}",
        again.error
    );
    // A relative integer's flags and fields depend on its tier: its scope's value is compared.
    // Near ties are compared as a whole, not component by component.
    let skipped: Vec<String> = read
        .fields
        .iter()
        .filter_map(|f| f.path().strip_suffix(".d=1"))
        .chain(ties.iter().map(|t| t.path.as_str()))
        .map(|scope| format!("{scope}."))
        .collect();
    // One path can name two entries (an array element and the scope of its value): the k-th
    // entry of a path is compared with the k-th entry of that path in the re-encoded trace.
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in &read.fields {
        if !matches!(f.kind, FieldKind::Value | FieldKind::Scope)
            || skipped.iter().any(|s| f.path().starts_with(s.as_str()))
        {
            continue;
        }
        let k = seen.entry(f.path()).or_default();
        // Like with like: a re-encoding that moved a string's bytes to another alignment
        // records padding under the bytes' path (`name.utf8`) where the original had none.
        let Some(g) = again
            .fields
            .iter()
            .filter(|g| {
                g.path() == f.path() && matches!(g.kind, FieldKind::Value | FieldKind::Scope)
            })
            .nth(*k)
        else {
            panic!("{} is not in the re-encoded packet", f.path());
        };
        *k += 1;
        if let Some(tie) = ties.iter().find(|t| t.path == f.path()) {
            let (largest, codes) = tie.spec.encode(tie.value);
            let want = tie
                .spec
                .decode(largest, codes)
                .expect("written codes decode");
            assert_eq!(
                g.value,
                Value::Floats(want.to_vec()),
                "the near tie {} re-encodes as the writer's formula gives it",
                f.path()
            );
        } else {
            assert_eq!(
                (&g.value, g.raw),
                (&f.value, f.raw),
                "{} reads back another value",
                f.path()
            );
        }
    }
}
