//! `schema_vs_compiled`: the schema interpreter running `captures/demo.schema.toml` and the
//! compiled demo protocol agree on every input.

use crate::demo::{DemoPacket, MTU, RigidBody};
use crate::packet::{Packet, trace_packet, write_packet};
use crate::schema::{DynValue, Schema};
use crate::stream::Trace;
use arbitrary::{Arbitrary, Unstructured};
use serde_json::{Value as Json, json};
use std::sync::LazyLock;

/// The text of `captures/demo.schema.toml`.
pub const DEMO_SCHEMA: &str = include_str!("../../../captures/demo.schema.toml");

/// The demo schema, parsed once.
pub static DEMO: LazyLock<Schema> =
    LazyLock::new(
        || match Schema::from_toml(DEMO_SCHEMA, "captures/demo.schema.toml") {
            Ok(s) => s,
            Err(e) => panic!("the demo schema does not parse: {e}"),
        },
    );

fn body_json(b: &RigidBody) -> serde_json::Map<String, Json> {
    let mut m = serde_json::Map::new();
    m.insert("position".into(), json!(b.position));
    m.insert("orientation".into(), json!(b.orientation));
    m.insert("at_rest".into(), json!(b.at_rest));
    if !b.at_rest {
        m.insert("linear_velocity".into(), json!(b.linear_velocity));
        m.insert("angular_velocity".into(), json!(b.angular_velocity));
    }
    m
}

/// A compiled demo packet as the JSON the schema reads it as: its type name and body.
pub fn demo_json(p: &DemoPacket) -> (&'static str, Json) {
    match p {
        DemoPacket::A(a) => ("PacketA", json!({"x": a.x, "y": a.y, "z": a.z})),
        DemoPacket::B(b) => ("PacketB", json!({"elements": b.elements})),
        DemoPacket::C(c) => ("PacketC", json!({"a": c.a, "b": c.b, "c": c.c})),
        DemoPacket::RigidBody(b) => ("RigidBody", Json::Object(body_json(b))),
        DemoPacket::SceneUpdate(u) => {
            let objects: Vec<Json> = u
                .objects
                .iter()
                .map(|o| {
                    let mut m = serde_json::Map::new();
                    m.insert("index".into(), json!(o.index));
                    m.extend(body_json(&o.body));
                    Json::Object(m)
                })
                .collect();
            (
                "SceneUpdate",
                json!({"sequence": u.sequence, "objects": objects}),
            )
        }
        DemoPacket::RoboCat(c) => (
            "RoboCat",
            json!({
                "health": c.health,
                "meow_count": c.meow_count,
                "home_base": crate::link::NetworkId::to_wire(c.home_base),
                "name": c.name,
                "mice": c.mice,
                "location": {"x": c.location[0], "y": c.location[1], "z": c.location[2]},
                "rotation": c.rotation,
            }),
        ),
    }
}

/// Asserts two traces are equal field by field (with a readable message at the first
/// difference).
pub fn assert_same_trace(compiled: &Trace, schema: &Trace) {
    for (i, (c, s)) in compiled.fields.iter().zip(&schema.fields).enumerate() {
        assert_eq!(c, s, "trace field {i} differs");
    }
    assert_eq!(
        compiled.fields.len(),
        schema.fields.len(),
        "trace lengths differ"
    );
    assert_eq!(compiled.error, schema.error, "trace errors differ");
    assert_eq!(compiled.bits_read, schema.bits_read);
    assert_eq!(compiled.total_bits, schema.total_bits);
}

/// The raw-bytes half: `data` read as a datagram by both engines.
pub fn same_verdict(data: &[u8]) {
    let (packet, compiled) = trace_packet::<DemoPacket>(data);
    let (t, traced) = DEMO.trace(data);
    assert_same_trace(&compiled, &traced);
    let read = DEMO.read(data);
    match (&packet, &read) {
        (Some(p), Ok((rt, value))) => {
            assert_eq!(*rt, p.packet_type());
            assert_eq!(t, Some(*rt));
            // The same values: the compiled packet's JSON gives the value the schema read...
            let (name, j) = demo_json(p);
            let from_json = DEMO.value_from_json(name, &j).expect("demo JSON converts");
            assert_eq!(&from_json, value, "schema read other values");
            // ... and an accepted packet re-encodes to the identical bytes.
            let mut buf = [0u8; MTU];
            let n = DEMO
                .write(name, value, &mut buf)
                .expect("accepted value writes");
            assert_eq!(&buf[..n], data, "schema re-encodes to other bytes");
        }
        (None, Err(e)) => assert_eq!(compiled.error.as_ref(), Some(e)),
        _ => panic!(
            "verdicts differ: compiled {:?}, schema {:?}",
            compiled.error, read
        ),
    }
}

/// The values half: an arbitrary demo packet written by both engines gives the same bytes (or
/// the same error), and measures the same bits.
pub fn same_bytes(p: &DemoPacket) {
    let (name, j) = demo_json(p);
    let value = DEMO.value_from_json(name, &j).expect("demo JSON converts");
    let mut a = [0u8; MTU];
    let mut b = [0u8; MTU];
    let compiled = write_packet(&mut p.clone(), &mut a);
    let schema = DEMO.write(name, &value, &mut b);
    match (compiled, schema) {
        (Ok(n), Ok(m)) => {
            assert_eq!(&a[..n], &b[..m], "same values, other bytes");
            let bits = crate::packet::measure_packet(&mut p.clone()).expect("measures");
            assert_eq!(DEMO.measure(name, &value).expect("measures"), bits);
            let (t, back) = DEMO.read(&b[..m]).expect("schema reads what it wrote");
            assert_eq!(t, p.packet_type());
            assert_eq!(back, value, "read(write(x)) == x through the schema");
        }
        (Err(e), Err(f)) => assert_eq!(e, f, "same values, other errors"),
        (c, s) => panic!("verdicts differ on write: compiled {c:?}, schema {s:?}"),
    }
}

/// `schema_vs_compiled`: `data` as a datagram, and `data` as the seed of an arbitrary demo
/// packet: both engines agree on each.
pub fn schema_vs_compiled(data: &[u8]) {
    same_verdict(data);
    let mut u = Unstructured::new(data);
    if let Ok(p) = DemoPacket::arbitrary(&mut u) {
        same_bytes(&p);
    }
}

/// Writes `value` with the demo schema (test convenience).
pub fn demo_write(name: &str, value: &DynValue) -> Vec<u8> {
    let mut buf = [0u8; MTU];
    let n = DEMO.write(name, value, &mut buf).expect("writes");
    buf[..n].to_vec()
}
