//! `#[derive(BitPacked)]` and `#[derive(PacketSet)]`: the derived code against the schema
//! interpreter running the derived schema text (many arbitrary values and hostile bytes), the
//! exact bits of each attribute, and the demo's derived schema against the shipped one.

use arbitrary::Unstructured;
use bitlens_codec::packet::{Packet, read_packet, trace_packet, write_packet};
use bitlens_codec::{BitPacked, PacketSet, ReadStream, WriteStream, generate, packed};
use bitlens_schema::Schema;
use bitlens_testkit::demo::{self, DemoPacket};
use bitlens_testkit::fuzzing::derive::{
    DEMO, SHOWCASE, derive_vs_schema, same_bytes, standard_only,
};
use bitlens_testkit::fuzzing::schema::{DEMO as SHIPPED, assert_same_trace};
use bitlens_testkit::showcase::{self, Optional, Point, Shape, Shapes, Showcase, Team, Weapon};

use bitlens_testkit::noise;

#[test]
fn the_derived_schemas_load() {
    assert_eq!(SHOWCASE.protocol(), Showcase::protocol());
    assert_eq!(DEMO.protocol(), DemoPacket::protocol());
    assert_eq!(DEMO.protocol(), SHIPPED.protocol());
    // Without warnings: every compressed float range of both is stable, so derive_vs_schema
    // asserts their re-encoding byte for byte.
    assert_eq!(SHOWCASE.warnings(), &[]);
    assert_eq!(DEMO.warnings(), &[]);
}

#[test]
fn every_packet_type_is_drawn_and_agrees_with_its_schema() {
    let mut seen = [0usize; 11];
    let mut written = 0;
    for seed in 0..3000u64 {
        let data = noise(seed, 64 + (seed as usize % 700));
        let mut u = Unstructured::new(&data);
        if let Ok(mut p) = generate::packet::<Showcase>(&mut u) {
            seen[p.packet_type() as usize] += 1;
            let mut buf = [0u8; showcase::MTU];
            if write_packet(&mut p, &mut buf).is_ok() {
                written += 1;
            }
        }
        same_bytes::<Showcase>(&SHOWCASE, &mut Unstructured::new(&data));
        same_bytes::<DemoPacket>(&DEMO, &mut Unstructured::new(&data));
    }
    assert!(seen.iter().all(|&n| n > 50), "every type drawn: {seen:?}");
    assert!(written > 2000, "{written} of 3000 packets fit the MTU");
}

#[test]
fn hostile_and_mutated_datagrams_get_the_same_verdict() {
    // Valid packets with one byte changed (CRC fixed up inside the harness), truncated, and
    // random bytes: the derived code and the schema agree on each.
    let mut accepted = 0;
    for seed in 0..600u64 {
        let data = noise(seed, 200);
        let mut u = Unstructured::new(&data);
        let Ok(mut p) = generate::packet::<Showcase>(&mut u) else {
            continue;
        };
        let mut buf = [0u8; showcase::MTU];
        let Ok(n) = write_packet(&mut p, &mut buf) else {
            continue;
        };
        derive_vs_schema(&buf[..n]);
        accepted += 1;
        let mut bad = buf[..n].to_vec();
        let i = 4 + seed as usize % (n - 4);
        bad[i] ^= 1 << (seed % 8);
        derive_vs_schema(&bad);
        derive_vs_schema(&buf[..n - 1]);
        derive_vs_schema(&data);
    }
    assert!(accepted > 500);
}

#[test]
fn the_derived_demo_schema_reads_as_the_shipped_one() {
    // captures/demo.schema.toml was written by hand; the derived text says the same protocol in
    // other words (precomputed compressed floats, a synthesized packet body): the same trace for
    // every sample and every generated packet.
    let mut packets = demo::samples();
    for seed in 0..300u64 {
        let data = noise(seed, 400);
        if let Ok(p) = generate::packet::<DemoPacket>(&mut Unstructured::new(&data)) {
            packets.push(p);
        }
    }
    for mut p in packets {
        let mut buf = [0u8; demo::MTU];
        let Ok(n) = write_packet(&mut p, &mut buf) else {
            continue;
        };
        let (_, shipped) = SHIPPED.trace(&buf[..n]);
        let (_, derived) = DEMO.trace(&buf[..n]);
        assert_same_trace(&shipped, &derived);
        assert!(derived.error.is_none());
    }
}

