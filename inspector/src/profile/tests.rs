//! The profile's accounting on every shipped capture: exact, datagram by datagram.

use super::*;
use crate::capture::Capture;
use bitlens_codec::dissect::MessageStatus;
use bitlens_schema::Schema;

fn captures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures")
}

/// Every shipped capture, with the dissectors that read it.
fn shipped_captures() -> Vec<(&'static str, Dissectors)> {
    let with_schema = |file: &str, port: Option<&str>| {
        let mut d = crate::dissectors::shipped();
        let text = std::fs::read_to_string(captures().join(file)).unwrap();
        d.set_schema(Schema::from_toml(&text, file).unwrap());
        if let Some(p) = port {
            d.apply_override(p).unwrap();
        }
        d
    };
    let demo = crate::dissectors::shipped;
    // netcode.pcap through its transport, with the server's key: the transport's header and
    // MAC are overhead rows, the decrypted demo packets fields.
    let netcode = || {
        let mut d = crate::dissectors::shipped();
        let key = std::fs::read_to_string(captures().join("netcode.key")).unwrap();
        let key = bitlens_netcode::parse_key(&key).unwrap();
        d.add_transport(std::sync::Arc::new(
            bitlens_netcode::Netcode::new().with_private_key(key),
        ));
        d.apply_override("5000=netcode+demo").unwrap();
        d
    };
    // yojimbo 1.9.1's soak sample through the yojimbo layer, with its schema and key.
    let yojimbo = || {
        let mut d = crate::dissectors::shipped();
        let key = std::fs::read_to_string(captures().join("yojimbo-reference.key")).unwrap();
        let key = bitlens_netcode::parse_key(&key).unwrap();
        let file = "yojimbo.schema.toml";
        let text = std::fs::read_to_string(captures().join(file)).unwrap();
        let schema = std::sync::Arc::new(Schema::from_toml(&text, file).unwrap());
        let netcode = bitlens_netcode::Netcode::new().with_private_key(key);
        d.set_yojimbo(netcode, Some(&schema)).unwrap();
        d.apply_override("40000=yojimbo").unwrap();
        d
    };
    vec![
        ("yojimbo-soak.pcap", yojimbo()),
        ("netcode.pcap", netcode()),
        ("demo.pcap", demo()),
        ("demo.pcapng", demo()),
        ("faults.pcap", demo()),
        ("loopback-sll2.pcap", demo()),
        ("loopback-ethernet.pcap", demo()),
        ("demo.pcap", with_schema("demo.schema.toml", None)),
        ("every.pcap", with_schema("every.schema.toml", None)),
        (
            "custom.pcap",
            with_schema("custom.schema.toml", Some("28500=schema")),
        ),
    ]
}

/// Every datagram of `capture`, with nothing observed (captures without a transport).
fn unobserved(capture: &Capture) -> impl Iterator<Item = (&Datagram, &Observation)> {
    capture.datagrams().iter().map(|d| (d, &Observation::NONE))
}

/// The sum of a dissection's leaf widths, counted without the profile's code: the leaves
/// whose bits are the datagram's (yojimbo numbers a reassembled packet's and a complete block's
/// entries from the datagram's end on: their bits were sent in other datagrams).
fn leaf_bits(d: &Dissection) -> u64 {
    let f = &d.trace.fields;
    let end = d.trace.total_bits;
    (0..f.len())
        .filter(|&i| f.get(i + 1).is_none_or(|n| n.depth <= f[i].depth))
        .filter(|&i| f[i].bit + f[i].bits <= end)
        .filter(|&i| !(f[i].path().starts_with("yojimbo.") && f[i].bit >= end))
        .map(|i| f[i].bits as u64)
        .sum()
}

