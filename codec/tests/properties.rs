//! Property tests of the codec invariants over arbitrary demo packets and op sequences:
//! read(write(x)) == x, count == bits written and measure >= them, trace agrees with read,
//! accepted packets re-encode identically (but near-tie quaternions), hostile lengths are
//! rejected; compressed floats write and read serialize 1.0's codes and values. They run the fuzz harness functions, so
//! the fuzzers and these tests check the same properties.

use bitlens_codec::{ErrorKind, read_packet, write_packet};
use bitlens_testkit::demo::{DemoPacket, MTU};
use bitlens_testkit::fuzzing;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn demo_packets_roundtrip(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fuzzing::packet_roundtrip(&data);
    }

    #[test]
    fn op_sequences_roundtrip(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzzing::stream_ops(&data);
    }

    /// serialize 1.0's measure contract: for any op sequence, the measure is at least the bits
    /// written from every starting bit 0..=7, and the exact count is the bits written from 0.
    #[test]
    fn measure_bounds_every_start_and_count_is_exact(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        use bitlens_codec::{CountStream, MeasureStream, Stream, WriteStream};
        let mut u = arbitrary::Unstructured::new(&data);
        let Ok(ops) = fuzzing::arb_ops(&mut u) else { return Ok(()) };
        let mut m = MeasureStream::new();
        bitlens_testkit::vectors::drive(&mut m, &mut ops.clone()).expect("a measure refuses nothing");
        let mut c = CountStream::new();
        let counted = bitlens_testkit::vectors::drive(&mut c, &mut ops.clone());
        for start in 0..8u32 {
            let mut buf = vec![0u8; 4096];
            let mut w = WriteStream::new(&mut buf);
            if start > 0 {
                w.bits("start", &mut 0, start).unwrap();
            }
            let written = bitlens_testkit::vectors::drive(&mut w, &mut ops.clone());
            prop_assert_eq!(written.is_ok(), counted.is_ok());
            if written.is_ok() {
                let bits = w.bits_written() - start as usize;
                prop_assert!(m.bits() >= bits, "measure {} < {} written from bit {}", m.bits(), bits, start);
                if start == 0 {
                    prop_assert_eq!(c.bits(), bits);
                }
            }
        }
    }

    #[test]
    fn hostile_lengths_are_rejected(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzzing::hostile_lengths(&data);
    }

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1300)) {
        fuzzing::packet_read(&data);
    }
}

#[test]
fn every_prefix_of_every_sample_is_rejected() {
    for (name, bytes) in fuzzing::sample_packets() {
        assert!(read_packet::<DemoPacket>(&bytes).is_ok(), "{name} reads");
        for cut in 0..bytes.len() {
            let err = read_packet::<DemoPacket>(&bytes[..cut]).expect_err("a prefix was accepted");
            // Shorter data changes the CRC, so most prefixes fail there; none may pass.
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::PastEnd { .. } | ErrorKind::CrcMismatch { .. }
                ),
                "{name}[..{cut}]: {err}"
            );
        }
    }
}

#[test]
fn every_single_bit_flip_is_caught_or_canonical() {
    for (name, bytes) in fuzzing::sample_packets() {
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            // CRC32 catches every single-bit error.
            let err = read_packet::<DemoPacket>(&b).expect_err("a flipped bit was accepted");
            assert!(
                matches!(err.kind(), ErrorKind::CrcMismatch { .. }),
                "{name} bit {bit}: {err}"
            );
            fuzzing::packet_read(&b);
        }
    }
}

#[test]
fn trailing_bytes_are_rejected() {
    for (name, mut bytes) in fuzzing::sample_packets() {
        bytes.push(0);
        let crc = bitlens_codec::packet::packet_crc(bitlens_testkit::demo::PROTOCOL_ID, &bytes);
        bytes[..4].copy_from_slice(&crc.to_le_bytes());
        let err = read_packet::<DemoPacket>(&bytes).expect_err("trailing byte accepted");
        assert!(
            matches!(err.kind(), ErrorKind::TrailingData { bytes: 1 }),
            "{name}: {err}"
        );
    }
}

