//! The schema's `[batch]` section (`captures/demo.schema.toml`) and the compiled batch messages
//! of `batch::demo` agree on every input: same traces, errors, values and bytes.

use bitlens_batch::{BatchWriter, UpdateStage, dissect_batch};
use bitlens_codec::dissect::{MessageStatus, Status};
use bitlens_schema::Schema;
use bitlens_testkit::batch_demo::{DemoMessage, dissect, sample_batch, samples};
use bitlens_testkit::fuzzing::schema::{
    demo_batch, demo_message_value, same_batch_verdict, same_message_bytes,
    schema_batch_vs_compiled,
};
use proptest::prelude::*;

#[test]
fn sample_batch_traces_the_same() {
    let data = sample_batch();
    let t = dissect_batch(demo_batch(), &data);
    assert_eq!(t.status, Status::Ok, "{t:?}");
    assert_eq!(t.messages.as_ref().map(Vec::len), Some(samples().len()));
    assert_eq!(t, dissect(&data));
    same_batch_verdict(&data);
}

#[test]
fn every_prefix_of_the_sample_batch_agrees() {
    let data = sample_batch();
    for n in 0..=data.len() {
        same_batch_verdict(&data[..n]);
        // A prefix with a fixed-up batch length: framing errors inside the messages.
        let mut fixed = data[..n].to_vec();
        if n >= 2 {
            fixed[..2].copy_from_slice(&(n as u16).to_le_bytes());
            same_batch_verdict(&fixed);
        }
    }
}

#[test]
fn every_byte_mutation_of_the_sample_batch_agrees() {
    let data = sample_batch();
    for i in 0..data.len() {
        for x in [
            0x00,
            0x01,
            0x7F,
            0x80,
            0xFF,
            data[i] ^ 0x01,
            data[i].wrapping_add(1),
        ] {
            let mut m = data.clone();
            m[i] = x;
            same_batch_verdict(&m);
        }
    }
}

#[test]
fn every_sample_writes_the_same_bytes() {
    for m in samples() {
        same_message_bytes(&m);
    }
}

#[test]
fn the_schema_writes_a_whole_batch_like_the_compiled_writer() {
    let schema = demo_batch();
    let mut buf = vec![0u8; 1200];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    for m in samples() {
        let (t, v) = demo_message_value(&m);
        assert!(schema.push(&mut w, UpdateStage::UPDATE, t, &v).unwrap());
    }
    let n = w.finish();
    assert_eq!(&buf[..n], sample_batch().as_slice());
}

#[test]
fn range_errors_name_the_field_like_compiled_code() {
    // Health 101 in the spawn message: the byte after the packed network id (1001 = 2 bytes).
    let mut data = sample_batch();
    let at = 2 + 4 + 2;
    assert!(data[at] <= 100, "the sample cat's health");
    data[at] = 101;
    let t = dissect_batch(demo_batch(), &data);
    assert_eq!(t.status, Status::Error);
    let spawn = &t.messages.as_ref().unwrap()[0];
    assert_eq!(spawn.status, MessageStatus::Error);
    let p = spawn.problem.as_ref().unwrap();
    assert_eq!((p.field.as_str(), p.bit), ("[0].health", at * 8));
    assert_eq!(t, dissect(&data));
}

#[test]
fn stage_names_can_be_renamed() {
    let s = Schema::from_toml(
        r#"
        [protocol]
        name = "xx"
        id = 1
        mtu = 1200
        packets = ["P"]
        [struct.P]
        fields = [{ name = "a", type = "bool" }]
        [batch]
        stages = ["boot", "tick"]
        messages = [{ type = 9, name = "Hello", body = "H" }]
        [batch.struct.H]
        fields = [{ name = "n", type = "packed_i64", abs_max = 5 }]
        "#,
        "x.toml",
    )
    .unwrap();
    let b = s.batch().unwrap();
    let mut buf = vec![0u8; 64];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    let v = bitlens_schema::DynValue::Struct(bitlens_schema::DynStruct::new([(
        "n",
        bitlens_schema::DynValue::Int(-3),
    )]));
    b.push(&mut w, UpdateStage(1), 9, &v).unwrap();
    let bad = bitlens_schema::DynValue::Struct(bitlens_schema::DynStruct::new([(
        "n",
        bitlens_schema::DynValue::Int(6),
    )]));
    assert!(b.push(&mut w, UpdateStage(1), 9, &bad).is_err());
    let n = w.finish();
    let t = dissect_batch(b, &buf[..n]);
    assert_eq!(t.status, Status::Ok);
    let hello = &t.messages.as_ref().unwrap()[0];
    assert_eq!(hello.name, Some("Hello"));
    assert_eq!(hello.stage_name, Some("tick"));
    assert_eq!(t.path_in_message(hello.body.start), "n");
    // Traced as the value, not its zig-zag code 5.
    assert_eq!(
        t.trace.fields[hello.body.start].value,
        bitlens_codec::trace::Value::Int(-3)
    );
    assert_eq!(b.stage_name(4), None);
}

fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/schema_batch_vs_compiled")
}

/// Replays the committed seeds of the `schema_batch_vs_compiled` fuzz target.
#[test]
fn corpus_schema_batch_vs_compiled() {
    let dir = corpus_dir();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus dir") {
        let path = entry.unwrap().path();
        schema_batch_vs_compiled(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "no seeds in {}", dir.display());
}

/// Regenerates the named seeds: `BITLENS_WRITE_SEEDS=1 cargo test --test schema_batch`.
#[test]
fn write_seed_corpus() {
    if std::env::var_os("BITLENS_WRITE_SEEDS").is_none() {
        return;
    }
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let data = sample_batch();
    std::fs::write(dir.join("sample_batch"), &data).unwrap();
    std::fs::write(dir.join("truncated_sample_batch"), &data[..data.len() / 2]).unwrap();
    let mut health = data.clone();
    health[8] = 101;
    std::fs::write(dir.join("spawn_health_out_of_range"), &health).unwrap();
    for m in samples() {
        let mut buf = vec![0u8; 1200];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        let mut mm = m.clone();
        mm.push(&mut w, UpdateStage::UPDATE).unwrap();
        let n = w.finish();
        let name = format!("{:?}", m).split('(').next().unwrap().to_lowercase();
        std::fs::write(dir.join(format!("one_{name}")), &buf[..n]).unwrap();
        let mut bad = buf[..n].to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 0xFF;
        std::fs::write(dir.join(format!("one_{name}_last_byte_flipped")), &bad).unwrap();
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_agree(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        schema_batch_vs_compiled(&data);
    }

    #[test]
    fn arbitrary_batches_of_messages_agree(seed in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut u = arbitrary::Unstructured::new(&seed);
        let mut buf = vec![0u8; 1200];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        while let Ok(mut m) = <DemoMessage as arbitrary::Arbitrary>::arbitrary(&mut u) {
            same_message_bytes(&m);
            if !m.push(&mut w, UpdateStage::UPDATE).unwrap_or(false) {
                break;
            }
        }
        let n = w.finish();
        same_batch_verdict(&buf[..n]);
    }
}
