//! `#[derive(BatchStruct)]` and `#[derive(MessageEnum)]`: the demo's derived batch messages
//! against the schema interpreter running the `[batch]` text the derive writes, and that text
//! against the shipped `captures/demo.schema.toml`.

use bitlens_batch::{BatchStruct, MessageBody, MessageEnum};
use bitlens_testkit::batch_demo::{
    self, ChatText, DemoMessage, Despawn, MoveRigidBody, Ping, PingStamp, Pong, SpawnRoboCat,
};
use bitlens_testkit::demo::RigidBody;
use bitlens_testkit::fuzzing::schema::{
    DEMO, DERIVED, derived_batch, same_batch_verdict, schema_batch_vs_compiled,
};

use bitlens_testkit::noise;

#[test]
fn the_derived_demo_schema_is_the_shipped_one() {
    // The same protocol and the same message types, by number and name.
    assert_eq!(DERIVED.protocol(), DEMO.protocol());
    let types = |s: &bitlens_schema::Schema| -> Vec<(u8, &'static str)> {
        s.batch()
            .expect("a [batch] section")
            .message_types()
            .collect()
    };
    assert_eq!(types(&DERIVED), types(&DEMO));
    assert_eq!(
        types(&DERIVED),
        <DemoMessage as MessageEnum>::TYPES.to_vec()
    );
    // Each line of the derived section says what the shipped file says (the shipped one adds
    // `doc` and leaves out `min = 0`).
    let text = DemoMessage::schema();
    for line in [
        "[batch.struct.RigidBodyState]",
        "{ name = \"health\", type = \"u8\", min = 0, max = 100 },",
        "{ name = \"mice\", type = \"array\", max_len = 32, element = { type = \"u16\", min = 0, max = 4095 } },",
        "{ name = \"location\", type = \"pod\", element = \"i32\", len = 3, abs_max = 20000 },",
        "{ name = \"linear_velocity\", type = \"pod\", element = \"f32\", len = 3, unless = \"at_rest\" },",
        "{ name = \"stamp\", type = \"pod\", element = \"PingStamp\" },",
        "{ name = \"home_base\", type = \"packed_u32\", max = 65535 },",
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    assert_eq!(DERIVED.warnings(), &[]);
}

#[test]
fn hostile_and_sample_batches_agree_with_both_schemas() {
    same_batch_verdict(&batch_demo::sample_batch());
    for seed in 0..2000u64 {
        let data = noise(seed, 4 + (seed as usize % 300));
        // As they come (mostly a wrong batch length), and with the length fixed up so the
        // messages themselves are read.
        same_batch_verdict(&data);
        let mut fixed = data.clone();
        let n = fixed.len() as u16;
        fixed[..2].copy_from_slice(&n.to_le_bytes());
        same_batch_verdict(&fixed);
        // The fuzz target's own property, over the derived text.
        schema_batch_vs_compiled(&data);
    }
}

#[test]
fn the_byte_bounds_are_the_fields() {
    // Despawn: one packed id (1 to 5 bytes).
    assert_eq!((Despawn::MIN_BYTES, Despawn::MAX_BYTES), (1, 5));
    // Ping: one plain-old-data stamp of 16 bytes, unchecked.
    assert_eq!((Ping::MIN_BYTES, Ping::MAX_BYTES), (16, 16));
    assert!(PingStamp::PLAIN && Ping::PLAIN && !ChatText::PLAIN && Ping::STRUCT_NAME == "Ping");
    assert_eq!(Pong::default().size_upper_bound(), 20);
    // Chat: a packed u32 and a string of up to 256 bytes (a 2-byte length).
    assert_eq!(ChatText::default().size_upper_bound(), 5 + 2 + 256);
    // A body at rest takes 12 + 16 + 1 bytes; moving, 24 more.
    assert_eq!((RigidBody::MIN_BYTES, RigidBody::MAX_BYTES), (29, 53));
    assert_eq!(MoveRigidBody::default().size_upper_bound(), 5 + 53);
    // Spawn: id, health, meows, home base, name (1 + 127), mice (1 + 2 x 32), 12 + 16.
    assert_eq!(
        SpawnRoboCat::default().size_upper_bound(),
        5 + 1 + 5 + 5 + 128 + 65 + 12 + 16
    );
    // And the derived schema measures every sample within its bound.
    for mut m in batch_demo::samples() {
        let mut buf = [0u8; 1200];
        let n = m
            .encode(&mut buf, bitlens_batch::UpdateStage::UPDATE)
            .expect("a sample encodes");
        assert!(n - 4 <= m.size_upper_bound());
        let (t, v) = bitlens_testkit::fuzzing::schema::demo_message_value(&m);
        assert_eq!(derived_batch().measure(t, &v).unwrap(), n - 4);
    }
}

#[test]
fn a_guarded_field_holding_a_value_is_refused_on_write() {
    // At rest, velocities are not sent: a non-zero one would be lost, so the write fails at
    // the field, as the schema interpreter's does.
    let mut m = DemoMessage::Move(MoveRigidBody {
        body: RigidBody {
            at_rest: true,
            linear_velocity: [1.0, 0.0, 0.0],
            ..RigidBody::default()
        },
        ..MoveRigidBody::default()
    });
    let mut buf = [0u8; 100];
    let e = m
        .encode(&mut buf, bitlens_batch::UpdateStage::UPDATE)
        .unwrap_err();
    assert_eq!(e.kind().name(), "invalid_value");
    assert_eq!(e.field(), "linear_velocity");
    // Byte 4 (header) + 1 (id) + 12 + 16 + 1: where the velocity would go.
    assert_eq!(e.offset(), 4 + 1 + 29);
}

/// Every form the batch derive has, in one message set of a made-up game: each field's Rust
/// type and attributes, against the schema interpreter running the text the derive writes.
mod every {
    use arbitrary::Arbitrary;
    use bitlens_batch::{BatchStruct, InlineStr, InlineVec, Message, MessageEnum, NetworkContext};
    use bitlens_codec::link::NetworkId;

    pub const MAX_ID: u32 = 4000;

    #[derive(Debug, Clone, Copy, PartialEq, Default, Arbitrary, BatchStruct)]
    pub struct Item {
        pub kind: u8,
        #[batch(packed, abs_max = 1000)]
        pub delta: i32,
    }

    #[derive(
        Debug,
        Clone,
        Copy,
        PartialEq,
        Default,
        Arbitrary,
        bytemuck::Pod,
        bytemuck::Zeroable,
        BatchStruct,
    )]
    #[repr(C)]
    pub struct Stamp {
        pub tick: u32,
        pub when: f32,
    }

    #[derive(Debug, Clone, PartialEq, Arbitrary, BatchStruct)]
    #[batch(message_type = 10, name = "Everything")]
    pub struct Every {
        pub flag: bool,
        pub byte: u8,
        #[batch(range = 10..=60_000)]
        pub word: u16,
        /// The type's every value: no range, in the schema text's reading and in the trace.
        #[batch(range = 0..=65_535)]
        pub whole: u16,
        pub dword: u32,
        #[batch(range = 0..=1_000_000_000_000)]
        pub qword: u64,
        #[batch(abs_max = 100)]
        pub small: i8,
        pub short: i16,
        #[batch(abs_max = 2_000_000)]
        pub int: i32,
        pub long: i64,
        pub single: f32,
        pub double: f64,
        #[batch(packed, range = 1..=500_000)]
        pub packed_u: u32,
        #[batch(packed)]
        pub packed_w: u64,
        #[batch(packed, abs_max = 70_000)]
        pub packed_i: i32,
        #[batch(packed)]
        pub packed_l: i64,
        #[batch(max_len = 40)]
        pub title: String,
        pub tag: InlineStr<12>,
        #[batch(max_len = 300)]
        pub blob: Vec<u8>,
        pub key: [u8; 6],
        #[batch(range = 0..=999)]
        pub scores: [u16; 4],
        #[batch(abs_max = 5000)]
        pub offsets: [i16; 2],
        pub floats: [f64; 2],
        #[batch(max_len = 5, element(max_len = 8))]
        pub names: Vec<String>,
        #[batch(max_len = 7)]
        pub items: Vec<Item>,
        pub slots: InlineVec<Item, 3>,
        #[batch(max_len = 6, element(packed, range = 0..=70_000))]
        pub ids: Vec<u32>,
        #[batch(max_len = 3, element(max_len = 4, element(range = 0..=5)))]
        pub grid: Vec<Vec<u16>>,
        #[batch(max_id = MAX_ID)]
        pub owner: NetworkId,
        #[batch(max_id = MAX_ID)]
        pub target: Option<NetworkId>,
        pub first: Item,
        #[batch(pod)]
        pub stamp: Stamp,
        #[batch(if = flag)]
        pub when_set: u32,
        #[batch(unless = flag, max_len = 10)]
        pub when_clear: String,
        #[batch(name = "renamed")]
        pub wire_name: u8,
        #[batch(skip)]
        pub local: u64,
    }

    impl Default for Every {
        fn default() -> Self {
            Every {
                flag: false,
                byte: 0,
                word: 10,
                whole: 0,
                dword: 0,
                qword: 0,
                small: 0,
                short: 0,
                int: 0,
                long: 0,
                single: 0.0,
                double: 0.0,
                packed_u: 1,
                packed_w: 0,
                packed_i: 0,
                packed_l: 0,
                title: String::new(),
                tag: InlineStr::new(),
                blob: Vec::new(),
                key: [0; 6],
                scores: [0; 4],
                offsets: [0; 2],
                floats: [0.0; 2],
                names: Vec::new(),
                items: Vec::new(),
                slots: InlineVec::new(),
                ids: Vec::new(),
                grid: Vec::new(),
                owner: NetworkId::new(1).unwrap(),
                target: None,
                first: Item::default(),
                stamp: Stamp::default(),
                when_set: 0,
                when_clear: String::new(),
                wire_name: 0,
                local: 0,
            }
        }
    }

    #[derive(Debug, Clone, PartialEq, Default, Arbitrary, BatchStruct)]
    #[batch(message_type = 200)]
    pub struct Empty {}

    impl Message for Every {
        type Handler = Vec<u8>;
        fn handle(&mut self, _: &NetworkContext, seen: &mut Vec<u8>) {
            seen.push(self.byte);
        }
    }

    impl Message for Empty {
        type Handler = Vec<u8>;
        fn handle(&mut self, _: &NetworkContext, seen: &mut Vec<u8>) {
            seen.push(200);
        }
    }

    // A message enum holds its messages by value, as a game's would.
    #[allow(clippy::large_enum_variant)]
    #[derive(Debug, Clone, PartialEq, Arbitrary, MessageEnum)]
    pub enum EveryMessage {
        Every(Every),
        Empty(Empty),
    }
}