#[test]
fn oversized_datagrams_are_rejected_before_reading() {
    let data = vec![0u8; MTU + 1];
    let err = read_packet::<DemoPacket>(&data).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::TooLong {
                bytes: 1201,
                mtu: 1200
            }
        ),
        "{err}"
    );
}

#[test]
fn writing_out_of_range_values_is_an_error() {
    let mut cat = bitlens_testkit::demo::RoboCat {
        health: 140,
        ..Default::default()
    };
    let mut p = DemoPacket::RoboCat(cat.clone());
    let mut buf = [0u8; MTU];
    let err = write_packet(&mut p, &mut buf).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bit 35 (field \"health\"): 140 out of range 0..=100"
    );
    cat.health = 1;
    cat.name = "x".repeat(200);
    let err = write_packet(&mut DemoPacket::RoboCat(cat), &mut buf).unwrap_err();
    assert_eq!(err.field(), "name.len");
    let mut b = DemoPacket::B(bitlens_testkit::demo::PacketB {
        elements: vec![0; 257],
    });
    let err = write_packet(&mut b, &mut buf).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::OutOfRange { value: 257, .. }),
        "{err}"
    );
}

#[test]
fn errors_name_nested_paths() {
    // A scene update whose second object's orientation is not canonical.
    let (_, bytes) = fuzzing::sample_packets()
        .into_iter()
        .find(|(n, _)| n == "SceneUpdate")
        .unwrap();
    let (_, trace) = bitlens_codec::trace_packet::<DemoPacket>(&bytes);
    let f = trace.get("objects[1].orientation.largest").expect("traced");
    assert_eq!(
        trace.get("objects[1].index").map(|f| &f.value),
        Some(&bitlens_codec::Value::Int(5))
    );
    assert_eq!(f.bits, 2);
    assert!(
        trace.get("objects[3].index").is_some(),
        "the sentinel is traced"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20000, max_global_rejects: 1_000_000, ..ProptestConfig::default() })]

    /// Ranges stable by the cheap bound keep every code through read then write.
    #[test]
    fn ranges_stable_by_bound_keep_every_code(
        min in -1.0e6f32..1.0e6,
        span in 1.0e-3f32..1.0e6,
        steps in 1u32..=bitlens_codec::quantize::STABLE_STEPS_BY_BOUND,
        pick in 0.0f64..=1.0,
    ) {
        let Ok(q) = bitlens_codec::CompressedFloat::new(min, min + span, span / steps as f32) else { return Ok(()) };
        prop_assume!(q.is_stable_by_bound());
        let code = (pick * f64::from(q.steps())) as u32;
        prop_assert_eq!(q.encode(q.decode(code)), code, "M = {}", q.steps());
        prop_assert_eq!(q.encode(q.decode(q.steps())), q.steps());
        prop_assert_eq!(q.encode(q.decode(0)), 0);
    }

    /// Any range, stable or not: what a writer sends is the standard's code (capped at `M`), a
    /// reader takes every code up to `M` and gives the standard's value.
    #[test]
    fn any_range_writes_and_reads_the_standards_codes(
        min in -1.0e7f32..1.0e7,
        span in 1.0e-4f32..1.0e7,
        steps in 1u32..=(1u32 << 26),
        v in -2.0e7f32..2.0e7,
        pick in 0.0f64..=1.0,
    ) {
        use bitlens_testkit::fuzzing::quantize::{standard_code, standard_value};
        use bitlens_codec::Stream;
        let (max, res) = (min + span, span / steps as f32);
        let Ok(q) = bitlens_codec::CompressedFloat::new(min, max, res) else { return Ok(()) };
        let code = q.encode(v);
        prop_assert_eq!(u64::from(code), standard_code(min, max, res, v).min(u64::from(q.steps())));
        let any = (pick * f64::from(q.steps())) as u32;
        let mut buf = [0u8; 8];
        let mut w = bitlens_codec::BitWriter::new(&mut buf);
        w.write_bits(any, q.width()).unwrap();
        let n = w.finish().len();
        let mut back = 0.0f32;
        bitlens_codec::ReadStream::new(&buf[..n]).compressed_f32("v", &mut back, &q).unwrap();
        prop_assert_eq!(back.to_bits(), standard_value(min, max, res, any).to_bits());
    }
}

