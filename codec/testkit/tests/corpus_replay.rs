//! Replays the committed fuzz corpus (`corpus/<target>/`) through the harness functions that the
//! fuzz targets call, on stable, in `cargo test`; and fails when a fuzz target has no corpus
//! folder or no replay mapping (here or in `inspector/tests/corpus_replay.rs`).
//!
//! The named seed files are written by the ignored test `write_seeds`:
//! `cargo test -p bitlens-codec --test corpus_replay -- --ignored write_seeds`.

#[path = "support/replay.rs"]
mod replay;

use bitlens_codec::Packet;
use bitlens_tagged::{self as tagged, varint::write_varint};
use bitlens_testkit::demo::{DemoPacket, MTU};
use bitlens_testkit::fuzzing::{self, tagged as ft};
use bitlens_testkit::vectors;
use replay::{Harness, XorShift, write_seed};

/// The fuzz targets whose harness lives in this crate. A new target: add it here (see
/// fuzz/README.md, "Adding a target").
const TARGETS: &[(&str, Harness)] = &[
    ("packet_read", fuzzing::packet_read),
    ("packet_roundtrip", fuzzing::packet_roundtrip),
    ("stream_ops", fuzzing::stream_ops),
    ("compressed_float", fuzzing::quantize::compressed_float),
    ("bit_runs", fuzzing::bits::bit_runs),
    ("hostile_lengths", fuzzing::hostile_lengths),
    ("tagged_read", ft::tagged_read),
    ("tagged_roundtrip", ft::tagged_roundtrip),
    ("tagged_compat", ft::tagged_compat),
    ("batch_read", fuzzing::batch::batch_read),
    ("batch_roundtrip", fuzzing::batch::batch_roundtrip),
    ("schema_vs_compiled", fuzzing::schema::schema_vs_compiled),
    (
        "schema_batch_vs_compiled",
        fuzzing::schema::schema_batch_vs_compiled,
    ),
    ("schema_load", fuzzing::schema_load::schema_load),
    ("batch_receive", fuzzing::receive::batch_receive),
    ("derive_vs_schema", fuzzing::derive::derive_vs_schema),
];

#[test]
fn every_fuzz_target_has_a_corpus_and_a_replay() {
    let mapped: Vec<&str> = TARGETS.iter().map(|(t, _)| *t).collect();
    replay::check_mapping(&mapped);
}

#[test]
fn corpus_replays_through_the_harnesses() {
    for (target, harness) in TARGETS {
        let n = replay::replay(target, *harness);
        eprintln!("{target}: {n} corpus files replayed");
    }
}

// ---- Named seed files ----

fn type_name(p: &DemoPacket) -> String {
    DemoPacket::protocol()
        .type_name(p.packet_type())
        .unwrap_or("packet")
        .to_lowercase()
}

fn conformance_vectors() -> Vec<vectors::Vector> {
    let path = replay::root().join("codec/tests/vectors/bitpacked.json");
    let text = std::fs::read_to_string(&path).expect("conformance vectors");
    vectors::parse(&text).expect("vectors parse")
}

/// The first of many random inputs (lengths up to `max_len`) for which `name` gives a name not
/// seen yet, for every name found: a named seed per distinct case.
fn search(
    seed: u64,
    tries: usize,
    max_len: usize,
    mut name: impl FnMut(&[u8]) -> Option<String>,
) -> Vec<(String, Vec<u8>)> {
    let mut rng = XorShift(seed);
    let mut found: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..tries {
        let len = 1 + (rng.next_u64() as usize) % max_len.max(1);
        // Short inputs first: the smallest witness of each case.
        let len = len.min(8 + i / 16);
        let data = rng.bytes(len);
        if let Some(n) = name(&data)
            && !found.iter().any(|(m, _)| *m == n)
        {
            found.push((n, data));
        }
    }
    found
}

fn write_all(target: &str, seeds: &[(String, Vec<u8>)]) {
    for (name, data) in seeds {
        write_seed(target, &format!("{name}.bin"), data);
    }
}

fn tagged_doc(body: &[u8]) -> Vec<u8> {
    let mut doc = Vec::new();
    write_varint(&mut doc, body.len() as u64);
    doc.extend_from_slice(body);
    doc
}

