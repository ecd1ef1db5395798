//! The conformance vectors through the schema interpreter: each vector's ops as an ad-hoc schema.

use bitlens_testkit::vectors::schema::{run_vector, schema_text};
use bitlens_testkit::vectors::{self, Expect};

#[test]
fn every_vector_passes_through_the_schema_interpreter() {
    let all = vectors::parse(include_str!("../../tests/vectors/bitpacked.json")).expect("parses");
    for v in &all {
        if let Err(why) = run_vector(v) {
            let (text, _) = schema_text(v).unwrap_or_default();
            panic!("vector {}: {why}\nschema:\n{text}", v.name);
        }
    }
    assert!(all.len() >= 24, "{} vectors", all.len());
}

/// The vector file has no framed vectors yet: a framed one, written by the compiled runner.
#[test]
fn a_framed_vector_passes_both_engines() {
    use bitlens_codec::packet::{Protocol, ProtocolId, frame};
    use bitlens_codec::{Stream, WriteStream};
    use bitlens_testkit::vectors::{Op, PacketSpec, Vector, drive, run_vector as compiled};
    let protocol = Protocol {
        name: "vector".into(),
        id: ProtocolId::U64(0xFEED_0000_0000_0001),
        packet_types: (0..3).map(|t| format!("T{t}")).collect(),
        mtu: usize::MAX,
    };
    let ops = vec![
        Op::Int {
            min: 0,
            max: 100,
            value: 42,
        },
        Op::Str {
            max_len: 15,
            value: "héllo".into(),
        },
        Op::Check("section".into()),
        Op::ObjectIndex {
            max_objects: 4096,
            previous: 7,
            value: 300,
        },
    ];
    let mut buf = [0u8; 64];
    let mut w = WriteStream::new(&mut buf);
    let mut t = 2;
    let mut o = ops.clone();
    frame(&mut w, &protocol, &mut t, |s, _| drive(s, &mut o)).expect("writes");
    let bits = w.bit_position();
    let n = w.finish();
    let v = Vector {
        name: "framed".into(),
        ops,
        bytes: buf[..n].to_vec(),
        expect: Expect::Bits(bits),
        packet: Some(PacketSpec {
            protocol,
            packet_type: Some(2),
        }),
        write: true,
        // crc 32 + type 2 + int 7 + string (4 + 7 + 48) + check (7 + 32) + index (6 flags and
        // 12 bits for d = 293) + the framing's end check (7 + 32).
        measure: Some(32 + 2 + 7 + 4 + 7 + 48 + 7 + 32 + 6 + 12 + 7 + 32),
    };
    compiled(&v).expect("compiled runner");
    run_vector(&v).expect("schema runner");
    let mut bad = v.clone();
    bad.bytes[0] ^= 1;
    bad.expect = Expect::Reject("crc_mismatch".into());
    compiled(&bad).expect("compiled runner rejects");
    run_vector(&bad).expect("schema runner rejects");
}

#[test]
fn a_wrong_byte_fails_the_schema_path() {
    let all = vectors::parse(include_str!("../../tests/vectors/bitpacked.json")).expect("parses");
    let mut checked = 0;
    for v in all
        .iter()
        .filter(|v| matches!(v.expect, Expect::Bits(_)) && !v.bytes.is_empty())
    {
        let mut bad = v.clone();
        let last = bad.bytes.len() - 1;
        bad.bytes[last] ^= 0x80;
        assert!(
            run_vector(&bad).is_err(),
            "vector {} passed with a flipped bit",
            v.name
        );
        checked += 1;
    }
    assert!(checked > 10);
}