#[test]
fn int_relative_reader_refuses_values_past_i32() {
    use bitlens_codec::{ReadStream, Stream};
    // previous = i32::MAX and a "+1" flag: 2^31, which serialize 1.0 refuses (no wrapping).
    let mut current = 0;
    let err = ReadStream::new(&[0x01])
        .int_relative("id", i64::from(i32::MAX), &mut current)
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::OutOfRange {
                value: 2147483648,
                min: 2147483648,
                max: 2147483647
            }
        ),
        "{err}"
    );
}

/// Every error of a relative object index names the index once, whichever check raised it: the
/// written range, six zero flags where `max_objects < 125` leaves no last tier, and an index
/// past `max_objects` (inside a struct and an array element, the path grows as usual).
#[test]
fn object_index_errors_name_the_index_once() {
    use bitlens_codec::{ReadStream, Stream, TraceStream, WriteStream};
    let read = |data: &[u8], previous, max_objects| {
        let mut current = 0;
        ReadStream::new(data)
            .scope("rel", |s| {
                s.index(2, |s| {
                    s.object_index("tiny", previous, &mut current, max_objects)
                })
            })
            .unwrap_err()
    };
    // Six zero flags: a difference of at least 126, more than 50 objects allow.
    let err = read(&[0x00], -1, 50);
    assert_eq!(err.field(), "rel[2].tiny", "{err}");
    assert_eq!(err.bit(), 0);
    assert!(
        matches!(
            err.kind(),
            ErrorKind::OutOfRange {
                value: 125,
                min: 0,
                max: 50
            }
        ),
        "{err}"
    );
    // d = 1 after 50: index 51, past max_objects.
    let err = read(&[0x01], 50, 50);
    assert_eq!(err.field(), "rel[2].tiny", "{err}");
    assert!(
        matches!(err.kind(), ErrorKind::OutOfRange { value: 51, .. }),
        "{err}"
    );
    // The last tier of a large max_objects: d = 126 + raw beyond max_objects + 1.
    let err = read(&[0xC0, 0xFF, 0xFF], -1, 200);
    assert_eq!(err.field(), "rel[2].tiny.d", "{err}");
    let mut buf = [0u8; 4];
    let err = WriteStream::new(&mut buf)
        .scope("rel", |s| s.object_index("tiny", 10, &mut 10, 50))
        .unwrap_err();
    assert_eq!(err.field(), "rel.tiny", "{err}");
    // The trace stream reports the same error as the read stream.
    let mut current = 0;
    let mut t = TraceStream::new(&[0x00]);
    let err = t.object_index("tiny", -1, &mut current, 50).unwrap_err();
    assert_eq!(err.field(), "tiny", "{err}");
}

#[test]
fn zero_bit_array_elements_are_bounded_by_the_data() {
    use bitlens_codec::{ReadStream, Stream};
    // A count of 1,000,000 elements that take no bits, claimed by 3 bytes: refused before the
    // loop, because each element counts one bit against what remains.
    let data = [0x40, 0x42, 0x0F];
    let mut v: Vec<i64> = Vec::new();
    let err = ReadStream::new(&data)
        .array("a", &mut v, 1_000_000, 0, |s, e| s.int("", e, 7, 7))
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::PastEnd { .. }), "{err}");
    assert!(v.is_empty());
}