fn deep_tagged(levels: usize) -> Vec<u8> {
    let mut body: Vec<u8> = Vec::new();
    for _ in 0..levels {
        let mut elem = Vec::new();
        write_varint(&mut elem, body.len() as u64);
        elem.extend_from_slice(&body);
        let mut next = vec![0x03];
        write_varint(&mut next, elem.len() as u64);
        next.extend_from_slice(&elem);
        body = next;
    }
    tagged_doc(&body)
}

/// The seeds of `derive_vs_schema`: per packet type of the showcase and of the demo protocol, an
/// input that draws an arbitrary packet of that type (`arbitrary_<protocol>_<type>.bin`) and
/// that packet's bytes as a datagram (`valid_<protocol>_<type>.bin`); and datagrams serialize
/// 1.0's readers accept that do not re-encode to themselves (`standard_<case>.bin`).
fn derive_seeds() {
    use bitlens_codec::generate;
    use bitlens_testkit::showcase::Showcase;
    fn seeds_of<P: Packet + Default>(protocol: &str, seed: u64, out: &mut Vec<(String, Vec<u8>)>) {
        let found = search(seed, 20_000, 600, |data| {
            let mut u = arbitrary::Unstructured::new(data);
            let mut p = generate::packet::<P>(&mut u).ok()?;
            let mut buf = vec![0u8; P::protocol().mtu];
            bitlens_codec::write_packet(&mut p, &mut buf).ok()?;
            let t = P::protocol().type_name(p.packet_type())?.to_lowercase();
            Some(format!("{protocol}_{t}"))
        });
        for (name, data) in found {
            let mut u = arbitrary::Unstructured::new(&data);
            if let Ok(mut p) = generate::packet::<P>(&mut u) {
                let mut buf = vec![0u8; P::protocol().mtu];
                if let Ok(n) = bitlens_codec::write_packet(&mut p, &mut buf) {
                    out.push((format!("valid_{name}"), buf[..n].to_vec()));
                }
            }
            out.push((format!("arbitrary_{name}"), data));
        }
    }
    let mut seeds = Vec::new();
    seeds_of::<Showcase>("showcase", 21, &mut seeds);
    seeds_of::<DemoPacket>("demo", 22, &mut seeds);
    // What a conforming writer sends and bitlens writes back otherwise: the relative integers
    // sent absolute, and two near-tie quaternions.
    let standard = fuzzing::derive::standard_only::datagrams();
    let (absolute, ties): (Vec<_>, Vec<_>) = standard
        .into_iter()
        .partition(|(name, _)| name.starts_with("absolute_"));
    for (name, data) in absolute.into_iter().chain(ties.into_iter().take(2)) {
        seeds.push((format!("standard_{name}"), data));
    }
    write_all("derive_vs_schema", &seeds);
}

#[test]
#[ignore = "writes the seed files of derive_vs_schema into corpus/; run by hand"]
fn write_derive_seeds() {
    derive_seeds();
}