#[test]
fn totals_equal_field_widths_plus_overheads_and_payload_lengths_on_every_shipped_capture() {
    for (file, dissectors) in shipped_captures() {
        let capture = Capture::open(captures().join(file)).unwrap();
        let mut profiler = Profiler::new(&dissectors);
        let mut observer = dissectors.observer();
        let (mut wire, mut decoded, mut apart) = (0u64, 0u64, 0u64);
        for d in capture.datagrams() {
            let payload = capture.payload(d);
            let seen = match &mut observer {
                Some(o) => o.observe(d, payload),
                None => Observation::NONE,
            };
            let cost = profiler.add(d, payload, &seen);
            let bits = payload.len() as u64 * 8 + d.header_len() as u64 * 8;
            let (_, dissection) = dissectors.dissect_seen(d, payload, &seen);
            let Some(cost) = cost else {
                assert!(dissection.status != Status::Ok || dissectors.server_port(d).is_none());
                apart += bits;
                continue;
            };
            decoded += 1;
            let frame = d.frame;
            assert_eq!(
                cost.payload_bits,
                payload.len() as u64 * 8,
                "{file} {frame}"
            );
            assert_eq!(
                payload.len(),
                d.declared_len(),
                "{file} {frame}: a whole datagram"
            );
            assert_eq!(
                cost.header_bits,
                28 * 8,
                "{file} {frame}: IPv4 and UDP headers"
            );
            assert_eq!(
                cost.field_bits + cost.overhead_bits,
                cost.payload_bits,
                "{file} frame {frame}: fields and overhead are the payload"
            );
            // The leaves cover the payload exactly, but for bodies of unknown message types,
            // which the profile counts as unread.
            let unknown: u64 = dissection
                .messages
                .iter()
                .flatten()
                .filter(|m| m.status == MessageStatus::UnknownType)
                .map(|m| m.len as u64 * 8)
                .sum();
            // yojimbo's connection packet fills its last byte with padding (fewer than 8 bits).
            let padding = match dissection.layers.first() {
                Some(l) if l.name == "yojimbo" => {
                    cost.payload_bits.saturating_sub(leaf_bits(&dissection))
                }
                _ => 0,
            };
            assert!(padding < 8, "{file} frame {frame}: {padding} bits");
            assert_eq!(
                leaf_bits(&dissection) + unknown + padding,
                cost.payload_bits,
                "{file} frame {frame}: leaf widths"
            );
            wire += bits;
        }
        let p = profiler.finish();
        assert!(decoded > 0, "{file}");
        assert_eq!(p.decoded.count, decoded, "{file}");
        assert_eq!(p.decoded.bits, wire, "{file}");
        let rows: u64 = p.fields.iter().map(|r| r.totals.bits).sum::<u64>()
            + p.overhead.iter().map(|r| r.bits).sum::<u64>();
        assert_eq!(rows, wire, "{file}: the table's rows add up to the total");
        let stacks: u64 = p.stacks.iter().map(|s| s.1).sum();
        assert_eq!(stacks, wire, "{file}: so do the flame graph's stacks");
        let types: u64 = p.packet_types.iter().map(|r| r.bits).sum();
        assert_eq!(types, wire, "{file}");
        let not_decoded: u64 = p.not_decoded.iter().map(|r| r.bits).sum();
        assert_eq!(
            not_decoded, apart,
            "{file}: failed datagrams are counted apart"
        );
        let ip_udp = p
            .overhead
            .iter()
            .find(|r| r.name == Overhead::IpUdp.label());
        assert_eq!(ip_udp.map(|r| r.bits), Some(p.header_bits), "{file}");
        if file == "yojimbo-soak.pcap" {
            assert_eq!(decoded, 618, "every datagram of the soak decodes");
        }
        if file == "netcode.pcap" {
            for o in [Overhead::TransportHeader, Overhead::TransportTrailer] {
                assert!(p.overhead.iter().any(|r| r.name == o.label()), "{o:?}");
            }
        }
    }
}

