//! Harnesses of the batch fuzz targets (`batch_read`, `batch_roundtrip`), also run by
//! `codec/batch/tests/batch_props.rs` and the corpus replay.

use crate::batch_demo::{DemoMessage, MTU, dissect, dissector};
use arbitrary::{Arbitrary, Unstructured};
use bitlens_batch::{
    BATCH_HEADER_LEN, ByteCounter, Channel, MESSAGE_HEADER_LEN, MessageBody, SendQueue,
    UpdateStage, read_batch,
};
use bitlens_codec::dissect::{Dissector, MessageStatus, Problem, Status};

/// Encodes one demo message (header and body) on its own.
fn encode(m: &mut DemoMessage, stage: UpdateStage) -> Vec<u8> {
    let mut buf = vec![0u8; MTU];
    let n = m
        .encode(&mut buf, stage)
        .expect("a decoded message re-encodes");
    buf.truncate(n);
    buf
}

/// `batch_read`: raw bytes read as a demo batch never panic; the dissection and the verdict
/// reach the reader's verdict (one status: an error when the framing or any message is
/// corrupt); every message's range of the one field tree covers its header and body; every
/// accepted batch re-encodes to the identical bytes (unknown types copied by their length).
pub fn batch_read(data: &[u8]) {
    let d = dissect(data);
    let dissector = dissector();
    let verdict = dissector.verdict(data);
    assert_eq!(
        (
            verdict.status,
            verdict.packet_type,
            verdict.problem.as_ref()
        ),
        (d.status, d.packet_type, d.problem.as_ref()),
        "verdict and dissection disagree"
    );
    let views = d
        .messages
        .as_deref()
        .expect("a batch dissection lists its messages");
    let mut end = 0;
    for v in views {
        assert!(end <= v.entries.start && v.body.start >= v.entries.start);
        assert!(v.body.end <= v.entries.end && v.entries.end <= d.trace.fields.len());
        let scope = &d.trace.fields[v.entries.start];
        assert_eq!(
            (scope.bit, scope.bits),
            (v.offset * 8, (MESSAGE_HEADER_LEN + v.len) * 8)
        );
        end = v.entries.end;
    }
    let Ok(messages) = read_batch(data) else {
        assert_eq!(d.status, Status::Error, "dissection accepted bad framing");
        return;
    };
    let mut rebuilt = data[..BATCH_HEADER_LEN].to_vec();
    let mut all_ok = true;
    for (i, item) in messages.enumerate() {
        let raw = match item {
            Ok(raw) => raw,
            Err(e) => {
                assert_eq!(d.status, Status::Error);
                assert_eq!(d.problem, Some(Problem::from(&e)), "framing error first");
                let at = e.message().expect("a corrupt message is named");
                assert_eq!(at.index, i);
                assert!(e.offset() <= data.len());
                return;
            }
        };
        let t = &views[i];
        assert_eq!((t.offset, usize::from(raw.header.len)), (raw.offset, t.len));
        match DemoMessage::decode(&raw) {
            Ok(Some(mut m)) => {
                assert_eq!(
                    t.status,
                    MessageStatus::Ok,
                    "dissection and decode disagree"
                );
                let bytes = encode(&mut m, raw.header.stage);
                let original = &data[raw.offset..raw.offset + MESSAGE_HEADER_LEN + raw.body.len()];
                assert_eq!(
                    bytes, original,
                    "an accepted message re-encodes to the same bytes"
                );
                rebuilt.extend_from_slice(&bytes);
            }
            Ok(None) => {
                assert_eq!(t.status, MessageStatus::UnknownType);
                rebuilt.extend_from_slice(&raw.header.to_bytes());
                rebuilt.extend_from_slice(raw.body);
            }
            Err(e) => {
                assert_eq!(t.status, MessageStatus::Error);
                assert_eq!(
                    t.problem,
                    Some(Problem::from(&e)),
                    "dissection and decode disagree on the error"
                );
                assert_eq!(e.message().map(|m| m.index), Some(i));
                all_ok = false;
            }
        }
    }
    if all_ok {
        assert_eq!(d.status, Status::Ok);
        assert_eq!(
            rebuilt, data,
            "an accepted batch re-encodes to the same bytes"
        );
    } else {
        assert_eq!(
            d.status,
            Status::Error,
            "a corrupt message makes the batch an error"
        );
    }
}