#[test]
#[ignore = "writes the named seed files into corpus/; run by hand"]
fn write_seeds() {
    derive_seeds();
    // packet_read: a valid packet of every type, every conformance vector, every hostile variant
    // of every sample, and the framing failures.
    let samples = fuzzing::sample_packets();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (name, bytes) in &samples {
        let name = name.to_lowercase();
        let k = counts.entry(name.clone()).or_default();
        let file = if *k == 0 {
            format!("valid_{name}.bin")
        } else {
            format!("valid_{name}_{k}.bin")
        };
        *k += 1;
        write_seed("packet_read", &file, bytes);
        for h in fuzzing::hostile_variants(bytes) {
            let path = h.path.replace(['.', '[', ']'], "_").replace("__", "_");
            write_seed(
                "packet_read",
                &format!("hostile_{name}_{path}_{}.bin", h.raw),
                &h.bytes,
            );
        }
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 1);
        write_seed("packet_read", &format!("truncated_{name}.bin"), &cut);
        let mut flipped = bytes.clone();
        flipped[4] ^= 1;
        write_seed("packet_read", &format!("crc_mismatch_{name}.bin"), &flipped);
    }
    write_seed("packet_read", "empty.bin", &[]);
    for v in conformance_vectors() {
        write_seed("packet_read", &format!("vector_{}.bin", v.name), &v.bytes);
    }

    // packet_roundtrip: an arbitrary packet of every type, and one over the MTU.
    let seeds = search(1, 200_000, 3000, |data| {
        let mut u = arbitrary::Unstructured::new(data);
        let mut p = <DemoPacket as arbitrary::Arbitrary>::arbitrary(&mut u).ok()?;
        let bits = bitlens_codec::packet::count_packet(&mut p).ok()?;
        Some(if bits > MTU * 8 {
            format!("over_mtu_{}", type_name(&p))
        } else {
            format!("arbitrary_{}", type_name(&p))
        })
    });
    write_all("packet_roundtrip", &seeds);

    // hostile_lengths: every (packet type, field, value) case the harness can build.
    let seeds = search(2, 200_000, 600, |data| {
        let h = fuzzing::hostile_case(data)?;
        let path = h.path.replace(['.', '[', ']'], "_").replace("__", "_");
        Some(format!("hostile_{path}_{}", h.raw))
    });
    write_all("hostile_lengths", &seeds);

    // stream_ops: inputs whose first op is each kind of primitive.
    let seeds = search(3, 50_000, 200, |data| {
        let mut u = arbitrary::Unstructured::new(data);
        let ops = fuzzing::arb_ops(&mut u).ok()?;
        if ops.len() < 3 {
            return None;
        }
        let kind = format!("{:?}", ops.first()?);
        let kind: String = kind
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect::<String>()
            .to_lowercase();
        Some(format!("ops_first_{kind}"))
    });
    write_all("stream_ops", &seeds);

    // compressed_float: a range of each kind (stable by the bound, stable or not code by code,
    // past 2^23 + 1 steps, too many steps to check here).
    let seeds = search(12, 50_000, 120, |data| {
        fuzzing::quantize::compressed_float_case(data).map(|kind| format!("range_{kind}"))
    });
    write_all("compressed_float", &seeds);

    // bit_runs: each run shape (1, 4, 5 fields), with and without hostile bytes after the runs.
    let seeds = search(11, 20_000, 120, |data| {
        let (fields, hostile) = fuzzing::bits::bit_runs_case(data)?;
        let shape = match fields {
            1 => "one",
            4 => "four",
            _ => "five",
        };
        let rest = if hostile > 8 {
            "with_hostile_bytes"
        } else {
            "short"
        };
        Some(format!("run_of_{shape}_{rest}"))
    });
    write_all("bit_runs", &seeds);

    // tagged_read: the savegame capture, documents of every test type, hostile sizes and nesting.
    let savegame = std::fs::read(replay::root().join("captures/savegame.tagged")).unwrap();
    write_seed("tagged_read", "valid_savegame.bin", &savegame);
    let rich = tagged::encode_document(&mut ft::Rich::default()).unwrap();
    write_seed("tagged_read", "valid_rich_default.bin", &rich);
    for (name, data) in search(4, 20_000, 400, |data| {
        let mut u = arbitrary::Unstructured::new(data);
        let mut r = <ft::Rich as arbitrary::Arbitrary>::arbitrary(&mut u).ok()?;
        let bytes = tagged::encode_document(&mut r).ok()?;
        (bytes.len() > 60).then(|| "valid_rich_arbitrary".to_owned())
    }) {
        let mut u = arbitrary::Unstructured::new(&data);
        let mut r = <ft::Rich as arbitrary::Arbitrary>::arbitrary(&mut u).unwrap();
        write_seed(
            "tagged_read",
            &format!("{name}.bin"),
            &tagged::encode_document(&mut r).unwrap(),
        );
    }
    let mut huge = Vec::new();
    write_varint(&mut huge, u64::from(u32::MAX));
    huge.extend_from_slice(&[0x00, 0x01]);
    write_seed("tagged_read", "hostile_document_size_4294967295.bin", &huge);
    let mut body = vec![0x03 | (11 << 2)];
    write_varint(&mut body, u64::from(u32::MAX));
    body.extend_from_slice(b"abc");
    write_seed(
        "tagged_read",
        "hostile_string_size_4294967295.bin",
        &tagged_doc(&body),
    );
    let mut body = vec![0x03 | (13 << 2)];
    write_varint(&mut body, u64::MAX);
    write_seed(
        "tagged_read",
        "hostile_array_size_u64_max.bin",
        &tagged_doc(&body),
    );
    write_seed(
        "tagged_read",
        "hostile_varint_overlong.bin",
        &tagged_doc(&[
            0x02 | (5 << 2),
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0x7F,
        ]),
    );
    write_seed("tagged_read", "hostile_nesting_200.bin", &deep_tagged(200));
    // Sized regions of 1000 empty elements: the most elements per input byte (alloc_bound.rs).
    for (field, name) in [(18u64, "structs"), (20, "pairs"), (21, "arrays")] {
        let mut body = Vec::new();
        write_varint(&mut body, field << 2 | 3);
        write_varint(&mut body, 1000);
        body.extend_from_slice(&[0; 1000]);
        write_seed(
            "tagged_read",
            &format!("hostile_empty_{name}_1000.bin"),
            &tagged_doc(&body),
        );
    }
    write_seed("tagged_read", "empty.bin", &[]);

    // tagged_roundtrip: arbitrary Rich values of a few sizes.
    let seeds = search(5, 20_000, 800, |data| {
        let mut u = arbitrary::Unstructured::new(data);
        let mut r = <ft::Rich as arbitrary::Arbitrary>::arbitrary(&mut u).ok()?;
        let n = tagged::encode_document(&mut r).ok()?.len();
        Some(format!(
            "arbitrary_rich_{}_bytes",
            n.next_power_of_two().max(8)
        ))
    });
    write_all("tagged_roundtrip", &seeds);

    schema_load_seeds();
    batch_receive_seeds();
    // The edge of the demo message set's network ids, for both batch readers.
    for (name, data) in fuzzing::batch::network_id_seeds() {
        write_seed("batch_read", &format!("{name}.bin"), &data);
        write_seed("schema_batch_vs_compiled", &format!("{name}.bin"), &data);
    }

    // tagged_compat: every (writer version, reader version) pair.
    let seeds = search(6, 20_000, 300, |data| {
        let mut u = arbitrary::Unstructured::new(data);
        let from = u.int_in_range(1u8..=3).ok()?;
        let to = u.int_in_range(1u8..=3).ok()?;
        (u.len() > 20).then(|| format!("compat_v{from}_read_as_v{to}"))
    });
    write_all("tagged_compat", &seeds);
}

