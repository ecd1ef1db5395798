//! The transport interface (`bitlens_codec::transport`): a stack puts a transport's entries and
//! its inner dissector's in one dissection, in datagram coordinates, with one status.

use bitlens_codec::dissect::{Dissector, Problem, Status};
use bitlens_codec::observe::{Observation, Tracker};
use bitlens_codec::transport::{Plaintext, Stack, Transport, Unwrapped, field};
use bitlens_codec::{TraceField, Value, write_packet};
use bitlens_testkit::demo;
use std::net::SocketAddr;
use std::sync::Arc;

/// A toy transport: a counter byte (the tracker says how many datagrams of the pair came
/// before), then the payload XORed with 0x55, then a byte that must be 0xAA.
struct Xor;
struct Count(usize);
impl Tracker for Count {
    fn observe(&mut self, _: SocketAddr, _: SocketAddr, _: &[u8]) -> Observation {
        self.0 += 1;
        Observation::new(self.0)
    }
}
impl Transport for Xor {
    fn name(&self) -> &'static str {
        "xor"
    }
    fn tracker(&self) -> Box<dyn Tracker> {
        Box::new(Count(0))
    }
    fn unwrap(&self, d: &[u8], seen: &Observation, record: bool) -> Unwrapped {
        let mut u = Unwrapped::new("xor.data");
        let Some((&count, rest)) = d.split_first() else {
            u.fail(Problem {
                kind: "cut",
                bit: 0,
                field: "xor.count".into(),
                message: "xor: empty".into(),
            });
            return u;
        };
        let Some((&end, body)) = rest.split_last() else {
            u.fail(Problem {
                kind: "cut",
                bit: 8,
                field: "xor.end".into(),
                message: "xor: no end byte".into(),
            });
            return u;
        };
        if record {
            u.header
                .push(field("xor.count", 0, 8, Value::Int(count.into())));
            u.trailer.push(field(
                "xor.end",
                (d.len() - 1) * 8,
                8,
                Value::Int(end.into()),
            ));
        }
        if end != 0xAA {
            u.fail(Problem {
                kind: "bad_end",
                bit: (d.len() - 1) * 8,
                field: "xor.end".into(),
                message: "xor.end: not 0xAA".into(),
            });
        } else if seen.get::<usize>() != Some(&usize::from(count)) {
            u.encrypted(None);
        } else {
            let bytes = body.iter().map(|b| b ^ 0x55).collect();
            u.payload = Some(Plaintext { offset: 1, bytes });
        }
        u
    }
}

fn wrapped(count: u8, plain: &[u8]) -> Vec<u8> {
    let mut d = vec![count];
    d.extend(plain.iter().map(|b| b ^ 0x55));
    d.push(0xAA);
    d
}

#[test]
fn a_stack_puts_the_inner_fields_in_datagram_coordinates_under_their_own_paths() {
    let inner = demo::dissector();
    let mut buf = [0u8; 1200];
    let n = write_packet(&mut demo::samples().remove(0), &mut buf).unwrap();
    let plain = &buf[..n];
    let alone = inner.dissect(plain);
    let stack = Stack::new(Arc::new(Xor), Some(Arc::new(inner)));
    assert_eq!(stack.name(), "xor+demo");
    let datagram = wrapped(1, plain);
    let mut tracker = stack.tracker().expect("a transport has a tracker");
    let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let seen = tracker.observe(addr, addr, &datagram);
    let d = stack.dissect_seen(&datagram, &seen, false);
    assert_eq!(d.status, Status::Ok, "{:?}", d.problem);
    assert_eq!(d.packet_type, alone.packet_type);
    // The transport's header, every inner entry 8 bits later under its own path, the
    // trailer.
    assert_eq!(d.trace.fields[0].path(), "xor.count");
    assert_eq!(d.trace.fields.len(), alone.trace.fields.len() + 2);
    for (a, b) in alone.trace.fields.iter().zip(&d.trace.fields[1..]) {
        assert_eq!((a.path(), a.bit + 8, a.bits), (b.path(), b.bit, b.bits));
    }
    assert_eq!(d.trace.fields.last().map(TraceField::path), Some("xor.end"));
    let layer = &d.layers[0];
    assert_eq!((layer.name, layer.header.clone()), ("xor", 0..1));
    assert_eq!(
        layer.trailer,
        d.trace.fields.len() - 1..d.trace.fields.len()
    );
    assert_eq!(layer.payload_bits, 8..8 + n * 8);
    let v = stack.verdict_seen(&datagram, &seen);
    assert_eq!(
        (v.status, v.packet_type, v.layer),
        (Status::Ok, alone.packet_type, None)
    );

    // Without what the tracker saw: encrypted, not an error.
    let d = stack.dissect(&datagram);
    assert_eq!(
        (d.status, d.packet_type),
        (Status::Encrypted, Some("xor.data"))
    );
    assert!(!d.status.is_problem());
    // The transport's fault: its status, its layer named.
    let mut bad = datagram.clone();
    *bad.last_mut().unwrap() = 0;
    let v = stack.verdict_seen(&bad, &seen);
    assert_eq!((v.status, v.layer), (Status::Error, Some("xor")));
    let d = stack.dissect_seen(&bad, &seen, false);
    assert_eq!(
        d.problem.map(|p| (p.kind, p.field)),
        Some(("bad_end", "xor.end".into()))
    );
    // The inner dissector's fault: its problem at its bit in the datagram, its layer named.
    let mut flipped = plain.to_vec();
    flipped[6] ^= 0x10;
    let plain_demo = demo::dissector();
    let inner_alone = plain_demo.verdict(&flipped);
    let v = stack.verdict_seen(&wrapped(1, &flipped), &seen);
    assert_eq!(v.status, inner_alone.status);
    assert_eq!(v.layer, Some("demo"));
    assert_eq!(
        v.problem.map(|p| p.bit),
        inner_alone.problem.map(|p| p.bit + 8)
    );
    // Hostile: empty and one-byte datagrams are errors of the transport.
    for short in [&[][..], &[1][..]] {
        assert_eq!(
            stack.dissect_seen(short, &seen, false).status,
            Status::Error
        );
    }
}

#[test]
fn a_stack_without_an_inner_dissector_shows_the_payload_as_bytes() {
    let stack = Stack::new(Arc::new(Xor), None);
    let seen = Observation::new(3usize);
    let d = stack.dissect_seen(&wrapped(3, b"hi"), &seen, true);
    assert_eq!(d.status, Status::Ok);
    let p = d.trace.get("payload").unwrap();
    assert_eq!(
        (p.bit, p.bits, &p.value),
        (8, 16, &Value::Bytes(b"hi".to_vec()))
    );
}
