//! The committed yojimbo schemas (`captures/yojimbo*.schema.toml`, issue 27) against the
//! reference's own traffic: the configuration they give equals the one the yojimbo crate's
//! capture test builds by hand (`codec/yojimbo/tests/captures.rs`, mirrored here), and every
//! decrypted payload of both captures reads to the same messages, bodies, blocks and notes with
//! either, the schema's traces showing each body's fields.

#[path = "../../yojimbo/tests/common/mod.rs"]
mod common;
#[path = "../../yojimbo/tests/samples/mod.rs"]
mod samples;

use std::sync::Arc;

use bitlens_codec::trace::{FieldKind, Value};
use bitlens_schema::{Schema, yojimbo};
use bitlens_yojimbo::{Config, Content, Receiver};
use samples::{DUMMY_BITS, client_server_config, soak_config};

fn from_schema(file: &str) -> Arc<Config> {
    let schema = Schema::load(&common::captures().join(file)).unwrap();
    assert!(schema.warnings().is_empty());
    assert!(!schema.has_protocol());
    yojimbo::config(&Arc::new(schema)).unwrap()
}

fn same_config(a: &Config, b: &Config) {
    assert_eq!(a.reliable, b.reliable);
    assert_eq!(a.channels, b.channels);
    let names = |c: &Config| -> Vec<(String, bool)> {
        c.message_types
            .iter()
            .map(|m| (m.name.clone(), m.block))
            .collect()
    };
    assert_eq!(names(a), names(b));
    a.validate().unwrap();
}

#[test]
fn the_committed_schemas_give_the_configurations_built_by_hand() {
    same_config(&from_schema("yojimbo.schema.toml"), &soak_config());
    same_config(
        &from_schema("yojimbo-client-server.schema.toml"),
        &client_server_config(),
    );
}

/// Checks the schema's trace of one connection packet: every TestMessage body shows its
/// `sequence` and its dummy bits as `dummy[i]` groups of 32 bits then the rest.
fn check_bodies(trace: &bitlens_codec::Trace, packet: &bitlens_yojimbo::ConnectionPacket) -> usize {
    let mut bodies = 0;
    for (i, e) in packet.entries.iter().enumerate() {
        let Content::Messages(ms) = &e.content else {
            continue;
        };
        for (k, m) in ms.iter().enumerate() {
            let at = format!("entries[{i}].messages[{k}].body");
            let seq = trace.get(&format!("{at}.sequence")).unwrap();
            let Value::Int(sequence) = seq.value else {
                panic!("{at}.sequence: {:?}", seq.value);
            };
            assert_eq!(seq.bits, 16);
            if m.message_type != 0 {
                continue;
            }
            let n = DUMMY_BITS[(sequence % 21) as usize] as usize;
            let groups: Vec<usize> = (0..)
                .map_while(|g| trace.get(&format!("{at}.dummy[{g}]")))
                .filter(|f| !matches!(f.kind, FieldKind::Scope))
                .map(|f| {
                    assert_eq!(f.value, Value::Int(0));
                    f.bits
                })
                .collect();
            let mut want = vec![32; n / 32];
            if !n.is_multiple_of(32) {
                want.push(n % 32);
            }
            assert_eq!(groups, want, "{at}: sequence {sequence}");
            assert_eq!(trace.get(&format!("{at}.dummy")).unwrap().bits, n);
            bodies += 1;
        }
    }
    bodies
}

/// Reads every payload of `capture` with both configurations (one receiver per direction
/// each) and compares all they report; returns the TestMessage bodies checked in the traces.
fn decode_alike(capture: &str, by_hand: Config, schema: Arc<Config>) -> (usize, usize) {
    let frames = common::decrypt(capture, "yojimbo-reference.key");
    let by_hand = Arc::new(by_hand);
    let mut hand = [
        Receiver::new(by_hand.clone(), false).unwrap(),
        Receiver::new(by_hand, false).unwrap(),
    ];
    let mut ours = [
        Receiver::new(schema.clone(), true).unwrap(),
        Receiver::new(schema, true).unwrap(),
    ];
    let (mut packets, mut bodies) = (0, 0);
    for f in frames.iter().filter(|f| f.kind == 5) {
        let dir = usize::from(f.c2s);
        let a = hand[dir].receive(f.number, &f.plaintext);
        let b = ours[dir].receive(f.number, &f.plaintext);
        let at = format!("{capture} frame {}", f.number);
        assert!(b.refusal().is_none(), "{at}: {:?}", b.refusal());
        assert_eq!(a.reliable, b.reliable, "{at}");
        assert_eq!(a.blocks, b.blocks, "{at}");
        assert_eq!(a.notes, b.notes, "{at}");
        assert_eq!(a.packet.is_some(), b.packet.is_some(), "{at}");
        if let (Some(pa), Some(pb)) = (&a.packet, &b.packet) {
            assert_eq!(pa.result, pb.result, "{at}");
            assert_eq!(pa.datagrams, pb.datagrams, "{at}");
            let trace = pb.trace.as_ref().unwrap();
            assert!(trace.error.is_none(), "{at}: {:?}", trace.error);
            bodies += check_bodies(trace, pb.result.as_ref().unwrap());
            packets += 1;
        }
    }
    for dir in 0..2 {
        assert_eq!(hand[dir].finish(), ours[dir].finish());
    }
    (packets, bodies)
}

#[test]
fn both_captures_decode_alike_with_the_schemas() {
    let (packets, bodies) = decode_alike(
        "yojimbo-soak.pcap",
        soak_config(),
        from_schema("yojimbo.schema.toml"),
    );
    // YOJIMBO-NOTES.md: 141 connection packets; the soak's messages are resent until acked.
    assert_eq!(packets, 141);
    assert!(bodies > 1000, "{bodies} TestMessage bodies");
    let (packets, bodies) = decode_alike(
        "yojimbo-client-server.pcap",
        client_server_config(),
        from_schema("yojimbo-client-server.schema.toml"),
    );
    assert_eq!((packets, bodies), (346, 0));
}