/// `batch_roundtrip`: an arbitrary sequence of demo messages, stages and channels goes through
/// a send queue and comes back from the batches in the same order with the same bytes; no batch
/// exceeds the MTU; every message measures within its upper bound.
pub fn batch_roundtrip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mut sent = Vec::new();
    while sent.len() < 64 && !u.is_empty() {
        let Ok(m) = DemoMessage::arbitrary(&mut u) else {
            break;
        };
        let stage = UpdateStage(u.int_in_range(0..=7).unwrap_or(0));
        let channel = Channel(u.int_in_range(0..=2).unwrap_or(0));
        sent.push((channel, stage, m));
    }
    let mut queue = SendQueue::new(MTU, 64).expect("valid queue");
    let mut expected = Vec::new();
    for (channel, stage, m) in &mut sent {
        let mut counter = ByteCounter::new();
        let measured = match m {
            DemoMessage::Spawn(x) => x.serialize(&mut counter),
            DemoMessage::Move(x) => x.serialize(&mut counter),
            DemoMessage::Chat(x) => x.serialize(&mut counter),
            DemoMessage::Ping(x) => x.serialize(&mut counter),
            DemoMessage::Pong(x) => x.serialize(&mut counter),
            DemoMessage::Despawn(x) => x.serialize(&mut counter),
        };
        measured.expect("valid messages measure");
        assert!(counter.bytes() <= m.size_upper_bound(), "bound under size");
        let bytes = encode(m, *stage);
        assert_eq!(bytes.len(), MESSAGE_HEADER_LEN + counter.bytes());
        let pushed = match m {
            DemoMessage::Spawn(x) => queue.push(*channel, *stage, x),
            DemoMessage::Move(x) => queue.push(*channel, *stage, x),
            DemoMessage::Chat(x) => queue.push(*channel, *stage, x),
            DemoMessage::Ping(x) => queue.push(*channel, *stage, x),
            DemoMessage::Pong(x) => queue.push(*channel, *stage, x),
            DemoMessage::Despawn(x) => queue.push(*channel, *stage, x),
        };
        pushed.expect("a valid message under the MTU is queued");
        expected.push((*channel, bytes));
    }
    let mut received = Vec::new();
    queue.flush(|channel, batch| {
        assert!(batch.len() <= MTU, "batch over the MTU");
        for raw in read_batch(batch).expect("a written batch reads") {
            let raw = raw.expect("a written message reads");
            let mut m = DemoMessage::decode(&raw)
                .expect("a written message decodes")
                .expect("a known type");
            received.push((channel, encode(&mut m, raw.header.stage)));
        }
    });
    assert_eq!(
        received, expected,
        "messages come back in order, on their channels"
    );
}

/// Seed inputs for the batch corpora: named, valid and damaged batches.
pub fn seed_batches() -> Vec<(String, Vec<u8>)> {
    let valid = crate::batch_demo::sample_batch();
    let mut out = vec![("valid_mixed_batch".to_owned(), valid.clone())];
    let mut truncated = valid.clone();
    truncated.truncate(valid.len() / 2);
    out.push(("truncated_batch".to_owned(), truncated));
    let mut long_body = valid.clone();
    long_body[BATCH_HEADER_LEN + 2] = 0xFF;
    long_body[BATCH_HEADER_LEN + 3] = 0xFF;
    out.push(("message_length_past_end".to_owned(), long_body));
    let mut unknown = valid.clone();
    unknown[BATCH_HEADER_LEN] = 0x77;
    out.push(("unknown_type_skipped".to_owned(), unknown));
    out.push(("empty_batch".to_owned(), vec![2, 0]));
    out.extend(network_id_seeds());
    for (i, mut m) in crate::batch_demo::samples().into_iter().enumerate() {
        let mut buf = vec![0u8; MTU];
        let mut w = bitlens_batch::BatchWriter::new(&mut buf).expect("valid MTU");
        let _ = m.push(&mut w, UpdateStage::UPDATE);
        let n = w.finish();
        let name = crate::batch_demo::message_name(m.message_type()).unwrap_or("message");
        out.push((format!("single_{i}_{name}"), buf[..n].to_vec()));
    }
    out
}

/// Seeds at the edge of the demo message set's network ids (`1..=MAX_NETWORK_ID`): the largest
/// id, and one past it as an object id and as a reference (refused, `out_of_range`).
pub fn network_id_seeds() -> Vec<(String, Vec<u8>)> {
    use bitlens_tagged::varint::write_varint;
    let max = crate::batch_demo::MAX_NETWORK_ID;
    let despawn = |id: u32| {
        let mut body = Vec::new();
        write_varint(&mut body, u64::from(id));
        body
    };
    let spawn_home_base = |id: u32| {
        // A default spawn: network id 1, health 0, meow count 0, then the home base (0: none),
        // one byte each; the home base replaced by `id`.
        let mut m = DemoMessage::Spawn(crate::batch_demo::SpawnRoboCat::default());
        let mut buf = vec![0u8; MTU];
        let n = m.encode(&mut buf, UpdateStage::UPDATE).unwrap_or(0);
        let body = &buf[MESSAGE_HEADER_LEN..n];
        let mut out = body[..3].to_vec();
        write_varint(&mut out, u64::from(id));
        out.extend_from_slice(&body[4..]);
        out
    };
    let batch = |t: u8, body: Vec<u8>| {
        let mut buf = vec![0u8; MTU];
        let mut w = bitlens_batch::BatchWriter::new(&mut buf).expect("valid MTU");
        let _ = w.push_raw(t, UpdateStage::UPDATE, &body);
        let n = w.finish();
        buf.truncate(n);
        buf
    };
    vec![
        (format!("valid_network_id_{max}"), batch(6, despawn(max))),
        (
            format!("hostile_network_id_{}", max + 1),
            batch(6, despawn(max + 1)),
        ),
        (
            format!("hostile_home_base_{}", max + 1),
            batch(1, spawn_home_base(max + 1)),
        ),
    ]
}
