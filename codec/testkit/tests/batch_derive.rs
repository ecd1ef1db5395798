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

/// A deterministic stream of pseudo-random bytes.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

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
    assert!(!PingStamp::CHECKED && Ping::STRUCT_NAME == "Ping");
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
