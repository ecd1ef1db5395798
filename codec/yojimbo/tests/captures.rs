//! The reference's own traffic: yojimbo 1.9.1's client/server and soak samples
//! (`captures/yojimbo-*.pcap`), decrypted with the samples' key, read by the yojimbo layer
//! with the samples' configuration and message types, and checked against the soak capture's
//! labels (written by an independent checker) and against what the samples' source sends.

mod common;
mod samples;

use std::collections::BTreeMap;
use std::sync::Arc;

use bitlens_codec::{FieldKind, Value};
use bitlens_yojimbo::{Bits, Content, Note, Receiver, Reliable};
use samples::{DUMMY_BITS, client_server_config, soak_config};
use serde_json::Value as Json;

fn sequence_of(body: &Bits) -> u64 {
    (0..16).map(|i| u64::from(body.get(i)) << i).sum()
}

/// What the sample sends in a TestMessage with this sequence: the dummy bits all zero.
fn check_test_message(body: &Bits, frame: u64) -> u64 {
    let sequence = sequence_of(body);
    let n = DUMMY_BITS[(sequence % 21) as usize] as usize;
    assert_eq!(
        body.len,
        16 + n,
        "frame {frame}: TestMessage {sequence} body bits"
    );
    assert!(
        (16..body.len).all(|i| !body.get(i)),
        "frame {frame}: dummy bits not zero"
    );
    sequence
}