#[test]
fn the_demo_capture_has_the_rows_the_readme_shows() {
    let dissectors = crate::dissectors::shipped();
    let capture = Capture::open(captures().join("faults.pcap")).unwrap();
    let p = profile(&dissectors, capture.data(), unobserved(&capture));
    let field = |name: &str| p.fields.iter().find(|f| f.name == name).cloned();
    let x = field("SceneUpdate.objects[].position.x").expect("indices folded");
    assert_eq!(x.totals.bits_per, 17.0);
    assert!(field("MoveRigidBody.network_id").is_some(), "message paths");
    // Compressed: a position is 3 floats in 51 bits, a quaternion 4 in 32.
    let packed = |name: &str| p.compressed.iter().find(|c| c.name == name).cloned();
    let pos = packed("RigidBody.position").unwrap();
    assert_eq!((pos.bits, pos.raw_bits), (51 * pos.count, 96 * pos.count));
    let q = packed("RigidBody.orientation").unwrap();
    assert_eq!((q.bits, q.raw_bits), (32 * q.count, 128 * q.count));
    assert!(
        packed("RigidBody.position.x").is_none(),
        "components not again"
    );
    // Every overhead kind of the demo protocol is there.
    for o in [
        Overhead::IpUdp,
        Overhead::Crc,
        Overhead::PacketType,
        Overhead::CheckMarker,
        Overhead::Padding,
        Overhead::LengthPrefix,
        Overhead::MessageHeader,
    ] {
        assert!(p.overhead.iter().any(|r| r.name == o.label()), "{o:?}");
    }
    // faults.pcap has datagrams of every failing status, counted apart.
    let apart: Vec<&str> = p.not_decoded.iter().map(|r| r.name.as_str()).collect();
    for s in ["error", "desync", "truncated", "fragment"] {
        assert!(apart.contains(&s), "{s} in {apart:?}");
    }
    // Range hints: meow_count's values span its whole range; a smallest-three component's
    // stay within the middle half of its 10 bits.
    let meow = field("RoboCat.meow_count").unwrap();
    assert_eq!(
        meow.hint, None,
        "values spread over the whole range need all 20 bits"
    );
    let a = field("SceneUpdate.objects[].orientation.a").unwrap();
    assert!(
        a.hint
            .as_deref()
            .is_some_and(|h| h.starts_with("sent in 10 bits, values here need 9 (")),
        "{:?}",
        a.hint
    );
}

#[test]
fn paths_fold_array_indices_and_message_scopes() {
    let fold = |p: &str, m: bool| {
        let mut s = String::new();
        fold_path(p, m, &mut s);
        s
    };
    assert_eq!(
        fold("objects[17].position.x", false),
        "objects[].position.x"
    );
    assert_eq!(fold("mice[3]", false), "mice[]");
    assert_eq!(fold("[2].body.position", true), "body.position");
    assert_eq!(fold("[2]", true), "");
    assert_eq!(fold("a[1].b[22].c", false), "a[].b[].c");
}

#[test]
fn every_row_matches_a_plain_count_of_folded_paths() {
    // The same rows counted the simple way (a String per leaf, one map): the shape cache and
    // the interned ids must give each leaf the row its folded path names.
    for (file, dissectors) in shipped_captures() {
        let capture = Capture::open(captures().join(file)).unwrap();
        let p = profile(&dissectors, capture.data(), unobserved(&capture));
        let mut plain: HashMap<String, (u64, u64)> = HashMap::new();
        for d in capture.datagrams() {
            let (_, dissection) = dissectors.dissect(d, capture.payload(d));
            if dissection.status != Status::Ok {
                continue;
            }
            let f = &dissection.trace.fields;
            for i in 0..f.len() {
                let leaf = f.get(i + 1).is_none_or(|n| n.depth <= f[i].depth);
                let path = f.path_of(i);
                let view = f.view(i).expect("an entry");
                let at = Leaf {
                    field: view,
                    path: &path,
                };
                if !leaf || classify(&dissection, i, at) != Class::Field {
                    continue;
                }
                let m = dissection.message_of(i);
                let mut name = m
                    .map(message_name)
                    .or(dissection.packet_type)
                    .unwrap_or("(unnamed)")
                    .to_owned();
                name.push('.');
                fold_path(f[i].path(), m.is_some(), &mut name);
                let e = plain.entry(name).or_default();
                e.0 += 1;
                e.1 += f[i].bits as u64;
            }
        }
        let rows: HashMap<String, (u64, u64)> = p
            .fields
            .iter()
            .map(|r| (r.name.clone(), (r.totals.count, r.totals.bits)))
            .collect();
        assert_eq!(rows, plain, "{file}");
    }
}

/// `shared.h`'s dummy bit counts of the soak's `TestMessage`, by `sequence % 21`.
const SOAK_DUMMY_BITS: [u64; 21] = [
    1, 320, 120, 4, 256, 45, 11, 13, 101, 100, 84, 95, 203, 2, 3, 8, 512, 5, 3, 7, 50,
];