#[test]
fn every_form_of_the_derive_agrees_with_its_schema_text() {
    use arbitrary::{Arbitrary, Unstructured};
    use bitlens_batch::{
        BatchWriter, MessagesOf, UpdateStage, check_batch, dissect_batch, read_batch,
    };
    use every::EveryMessage;

    let text = format!(
        "[protocol]\nname = \"every\"\nid = 1\nmtu = 1200\npackets = [{{ name = \"P\", body = \"P\" }}]\n\n[struct.P]\nfields = [{{ name = \"x\", type = \"bool\" }}]\n\n{}",
        EveryMessage::schema()
    );
    let schema = bitlens_schema::Schema::from_toml(&text, "every (derived)")
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let batch = schema.batch().expect("a [batch] section");
    for line in [
        "{ type = 10, name = \"Everything\" },",
        "{ name = \"qword\", type = \"u64\", min = 0, max = 1000000000000 },",
        "{ name = \"packed_i\", type = \"packed_i32\", abs_max = 70000 },",
        "{ name = \"key\", type = \"bytes\", len = 6 },",
        "{ name = \"blob\", type = \"bytes\", max_len = 300 },",
        "{ name = \"scores\", type = \"pod\", element = \"u16\", len = 4, min = 0, max = 999 },",
        "{ name = \"names\", type = \"array\", max_len = 5, element = { type = \"string\", max_len = 8 } },",
        "{ name = \"slots\", type = \"array\", max_len = 3, element = { type = \"Item\" } },",
        "{ name = \"stamp\", type = \"pod\", element = \"Stamp\" },",
        "{ name = \"when_set\", type = \"u32\", if = \"flag\" },",
        "{ name = \"when_clear\", type = \"string\", max_len = 10, unless = \"flag\" },",
        "{ name = \"renamed\", type = \"u8\" },",
        "{ name = \"grid\", type = \"array\", max_len = 3, element = { type = \"array\", max_len = 4, element = { type = \"u16\", min = 0, max = 5 } } },",
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    assert!(!text.contains("local"), "a skipped field is not sent");
    let set = MessagesOf::<EveryMessage>::new();
    let (mut written, mut refused) = (0, 0);
    for seed in 0..3000u64 {
        let data = noise(seed, 64 + (seed as usize % 900));
        let mut u = Unstructured::new(&data);
        let Ok(mut m) = EveryMessage::arbitrary(&mut u) else {
            continue;
        };
        let mut buf = vec![0u8; 1200];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        let pushed = m.push(&mut w, UpdateStage::UPDATE);
        let n = w.finish();
        if !matches!(pushed, Ok(true)) {
            refused += 1;
            continue;
        }
        written += 1;
        let bytes = &buf[..n];
        // The derived set and the schema read the batch the same way, field by field.
        let (a, b) = (dissect_batch(&set, bytes), dissect_batch(batch, bytes));
        assert_eq!(a, b, "seed {seed}: the dissections differ");
        assert_eq!(
            a.status,
            bitlens_codec::dissect::Status::Ok,
            "seed {seed}: {a:?}"
        );
        // What was written reads back (the skipped field as its default), and the schema
        // re-encodes its own reading to the same body.
        let raw = read_batch(bytes).unwrap().next().unwrap().unwrap();
        let back = EveryMessage::decode(&raw).unwrap().unwrap();
        if let (EveryMessage::Every(x), EveryMessage::Every(y)) = (&m, &back) {
            let mut want = x.clone();
            want.local = 0;
            // NaN != NaN: compare floats by their bits.
            assert_eq!(format!("{want:?}"), format!("{y:?}"), "seed {seed}");
        }
        let v = batch.decode(&raw).unwrap().unwrap();
        let mut body = vec![0u8; raw.body.len()];
        let k = batch
            .encode_body(raw.header.message_type, &v, &mut body)
            .unwrap();
        assert_eq!(
            &body[..k],
            raw.body,
            "seed {seed}: the schema re-encodes otherwise"
        );
        // Hostile versions of the same bytes: one flipped byte, and cut short.
        let mut flipped = bytes.to_vec();
        let i = 6 + (seed as usize % (bytes.len() - 6).max(1));
        flipped[i.min(bytes.len() - 1)] ^= 1 << (seed % 8);
        for d in [&flipped[..], &bytes[..bytes.len() / 2]] {
            assert_eq!(
                dissect_batch(&set, d),
                dissect_batch(batch, d),
                "seed {seed}"
            );
            assert_eq!(check_batch(&set, d), check_batch(batch, d), "seed {seed}");
        }
    }
    assert!(
        written > 300 && refused > 300,
        "written {written}, refused {refused}"
    );
}

#[test]
fn ranged_values_are_traced_with_their_ranges_by_the_derive_and_the_schema() {
    // Issue 29.9: batch traces recorded no range (min/max null). Every ranged scalar, array
    // element and id carries its declared range, the same in the derived set and the schema
    // read from its text; an unranged value, a pod array and the type's whole range carry none.
    use bitlens_batch::{BatchWriter, MessagesOf, UpdateStage, dissect_batch};
    use every::{Every, EveryMessage, Item};

    let text = format!(
        "[protocol]\nname = \"every\"\nid = 1\nmtu = 1200\npackets = [{{ name = \"P\", body = \"P\" }}]\n\n[struct.P]\nfields = [{{ name = \"x\", type = \"bool\" }}]\n\n{}",
        EveryMessage::schema()
    );
    let schema = bitlens_schema::Schema::from_toml(&text, "every (derived)")
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let batch = schema.batch().expect("a [batch] section");
    let mut m = EveryMessage::Every(Every {
        word: 500,
        whole: 7,
        small: -3,
        packed_i: -70_000,
        ids: vec![5, 70_000],
        grid: vec![vec![1, 5]],
        items: vec![Item {
            kind: 1,
            delta: -1000,
        }],
        target: bitlens_codec::link::NetworkId::new(9),
        ..Every::default()
    });
    let mut buf = vec![0u8; 1200];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    assert!(matches!(m.push(&mut w, UpdateStage::UPDATE), Ok(true)));
    let n = w.finish();
    let set = MessagesOf::<EveryMessage>::new();
    let (a, b) = (
        dissect_batch(&set, &buf[..n]),
        dissect_batch(batch, &buf[..n]),
    );
    assert_eq!(a, b, "the dissections differ");
    let range = |path: &str| {
        let f = a.trace.fields.iter().find(|f| f.path() == path);
        f.unwrap_or_else(|| panic!("no {path}")).range
    };
    for (path, want) in [
        ("[0].word", Some((10, 60_000))),
        ("[0].whole", None),
        ("[0].byte", None),
        ("[0].qword", Some((0, 1_000_000_000_000))),
        ("[0].small", Some((-100, 100))),
        ("[0].int", Some((-2_000_000, 2_000_000))),
        ("[0].packed_u", Some((1, 500_000))),
        ("[0].packed_i", Some((-70_000, 70_000))),
        ("[0].packed_w", None),
        ("[0].ids", Some((0, 6))),
        ("[0].ids[0]", Some((0, 70_000))),
        ("[0].ids[1]", Some((0, 70_000))),
        ("[0].grid[0][1]", Some((0, 5))),
        ("[0].items[0].delta", Some((-1000, 1000))),
        ("[0].items[0].kind", None),
        ("[0].scores", None),
        ("[0].owner", Some((1, 4000))),
        ("[0].target", Some((0, 4000))),
    ] {
        assert_eq!(range(path), want, "{path}");
    }
}

#[test]
fn an_error_inside_an_inner_array_names_the_inner_array_as_the_schema_does() {
    use bitlens_batch::{BatchStruct, BatchWriter, MessagesOf, UpdateStage, dissect_batch};

    #[derive(Debug, Clone, PartialEq, Default, BatchStruct)]
    #[batch(message_type = 1)]
    struct Grid {
        #[batch(max_len = 3, element(max_len = 4, element(range = 0..=5)))]
        rows: Vec<Vec<u16>>,
    }
    #[derive(Debug, Clone, PartialEq, bitlens_batch::MessageEnum)]
    enum Set {
        Grid(Grid),
    }
    let text = format!(
        "[protocol]\nname = \"gg\"\nid = 1\nmtu = 1200\npackets = [{{ name = \"P\", body = \"P\" }}]\n\n[struct.P]\nfields = [{{ name = \"x\", type = \"bool\" }}]\n\n{}",
        Set::schema()
    );
    let schema = bitlens_schema::Schema::from_toml(&text, "grid").unwrap();
    // One row [1, 9]: 9 is out of 0..=5 (written raw, past the derived writer's check).
    let body = [1u8, 2, 1, 0, 9, 0];
    let mut buf = [0u8; 64];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    w.push_raw(1, UpdateStage::UPDATE, &body).unwrap();
    let n = w.finish();
    let a = dissect_batch(&MessagesOf::<Set>::new(), &buf[..n]);
    let b = dissect_batch(schema.batch().unwrap(), &buf[..n]);
    assert_eq!(a, b);
    let p = a.problem.expect("out of range");
    assert_eq!((p.kind, p.field.as_str()), ("out_of_range", "[0]."));
}

#[test]
fn exact_size_sends_a_small_value_of_a_large_message() {
    use bitlens_batch::{BatchStruct, BatchWriter, MessageBody, UpdateStage};

    #[derive(Debug, Clone, PartialEq, Default, BatchStruct)]
    #[batch(message_type = 7, exact_size)]
    struct Note {
        #[batch(max_len = 4000)]
        text: String,
    }
    #[derive(Debug, Clone, PartialEq, Default, BatchStruct)]
    #[batch(message_type = 8)]
    struct Bound {
        #[batch(max_len = 4000)]
        text: String,
    }
    let mut buf = [0u8; 1200];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    let mut note = Note { text: "hi".into() };
    assert_eq!(note.size_upper_bound(), 1 + 2);
    assert!(w.push(UpdateStage::UPDATE, &mut note).unwrap());
    // Without it, the bound is every byte the fields may take: more than a 1200-byte batch.
    let mut bound = Bound { text: "hi".into() };
    assert_eq!(bound.size_upper_bound(), 2 + 4000);
    let e = w.push(UpdateStage::UPDATE, &mut bound).unwrap_err();
    assert_eq!(e.kind().name(), "too_large");
}