#[test]
fn a_failed_array_element_leaves_the_elements_before_it() {
    use bitlens_codec::{ReadStream, Stream, WriteStream};
    // Count 3 in 2 bits, then 1, 2 and 7 in 3 bits each; the reader's range stops at 5.
    let mut buf = [0u8; 4];
    let mut w = WriteStream::new(&mut buf);
    let mut values = vec![1i64, 2, 7];
    w.array("a", &mut values, 3, 3, |s, e| s.int("", e, 0, 7))
        .unwrap();
    let n = w.finish();
    for min_element_bits in [0, 3] {
        let mut v: Vec<i64> = vec![9; 5];
        let err = ReadStream::new(&buf[..n])
            .array("a", &mut v, 3, min_element_bits, |s, e| s.int("", e, 0, 5))
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::OutOfRange { value: 7, .. }),
            "{err}"
        );
        assert_eq!(err.field(), "a[2]");
        assert_eq!(v, [1, 2], "min_element_bits {min_element_bits}");
    }
}

/// A stream that passes every primitive to `S` and keeps the trait's default for everything
/// else: the flag-by-flag reference for the streams' own faster paths (int_relative,
/// compressed_f32, array).
struct Defaults<S>(S);

impl<S: bitlens_codec::Stream> bitlens_codec::Stream for Defaults<S> {
    const READING: bool = S::READING;
    fn bits(&mut self, name: &str, v: &mut u64, n: u32) -> bitlens_codec::Result<()> {
        self.0.bits(name, v, n)
    }
    fn bool(&mut self, name: &str, v: &mut bool) -> bitlens_codec::Result<()> {
        self.0.bool(name, v)
    }
    fn int(&mut self, name: &str, v: &mut i64, min: i64, max: i64) -> bitlens_codec::Result<()> {
        self.0.int(name, v, min, max)
    }
    fn u64(&mut self, name: &str, v: &mut u64) -> bitlens_codec::Result<()> {
        self.0.u64(name, v)
    }
    fn f32(&mut self, name: &str, v: &mut f32) -> bitlens_codec::Result<()> {
        self.0.f32(name, v)
    }
    fn f64(&mut self, name: &str, v: &mut f64) -> bitlens_codec::Result<()> {
        self.0.f64(name, v)
    }
    fn align(&mut self, name: &str) -> bitlens_codec::Result<()> {
        self.0.align(name)
    }
    fn bytes(&mut self, name: &str, buf: &mut [u8]) -> bitlens_codec::Result<()> {
        self.0.bytes(name, buf)
    }
    fn check(&mut self, label: &str) -> bitlens_codec::Result<()> {
        self.0.check(label)
    }
    fn end(&mut self) -> bitlens_codec::Result<()> {
        self.0.end()
    }
    fn packet_crc(&mut self, id: bitlens_codec::ProtocolId) -> bitlens_codec::Result<()> {
        self.0.packet_crc(id)
    }
    fn bit_position(&self) -> usize {
        self.0.bit_position()
    }
    fn remaining_bits(&self) -> usize {
        self.0.remaining_bits()
    }
}

/// Around zero, near both ends of the i32 domain, and one past it (invalid_argument).
const PREVIOUS: [i64; 10] = [
    -1,
    0,
    1,
    1000,
    2_147_483_642,
    2_147_483_646,
    2_147_483_647,
    -2_147_483_648,
    -2_147_483_649,
    -70_000,
];

#[test]
fn int_relative_reads_like_the_flag_by_flag_default() {
    use bitlens_codec::{ReadStream, Stream};
    // Every 2-byte input (and its 1-byte prefix): values, bits consumed and errors agree.
    for x in 0..=u16::MAX {
        let bytes = x.to_le_bytes();
        for data in [&bytes[..1], &bytes[..]] {
            for previous in PREVIOUS {
                let (mut a, mut b) = (0i64, 0i64);
                let mut fast = ReadStream::new(data);
                let mut reference = Defaults(ReadStream::new(data));
                let ra = fast.int_relative("id", previous, &mut a);
                let rb = reference.int_relative("id", previous, &mut b);
                assert_eq!(ra, rb, "{data:02x?} after {previous}");
                assert_eq!(a, b, "{data:02x?} after {previous}");
                assert_eq!(fast.bit_position(), reference.bit_position(), "{data:02x?}");
            }
        }
    }
}

