//! Loading is linear in the schema (issue 29, item 4): duplicate checks use hash sets, and the
//! counts SCHEMA.md "Bounds" caps are checked before the work (quadratic checks took 16.7 s for
//! 80k fields and 68 s for 200k packet entries). Issue 31.9: measured as a count of the
//! loader's operations (`bitlens_schema::work`: names checked, looked up, entered, copied), not
//! the wall clock, which a loaded machine stretched: a schema of 2n entries costs exactly as much
//! more over n entries as 3n over 2n (linear), and each entry costs at least the checks it gets.

use bitlens_schema::{Schema, work};
use std::fmt::Write;

/// Loads `text`, counting the loader's operations on this thread.
fn load(what: &str, text: &str) -> (Result<Schema, String>, u64) {
    work::reset();
    let r = Schema::from_toml(text, "big.toml").map_err(|e| e.to_string());
    let steps = work::count();
    eprintln!(
        "{what}: {} bytes, {steps} operations, {}",
        text.len(),
        match &r {
            Ok(_) => "loaded".to_owned(),
            Err(e) => e.chars().take(160).collect(),
        }
    );
    (r, steps)
}

/// Schemas of `n`, `2n` and `3n` entries made by `make` load, the second n entries cost
/// exactly what the third n do (no work grows with the entries already read), and each entry
/// costs at least `per` counted operations (its checks are the ones counted).
fn linear(what: &str, make: impl Fn(usize) -> String, n: usize, per: u64) {
    let steps: Vec<u64> = [n, 2 * n, 3 * n]
        .iter()
        .map(|&k| {
            let (r, steps) = load(&format!("{k} {what}"), &make(k));
            r.unwrap_or_else(|e| panic!("{k} {what}: {e}"));
            steps
        })
        .collect();
    let (second, third) = (steps[1] - steps[0], steps[2] - steps[1]);
    assert_eq!(second, third, "{what}: the work is not linear: {steps:?}");
    assert!(
        second >= per * n as u64,
        "{what}: {second} operations for {n} more entries, fewer than {per} each: {steps:?}"
    );
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

fn refused(what: &str, text: &str, want: &str) -> u64 {
    match load(what, text) {
        (Ok(_), _) => panic!("{what} loaded"),
        (Err(e), steps) => {
            assert!(e.contains(want), "{what}: {e}");
            steps
        }
    }
}

#[test]
fn many_fields_load_in_linear_time() {
    linear("fields", fields, 16_384, 3);
    let s = load("65536 fields", &fields(65_536)).0.unwrap();
    assert!(s.struct_names().any(|n| n == "P"));
    refused(
        "100k fields",
        &fields(100_000),
        "big.toml:7:10: 100000 fields in struct P, more than 65536 (SCHEMA.md, \"Bounds\"",
    );
}

#[test]
fn many_packet_types_load_in_linear_time() {
    linear("packet types", packets, 16_384, 1);
    let s = load("65536 packet types", &packets(65_536)).0.unwrap();
    assert_eq!(s.protocol().packet_types.len(), 65_536);
    refused(
        "200k packet types",
        &packets(200_000),
        "big.toml:5:11: 200000 packet types, more than 65536",
    );
}

#[test]
fn many_enum_values_load_in_linear_time() {
    linear("enum values", enum_values, 16_384, 2);
    load("65536 enum values", &enum_values(65_536)).0.unwrap();
    refused(
        "100k enum values",
        &enum_values(100_000),
        "100000 values in enum E, more than 65536",
    );
}

#[test]
fn many_union_variants_load_in_linear_time() {
    linear("union variants", variants, 16_384, 2);
    load("65536 union variants", &variants(65_536)).0.unwrap();
    refused(
        "100k union variants",
        &variants(100_000),
        "100000 variants in union U, more than 65536",
    );
}

#[test]
fn many_batch_fields_load_in_linear_time() {
    linear("batch fields", batch_fields, 16_384, 3);
    load("65536 batch fields", &batch_fields(65_536)).0.unwrap();
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
    let steps = refused(
        "70k structs",
        &s,
        "70000 structs, enums and unions, more than 65536",
    );
    // Refused on the count: no name of the 70,000 was checked.
    assert!(steps < 1000, "{steps} operations");

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
    let steps = refused(
        "200k batch messages",
        &s,
        "`messages` lists 200000 entries, more than the 256",
    );
    assert!(steps < 1000, "{steps} operations");
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
    let steps = refused(
        "100 includes of 60k fields",
        &s,
        "copy more than 1048576 field names in all",
    );
    // The copies counted (each name copied, then entered in its struct) stop at the first
    // include past 2^20 names (the 18th of 60,000), with Big's own fields: not the 6 million
    // names of all 100.
    assert!(steps < 2 * (1 << 20) + 60_000 * 4, "{steps} operations");
}

#[test]
fn a_schema_over_16_mib_is_refused_unread() {
    let text = format!("# {}\n", "x".repeat(16 << 20));
    let steps = refused(
        "17 MiB",
        &text,
        "big.toml:1:1: the schema is 16777219 bytes, more than 16777216",
    );
    assert_eq!(steps, 0, "read before the refusal");
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
    let (r, steps) = load("an unknown type among 60k structs", &s);
    let e = r.unwrap_err();
    // Each struct's one field, and a bounded look at the names for the error.
    assert!(steps < 60_000 * 4, "{steps} operations");
    assert!(e.len() < 1000, "{} bytes", e.len());
    assert!(e.contains("and 59977 more)"), "{e}");
}
