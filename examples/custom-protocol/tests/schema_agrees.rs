//! `captures/custom.schema.toml` describes this crate's protocol exactly: the schema interpreter
//! and the compiled serialize functions give the same verdict, error, field paths, bits and
//! values on every datagram of `captures/custom.pcap`, on arbitrary packets, and on every bit
//! flip of them behind a valid CRC.

use arbitrary::{Arbitrary, Unstructured};
use bitlens::capture::Capture;
use bitlens_codec::fuzzing::with_valid_crc;
use bitlens_codec::packet::{Packet as _, trace_packet, write_packet};
use bitlens_codec::trace::Trace;
use bitlens_schema::Schema;
use custom_protocol::{MTU, Packet};
use std::path::PathBuf;
use std::sync::LazyLock;

fn captures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../captures")
}

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::load(&captures().join("custom.schema.toml")).unwrap_or_else(|e| panic!("{e}"))
});

/// Both engines read `data`; their traces must be equal field by field.
fn same_trace(data: &[u8]) -> Trace {
    let (_, compiled) = trace_packet::<Packet>(data);
    let (_, schema) = SCHEMA.trace(data);
    for (i, (c, s)) in compiled.fields.iter().zip(&schema.fields).enumerate() {
        assert_eq!(c, s, "trace field {i} differs on {data:02x?}");
    }
    assert_eq!(compiled.fields.len(), schema.fields.len(), "on {data:02x?}");
    assert_eq!(compiled.error, schema.error, "on {data:02x?}");
    assert_eq!(compiled.bits_read, schema.bits_read);
    compiled
}

fn arbitrary_packets(count: usize) -> Vec<Vec<u8>> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::new();
    while out.len() < count {
        let data: Vec<u8> = (0..512)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let mut u = Unstructured::new(&data);
        let Ok(mut p) = Packet::arbitrary(&mut u) else {
            continue;
        };
        let mut buf = [0u8; MTU];
        if let Ok(n) = write_packet(&mut p, &mut buf) {
            out.push(buf[..n].to_vec());
        }
    }
    out
}

#[test]
fn the_schema_has_the_compiled_framing() {
    assert_eq!(SCHEMA.protocol(), Packet::protocol());
}

#[test]
fn every_datagram_of_the_capture_agrees() {
    let capture = Capture::open(captures().join("custom.pcap")).unwrap();
    let (mut ok, mut failed) = (0, 0);
    for d in capture.datagrams() {
        let trace = same_trace(capture.payload(d));
        if trace.error.is_none() {
            ok += 1
        } else {
            failed += 1
        }
    }
    // The session's six faults: five fail to read, the sixth is a cut frame.
    assert_eq!(failed, 6, "{ok} read");
    assert!(ok > 150, "{ok} read");
}

#[test]
fn arbitrary_packets_and_their_bit_flips_agree() {
    for bytes in arbitrary_packets(300) {
        let trace = same_trace(&bytes);
        assert!(trace.error.is_none());
        // What the schema reads, it writes back to the same bytes.
        let (t, value) = SCHEMA.read(&bytes).expect("the schema reads it");
        let mut buf = [0u8; MTU];
        let name = Packet::protocol().type_name(t).unwrap();
        let n = SCHEMA.write(name, &value, &mut buf).expect("and writes it");
        assert_eq!(&buf[..n], &bytes[..]);
    }
    for bytes in arbitrary_packets(12) {
        for bit in 32..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            same_trace(&with_valid_crc(Packet::protocol(), &b).unwrap_or(b));
        }
        for n in 0..bytes.len() {
            same_trace(&bytes[..n]);
        }
    }
}