#[test]
fn int_relative_writes_like_the_flag_by_flag_default() {
    use bitlens_codec::{Stream, WriteStream};
    for previous in PREVIOUS {
        let mut currents: Vec<i64> = (previous - 3..previous + 40).collect();
        currents.extend([
            previous + 69_914,
            previous + 69_915,
            2_147_483_647,
            2_147_483_648,
            -2_147_483_648,
        ]);
        for current in currents {
            // Buffers of 0 to 6 bytes: every tier, and a full buffer at every flag.
            for len in 0..=6 {
                let (mut a, mut b) = ([0u8; 6], [0u8; 6]);
                let (mut ca, mut cb) = (current, current);
                let mut fast = WriteStream::new(&mut a[..len]);
                let ra = fast.int_relative("id", previous, &mut ca);
                let na = fast.finish();
                let mut reference = Defaults(WriteStream::new(&mut b[..len]));
                let rb = reference.int_relative("id", previous, &mut cb);
                let nb = reference.0.finish();
                assert_eq!(ra, rb, "{current} after {previous} in {len} bytes");
                assert_eq!(
                    (na, a),
                    (nb, b),
                    "{current} after {previous} in {len} bytes"
                );
            }
        }
    }
}

#[test]
fn compressed_floats_and_arrays_match_the_defaults() {
    use bitlens_codec::{CompressedFloat, ReadStream, Stream, WriteStream};
    // The entity range (exact), a range near 2^24 steps (inexact) and a 1-step range.
    let ranges = [
        CompressedFloat::new(-1000.0, 1000.0, 0.01).unwrap(),
        CompressedFloat::new(1.0e6, 1.0e6 + 20.0, 1.0e-6).unwrap(),
        CompressedFloat::new(0.0, 1.0, 1.0).unwrap(),
    ];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for q in &ranges {
        // The codes at the edges of the range, and past it.
        let top = (1u64 << q.width()) - 1;
        let steps = u64::from(q.steps());
        for code in [0, 1, steps.saturating_sub(1), steps, steps + 1, top] {
            let bytes = code.min(top).to_le_bytes();
            let (mut a, mut b) = (0.0f32, 0.0f32);
            let mut fast = ReadStream::new(&bytes[..5]);
            let mut reference = Defaults(ReadStream::new(&bytes[..5]));
            let ra = fast.compressed_f32("x", &mut a, q);
            let rb = reference.compressed_f32("x", &mut b, q);
            assert_eq!(ra, rb, "code {code} of {}", q.steps());
            assert_eq!(a.to_bits(), b.to_bits());
        }
        for _ in 0..20_000 {
            // Reading 0 to 4 random bytes: an array of up to 3 floats.
            let bytes = next().to_le_bytes();
            let data = &bytes[..(next() % 5) as usize];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut fast = ReadStream::new(data);
            let mut reference = Defaults(ReadStream::new(data));
            let ra = fast.array("p", &mut a, 3, 1, |s, f| s.compressed_f32("x", f, q));
            let rb = reference.array("p", &mut b, 3, 1, |s, f| s.compressed_f32("x", f, q));
            assert_eq!(ra, rb, "{data:02x?}");
            assert_eq!(
                a.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                b.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(fast.bit_position(), reference.bit_position());
            // Writing up to 3 random floats (any bit pattern) into 0 to 12 bytes.
            let mut values: Vec<f32> = (0..next() % 4)
                .map(|_| f32::from_bits(next() as u32))
                .collect();
            let len = (next() % 13) as usize;
            let (mut ba, mut bb) = ([0u8; 12], [0u8; 12]);
            let mut fast = WriteStream::new(&mut ba[..len]);
            let ra = fast.array("p", &mut values, 3, 1, |s, f| s.compressed_f32("x", f, q));
            let na = fast.finish();
            let mut reference = Defaults(WriteStream::new(&mut bb[..len]));
            let rb = reference.array("p", &mut values, 3, 1, |s, f| s.compressed_f32("x", f, q));
            let nb = reference.0.finish();
            assert_eq!(ra, rb);
            assert_eq!((na, ba), (nb, bb));
        }
    }
}