fn labels() -> Vec<Json> {
    let text =
        std::fs::read_to_string(common::captures().join("yojimbo-soak.labels.json")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const NAMES: [&str; 7] = [
    "request",
    "denied",
    "challenge",
    "response",
    "keep_alive",
    "payload",
    "disconnect",
];

fn entries_json(p: &bitlens_yojimbo::ConnectionPacket, frame: u64) -> Json {
    let mut out = Vec::new();
    for e in &p.entries {
        let mut m = serde_json::Map::new();
        m.insert("channel".into(), e.channel.into());
        match &e.content {
            Content::Nothing => {
                m.insert("messages".into(), Json::Array(vec![]));
            }
            Content::Messages(ms) => {
                let list = ms
                    .iter()
                    .map(|msg| {
                        assert!(
                            msg.id_on_wire,
                            "frame {frame}: the soak uses channel 1 only"
                        );
                        let seq = match msg.message_type {
                            0 => check_test_message(&msg.body, frame),
                            _ => sequence_of(&msg.body),
                        };
                        serde_json::json!([msg.id, msg.message_type, seq])
                    })
                    .collect();
                m.insert("messages".into(), Json::Array(list));
            }
            Content::Fragment(f) => {
                let mut b = serde_json::json!({
                    "message_id": f.message_id,
                    "fragment": f.fragment_id,
                    "num_fragments": f.num_fragments,
                    "size": f.data.len(),
                });
                if let Some(h) = &f.head {
                    assert_eq!(h.body.len, 16, "frame {frame}: TestBlockMessage body");
                    b["message"] = serde_json::json!({
                        "type": h.message_type,
                        "sequence": sequence_of(&h.body),
                    });
                }
                m.insert("block_fragment".into(), b);
            }
        }
        out.push(Json::Object(m));
    }
    Json::Array(out)
}

/// Per block (direction, channel, message id): the datagrams whose connection packets carried a
/// fragment of it (the labels' `frames`), and per fragment the datagrams of the packet that
/// brought it first (what the receiver reports).
#[derive(Default)]
struct Carriers {
    packets: BTreeMap<(bool, usize, u16), Vec<u64>>,
    first: BTreeMap<(bool, usize, u16, u32), Vec<u64>>,
    /// Per packet (direction, sequence): the datagrams that repeated a fragment before it was
    /// whole (the labels count them among the packet's frames; the receiver names the datagrams
    /// whose bytes it used).
    repeats: BTreeMap<(bool, u16), Vec<u64>>,
}

/// Everything the yojimbo layer says about one datagram, in the labels' format.
fn observe(
    frame: &common::Frame,
    rx: &mut Receiver,
    counts: &mut BTreeMap<&'static str, usize>,
    carriers: &mut Carriers,
) -> Json {
    let mut j = serde_json::json!({
        "frame": frame.number,
        "dir": if frame.c2s { "c2s" } else { "s2c" },
        "netcode": NAMES[usize::from(frame.kind)],
    });
    if frame.kind != 0 {
        j["seq"] = frame.sequence.into();
    }
    if frame.kind != 5 {
        return j;
    }
    let payload = &frame.plaintext;
    j["payload_bytes"] = payload.len().into();
    let d = rx.receive(frame.number, payload);
    assert!(
        d.refusal().is_none(),
        "frame {}: {:?}",
        frame.number,
        d.refusal()
    );
    assert!(
        !d.notes.iter().any(Note::is_fault),
        "frame {}: {:?}",
        frame.number,
        d.notes
    );
    let header_trace = d.header_trace.as_ref().unwrap();
    assert!(header_trace.error.is_none());
    let traced_sequence = header_trace.get("reliable.sequence").unwrap().value.clone();
    match d.reliable.as_ref().unwrap() {
        Reliable::Regular(h) => {
            assert_eq!(traced_sequence, Value::Int(h.sequence.into()));
            // The ack bytes present are the elements of one array scope, as the codec's
            // arrays are (a field tree shows `ack_bits` over `[0]`..`[3]`); the bytes left
            // out are 0xFF.
            let (mut bits, mut present) = (u32::MAX, 0);
            for i in 0..4 {
                if let Some(f) = header_trace.get(&format!("reliable.ack_bits[{i}]")) {
                    present += 1;
                    let Value::Int(b) = f.value else {
                        panic!("frame {}: {f:?}", frame.number)
                    };
                    bits = bits & !(0xff << (8 * i)) | (b as u32) << (8 * i);
                }
            }
            assert_eq!(bits, h.ack_bits, "frame {}", frame.number);
            let scope = header_trace.get("reliable.ack_bits");
            assert_eq!(scope.is_some(), present > 0, "frame {}", frame.number);
            if let Some(scope) = scope {
                assert_eq!(scope.kind, FieldKind::Scope, "frame {}", frame.number);
            }
            j["reliable"] = serde_json::json!({
                "seq": h.sequence, "ack": h.ack, "ack_bits": h.ack_bits, "header_bytes": h.bytes,
            });
        }
        Reliable::Fragment(f) => {
            assert_eq!(traced_sequence, Value::Int(f.sequence.into()));
            if f.header.is_some() {
                assert!(
                    header_trace.get("reliable.packet.ack_delta").is_some()
                        || header_trace.get("reliable.packet.ack").is_some()
                );
            }
            let mut r = serde_json::json!({
                "seq": f.sequence,
                "fragment": f.fragment_id,
                "num_fragments": f.num_fragments,
            });
            if let Some(h) = f.header {
                r["ack"] = h.ack.into();
                r["ack_bits"] = h.ack_bits.into();
            }
            r["bytes"] = (payload.len() - f.data_start).into();
            let dup = d.notes.iter().any(|n| {
                matches!(
                    n,
                    Note::DuplicateFragment { .. } | Note::FragmentOfReceivedPacket { .. }
                )
            });
            if d.notes
                .iter()
                .any(|n| matches!(n, Note::DuplicateFragment { .. }))
            {
                let key = (frame.c2s, f.sequence);
                carriers.repeats.entry(key).or_default().push(frame.number);
            }
            if dup {
                r["duplicate"] = true.into();
                *counts.entry("duplicate fragments").or_default() += 1;
            }
            j["reliable_fragment"] = r;
        }
    }
    if let Some(p) = &d.packet {
        if p.datagrams.len() > 1 {
            let mut frames = p.datagrams.clone();
            frames.extend(
                carriers
                    .repeats
                    .remove(&(frame.c2s, p.sequence))
                    .unwrap_or_default(),
            );
            frames.sort_unstable();
            j["reassembled"] = serde_json::json!({
                "seq": p.sequence, "frames": frames, "bytes": p.bytes,
            });
            *counts.entry("reassembled").or_default() += 1;
        }
        if p.duplicate {
            j["reliable_duplicate"] = true.into();
        }
        let c = p.result.as_ref().unwrap();
        j["connection"] = serde_json::json!({
            "bits": c.bits, "entries": entries_json(c, frame.number),
        });
        *counts.entry("connection packets").or_default() += 1;
        for e in c.entries.iter().filter(|_| !p.duplicate) {
            if let Content::Fragment(f) = &e.content {
                let key = (frame.c2s, e.channel, f.message_id);
                carriers.packets.entry(key).or_default().push(frame.number);
                let key = (frame.c2s, e.channel, f.message_id, f.fragment_id);
                carriers.first.entry(key).or_insert(p.datagrams.clone());
            }
        }
        // The trace holds every field the reader read, with the values the model has.
        let trace = p.trace.as_ref().unwrap();
        assert!(trace.error.is_none());
        assert_eq!(trace.bits_read, c.bits);
        check_trace(trace, c, frame.number);
    }
    for b in &d.blocks {
        let sequence = sequence_of(&b.body);
        assert_eq!(b.message_type, 1);
        assert_eq!(u64::from(b.message_id), sequence, "frame {}", frame.number);
        // soak.cpp: size 1 + (sequence * 33) % 10240, byte j = uint8(sequence + j).
        assert_eq!(b.data.len() as u64, 1 + (sequence * 33) % 10240);
        assert!(
            b.data
                .iter()
                .enumerate()
                .all(|(k, &x)| x == (sequence as usize + k) as u8)
        );
        // The receiver names the datagrams that brought each fragment first; the labels name
        // the datagrams whose connection packets carried any copy of a fragment.
        let mut first: Vec<u64> = (0..3)
            .flat_map(|i| {
                let key = (frame.c2s, b.channel, b.message_id, i);
                carriers.first.get(&key).cloned().unwrap_or_default()
            })
            .collect();
        first.sort_unstable();
        first.dedup();
        assert_eq!(b.datagrams, first, "frame {}", frame.number);
        let key = (frame.c2s, b.channel, b.message_id);
        j["block_complete"] = serde_json::json!({
            "channel": b.channel, "message_id": b.message_id, "sequence": sequence,
            "size": b.data.len(), "frames": carriers.packets[&key],
        });
        *counts.entry("blocks").or_default() += 1;
    }
    j
}

fn check_trace(trace: &bitlens_codec::Trace, c: &bitlens_yojimbo::ConnectionPacket, frame: u64) {
    let get = |path: &str| {
        trace
            .get(path)
            .unwrap_or_else(|| panic!("frame {frame}: no field {path}"))
            .value
            .clone()
    };
    assert_eq!(get("num_entries"), Value::Int(c.entries.len() as i128));
    for (i, e) in c.entries.iter().enumerate() {
        assert_eq!(
            get(&format!("entries[{i}].channel")),
            Value::Int(e.channel as i128)
        );
        if let Content::Messages(ms) = &e.content {
            for (k, m) in ms.iter().enumerate() {
                let at = format!("entries[{i}].messages[{k}]");
                assert_eq!(
                    get(&format!("{at}.type")),
                    Value::Int(m.message_type.into())
                );
                let seq = get(&format!("{at}.body.sequence"));
                assert_eq!(seq, Value::Int(sequence_of(&m.body).into()));
                let id = trace.get(&format!("entries[{i}].ids[{k}]")).unwrap();
                assert!(id.bits >= 1);
            }
        }
    }
}

#[test]
fn soak_capture_decodes_and_matches_its_labels() {
    let frames = common::decrypt("yojimbo-soak.pcap", "yojimbo-reference.key");
    let labels = labels();
    assert_eq!(frames.len(), labels.len());
    let cfg = Arc::new(soak_config());
    let mut c2s = Receiver::new(cfg.clone(), true).unwrap();
    let mut s2c = Receiver::new(cfg, true).unwrap();
    let mut counts = BTreeMap::new();
    let mut carriers = Carriers::default();
    for (frame, label) in frames.iter().zip(&labels) {
        let rx = if frame.c2s { &mut c2s } else { &mut s2c };
        let mut seen = observe(frame, rx, &mut counts, &mut carriers);
        // The request's token fields are netcode's, not this layer's.
        if frame.kind == 0 {
            for k in ["protocol_id", "client_id", "timeout", "expire"] {
                seen[k] = label[k].clone();
            }
        }
        assert_eq!(&seen, label, "frame {}", frame.number);
    }
    // What YOJIMBO-NOTES.md counts: 73 packets reassembled, 4 blocks whole, 141 connection
    // packets read, 57 duplicate fragments.
    assert_eq!(counts["reassembled"], 73);
    assert_eq!(counts["blocks"], 4);
    assert_eq!(counts["connection packets"], 141);
    assert_eq!(counts["duplicate fragments"], 57);
    // At the end: fragmented packets never completed (simulated loss), and the one block
    // still in flight (server to client, message 251).
    let mut incomplete_packets = 0;
    let mut incomplete_blocks = Vec::new();
    for n in c2s.finish().into_iter().chain(s2c.finish()) {
        match n {
            Note::PacketIncomplete { .. } => incomplete_packets += 1,
            Note::BlockIncomplete {
                channel,
                message_id,
                ..
            } => incomplete_blocks.push((channel, message_id)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(incomplete_blocks, vec![(1, 251)]);
    assert!(incomplete_packets > 0);
}

#[test]
fn client_server_capture_is_empty_connection_packets() {
    let frames = common::decrypt("yojimbo-client-server.pcap", "yojimbo-reference.key");
    assert_eq!(frames.len(), 362);
    let cfg = Arc::new(client_server_config());
    let mut c2s = Receiver::new(cfg.clone(), false).unwrap();
    let mut s2c = Receiver::new(cfg, true).unwrap();
    let mut payloads = [0usize; 2];
    for f in frames.iter().filter(|f| f.kind == 5) {
        let rx = if f.c2s { &mut c2s } else { &mut s2c };
        let d = rx.receive(f.number, &f.plaintext);
        assert!(
            d.refusal().is_none(),
            "frame {}: {:?}",
            f.number,
            d.refusal()
        );
        assert!(matches!(d.reliable, Ok(Reliable::Regular(_))));
        let p = d.packet.unwrap();
        assert_eq!(p.bytes, 1);
        let c = p.result.unwrap();
        assert!(c.entries.is_empty());
        assert_eq!(c.bits, 2);
        payloads[usize::from(f.c2s)] += 1;
    }
    assert_eq!(payloads, [169, 177]);
    assert!(c2s.finish().is_empty() && s2c.finish().is_empty());
}

/// The seeds of `corpus/yojimbo`, from these captures: written when `BITLENS_WRITE_CORPUS` is
/// set (`BITLENS_WRITE_CORPUS=1 cargo test -p bitlens-yojimbo --test captures seeds`), checked
/// to be the committed files otherwise.
#[test]
fn seeds() {
    let frames = common::decrypt("yojimbo-soak.pcap", "yojimbo-reference.key");
    let payload = |n: u64| frames[n as usize - 1].plaintext.clone();
    let hostile = |config: u8, payloads: &[Vec<u8>]| {
        let mut v = vec![config << 1];
        for p in payloads {
            v.extend_from_slice(&(p.len() as u16).to_le_bytes());
            v.extend_from_slice(p);
        }
        v
    };
    let cs = common::decrypt("yojimbo-client-server.pcap", "yojimbo-reference.key");
    let empty = cs.iter().find(|f| f.kind == 5).unwrap().plaintext.clone();
    let mut seeds: Vec<(&str, Vec<u8>)> = vec![
        ("soak_72_messages", hostile(2, &[payload(40)])),
        (
            "soak_fragments_out_of_order",
            hostile(2, &[payload(34), payload(37)]),
        ),
        ("soak_block_fragment_2", hostile(2, &[payload(157)])),
        (
            "soak_block_81_whole",
            hostile(
                2,
                &[
                    payload(152),
                    payload(153),
                    payload(157),
                    payload(184),
                    payload(188),
                ],
            ),
        ),
        ("client_server_empty", hostile(2, &[empty.clone(), empty])),
        (
            "hostile_mixed_config",
            hostile(
                0,
                &[
                    vec![0x3e, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff],
                    vec![1, 0, 0, 9, 1],
                ],
            ),
        ),
    ];
    for config in 0..3u8 {
        let mut v = vec![config << 1 | 1];
        v.extend((0..96u32).map(|i| (i * 37 + u32::from(config) * 11) as u8));
        seeds.push((
            ["roundtrip_mixed", "roundtrip_elided", "roundtrip_soak"][config as usize],
            v,
        ));
    }
    let dir = common::captures().join("../corpus/yojimbo");
    for (name, data) in seeds {
        let path = dir.join(format!("{name}.bin"));
        if std::env::var_os("BITLENS_WRITE_CORPUS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &data).unwrap();
        }
        assert_eq!(
            std::fs::read(&path).ok(),
            Some(data),
            "{} is stale",
            path.display()
        );
    }
}
