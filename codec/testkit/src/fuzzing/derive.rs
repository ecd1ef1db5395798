//! `derive_vs_schema`: a derived packet set and the schema interpreter running the schema text
//! the derive wrote (`PacketSet::schema()`) agree on every input and every value: the same
//! verdict, error, field paths, bits and values for any datagram, and the same bytes, trace and
//! bits for any packet. Checked for the [`crate::showcase`] protocol (every attribute) and the
//! derived demo protocol.

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
/// the same trace (verdict, error, fields); what both accept re-encodes to `data` through each.
pub fn same_verdict<P: Packet + Default + Debug>(schema: &Schema, data: &[u8]) {
    let (packet, derived) = trace_packet::<P>(data);
    let (_, traced) = schema.trace(data);
    assert_same_trace(&derived, &traced);
    let read = schema.read(data);
    match (packet, &read) {
        (Some(mut p), Ok((t, value))) => {
            assert_eq!(*t, p.packet_type(), "other packet types");
            let mtu = P::protocol().mtu;
            let mut a = vec![0u8; mtu];
            let n = write_packet(&mut p, &mut a).expect("an accepted packet writes");
            assert_eq!(&a[..n], data, "the derived code re-encodes to other bytes");
            let name = &P::protocol().packet_types[*t as usize];
            let mut b = vec![0u8; mtu];
            let m = schema
                .write(name, value, &mut b)
                .expect("an accepted value writes");
            assert_eq!(&b[..m], data, "the schema re-encodes to other bytes");
        }
        (None, Err(e)) => assert_eq!(derived.error.as_ref(), Some(e)),
        (p, s) => panic!("verdicts differ: derived {p:?}, schema {s:?}"),
    }
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
