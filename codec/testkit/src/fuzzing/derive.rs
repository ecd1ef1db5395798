//! `derive_vs_schema`: a derived packet set and the schema interpreter running the schema text
//! the derive wrote (`PacketSet::schema()`) agree on every input and every value: the same
//! verdict, error, field paths, bits and values for any datagram, and the same bytes, trace and
//! bits for any packet. Checked for the [`crate::showcase`] protocol (every attribute) and the
//! derived demo protocol.

use crate::fuzzing::assert_reencoding;
use crate::fuzzing::schema::assert_same_trace;
use arbitrary::Unstructured;
use bitlens_codec::packet::{Packet, measure_packet, packet_crc, trace_packet, write_packet};
use bitlens_codec::{PacketSet, generate};
use bitlens_schema::Schema;
use std::fmt::Debug;
use std::sync::LazyLock;

/// The showcase protocol's derived schema, loaded by `bitlens-schema`.
pub static SHOWCASE: LazyLock<Schema> = LazyLock::new(load::<crate::showcase::Showcase>);

/// The demo protocol's derived schema, loaded by `bitlens-schema`.
pub static DEMO: LazyLock<Schema> = LazyLock::new(load::<crate::demo::DemoPacket>);

fn load<P: PacketSet>() -> Schema {
    let text = P::schema();
    match Schema::from_toml(&text, "derived.schema.toml") {
        Ok(s) => s,
        Err(e) => panic!("the derived schema does not load: {e}\n{text}"),
    }
}

/// The raw-bytes half: `data` read as a datagram by the derived code and by the schema gives
/// the same trace (verdict, error, fields); what both accept, both write back as the same bytes:
/// `data` itself but where serialize 1.0's read-then-write is not stable
/// ([`assert_reencoding`]).
pub fn same_verdict<P: Packet + Default + Debug>(schema: &Schema, data: &[u8]) {
    let (packet, derived) = trace_packet::<P>(data);
    let (_, traced) = schema.trace(data);
    assert_same_trace(&derived, &traced);
    // Its storage for this thread's next trace (fewer allocations per execution).
    traced.recycle();
    let read = schema.read(data);
    match (packet, &read) {
        (Some(mut p), Ok((t, value))) => {
            assert_eq!(*t, p.packet_type(), "other packet types");
            let mtu = P::protocol().mtu;
            let mut a = vec![0u8; mtu];
            let n = write_packet(&mut p, &mut a).expect("an accepted packet writes");
            let name = &P::protocol().packet_types[*t as usize];
            let mut b = vec![0u8; mtu];
            let m = schema
                .write(name, value, &mut b)
                .expect("an accepted value writes");
            assert_eq!(
                &a[..n],
                &b[..m],
                "the derived code and the schema write other bytes"
            );
            // The same bytes, where serialize 1.0's read-then-write is stable; the writer's
            // formula on near-tie quaternions and small differences sent absolute.
            let (_, again) = trace_packet::<P>(&a[..n]);
            assert_reencoding(data, &a[..n], &derived, &again);
            again.recycle();
        }
        (None, Err(e)) => assert_eq!(derived.error.as_ref(), Some(e)),
        (p, s) => panic!("verdicts differ: derived {p:?}, schema {s:?}"),
    }
    derived.recycle();
}

/// The values half: an arbitrary packet of `P` (drawn through its own serialize function, so
/// within every declared range) written by the derived code; the schema reads those bytes, writes
/// the value it read to the same bytes, measures the same bits and traces the same fields.
pub fn same_bytes<P: Packet + Default + Debug>(schema: &Schema, u: &mut Unstructured<'_>) {
    let Ok(mut p) = generate::packet::<P>(u) else {
        return;
    };
    let mtu = P::protocol().mtu;
    let mut a = vec![0u8; mtu];
    let Ok(n) = write_packet(&mut p, &mut a) else {
        // Over the MTU: a write error, as the schema gives for the same value (not compared:
        // the schema's value comes from reading the bytes).
        return;
    };
    let data = &a[..n];
    let (t, value) = match schema.read(data) {
        Ok(v) => v,
        Err(e) => panic!("the schema refuses what the derived code wrote ({p:?}): {e}"),
    };
    let name = &P::protocol().packet_types[t as usize];
    let mut b = vec![0u8; mtu];
    let m = schema
        .write(name, &value, &mut b)
        .expect("the schema writes");
    assert_eq!(&b[..m], data, "same value, other bytes ({p:?})");
    let bits = measure_packet(&mut p).expect("measures");
    assert_eq!(schema.measure(name, &value).expect("measures"), bits);
    let (back, derived) = trace_packet::<P>(data);
    let (_, traced) = schema.trace(data);
    assert_same_trace(&derived, &traced);
    traced.recycle();
    derived.recycle();
    let mut back = back.expect("the derived code reads what it wrote");
    let mut c = vec![0u8; mtu];
    let k = write_packet(&mut back, &mut c).expect("writes again");
    assert_eq!(&c[..k], data, "read(write(x)) writes other bytes");
}