#[test]
fn attributes_take_exactly_their_bits() {
    // Point: two ranges of 201 values, 8 bits each.
    assert_eq!(<Point as BitPacked>::MIN_BITS, 16);
    let mut buf = [0u8; 8];
    let mut w = WriteStream::new(&mut buf);
    Point { x: -100, y: 100 }.serialize(&mut w).unwrap();
    assert_eq!(w.bits_written(), 16);
    assert_eq!(w.finish(), 2);
    assert_eq!(buf[..2], [0, 200]);
    // A unit enum numbered 1..=3 takes 2 bits; its trace shows the variant's name.
    assert_eq!(<Team as BitPacked>::MIN_BITS, 2);
    assert_eq!(<Weapon as BitPacked>::MIN_BITS, 2);
    // Optional: alive (1) + has_target (1) + scored (1), the rest guarded.
    assert_eq!(<Optional as BitPacked>::MIN_BITS, 3);
    // A union: the variant (2 bits for 4 variants), then the smallest body (none).
    assert_eq!(<Shape as BitPacked>::MIN_BITS, 2);
}

#[test]
fn guards_refuse_values_they_would_lose() {
    let mut buf = [0u8; 64];
    let mut o = Optional {
        alive: false,
        health: 50,
        ..Optional::default()
    };
    let e = o.serialize(&mut WriteStream::new(&mut buf)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bit 1 (field \"health\"): invalid argument: field given while \"alive\" says it is absent (leave it out)"
    );
    // The same value as the schema gets it: the same refusal.
    let mut o = Optional {
        alive: true,
        health: 50,
        weapon: None,
        ..Optional::default()
    };
    let e = o.serialize(&mut WriteStream::new(&mut buf)).unwrap_err();
    assert!(e.to_string().contains("\"weapon\""), "{e}");
    // Present values round-trip; absent ones read as their defaults.
    let mut o = Optional {
        alive: true,
        health: 99,
        target: Some(Point { x: 3, y: -4 }),
        score: None,
        weapon: Some(Weapon::Rifle),
        cache: 77,
        ..Optional::default()
    };
    let mut w = WriteStream::new(&mut buf);
    o.serialize(&mut w).unwrap();
    let n = w.finish();
    let mut back = Optional::default();
    back.serialize(&mut ReadStream::new(&buf[..n])).unwrap();
    o.cache = 0; // skipped
    assert_eq!(back, o);
}

#[test]
fn unions_switch_variant_on_read_and_trace_its_name() {
    let mut p = Showcase::Shapes(Shapes {
        main: Shape::Rect { w: 3, h: 64 },
        others: vec![
            Shape::Label("hi".into()),
            Shape::Nothing,
            Shape::Circle(Point { x: 1, y: 2 }),
        ],
    });
    let mut buf = [0u8; 64];
    let n = write_packet(&mut p, &mut buf).unwrap();
    assert_eq!(read_packet::<Showcase>(&buf[..n]).unwrap(), p);
    let (_, trace) = trace_packet::<Showcase>(&buf[..n]);
    let tag = trace.get("main.variant").expect("the union's tag");
    assert_eq!(tag.value, bitlens_codec::Value::Str("Rect".into()));
    assert!(trace.get("main.w").is_some() && trace.get("others[0].0").is_some());
    let (_, traced) = SHOWCASE.trace(&buf[..n]);
    assert_same_trace(&trace, &traced);
}

#[test]
fn the_schema_text_says_each_attribute() {
    let text = Showcase::schema();
    for needle in [
        "[protocol]\nname = \"showcase\"\nid = 0x53484f57\nid_bits = 32\nmtu = 1200\n",
        r#"{ name = "small", type = "int", min = -5, max = 300 }"#,
        r#"{ name = "wide", type = "int128", min = 10, max = 1099511627776 }"#,
        r#"{ name = "buttons", type = "bits", bits = 6 }"#,
        r#"{ name = "yaw", type = "compressed_float", min = -180.0, max = 180.0, resolution = 0.1 }"#,
        r#"{ name = "throttle", type = "compressed_float", min = -1.0, delta = 2.0, max_integer_value = 1000 }"#,
        r#"{ name = "rotation", type = "quaternion", bits = 9 }"#,
        r#"{ name = "uq16", type = "fixed", integer_bits = 16, fraction_bits = 16, min = 0, max = 1000, unsigned = true }"#,
        r#"{ name = "wide", type = "wstring", max_len = 15 }"#,
        r#"{ name = "ids", type = "array", max_len = 8, element = { type = "int", min = 0, max = 4095 } }"#,
        r#"{ name = "next", type = "object_index", max_objects = 2000, previous = "base" }"#,
        r#"{ name = "after_hundred", type = "int_relative", previous = 100 }"#,
        r#"{ name = "has_target", type = "bool" }"#,
        r#"{ name = "target", type = "Point", if = "has_target" }"#,
        r#"{ name = "respawn", type = "int", min = 0, max = 600, unless = "alive" }"#,
        r#"{ name = "entities", type = "sparse_array", max_objects = 64, element = "Entity", index_name = "slot" }"#,
        r#"{ type = "include", struct = "Point" }"#,
        r#"{ type = "check", label = "middle" }"#,
        "[enum.Team]\nvalues = { Red = 1, Blue = 2, spectator = 3 }\n",
        "[enum.Weapon]\nvalues = [\"Fists\", \"Pistol\", \"Rifle\"]\n",
        "[union.Shape]\nvariants = [\n  { name = \"Nothing\" },\n  { name = \"Circle\", body = \"Point\" },\n",
        "  \"Checked\",\n",
        "[struct.Checked]\nfields = [\n  { type = \"check\", label = \"before\" },\n  { type = \"include\", struct = \"Point\" },\n",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    // The demo's packet with a check after its body gets a body struct of its own.
    let demo = DemoPacket::schema();
    assert!(
        demo.contains("{ name = \"RigidBody\", body = \"RigidBody_2\" }"),
        "{demo}"
    );
    assert!(
        Schema::from_toml(&packed::schema_of::<Point>(), "p.toml").is_err(),
        "no [protocol]"
    );
}

#[test]
fn what_does_not_reencode_is_checked_against_the_writers_formula() {
    // serialize 1.0's readers take two encodings their writers do not send back: a relative
    // integer's small difference in the absolute tier, and a near-tie quaternion. The harness
    // accepts them (the derived code and the schema write the same other bytes) and checks each
    // value as the writer's formula gives it.
    let (relatives, written) = standard_only::relatives();
    let datagrams = standard_only::datagrams();
    let mut ties = 0;
    for (name, data) in &datagrams {
        let back = read_packet::<Showcase>(data).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut again = [0u8; showcase::MTU];
        let m = write_packet(&mut back.clone(), &mut again).unwrap();
        assert_ne!(&again[..m], &data[..], "{name} writes back as itself");
        if name.starts_with("absolute_") {
            assert_eq!(back, relatives, "{name}");
            assert_eq!(
                again[..m],
                written[..],
                "{name} writes back in its own tier"
            );
        } else {
            assert!(name.starts_with("near_tie_"), "{name}");
            ties += 1;
        }
        derive_vs_schema(data);
    }
    assert_eq!(datagrams.len() - ties, 3, "one per relative integer");
    assert!(ties > 10, "{ties} 9-bit near ties");
}

#[test]
fn every_generated_showcase_packet_writes() {
    // generate::packet promises values within every attribute: each one writes, unless the
    // drawn arrays and strings together pass the MTU (buffer_full). An interior NUL in a drawn
    // `string` (interior_nul) was the first input a game's packet_roundtrip failed on.
    let mut over_mtu = 0;
    for seed in 0..4000u64 {
        let data = noise(seed, 16 + (seed as usize % 900));
        let Ok(mut p) = generate::packet::<Showcase>(&mut Unstructured::new(&data)) else {
            continue;
        };
        let mut buf = [0u8; showcase::MTU];
        match write_packet(&mut p, &mut buf) {
            Ok(_) => {}
            Err(e) if e.kind().name() == "buffer_full" => over_mtu += 1,
            Err(e) => panic!("seed {seed}: a generated packet does not write: {e}: {p:?}"),
        }
    }
    assert!(over_mtu < 400, "{over_mtu} of 4000 over the MTU");
}

/// A game's packet set of one string, whose `Arbitrary` impl is `generate::packet`.
#[derive(Debug, Clone, Default, PartialEq, PacketSet)]
#[bitlens(protocol = "one-string", id = 0x4f4e_4531, mtu = 100)]
enum OneString {
    /// Type 0: a name.
    Hello(#[bitlens(max_len = 16)] String),
    /// Type 1: nothing.
    #[default]
    Bye,
}

impl<'a> arbitrary::Arbitrary<'a> for OneString {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        generate::packet(u).map_err(|_| arbitrary::Error::IncorrectFormat)
    }
}

#[test]
fn generated_strings_hold_no_nul() {
    // The input a one-string packet set's packet_roundtrip failed on first (interior_nul).
    bitlens_codec::fuzzing::packet_roundtrip::<OneString>(&[0x00, 0x00, 0x00, 0xf7]);
    for seed in 0..2000u64 {
        bitlens_codec::fuzzing::packet_roundtrip::<OneString>(&noise(seed, 1 + seed as usize % 40));
    }
    // Plain values too, through generate::value.
    let mut labels = 0;
    for seed in 0..2000u64 {
        let data = noise(seed, 1 + seed as usize % 40);
        if let Ok(Shape::Label(text)) = generate::value::<Shape>(&mut Unstructured::new(&data), 800)
        {
            assert!(!text.contains('\0'), "{text:?}");
            labels += 1;
        }
    }
    assert!(labels > 100, "{labels} labels drawn");
}

#[test]
fn a_spent_input_ends_a_generated_sparse_array_within_the_mtu() {
    // The first byte picks the scene update (type 4), then the input is spent: the object list
    // ends there (it ran on to 4096 rigid bodies, a packet no MTU holds, which the
    // derive_vs_schema harness drew and then threw away as a write error).
    for data in [
        &[4u8][..],
        &[4, 0, 0, 0],
        &[4, 0, 0, 0, 1, 0, 9, 0, 0, 0, 0, 0],
    ] {
        let mut u = Unstructured::new(data);
        let mut p = generate::packet::<DemoPacket>(&mut u).expect("a packet");
        let DemoPacket::SceneUpdate(s) = &p else {
            panic!("the first byte picks the scene update: {p:?}")
        };
        assert!(
            s.objects.len() < 10,
            "{} objects from {data:?}",
            s.objects.len()
        );
        let mut buf = vec![0u8; demo::MTU];
        write_packet(&mut p, &mut buf).expect("within the MTU");
    }
    // An input that keeps asking for objects gets them until the bit budget (the MTU) is spent.
    // (A zero byte draws "not the end", then a step of 0: the next index.)
    let mut data = vec![0u8; 20_000];
    data[0] = 4;
    let mut u = Unstructured::new(&data);
    let p = generate::packet::<DemoPacket>(&mut u).expect("a packet");
    let DemoPacket::SceneUpdate(s) = &p else {
        panic!("the first byte picks the scene update: {p:?}")
    };
    let n = s.objects.len();
    assert!(
        (50..200).contains(&n),
        "{n} objects: not the 1200 bytes' worth"
    );
}
