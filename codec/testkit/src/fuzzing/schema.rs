//! `schema_vs_compiled`: the schema interpreter running `captures/demo.schema.toml` and the
//! compiled demo protocol agree on every input; `schema_batch_vs_compiled`: the same for the
//! schema's `[batch]` section and the compiled batch messages.

use crate::batch_demo::{DemoMessage, DemoMessages, dissect};
use crate::demo::{DemoPacket, MTU, RigidBody};
use arbitrary::{Arbitrary, Unstructured};
use bitlens_batch::{check_batch, dissect_batch, dissect_batch_values, read_batch};
use bitlens_codec::dissect::Dissection;
use bitlens_codec::link::NetworkId;
use bitlens_codec::packet::{Packet, trace_packet, write_packet};
use bitlens_codec::trace::{Field, Trace};
use bitlens_schema::batch::BatchSchema;
use bitlens_schema::{DynStruct, DynValue, Schema};
use serde_json::{Value as Json, json};
use std::sync::LazyLock;

/// The text of `captures/demo.schema.toml`.
pub const DEMO_SCHEMA: &str = include_str!("../../../../captures/demo.schema.toml");

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
                "home_base": bitlens_codec::link::NetworkId::to_wire(c.home_base),
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
///
/// The entries are compared as views, walked with their paths ([`Entries::walk`]): path,
/// depth, bit, width, value ([`ValueRef`]'s equality is [`Value`](bitlens_codec::trace::Value)'s),
/// raw code, range, kind, check label and bits, and the failed mark: every part of
/// [`TraceField`](bitlens_codec::trace::TraceField)'s equality, without building the owned
/// fields of both traces (a `String` or more per entry). At a difference the two entries are
/// built and compared as before, for the same message.
///
/// [`Entries::walk`]: bitlens_codec::trace::Entries::walk
/// [`ValueRef`]: bitlens_codec::trace::ValueRef
pub fn assert_same_trace(compiled: &Trace, schema: &Trace) {
    let (mut a, mut b) = (compiled.fields.walk(), schema.fields.walk());
    let mut i = 0;
    while let (Some((c, c_path)), Some((s, s_path))) = (a.next(), b.next()) {
        if !same_entry(&c, c_path, &s, s_path) {
            assert_eq!(
                c.to_field(c_path),
                s.to_field(s_path),
                "trace field {i} differs"
            );
            unreachable!("trace field {i}: the views differ where the owned entries are equal");
        }
        i += 1;
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

/// Two entries (views, with their walked paths) are equal as their owned
/// [`TraceField`](bitlens_codec::trace::TraceField)s are.
fn same_entry(c: &Field<'_>, c_path: &str, s: &Field<'_>, s_path: &str) -> bool {
    c_path == s_path
        && c.depth() == s.depth()
        && c.bit() == s.bit()
        && c.bits() == s.bits()
        && c.failed() == s.failed()
        && c.kind() == s.kind()
        && c.check() == s.check()
        && c.raw() == s.raw()
        && c.range() == s.range()
        && c.value() == s.value()
}

/// The raw-bytes half: `data` read as a datagram by both engines.
pub fn same_verdict(data: &[u8]) {
    let (packet, compiled) = trace_packet::<DemoPacket>(data);
    let (t, traced) = DEMO.trace(data);
    assert_same_trace(&compiled, &traced);
    traced.recycle();
    let read = DEMO.read(data);
    match (&packet, &read) {
        (Some(p), Ok((rt, value))) => {
            assert_eq!(*rt, p.packet_type());
            assert_eq!(t, Some(*rt));
            // The same values: the compiled packet's JSON gives the value the schema read...
            let (name, j) = demo_json(p);
            let from_json = DEMO.value_from_json(name, &j).expect("demo JSON converts");
            assert_eq!(&from_json, value, "schema read other values");
            // ... and an accepted packet re-encodes to the identical bytes (but near ties).
            let mut buf = [0u8; MTU];
            let n = DEMO
                .write(name, value, &mut buf)
                .expect("accepted value writes");
            super::assert_reencodes(data, &buf[..n], &compiled);
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
            let bits = bitlens_codec::packet::count_packet(&mut p.clone()).expect("counts");
            assert_eq!(DEMO.count(name, &value).expect("counts"), bits);
            let bound = bitlens_codec::packet::measure_packet(&mut p.clone()).expect("measures");
            assert_eq!(DEMO.measure(name, &value).expect("measures"), bound);
            assert!(bound >= bits);
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

// ---- schema_batch_vs_compiled ------------------------------------------------------------------

fn floats<const N: usize>(a: [f32; N]) -> DynValue {
    DynValue::Array(a.iter().map(|&x| DynValue::F32(x)).collect())
}

fn int(x: impl Into<i64>) -> DynValue {
    DynValue::Int(x.into())
}

fn stamp_value(s: &crate::batch_demo::PingStamp) -> DynValue {
    DynValue::Struct(DynStruct::new([
        ("sequence", int(s.sequence)),
        ("sent_ms", int(s.sent_ms)),
        ("frame", DynValue::U64(s.frame)),
    ]))
}

/// A compiled demo message as the value the schema's `[batch]` section reads it as: its type
/// and body. A body at rest with velocities keeps them, so that both engines refuse it.
pub fn demo_message_value(m: &DemoMessage) -> (u8, DynValue) {
    let body = match m {
        DemoMessage::Spawn(c) => DynStruct::new([
            ("network_id", int(c.network_id.get())),
            ("health", int(c.health)),
            ("meow_count", int(c.meow_count)),
            ("home_base", int(NetworkId::to_wire(c.home_base))),
            ("name", DynValue::Str(c.name.as_str().to_owned())),
            (
                "mice",
                DynValue::Array(c.mice.iter().map(|&m| int(m)).collect()),
            ),
            (
                "location",
                DynValue::Array(c.location.iter().map(|&l| int(l)).collect()),
            ),
            ("rotation", floats(c.rotation)),
        ]),
        DemoMessage::Move(m) => {
            let b = &m.body;
            let moving =
                !b.at_rest || b.linear_velocity != [0.0; 3] || b.angular_velocity != [0.0; 3];
            let velocity = |v: [f32; 3]| if moving { floats(v) } else { DynValue::Null };
            DynStruct::new([
                ("network_id", int(m.network_id.get())),
                (
                    "body",
                    DynValue::Struct(DynStruct::new([
                        ("position", floats(b.position)),
                        ("orientation", floats(b.orientation)),
                        ("at_rest", DynValue::Bool(b.at_rest)),
                        ("linear_velocity", velocity(b.linear_velocity)),
                        ("angular_velocity", velocity(b.angular_velocity)),
                    ])),
                ),
            ])
        }
        DemoMessage::Chat(c) => DynStruct::new([
            ("player", int(c.player)),
            ("text", DynValue::Str(c.text.as_str().to_owned())),
        ]),
        DemoMessage::Ping(p) => DynStruct::new([("stamp", stamp_value(&p.stamp))]),
        DemoMessage::Pong(p) => DynStruct::new([
            ("stamp", stamp_value(&p.stamp)),
            ("handled_ms", int(p.handled_ms)),
        ]),
        DemoMessage::Despawn(d) => DynStruct::new([("network_id", int(d.network_id.get()))]),
    };
    (m.message_type(), DynValue::Struct(body))
}

/// The demo schema's `[batch]` section.
pub fn demo_batch() -> &'static BatchSchema {
    match DEMO.batch() {
        Some(b) => b,
        None => panic!("captures/demo.schema.toml has no [batch] section"),
    }
}

/// The demo protocol as its derives describe it: `DemoPacket::schema()` (`#[derive(PacketSet)]`)
/// followed by `DemoMessage::schema()` (`#[derive(MessageEnum)]`), parsed once.
pub static DERIVED: LazyLock<Schema> = LazyLock::new(|| {
    use bitlens_codec::PacketSet;
    let text = format!("{}\n{}", DemoPacket::schema(), DemoMessage::schema());
    match Schema::from_toml(&text, "derived demo schema") {
        Ok(s) => s,
        Err(e) => panic!("the derived demo schema does not parse: {e}\n{text}"),
    }
});

/// The `[batch]` section the demo's `#[derive(MessageEnum)]` writes.
pub fn derived_batch() -> &'static BatchSchema {
    match DERIVED.batch() {
        Some(b) => b,
        None => panic!("DemoMessage::schema() has no [batch] section"),
    }
}

/// A batch's dissection without message headers (`dissect_values`, what `decode --json`
/// reads) says what the full one says: status, problem, bits read, every message's view but
/// its entry ranges, every entry outside the messages, and every body entry (path relative to
/// its message, bits, value, range, code, kind, failure; not the depth, one less).
pub fn assert_values_agree(full: &Dissection, values: &Dissection) {
    assert_eq!(values.status, full.status, "values: status");
    assert_eq!(values.packet_type, full.packet_type, "values: packet type");
    assert_eq!(values.problem, full.problem, "values: problem");
    assert_eq!(values.desync, full.desync, "values: desync");
    assert_eq!(
        values.trace.bits_read, full.trace.bits_read,
        "values: bits read"
    );
    assert_eq!(
        values.trace.total_bits, full.trace.total_bits,
        "values: total bits"
    );
    assert_eq!(values.trace.error, full.trace.error, "values: trace error");
    let (Some(fm), Some(vm)) = (&full.messages, &values.messages) else {
        assert_eq!(full, values, "a packet's dissection is the same");
        return;
    };
    assert_eq!(fm.len(), vm.len(), "values: messages");
    let outside = |d: &Dissection, ms: &[bitlens_codec::dissect::MessageView]| {
        let inside = |i: usize| ms.iter().any(|m| m.entries.contains(&i));
        (d.trace.fields.iter().enumerate())
            .filter(|(i, _)| !inside(*i))
            .map(|(_, f)| f.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        outside(full, fm),
        outside(values, vm),
        "values: entries outside the messages"
    );
    for (f, v) in fm.iter().zip(vm) {
        let mut v_view = v.clone();
        v_view.entries = f.entries.clone();
        v_view.body = f.body.clone();
        assert_eq!(f, &v_view, "values: message {} view", f.index);
        let body = |d: &Dissection, m| {
            d.body_of(m)
                .map(|(path, t)| {
                    let where_ = (path.to_owned(), t.bit, t.bits, t.failed);
                    (where_, t.value.clone(), t.range, t.raw, t.kind.clone())
                })
                .collect::<Vec<_>>()
        };
        let (a, b) = (body(full, f), body(values, v));
        assert_eq!(a, b, "values: message {} body", f.index);
    }
}

/// The raw-bytes half: `data` read as a batch by both engines gives the same dissection
/// (status and problem, per message status, type, stage, length, problem, field paths, bits
/// and values) and the same verdict, and every message both accept has the same value and
/// re-encodes to its bytes.
/// Against the shipped schema and the derived one.
pub fn same_batch_verdict(data: &[u8]) {
    same_batch_verdict_in(demo_batch(), data);
    same_batch_verdict_in(derived_batch(), data);
}

/// [`same_batch_verdict`] against one schema's `[batch]` section.
pub fn same_batch_verdict_in(schema: &BatchSchema, data: &[u8]) {
    let compiled = dissect(data);
    let traced = dissect_batch(schema, data);
    if let (Some(c), Some(s)) = (&compiled.messages, &traced.messages) {
        for (c, s) in c.iter().zip(s) {
            let (a, b) = (&compiled.trace.fields, &traced.trace.fields);
            for (i, (a, b)) in a[c.entries.clone()]
                .iter()
                .zip(&b[s.entries.clone()])
                .enumerate()
            {
                assert_eq!(a, b, "message {} entry {i} differs", c.index);
            }
            assert_eq!(c, s, "message {} differs", c.index);
        }
    }
    assert_eq!(compiled, traced, "batch dissections differ");
    assert_values_agree(&compiled, &dissect_batch_values(&DemoMessages::new(), data));
    assert_values_agree(&traced, &dissect_batch_values(schema, data));
    assert_eq!(
        check_batch(&DemoMessages::new(), data),
        check_batch(schema, data),
        "batch verdicts differ"
    );
    let Ok(messages) = read_batch(data) else {
        return;
    };
    for raw in messages.flatten() {
        let c = DemoMessage::decode(&raw);
        let s = schema.decode(&raw);
        match (c, s) {
            (Ok(Some(m)), Ok(Some(v))) => {
                let (t, want) = demo_message_value(&m);
                assert_eq!(t, raw.header.message_type);
                assert_eq!(v, want, "schema read other values");
                let mut buf = vec![0u8; raw.body.len()];
                let n = schema
                    .encode_body(t, &v, &mut buf)
                    .expect("accepted value writes");
                assert_eq!(&buf[..n], raw.body, "schema re-encodes to other bytes");
            }
            (Ok(None), Ok(None)) => {}
            (Err(e), Err(f)) => assert_eq!(e, f, "decode errors differ"),
            (c, s) => panic!("decode verdicts differ: compiled {c:?}, schema {s:?}"),
        }
    }
}

/// The values half: an arbitrary demo message written by both engines gives the same body (or
/// both refuse it), measures the same, and reads back to the same value. Against the shipped
/// schema and the derived one.
pub fn same_message_bytes(m: &DemoMessage) {
    same_message_bytes_in(demo_batch(), m);
    same_message_bytes_in(derived_batch(), m);
}

/// [`same_message_bytes`] against one schema's `[batch]` section.
pub fn same_message_bytes_in(schema: &BatchSchema, m: &DemoMessage) {
    let (t, value) = demo_message_value(m);
    let mut a = vec![0u8; bitlens_batch::MAX_MTU];
    let mut b = vec![0u8; bitlens_batch::MAX_MTU];
    let stage = bitlens_batch::UpdateStage::UPDATE;
    let compiled = m.clone().encode(&mut a, stage);
    let written = schema.encode_body(t, &value, &mut b);
    match (compiled, written) {
        (Ok(n), Ok(k)) => {
            let header = bitlens_batch::MESSAGE_HEADER_LEN;
            assert_eq!(&a[header..n], &b[..k], "same values, other bytes");
            assert_eq!(schema.measure(t, &value).expect("measures"), k);
            let mut r = bitlens_batch::ByteReader::new(&b[..k]);
            let mut back = DynValue::Null;
            schema
                .serialize_body(&mut r, t, &mut back)
                .and_then(|()| r.finish())
                .expect("schema reads what it wrote");
            // The compiled reader's view of the same body, framed alone in a batch.
            let mut batch = vec![0u8; bitlens_batch::MAX_MTU];
            let mut w = bitlens_batch::BatchWriter::new(&mut batch).expect("a batch");
            w.push_raw(t, stage, &b[..k]).expect("the body fits");
            let len = w.finish();
            let raw = read_batch(&batch[..len])
                .ok()
                .and_then(|mut m| m.next())
                .and_then(|m| m.ok())
                .expect("one message");
            let canonical = DemoMessage::decode(&raw)
                .expect("compiled reads what the schema wrote")
                .expect("a known type");
            assert_eq!(
                back,
                demo_message_value(&canonical).1,
                "read(write(x)) == x"
            );
        }
        (Err(_), Err(_)) => {}
        (c, s) => panic!("verdicts differ on write: compiled {c:?}, schema {s:?}"),
    }
}

/// `schema_batch_vs_compiled`: `data` as a batch, and `data` as the seed of an arbitrary demo
/// message: the derived messages (`#[derive(BatchStruct)]`, `#[derive(MessageEnum)]`) and the
/// schema interpreter running the `[batch]` text the same derive writes agree on each: bytes,
/// traces, values, verdicts. (The shipped `captures/demo.schema.toml` is held to the same by
/// `codec/schema/tests/schema_batch.rs`.)
pub fn schema_batch_vs_compiled(data: &[u8]) {
    same_batch_verdict_in(derived_batch(), data);
    let mut u = Unstructured::new(data);
    if let Ok(m) = DemoMessage::arbitrary(&mut u) {
        same_message_bytes_in(derived_batch(), &m);
    }
}