/// yojimbo's rows on the soak capture, against its labels (written by an independent checker):
/// per message type the messages and their bits (type and body: 2 + 16 + the dummy bits its
/// sequence chooses for a `TestMessage`, 2 + 16 for a `TestBlockMessage` on its block's first
/// fragment), per channel the connection packet entries, the body fields of the packets sent
/// whole as field rows of their message type, and the overhead rows of each layer.
#[test]
fn yojimbo_rows_per_channel_and_message_type_match_the_soak_labels() {
    let (file, dissectors) = shipped_captures().swap_remove(0);
    assert_eq!(file, "yojimbo-soak.pcap");
    let capture = Capture::open(captures().join(file)).unwrap();
    let mut observer = dissectors.observer().expect("a transport's pass");
    let seen: Vec<Observation> = capture
        .datagrams()
        .iter()
        .map(|d| observer.observe(d, capture.payload(d)))
        .collect();
    let p = profile(
        &dissectors,
        capture.data(),
        capture.datagrams().iter().zip(&seen),
    );
    // The labels' messages and entries.
    let labels = std::fs::read_to_string(captures().join("yojimbo-soak.labels.json")).unwrap();
    let (mut messages, mut message_bits, mut whole) = (0u64, 0u64, 0u64);
    let (mut blocks, mut entries) = (0u64, 0u64);
    for line in labels.lines() {
        let l: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(es) = l["connection"]["entries"].as_array() else {
            continue;
        };
        for e in es {
            assert_eq!(e["channel"], 1);
            entries += 1;
            for m in e["messages"].as_array().into_iter().flatten() {
                assert_eq!(m[1], 0, "TestMessage");
                let sequence = m[2].as_u64().unwrap();
                messages += 1;
                message_bits += 2 + 16 + SOAK_DUMMY_BITS[(sequence % 21) as usize];
                if l["reassembled"].is_null() {
                    whole += 1;
                }
            }
            if e["block_fragment"]["fragment"] == 0 {
                blocks += 1;
            }
        }
    }
    let row = |rows: &[Row], name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .map(|r| (r.count, r.bits))
            .unwrap_or_else(|| panic!("{name} in {rows:?}"))
    };
    assert_eq!(
        row(&p.message_types, "TestMessage"),
        (messages, message_bits)
    );
    assert_eq!(
        row(&p.message_types, "TestBlockMessage"),
        (blocks, blocks * 18)
    );
    assert_eq!((messages, blocks), (4167, 24));
    assert_eq!(p.message_types.len(), 2);
    assert_eq!(p.channels.len(), 1, "{:?}", p.channels);
    let (count, bits) = row(&p.channels, "channel 1");
    assert_eq!(count, entries);
    assert!(
        bits > message_bits + blocks * 18,
        "framing and block data too"
    );
    // Body fields of the packets sent whole are field rows of their message type.
    let field = |name: &str| p.fields.iter().find(|f| f.name == name).cloned();
    let sequence = field("TestMessage.sequence").expect("a message type's field");
    assert_eq!(
        (sequence.totals.count, sequence.totals.bits),
        (whole, whole * 16)
    );
    assert!(field("TestMessage.dummy[]").is_some());
    for o in [
        Overhead::TransportHeader,
        Overhead::TransportTrailer,
        Overhead::ReliableHeader,
        Overhead::ChannelFraming,
        Overhead::PacketFragments,
        Overhead::BlockData,
    ] {
        assert!(p.overhead.iter().any(|r| r.name == o.label()), "{o:?}");
    }
    // The text table shows them, and so does the inspector's profile view (`P`).
    let text = text::render(&p, file, 120, None);
    for s in [
        "message type",
        "TestMessage",
        "channel 1",
        "(reliable.io headers)",
    ] {
        assert!(text.contains(s), "{s}:\n{text}");
    }
    let view = crate::tui::profile_view::ProfileView {
        profile: p,
        filter: String::new(),
        offset: 0,
    };
    let shown: Vec<String> = view
        .rows()
        .iter()
        .map(|(what, r)| format!("{what}{}", r.name))
        .collect();
    for s in [
        "message TestMessage",
        "message TestBlockMessage",
        "channel 1",
        "(channel framing)",
        "TestMessage.sequence",
    ] {
        assert!(shown.iter().any(|r| r == s), "{s} in {shown:?}");
    }
}