/// A `schema_load` input of the raw kind: TOML text, a zero byte, the datagram.
fn raw_schema(text: &str, datagram: &[u8]) -> Vec<u8> {
    let mut v = vec![1u8];
    v.extend_from_slice(text.as_bytes());
    v.push(0);
    v.extend_from_slice(datagram);
    v
}

/// A file-name slug of a schema error's message: its words before the parenthesis, without the
/// quoted names and the words that hold a digit (numbers, ids).
fn error_slug(message: &str) -> String {
    let head = message.split(['(', '`']).next().unwrap_or_default();
    let mut words = Vec::new();
    let mut quoted = false;
    for word in head.split_whitespace() {
        let was_quoted = quoted || word.starts_with('"');
        quoted ^= word.matches('"').count() % 2 == 1;
        if was_quoted || word.contains(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let w: String = word
            .chars()
            .filter(char::is_ascii_alphabetic)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if !w.is_empty() {
            words.push(w);
        }
    }
    let mut slug = String::new();
    for w in words {
        if slug.len() + w.len() >= 48 {
            break;
        }
        if !slug.is_empty() {
            slug.push('_');
        }
        slug.push_str(&w);
    }
    slug
}

/// `schema_load`: the shipped schemas with datagrams, the SCHEMA.md example, schemas refused for
/// each rule of the language, and arbitrary (generated) schemas that load or are refused.
fn schema_load_seeds() {
    use bitlens_testkit::fuzzing::schema::DEMO_SCHEMA;
    use bitlens_testkit::fuzzing::schema_load::{FILE, schema_case};
    let demo_batch = bitlens_testkit::batch_demo::sample_batch();
    write_seed(
        "schema_load",
        "raw_demo_schema_valid_mixed_batch.bin",
        &raw_schema(DEMO_SCHEMA, &demo_batch),
    );
    for (name, bytes) in fuzzing::sample_packets() {
        write_seed(
            "schema_load",
            &format!("raw_demo_schema_valid_{}.bin", name.to_lowercase()),
            &raw_schema(DEMO_SCHEMA, &bytes),
        );
    }
    let doc = std::fs::read_to_string(replay::root().join("SCHEMA.md")).unwrap();
    let start = doc
        .find("```toml\n[protocol]\nname = \"arena\"\nid")
        .expect("the arena block of SCHEMA.md")
        + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    write_seed(
        "schema_load",
        "raw_schema_md_arena.bin",
        &raw_schema(&doc[start..end], &[0; 16]),
    );
    // Refused schemas, one per rule (a valid protocol header, then the offending section).
    const HEAD: &str = "[protocol]\nname = \"tt\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n";
    let refused = [
        (
            "unknown_type",
            "[struct.P]\nfields = [{ name = \"x\", type = \"i33\" }]\n",
        ),
        (
            "min_above_max",
            "[struct.P]\nfields = [{ name = \"hp\", type = \"int\", min = 100, max = 0 }]\n",
        ),
        (
            "array_without_max_len",
            "[struct.P]\nfields = [{ name = \"a\", type = \"array\", element = \"u8\" }]\n",
        ),
        (
            "duplicate_field",
            "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }, { name = \"x\", type = \"u8\" }]\n",
        ),
        (
            "struct_cycle",
            "[struct.P]\nfields = [{ name = \"a\", type = \"A\" }]\n[struct.A]\nfields = [{ name = \"b\", type = \"P\" }]\n",
        ),
        (
            "unknown_key",
            "[struct.P]\nfields = [{ name = \"x\", type = \"u8\", mni = 0 }]\n",
        ),
        (
            "zero_bit_array_element",
            "[struct.P]\nfields = [{ name = \"a\", type = \"array\", max_len = 9, element = \"E\" }]\n[struct.E]\nfields = []\n",
        ),
        (
            "batch_zero_byte_array_element",
            "[struct.P]\nfields = []\n[batch]\nmessages = [{ type = 1, name = \"M\" }]\n[batch.struct.M]\nfields = [{ name = \"a\", type = \"array\", max_len = 9, element = { type = \"bytes\", len = 0 } }]\n",
        ),
        ("toml_syntax", "[struct.P\nfields = \n"),
    ];
    for (name, body) in refused {
        let text = format!("{HEAD}{body}");
        assert!(
            bitlens_schema::Schema::from_toml(&text, FILE).is_err(),
            "{name} loads"
        );
        write_seed(
            "schema_load",
            &format!("raw_refused_{name}.bin"),
            &raw_schema(&text, &[]),
        );
    }
    // bit_run (issue 27.3): a run picked through a table, the packet whole and cut short; the
    // yojimbo samples' schema (no [protocol]: every datagram is refused before a bit is read).
    let runs = format!(
        "{HEAD}[struct.P]\nfields = [{{ name = \"k\", type = \"u8\" }}, \
         {{ name = \"pad\", type = \"bit_run\", by = \"k\", table = [0, 3, 70, 512] }}]\n"
    );
    let schema = bitlens_schema::Schema::from_toml(&runs, FILE).unwrap();
    let json = serde_json::json!({"k": 2, "pad": [1, 2, 3]});
    let v = schema.value_from_json("P", &json).unwrap();
    let mut buf = [0u8; 64];
    let n = schema.write("P", &v, &mut buf).unwrap();
    write_seed(
        "schema_load",
        "raw_bit_run_valid.bin",
        &raw_schema(&runs, &buf[..n]),
    );
    let cut = raw_schema(&runs, &buf[..n - 6]);
    write_seed("schema_load", "raw_bit_run_past_end.bin", &cut);
    let yojimbo =
        std::fs::read_to_string(replay::root().join("captures/yojimbo.schema.toml")).unwrap();
    write_seed(
        "schema_load",
        "raw_yojimbo_schema.bin",
        &raw_schema(&yojimbo, &[0; 12]),
    );
    // Found: a pod struct of three 65529-u64 pods made a reader allocate 1.5 MiB for a 3-byte
    // body (now refused when the schema loads).
    let big = format!(
        "{HEAD}[struct.P]\nfields = []\n[batch]\nmessages = [{{ type = 1, name = \"M\" }}]\n\
         [batch.struct.M]\nfields = [{{ name = \"s\", type = \"pod\", element = \"Big\" }}]\n\
         [batch.struct.Big]\nfields = [\n{}]\n",
        ["a", "b", "c"]
            .map(|n| format!(
                "  {{ name = \"{n}\", type = \"pod\", element = \"u64\", len = 65529 }},\n"
            ))
            .concat()
    );
    write_seed(
        "schema_load",
        "raw_hostile_pod_struct_over_a_body.bin",
        &raw_schema(&big, &[9, 0, 1, 4, 3, 0, 1, 2, 3]),
    );
    // Tagged unions: a field and array elements of a union with a variant without fields, one
    // named after its body and one with its own name and body; then unions whose references
    // double per level (refused: a few bits would record 2^14 fields).
    let shape = format!(
        "{HEAD}[struct.P]\nfields = [{{ name = \"s\", type = \"Shape\" }}, \
         {{ name = \"list\", type = \"array\", max_len = 4, element = \"Shape\" }}]\n\
         [union.Shape]\ntag_name = \"kind\"\n\
         variants = [{{ name = \"Nothing\" }}, \"Circle\", {{ name = \"Box\", body = \"BoxBody\" }}]\n\
         [struct.Circle]\nfields = [{{ name = \"r\", type = \"u8\" }}]\n\
         [struct.BoxBody]\nfields = [{{ name = \"w\", type = \"int\", min = 0, max = 15 }}, \
         {{ name = \"h\", type = \"int\", min = 0, max = 15 }}]\n"
    );
    assert!(bitlens_schema::Schema::from_toml(&shape, FILE).is_ok());
    write_seed(
        "schema_load",
        "raw_union_shape_valid.bin",
        &raw_schema(
            &shape,
            &[0, 0, 0, 0, 0x5a, 0x3c, 0x91, 0x07, 0xe4, 0x22, 0, 0],
        ),
    );
    let mut doubling = HEAD.replace("[\"P\"]", "[\"S0\"]");
    for i in 0..14 {
        doubling += &format!(
            "[struct.S{i}]\nfields = [{{ name = \"a\", type = \"U{i}\" }}, {{ name = \"b\", type = \"U{i}\" }}]\n\
             [union.U{i}]\nvariants = [\"S{}\"]\n",
            i + 1
        );
    }
    doubling += "[struct.S14]\nfields = [{ name = \"x\", type = \"int\", min = 3, max = 3 }]\n";
    assert!(bitlens_schema::Schema::from_toml(&doubling, FILE).is_err());
    write_seed(
        "schema_load",
        "raw_hostile_union_doubling.bin",
        &raw_schema(&doubling, &[0; 8]),
    );
    // Generated schemas: the first input per outcome (loads with or without a batch section,
    // or refused, by the error's first words).
    let seeds = search(12, 30_000, 700, |data| {
        if data.first()? & 1 == 1 {
            return None;
        }
        let (text, datagram) = schema_case(data)?;
        if datagram.len() < 8 {
            return None;
        }
        Some(match bitlens_schema::Schema::from_toml(&text, FILE) {
            Ok(s) if s.batch().is_some() => "arbitrary_loads_with_batch".to_owned(),
            Ok(_) => "arbitrary_loads".to_owned(),
            Err(e) => format!("arbitrary_refused_{}", error_slug(&e.message)),
        })
    });
    write_all("schema_load", &seeds);
}

/// `batch_receive`: game loops that reach each of the message system's counters.
fn batch_receive_seeds() {
    use bitlens_testkit::fuzzing::receive::batch_receive_run;
    let seeds = search(13, 30_000, 900, |data| {
        let s = batch_receive_run(data)?;
        let counters = [
            ("corrupt_batches", s.corrupt_batches),
            ("dropped_unknown_stage", s.dropped_unknown_stage),
            ("dropped_full", s.dropped_full),
            ("dropped_unprocessed", s.dropped_unprocessed),
            ("failed", s.failed),
            ("handled_immediately", s.handled_immediately),
            ("serialized", s.serialized),
            ("queued", s.queued),
        ];
        let (name, _) = counters.iter().find(|(_, n)| *n > 0)?;
        Some(format!("counts_{name}"))
    });
    write_all("batch_receive", &seeds);
}