/// `derive_vs_schema`: `data` as a datagram of the showcase and of the demo protocol, and as the
/// seed of an arbitrary packet of each: the derived code and its schema agree on each.
pub fn derive_vs_schema(data: &[u8]) {
    use crate::demo::DemoPacket;
    use crate::showcase::Showcase;
    same_verdict::<Showcase>(&SHOWCASE, data);
    same_verdict::<DemoPacket>(&DEMO, data);
    // Random bytes rarely carry a valid CRC: read them again with one, to reach the bodies.
    if data.len() >= 4 {
        for id in [Showcase::protocol().id, DemoPacket::protocol().id] {
            let mut fixed = data.to_vec();
            let crc = packet_crc(id, &fixed);
            fixed[..4].copy_from_slice(&crc.to_le_bytes());
            same_verdict::<Showcase>(&SHOWCASE, &fixed);
            same_verdict::<DemoPacket>(&DEMO, &fixed);
        }
    }
    same_bytes::<Showcase>(&SHOWCASE, &mut Unstructured::new(data));
    same_bytes::<DemoPacket>(&DEMO, &mut Unstructured::new(data));
}

/// Showcase datagrams that serialize 1.0's readers accept and bitlens's writer writes back as
/// other bytes: the seeds and the test of [`crate::fuzzing::assert_reencoding`].
pub mod standard_only {
    use crate::showcase::{self, Relatives, Showcase};
    use bitlens_codec::checksum::packet_crc;
    use bitlens_codec::packet::{Packet, trace_packet, write_packet};
    use bitlens_codec::quantize::SmallestThree;
    use bitlens_codec::trace::{FieldKind, Trace, Value};

    /// The bits of `data` from `from` to `to` (stream order: bit `b` is bit `b % 8` of byte
    /// `b / 8`).
    fn bits_of(data: &[u8], from: usize, to: usize) -> Vec<bool> {
        (from..to)
            .map(|b| data[b / 8] >> (b % 8) & 1 == 1)
            .collect()
    }

    /// Bits packed into bytes, zero-padded, with the showcase's packet CRC in the first four.
    fn sealed(bits: &[bool]) -> Vec<u8> {
        let mut out = vec![0u8; bits.len().div_ceil(8)];
        for (b, &set) in bits.iter().enumerate() {
            out[b / 8] |= u8::from(set) << (b % 8);
        }
        let crc = packet_crc(Showcase::protocol().id, &out);
        out[..4].copy_from_slice(&crc.to_le_bytes());
        out
    }

    fn written(p: &mut Showcase) -> (Vec<u8>, Trace) {
        let mut buf = vec![0u8; showcase::MTU];
        let n = write_packet(p, &mut buf).expect("the showcase packet writes");
        buf.truncate(n);
        let (_, trace) = trace_packet::<Showcase>(&buf);
        assert!(trace.error.is_none(), "{:?}", trace.error);
        (buf, trace)
    }

    /// A relatives packet whose three relative integers each go one above their previous value
    /// (one flag each), and its bytes.
    pub fn relatives() -> (Showcase, Vec<u8>) {
        let mut p = Showcase::Relatives(Relatives {
            base: 5,
            next: 6,
            later: 6,
            after_hundred: 101,
            first: 0,
            ids: vec![11],
            stamps: vec![1001],
        });
        let (bytes, _) = written(&mut p);
        (p, bytes)
    }

    /// Named datagrams: `absolute_<field>`, [`relatives`] with one relative integer sent in the
    /// absolute tier (six 0 flags, then 32 bits), and `near_tie_<a>_<b>_<c>`, a floats packet
    /// whose 9-bit quaternion (largest 0) rebuilds its largest component below a sent one.
    pub fn datagrams() -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let (_, buf) = relatives();
        let (_, trace) = trace_packet::<Showcase>(&buf);
        let end_of_packet = |check: bool| {
            trace
                .fields
                .iter()
                .filter(|g| g.path() == "end of packet")
                .find(|g| matches!(g.kind, FieldKind::Check { .. }) == check)
                .map(|g| g.bit)
        };
        let end = end_of_packet(true).expect("an end check");
        let body_end = end_of_packet(false).unwrap_or(end);
        for (path, name) in [
            ("after_hundred", "after_hundred"),
            ("later", "later"),
            ("stamps[0]", "stamps_0"),
        ] {
            // (An array element's path names its scope first, then its value's.)
            let f = trace
                .fields
                .iter()
                .rfind(|g| g.path() == path)
                .expect("traced");
            let Value::Int(value) = f.value else {
                unreachable!("a relative integer traces its value")
            };
            let mut bits = bits_of(&buf, 0, f.bit);
            bits.extend([false; 6]);
            bits.extend((0..32).map(|i| (value as u32) >> i & 1 == 1));
            // The body after it, then the aligned end-of-packet check.
            bits.extend(bits_of(&buf, f.bit + f.bits, body_end));
            bits.resize(bits.len().div_ceil(8) * 8, false);
            bits.extend(bits_of(&buf, end, end + 32));
            out.push((format!("absolute_{name}"), sealed(&bits)));
        }
        let spec = SmallestThree::new(9).expect("9 bits");
        let (buf, trace) = written(&mut Showcase::Floats(showcase::Floats::default()));
        let at = trace.get("rotation.largest").expect("traced").bit;
        let c = spec.max_code() - 3;
        for a in (0..=spec.max_code()).step_by(7) {
            for b in (0..=spec.max_code()).step_by(11) {
                if spec.reencodes(0, [a, b, c]) {
                    continue;
                }
                let mut bits = bits_of(&buf, 0, buf.len() * 8);
                let mut bit = at;
                for (v, w) in [(0u32, 2usize), (a, 9), (b, 9), (c, 9)] {
                    for i in 0..w {
                        bits[bit + i] = v >> i & 1 == 1;
                    }
                    bit += w;
                }
                out.push((format!("near_tie_{a}_{b}_{c}"), sealed(&bits)));
            }
        }
        out
    }
}
