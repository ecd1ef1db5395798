//! Property tests of the codec invariants over arbitrary demo packets and op sequences:
//! read(write(x)) == x, measure == bits written, trace agrees with read, accepted packets
//! re-encode identically, hostile lengths are rejected. They run the fuzz harness functions, so
//! the fuzzers and these tests check the same properties.

use bitlens_codec::demo::{DemoPacket, MTU};
use bitlens_codec::fuzzing;
use bitlens_codec::{ErrorKind, read_packet, write_packet};
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
        let crc = bitlens_codec::packet::packet_crc(bitlens_codec::demo::PROTOCOL_ID, &bytes);
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
    let mut cat = bitlens_codec::demo::RoboCat {
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
    let mut b = DemoPacket::B(bitlens_codec::demo::PacketB {
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

    /// Exact ranges keep every code through read then write.
    #[test]
    fn exact_ranges_keep_every_code(
        min in -1.0e6f32..1.0e6,
        span in 1.0e-3f32..1.0e6,
        steps in 1u32..=bitlens_codec::quantize::EXACT_STEPS_ANY_RANGE,
        pick in 0.0f64..=1.0,
    ) {
        let Ok(q) = bitlens_codec::CompressedFloat::new(min, min + span, span / steps as f32) else { return Ok(()) };
        prop_assume!(q.is_exact());
        let code = (pick * f64::from(q.steps())) as u32;
        prop_assert_eq!(q.encode(q.decode(code)), code, "M = {}", q.steps());
        prop_assert_eq!(q.encode(q.decode(q.steps())), q.steps());
        prop_assert_eq!(q.encode(q.decode(0)), 0);
    }

    /// Any range, exact or not: what a writer sends, a reader accepts, and it re-encodes to the
    /// same code.
    #[test]
    fn any_range_written_codes_are_canonical(
        min in -1.0e7f32..1.0e7,
        span in 1.0e-4f32..1.0e7,
        steps in 1u32..=(1u32 << 26),
        v in -2.0e7f32..2.0e7,
    ) {
        let Ok(q) = bitlens_codec::CompressedFloat::new(min, min + span, span / steps as f32) else { return Ok(()) };
        let code = q.encode(v);
        prop_assert!(q.is_canonical(code), "code {code} of M = {} (exact {})", q.steps(), q.is_exact());
        prop_assert_eq!(q.encode(q.decode(code)), code);
    }
}

#[test]
fn int_relative_reader_refuses_values_past_u32() {
    use bitlens_codec::{ReadStream, Stream};
    // previous = u32::MAX and a "+1" flag: 2^32, which no writer can send.
    let mut current = 0;
    let err = ReadStream::new(&[0x01])
        .int_relative("id", i64::from(u32::MAX), &mut current)
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::OutOfRange {
                value: 4294967296,
                min: 0,
                max: 4294967295
            }
        ),
        "{err}"
    );
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
