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
    vec![
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

/// The sum of a dissection's leaf widths, counted without the profile's code.
fn leaf_bits(d: &Dissection) -> u64 {
    let f = &d.trace.fields;
    (0..f.len())
        .filter(|&i| f.get(i + 1).is_none_or(|n| n.depth <= f[i].depth))
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
            assert_eq!(
                leaf_bits(&dissection) + unknown,
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
                if !leaf || classify(&dissection, i, &f[i]) != Class::Field {
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
