//! Loading is linear in the schema (issue 29, item 4): duplicate checks use hash sets, and the
//! counts SCHEMA.md "Bounds" caps are checked before the work. Each case loads a schema at its
//! cap and one past it, and must finish quickly either way (quadratic checks took 16.7 s for
//! 80k fields and 68 s for 200k packet entries).

use bitlens_schema::Schema;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Generous for a debug build on a loaded machine; the quadratic loader took minutes here.
const LIMIT: Duration = Duration::from_secs(20);

fn load(what: &str, text: &str) -> (Result<Schema, String>, Duration) {
    let t = Instant::now();
    let r = Schema::from_toml(text, "big.toml").map_err(|e| e.to_string());
    let took = t.elapsed();
    eprintln!(
        "{what}: {} bytes, {took:?}, {}",
        text.len(),
        match &r {
            Ok(_) => "loaded".to_owned(),
            Err(e) => e.chars().take(160).collect(),
        }
    );
    (r, took)
}

/// A struct `P` of `n` u8 fields, each sent when the bool before them all is set.
fn fields(n: usize) -> String {
    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [\n{ name = \"on\", type = \"bool\" },\n",
    );
    for i in 0..n - 1 {
        writeln!(s, "{{ name = \"f{i}\", type = \"u8\", if = \"on\" }},").unwrap();
    }
    s.push_str("]\n");
    s
}

/// `n` packet types, all with the body `P`.
fn packets(n: usize) -> String {
    let mut s = String::from("[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\n");
    for i in 0..n {
        writeln!(s, "{{ name = \"p{i}\", body = \"P\" }},").unwrap();
    }
    s.push_str("]\n[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n");
    s
}

/// An enum of `n` values.
fn enum_values(n: usize) -> String {
    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"x\", type = \"E\" }]\n[enum.E]\nvalues = [\n",
    );
    for i in 0..n {
        writeln!(s, "\"v{i}\",").unwrap();
    }
    s.push_str("]\n");
    s
}

/// A union of `n` variants without fields.
fn variants(n: usize) -> String {
    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"x\", type = \"U\" }]\n[union.U]\nvariants = [\n",
    );
    for i in 0..n {
        writeln!(s, "{{ name = \"v{i}\" }},").unwrap();
    }
    s.push_str("]\n");
    s
}

/// A batch struct of `n` u8 fields, each sent when the bool before them all is set.
fn batch_fields(n: usize) -> String {
    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[batch]\nmessages = [{ type = 1, name = \"M\" }]\n[batch.struct.M]\nfields = [\n{ name = \"on\", type = \"bool\" },\n",
    );
    for i in 0..n - 1 {
        writeln!(s, "{{ name = \"b{i}\", type = \"u8\", if = \"on\" }},").unwrap();
    }
    s.push_str("]\n");
    s
}

fn quick(what: &str, text: &str) -> Result<Schema, String> {
    let (r, took) = load(what, text);
    assert!(took < LIMIT, "{what} took {took:?}");
    r
}

fn refused(what: &str, text: &str, want: &str) {
    match quick(what, text) {
        Ok(_) => panic!("{what} loaded"),
        Err(e) => assert!(e.contains(want), "{what}: {e}"),
    }
}

#[test]
fn many_fields_load_in_linear_time() {
    let s = quick("65536 fields", &fields(65_536)).unwrap();
    assert!(s.struct_names().any(|n| n == "P"));
    refused(
        "100k fields",
        &fields(100_000),
        "big.toml:7:10: 100000 fields in struct P, more than 65536 (SCHEMA.md, \"Bounds\"",
    );
}

#[test]
fn many_packet_types_load_in_linear_time() {
    let s = quick("65536 packet types", &packets(65_536)).unwrap();
    assert_eq!(s.protocol().packet_types.len(), 65_536);
    refused(
        "200k packet types",
        &packets(200_000),
        "big.toml:5:11: 200000 packet types, more than 65536",
    );
}

#[test]
fn many_enum_values_load_in_linear_time() {
    quick("65536 enum values", &enum_values(65_536)).unwrap();
    refused(
        "100k enum values",
        &enum_values(100_000),
        "100000 values in enum E, more than 65536",
    );
}

#[test]
fn many_union_variants_load_in_linear_time() {
    quick("65536 union variants", &variants(65_536)).unwrap();
    refused(
        "100k union variants",
        &variants(100_000),
        "100000 variants in union U, more than 65536",
    );
}

#[test]
fn many_batch_fields_load_in_linear_time() {
    quick("65536 batch fields", &batch_fields(65_536)).unwrap();
    refused(
        "100k batch fields",
        &batch_fields(100_000),
        "100000 fields in batch struct M, more than 65536",
    );
}

#[test]
fn many_definitions_and_batch_messages_are_refused_before_the_work() {
    let mut s = String::from("[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n");
    for i in 0..70_000 {
        writeln!(
            s,
            "[struct.S{i}]\nfields = [{{ name = \"x\", type = \"u8\" }}]"
        )
        .unwrap();
    }
    refused(
        "70k structs",
        &s,
        "70000 structs, enums and unions, more than 65536",
    );

    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[batch]\nmessages = [\n",
    );
    for i in 0..200_000 {
        writeln!(
            s,
            "{{ type = {}, name = \"m{i}\", body = \"M\" }},",
            i % 256
        )
        .unwrap();
    }
    s.push_str("]\n[batch.struct.M]\nfields = [{ name = \"x\", type = \"u8\" }]\n");
    refused(
        "200k batch messages",
        &s,
        "`messages` lists 200000 entries, more than the 256",
    );
}

/// One struct of 60,000 fields included in 100 others would copy 6 million names: refused
/// once the copies pass 2^20, before they are made.
#[test]
fn includes_copy_a_bounded_number_of_names() {
    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[struct.Big]\nfields = [\n",
    );
    for i in 0..60_000 {
        writeln!(s, "{{ name = \"f{i}\", type = \"bool\" }},").unwrap();
    }
    s.push_str("]\n");
    for i in 0..100 {
        writeln!(
            s,
            "[struct.I{i}]\nfields = [{{ type = \"include\", struct = \"Big\" }}]"
        )
        .unwrap();
    }
    refused(
        "100 includes of 60k fields",
        &s,
        "copy more than 1048576 field names in all",
    );
}

#[test]
fn a_schema_over_16_mib_is_refused_unread() {
    let text = format!("# {}\n", "x".repeat(16 << 20));
    refused(
        "17 MiB",
        &text,
        "big.toml:1:1: the schema is 16777219 bytes, more than 16777216",
    );
}

/// An unknown type in a schema of 60,000 structs names 24 of them, not all (an error is one
/// line), and quotes at most 40 characters of the unknown name.
#[test]
fn an_unknown_type_lists_a_few_of_many_definitions() {
    let mut s = String::from(
        "[protocol]\nname = \"big\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{ name = \"x\", type = \"",
    );
    s.push_str(&"Q".repeat(10_000));
    s.push_str("\" }]\n");
    for i in 0..60_000 {
        writeln!(
            s,
            "[struct.S{i}]\nfields = [{{ name = \"x\", type = \"u8\" }}]"
        )
        .unwrap();
    }
    let e = quick("an unknown type among 60k structs", &s).unwrap_err();
    assert!(e.len() < 1000, "{} bytes", e.len());
    assert!(e.contains("and 59977 more)"), "{e}");
}
