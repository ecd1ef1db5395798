//! Schema errors name the file, line and column and say what to change.

use bitlens_schema::Schema;

const HEAD: &str = "[protocol]\nname = \"tt\"\nid = 7\nmtu = 1200\npackets = [\"P\"]\n";

/// The error for `body` appended to a valid protocol header.
fn error(body: &str) -> String {
    let text = format!("{HEAD}{body}");
    match Schema::from_toml(&text, "game.toml") {
        Ok(_) => panic!("schema accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_error(body: &str, want: &str) {
    let got = error(body);
    assert!(got.starts_with(want), "got:  {got}\nwant: {want}...");
}

#[test]
fn unknown_type() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"i33\" }]\n",
        "game.toml:7:32: unknown type \"i33\" (use a built-in type: bool, int,",
    );
}

#[test]
fn min_above_max() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"hp\", type = \"int\", min = 100, max = 0 }]\n",
        "game.toml:7:46: min 100 is greater than max 0 (swap them, or fix one)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"v\", type = \"compressed_float\", min = 5.0, max = -5.0, resolution = 0.1 }]\n",
        "game.toml:7:58: min 5 is greater than max -5",
    );
}

#[test]
fn counts_without_an_upper_bound() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"mice\", type = \"array\", element = \"u8\" }]\n",
        "game.toml:7:11: array field without `max_len` (an array count needs an upper bound: add `max_len = 32`)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"name\", type = \"string\" }]\n",
        "game.toml:7:11: string field without `max_len` (a string's length needs an upper bound",
    );
}

#[test]
fn duplicate_names() {
    assert_error(
        "[struct.P]\nfields = [\n  { name = \"x\", type = \"u8\" },\n  { name = \"x\", type = \"u8\" },\n]\n",
        "game.toml:9:12: duplicate field name \"x\", first at 8:12 (rename one of them)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[enum.P]\nvalues = [\"a\"]\n",
        "game.toml:8:7: duplicate type name \"P\", first defined at 6:9 (rename one of them)",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }]\n[struct.P]\nfields = []\n",
        "game.toml:8:",
    );
}

#[test]
fn struct_reference_cycles() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"a\", type = \"A\" }]\n[struct.A]\nfields = [{ name = \"b\", type = \"B\" }]\n[struct.B]\nfields = [{ name = \"a\", type = \"A\" }]\n",
        "game.toml:11:32: struct reference cycle A -> B -> A (a struct cannot contain itself",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"kids\", type = \"array\", max_len = 4, element = \"P\" }]\n",
        "game.toml:7:67: struct reference cycle P -> P",
    );
}

#[test]
fn other_mistakes_say_what_to_change() {
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\", mni = 0 }]\n",
        "game.toml:7:38: unknown key \"mni\" for a field of type u8",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"v\", type = \"u8\", if = \"flag\" }]\n",
        "game.toml:7:43: no earlier field \"flag\" in this struct",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"x\", type = \"u8\" }, { name = \"v\", type = \"u8\", if = \"x\" }]\n",
        "game.toml:7:72: \"x\" is not a bool field",
    );
    assert_error(
        "[struct.Q]\nfields = []\n",
        "game.toml:5:12: packet body \"P\" is not a struct",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"q\", type = \"quaternion\", bits = 40 }]\n",
        "game.toml:7:53: quaternion bits = 40",
    );
    assert_error(
        "[struct.P]\nfields = [{ name = \"r\", type = \"int_relative\", previous = 3000000000 }]\n",
        "game.toml:7:59: previous = 3000000000 is not a 32-bit signed integer (int_relative is serialize 1.0's",
    );
    let e = Schema::from_toml("[protocol\n", "broken.toml").unwrap_err();
    assert_eq!((e.line, e.col), (1, 10), "{e}");
    assert!(e.to_string().contains("(fix the TOML syntax)"), "{e}");
}

#[test]
fn load_names_the_file() {
    let e = Schema::load(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml:1:1: cannot read"),
        "{e}"
    );
}

/// `[struct.P]` for the packet, then a `[batch]` section.
fn batch_error(batch: &str) -> String {
    error(&format!(
        "[struct.P]\nfields = [{{ name = \"a\", type = \"bool\" }}]\n{batch}"
    ))
}

const MSGS: &str = "[batch]\nmessages = [{ type = 1, name = \"M\" }]\n";

#[test]
fn batch_section_errors_say_what_to_change() {
    let cases: &[(&str, &str)] = &[
        (
            "[batch.struct.M]\nfields = [{ name = \"x\", type = \"u33\" }]\n",
            "game.toml:11:32: unknown type \"u33\" in a batch body (use a batch type: bool, u8,",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"x\", type = \"u8\", min = 9, max = 3 }]\n",
            "game.toml:11:53: min 9 is greater than max 3 (swap them, or fix one)",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"x\", type = \"u8\", max = 300 }]\n",
            "game.toml:11:44: max 300 is outside the type's range 0..=255",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"x\", type = \"i32\", max = 3 }]\n",
            "game.toml:11:39: unknown key \"max\" for a batch field of type i32 (expected one of name, type, if, unless, doc, abs_max)",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"s\", type = \"string\" }]\n",
            "game.toml:11:11: string field without `max_len` (add `max_len = 32`",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"x\", type = \"u8\" }, { name = \"x\", type = \"u8\" }]\n",
            "game.toml:11:49: duplicate field name \"x\", first at 11:20 (rename one of them)",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"n\", type = \"N\" }]\n[batch.struct.N]\nfields = [{ name = \"m\", type = \"M\" }]\n",
            "game.toml:13:32: batch struct reference cycle M -> N -> M (a struct cannot contain itself",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"p\", type = \"pod\", element = \"S\" }]\n[batch.struct.S]\nfields = [{ name = \"s\", type = \"string\", max_len = 3 }]\n",
            "game.toml:11:49: batch struct S is not plain old data: field \"s\" has no fixed size",
        ),
        (
            "[batch.struct.M]\nfields = [{ name = \"v\", type = \"f32\", if = \"a\" }]\n",
            "game.toml:11:44: \"a\" is not an earlier unguarded bool field of this struct",
        ),
    ];
    for (body, want) in cases {
        let got = batch_error(&format!("{MSGS}{body}"));
        assert!(got.starts_with(want), "got:  {got}\nwant: {want}...");
    }
    let got = batch_error(
        "[batch]\nmessages = [{ type = 1, name = \"M\" }, { type = 1, name = \"N\" }]\n[batch.struct.M]\nfields = []\n[batch.struct.N]\nfields = []\n",
    );
    assert!(
        got.starts_with("game.toml:9:48: duplicate message type 1, first at 9:22 (give each message its own number)"),
        "{got}"
    );
    let got = batch_error("[batch]\nmessages = [{ type = 300, name = \"M\" }]\n");
    assert!(
        got.starts_with(
            "game.toml:9:22: message type 300 does not fit the header's byte (use 0..=255)"
        ),
        "{got}"
    );
    let got = batch_error("[batch]\nmessages = [{ type = 1, name = \"M\" }]\n");
    assert!(got.starts_with("game.toml:9:32: message body \"M\" is not a batch struct defined in this file (add [batch.struct.M]"), "{got}");
    let got = batch_error("[batch]\nmesages = []\n");
    assert!(
        got.starts_with("game.toml:9:1: unknown key \"mesages\" in [batch]"),
        "{got}"
    );
}

#[test]
fn batch_array_of_elements_that_take_no_bytes() {
    // The reliability issue's hostile datagram: 171 three-byte messages claiming 65529
    // zero-byte elements each took 2.2 GB in `check`. Every zero-byte element shape is refused
    // when the schema loads, with the fix.
    for element in [
        "\"E\"",
        "{ type = \"bytes\", len = 0 }",
        "{ type = \"pod\", element = \"u32\", len = 0 }",
    ] {
        let got = batch_error(&format!(
            "{MSGS}[batch.struct.M]\nfields = [{{ name = \"a\", type = \"array\", max_len = 65529, element = {element} }}]\n[batch.struct.E]\nfields = []\n"
        ));
        assert!(got.starts_with("game.toml:11:"), "{element}: {got}");
        assert!(
            got.contains(
                "an array element that can take no bytes cannot be bounded by the message's size"
            ) && got.contains("give the element a field that takes bytes"),
            "{element}: {got}"
        );
    }
    // An element of one byte or more still loads.
    let text = format!(
        "{HEAD}[struct.P]\nfields = [{{ name = \"a\", type = \"bool\" }}]\n{MSGS}[batch.struct.M]\nfields = [{{ name = \"a\", type = \"array\", max_len = 65529, element = {{ type = \"bytes\", len = 1 }} }}]\n"
    );
    Schema::from_toml(&text, "game.toml").unwrap();
}

#[test]
fn array_of_elements_that_take_no_bits() {
    let got = error(
        "[struct.P]\nfields = [{ name = \"a\", type = \"array\", max_len = 1000000, element = { type = \"int\", min = 7, max = 7 } }]\n",
    );
    assert!(got.starts_with("game.toml:7:"), "{got}");
    assert!(
        got.contains("an array element that can take no bits"),
        "{got}"
    );
}

#[test]
fn compressed_float_finer_than_a_32_bit_code() {
    // 1 / 1e-30 steps: the codec would clamp them to 4294967040 and send something else.
    assert_error(
        "[struct.P]\nfields = [{ name = \"v\", type = \"compressed_float\", min = 0.0, max = 1.0, resolution = 1e-30 }]\n",
        "game.toml:7:87: resolution 1e-30 asks for 1e30 steps of 0..=1, more than the 4294967040 \
         a compressed float's 32-bit code holds (use `resolution = 2.4e-10` or coarser)",
    );
    // A vector of them too, and a range so wide that the count is not even finite.
    assert_error(
        "[struct.P]\nfields = [{ name = \"v\", type = \"compressed_vector\", min = -1e30, max = 1e30, resolution = 1e-10 }]\n",
        "game.toml:7:91: resolution 1e-10 asks for over 3.4028235e38 steps of -1e30..=1e30, more than the \
         4294967040 a compressed float's 32-bit code holds (use `resolution = 4.7e20` or coarser)",
    );
    // The suggested resolution loads; at the boundary, 4294967040 steps load and one more
    // does not.
    let field = |max: &str, res: &str| {
        format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"v\", type = \"compressed_float\", min = 0.0, max = {max}, resolution = {res} }}]\n"
        )
    };
    for (max, res) in [("1.0", "2.4e-10"), ("1.0", "0.01"), ("4294967040.0", "1.0")] {
        Schema::from_toml(&field(max, res), "game.toml")
            .unwrap_or_else(|e| panic!("{max} {res}: {e}"));
    }
    let e = Schema::from_toml(&field("4294967040.0", "0.99"), "game.toml").unwrap_err();
    assert!(
        e.to_string().contains("(use `resolution = 1` or coarser)"),
        "{e}"
    );
}

#[test]
fn compressed_float_bounds_that_are_not_numbers_are_refused_at_once() {
    // `max = nan` made the search for a coarser resolution loop forever (found by the
    // schema_load corpus run under the allocation guard).
    for (min, max, res) in [
        ("0.0", "nan", "62.0"),
        ("nan", "1.0", "0.1"),
        ("0.0", "inf", "0.1"),
        ("-inf", "inf", "1.0"),
        ("0.0", "1.0", "nan"),
        ("0.0", "1.0", "-inf"),
        ("0.0", "1.0", "0.0"),
        ("0.0", "1.0", "-0.5"),
    ] {
        for ty in ["compressed_float", "compressed_vector"] {
            let e = error(&format!(
                "[struct.P]\nfields = [{{ name = \"v\", type = \"{ty}\", min = {min}, max = {max}, resolution = {res} }}]\n"
            ));
            assert!(e.starts_with("game.toml:7:"), "{ty} {min} {max} {res}: {e}");
        }
    }
}

/// `n` structs, each referring to the next one twice; the last holds `last`.
fn doubling(prefix: &str, n: usize, last: &str) -> String {
    let mut text = String::new();
    for i in 0..n {
        text += &format!(
            "[{prefix}S{i}]\nfields = [{{ name = \"a\", type = \"S{}\" }}, {{ name = \"b\", type = \"S{}\" }}]\n",
            i + 1,
            i + 1
        );
    }
    text + &format!("[{prefix}S{n}]\nfields = [{last}]\n")
}

/// Structs that refer to one struct twice, level after level, made 1760 bytes of schema read
/// 3 145 728 fields (17 s) for an 8-byte datagram, and 30 levels would take hours: refused.
#[test]
fn struct_references_that_double_per_level_are_refused() {
    let text = format!(
        "{}{}",
        HEAD.replace("[\"P\"]", "[\"S0\"]"),
        doubling(
            "struct.",
            20,
            "{ name = \"x\", type = \"int\", min = 3, max = 3 }"
        )
    );
    let started = std::time::Instant::now();
    let got = Schema::from_toml(&text, "game.toml")
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed().as_secs() < 5,
        "the check itself is linear"
    );
    assert!(
        got.contains("makes a reader record") && got.contains("more than 4096"),
        "{got}"
    );
    assert!(got.contains("(nest fewer struct references"), "{got}");
    // Placed at the first struct over the bound: S9, with 2^11 fields and 2^12 - 2 scopes.
    assert!(
        got.starts_with("game.toml:24:9: struct S9 makes a reader record 6142 fields"),
        "{got}"
    );
    // Ten levels (1024 fields and 2046 scopes) still load.
    let text = format!(
        "{}{}",
        HEAD.replace("[\"P\"]", "[\"S0\"]"),
        doubling(
            "struct.",
            10,
            "{ name = \"x\", type = \"int\", min = 3, max = 3 }"
        )
    );
    let s = Schema::from_toml(&text, "game.toml").unwrap();
    // The framing, the leaves and the scopes, none of them paid by bits.
    assert_eq!(s.max_trace_fields(100), 4 + 1024 + 2046);
}

#[test]
fn batch_struct_references_that_double_per_level_are_refused() {
    let text = format!(
        "{HEAD}[struct.P]\nfields = []\n[batch]\nmessages = [{{ type = 1, name = \"S0\" }}]\n{}",
        doubling(
            "batch.struct.",
            30,
            "{ name = \"x\", type = \"bytes\", len = 0 }"
        )
    );
    let started = std::time::Instant::now();
    let got = Schema::from_toml(&text, "game.toml")
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed().as_secs() < 5,
        "the check itself is linear"
    );
    assert!(
        got.contains("batch struct S23 makes a reader record 382 fields")
            && got.contains("take no bytes, more than 256"),
        "{got}"
    );
}

/// An array whose elements hold a bool and many fields of no bits: each bit read would record
/// eighty fields.
#[test]
fn array_elements_of_many_fields_without_bits_are_refused() {
    let zeros: Vec<String> = (0..80)
        .map(|i| format!("{{ name = \"z{i}\", type = \"int\", min = 0, max = 0 }}"))
        .collect();
    let got = error(&format!(
        "[struct.P]\nfields = [{{ name = \"a\", type = \"array\", max_len = 9000, element = \"E\" }}]\n[struct.E]\nfields = [{{ name = \"b\", type = \"bool\" }}, {}]\n",
        zeros.join(", ")
    ));
    assert!(
        got.starts_with("game.toml:6:9: struct P makes a reader record 82.0 fields per bit"),
        "{got}"
    );
    // A bool array records two per bit (the element and its `[i]`).
    let text = format!(
        "{HEAD}[struct.P]\nfields = [{{ name = \"a\", type = \"array\", max_len = 9000, element = \"bool\" }}]\n"
    );
    let s = Schema::from_toml(&text, "game.toml").unwrap();
    // Two per bit, the array's scope and count, the framing, and an element a read stops in.
    assert_eq!(s.max_trace_fields(10), 2 * 80 + 2 + 4 + 2);
}

/// The loader and the reader recurse once per level: a chain of 70 structs overflowed a debug
/// build's 2 MiB test thread inside the loader, before any check.
#[test]
fn structs_nested_deeper_than_32_levels_are_refused() {
    let chain = |n: usize, field: &dyn Fn(usize) -> String| {
        let mut body = String::new();
        for i in 0..n {
            body += &format!("[struct.S{i}]\nfields = [{}]\n", field(i + 1));
        }
        body += &format!("[struct.S{n}]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n");
        let text = format!("{}{body}", HEAD.replace("[\"P\"]", "[\"S0\"]"));
        Schema::from_toml(&text, "game.toml").map(|_| ())
    };
    let direct = |i: usize| format!("{{ name = \"a\", type = \"S{i}\" }}");
    let got = chain(70, &direct).unwrap_err().to_string();
    assert_eq!(
        got,
        "game.toml:69:32: struct S32 is nested 33 levels deep in S0, more than 32 (flatten some levels)"
    );
    chain(31, &direct).unwrap();
    // Arrays count as levels too: 17 structs, each an array of the next, nest 34 levels.
    let arrays =
        |i: usize| format!("{{ name = \"a\", type = \"array\", max_len = 2, element = \"S{i}\" }}");
    let got = chain(17, &arrays).unwrap_err().to_string();
    assert!(
        got.contains("struct S0 nests structs and arrays 34 levels deep, more than 32"),
        "{got}"
    );
    chain(16, &arrays).unwrap();
}

/// Found by the `schema_load` fuzz target: these errors said what was wrong but not, in
/// parentheses, what to change.
#[test]
fn every_error_says_in_parentheses_what_to_change() {
    let cases = [
        "[struct.P]\nfields = [{ name = \"a\", type = \"array\", max_len = 3, element = { name = \"x\", type = \"u8\" } }]\n",
        "[struct.P]\nfields = [{ name = \"a\", type = \"array\", max_len = 3, element = 5 }]\n",
        "[struct.P]\nfields = [{ name = \"a\", type = \"array\", max_len = 3, element = { type = \"int\", min = 1, max = 1 } }]\n",
        "[struct.P]\nfields = [{ name = \"a\", type = \"compressed_float\", min = \"0\", max = 1.0, resolution = 0.1 }]\n",
        "[struct.P]\nfields = [{ name = \"a\", type = \"int\", min = 0, max = 99999999999999999999 }]\n",
        "[struct.P]\nfields = 7\n[enum.E]\nvalues = 3\n",
        "[enum.E]\nvalues = 3\n[struct.P]\nfields = []\n",
        "struct = 5\n",
        "[struct.P]\nfields = []\n[batch]\nmessages = 5\n",
        "[struct.P]\nfields = []\n[batch]\nmessages = []\nstages = 5\n",
        "[struct.P]\nfields = []\n[batch]\nmessages = [{ type = 1, name = \"M\" }]\n[batch.struct.M]\nfields = [{ name = \"a\", type = \"bytes\" }]\n",
        "[struct.P]\nfields = []\n[batch]\nmessages = [{ type = 1, name = \"M\" }]\n[batch.struct.M]\nfields = [{ name = \"a\", type = \"array\", max_len = 3, element = 5 }]\n",
        "[struct.P]\nfields = []\n[batch]\nmessages = [{ type = 1, name = \"M\" }]\n[batch.struct.M]\nfields = [{ name = \"a\", type = \"array\", max_len = 3, element = { type = \"bytes\", len = 0 } }]\n",
    ];
    for body in cases {
        let got = error(body);
        let message = got.splitn(4, ':').nth(3).unwrap_or_default();
        assert!(
            message.ends_with(')') && message.contains(" ("),
            "no fix in parentheses: {got}\nfor:\n{body}"
        );
    }
    let text = HEAD.replace("packets = [\"P\"]", "packets = [7]");
    let got = Schema::from_toml(&format!("{text}[struct.P]\nfields = []\n"), "game.toml")
        .unwrap_err()
        .to_string();
    assert!(got.ends_with("body = \"Struct\" }`)"), "{got}");
}

/// A pod struct is read by copying it into a buffer of its size: three pods of 65529 u64 made
/// a reader allocate 1 572 696 bytes for a 3-byte body (the fuzz crate's guard allocator aborts
/// above 1 MiB; `corpus/schema_load/raw_hostile_pod_struct_over_a_body.bin`). A pod or a pod
/// struct larger than the largest message body can never be read: refused.
#[test]
fn pods_larger_than_a_message_body_are_refused() {
    let pod = |len| format!("{{ name = \"a\", type = \"pod\", element = \"u64\", len = {len} }}");
    let got = batch_error(&format!(
        "{MSGS}[batch.struct.M]\nfields = [{}]\n",
        pod(8192)
    ));
    assert!(
        got.contains("pod of 8192 u64 takes 65536 bytes, more than the largest message body, 65529 bytes (use len = 8191 at most)"),
        "{got}"
    );
    let got = batch_error(&format!(
        "{MSGS}[batch.struct.M]\nfields = [{{ name = \"s\", type = \"pod\", element = \"Big\" }}]\n[batch.struct.Big]\nfields = [{}, {}]\n",
        pod(8191),
        pod(8191).replace("\"a\"", "\"b\"")
    ));
    assert!(
        got.contains(
            "pod struct Big takes at least 131056 bytes, more than the largest message body"
        ),
        "{got}"
    );
}

/// Unions count as structs do: one union holding the next struct, referred to twice per level,
/// doubles the fields a few bits make a reader record (a one-variant union's tag takes no bits),
/// and a chain of unions nests a level per union.
#[test]
fn unions_that_double_per_level_or_nest_too_deep_are_refused() {
    let chain = |n: usize, twice: bool, leaf: &str| {
        let mut body = String::new();
        for i in 0..n {
            let b = if twice {
                format!(", {{ name = \"b\", type = \"U{i}\" }}")
            } else {
                String::new()
            };
            body += &format!(
                "[struct.S{i}]\nfields = [{{ name = \"a\", type = \"U{i}\" }}{b}]\n[union.U{i}]\nvariants = [\"S{}\"]\n",
                i + 1
            );
        }
        body += &format!("[struct.S{n}]\nfields = [{leaf}]\n");
        let text = format!("{}{body}", HEAD.replace("[\"P\"]", "[\"S0\"]"));
        Schema::from_toml(&text, "game.toml")
    };
    let zero = "{ name = \"x\", type = \"int\", min = 3, max = 3 }";
    let started = std::time::Instant::now();
    let got = chain(30, true, zero).unwrap_err().to_string();
    assert!(
        started.elapsed().as_secs() < 5,
        "the check itself is linear"
    );
    assert!(
        got.contains("fields and scopes that take no bits, more than 4096"),
        "{got}"
    );
    // Eight levels stay under the bound, and a trace of the packet keeps to it.
    let s = chain(8, true, zero).unwrap();
    let mut datagram = [0u8; 8];
    let crc = bitlens_codec::packet::packet_crc(s.protocol().id, &datagram);
    datagram[..4].copy_from_slice(&crc.to_le_bytes());
    let (_, trace) = s.trace(&datagram);
    // The body takes no bits: it is read whole, then the zero end check fails after it.
    assert_eq!(
        trace.error.as_ref().map(|e| e.field()),
        Some("end of packet")
    );
    assert!(trace.fields.len() > 1 << 8, "{}", trace.fields.len());
    assert!(trace.fields.len() <= s.max_trace_fields(8));
    // With two variants the tag takes a bit: one of them is read, not both.
    let two = |n: usize| {
        let mut body = String::new();
        for i in 0..n {
            body += &format!(
                "[struct.S{i}]\nfields = [{{ name = \"a\", type = \"U{i}\" }}]\n[union.U{i}]\nvariants = [\"S{}\", {{ name = \"None\" }}]\n",
                i + 1
            );
        }
        body += &format!("[struct.S{n}]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n");
        Schema::from_toml(
            &format!("{}{body}", HEAD.replace("[\"P\"]", "[\"S0\"]")),
            "game.toml",
        )
    };
    two(30).unwrap();
    // A chain of 40 unions: the loader stops at the 33rd struct (unions resolve first, from
    // U0's body S1 on).
    let got = chain(40, false, "{ name = \"x\", type = \"u8\" }")
        .unwrap_err()
        .to_string();
    assert!(
        got.contains("struct S33 is nested 33 levels deep in S1, more than 32"),
        "{got}"
    );
    chain(31, false, "{ name = \"x\", type = \"u8\" }").unwrap();
    // An array of one-variant unions without fields takes no bits per element: refused.
    let got = error(
        "[struct.P]\nfields = [{ name = \"a\", type = \"array\", max_len = 9, element = \"U\" }]\n[union.U]\nvariants = [{ name = \"None\" }]\n",
    );
    assert!(
        got.contains("an array element that can take no bits"),
        "{got}"
    );
}

/// Found while adding unions to the schema_load target: two of their errors did not say what to
/// change.
#[test]
fn union_errors_say_what_to_change() {
    let got = error("[struct.P]\nfields = []\n[union.U]\nvariants = 3\n");
    assert!(
        got.ends_with("(write `variants = [\"Body\", { name = \"None\" }]`)"),
        "{got}"
    );
    let got = error("[struct.P]\nfields = []\n[union.U]\nvariants = [3]\n");
    assert!(
        got.contains("a variant is neither a struct name nor a table (write"),
        "{got}"
    );
}

/// A batch message's header is four bytes, so a datagram holds a message per four bytes: a
/// batch struct may record no more entries that take no bytes than its header pays for at 64
/// per byte (256). With the packets' 4096, a 1,200-byte batch of empty messages would record
/// 1.2 million entries (about 250 MB of trace).
#[test]
fn batch_structs_record_no_more_empty_entries_than_a_header_pays_for() {
    let schema = |n: usize| {
        let empty: Vec<String> = (0..n)
            .map(|i| format!("{{ name = \"z{i}\", type = \"bytes\", len = 0 }}"))
            .collect();
        Schema::from_toml(
            &format!(
                "{HEAD}[struct.P]\nfields = []\n[batch]\nmessages = [{{ type = 1, name = \"M\" }}]\n[batch.struct.M]\nfields = [{}]\n",
                empty.join(", ")
            ),
            "game.toml",
        )
    };
    let got = schema(257).unwrap_err().to_string();
    assert!(
        got.contains("batch struct M makes a reader record 257 fields and scopes that take no bytes, more than 256"),
        "{got}"
    );
    let s = schema(256).unwrap();
    let b = s.batch().unwrap();
    // 299 empty messages of type 1 in 1,198 bytes.
    let mut data = vec![0u8; 2];
    for _ in 0..299 {
        data.extend_from_slice(&[1, 0, 0, 0]);
    }
    let len = data.len() as u16;
    data[..2].copy_from_slice(&len.to_le_bytes());
    let d = bitlens_batch::dissect_batch(b, &data);
    assert_eq!(d.messages.as_ref().map(Vec::len), Some(299));
    assert_eq!(d.problem, None);
    // The batch length; per message its scope, its header (scope, type, stage, len), its body.
    assert_eq!(d.trace.fields.len(), 1 + 299 * (5 + 256));
    assert!(d.trace.fields.len() <= 1 + 299 * (5 + b.max_trace_fields(0)));
    assert!(d.trace.fields.len() < 66 * data.len());
}

/// The schema with `name` (a TOML basic string's contents) put where `at` says.
fn with_name(at: &str, name: &str) -> String {
    let n = format!("\"{name}\"");
    match at {
        "protocol" => format!(
            "[protocol]\nname = {n}\nid = 7\nmtu = 1200\npackets = [\"P\"]\n[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n"
        ),
        "field" => format!("{HEAD}[struct.P]\nfields = [{{ name = {n}, type = \"u8\" }}]\n"),
        "struct" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n[struct.{n}]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n"
        ),
        "enum" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n[enum.{n}]\nvalues = [\"a\"]\n"
        ),
        "enum value" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n[enum.E]\nvalues = [\"a\", {n}]\n"
        ),
        "enum value key" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n[enum.E]\nvalues = {{ a = 0, {n} = 1 }}\n"
        ),
        "packet" => format!(
            "[protocol]\nname = \"tt\"\nid = 7\nmtu = 1200\npackets = [{{ name = {n}, body = \"P\" }}]\n[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n"
        ),
        "variant" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"U\" }}]\n[union.U]\nvariants = [{{ name = {n} }}]\n"
        ),
        "message" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n[batch]\nmessages = [{{ type = 1, name = {n}, body = \"M\" }}]\n[batch.struct.M]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n"
        ),
        "batch field" => format!(
            "{HEAD}[struct.P]\nfields = [{{ name = \"x\", type = \"u8\" }}]\n[batch]\nmessages = [{{ type = 1, name = \"M\" }}]\n[batch.struct.M]\nfields = [{{ name = {n}, type = \"u8\" }}]\n"
        ),
        "check label" => {
            format!("{HEAD}[struct.P]\nfields = [{{ type = \"check\", label = {n} }}]\n")
        }
        other => panic!("{other}"),
    }
}

/// Names are plain identifiers everywhere (SCHEMA.md, "Names"): quotes, newlines (which forged
/// lines in `tshark -V`), NUL, U+2028, 100k characters and empty names were loaded for every
/// kind of name but fields.
#[test]
fn every_name_is_a_plain_identifier() {
    let long = "x".repeat(100_000);
    let bad = [
        ("a\\\"b", "is not a plain identifier"),
        ("a\\nb", "is not a plain identifier"),
        ("a\\u0000b", "is not a plain identifier"),
        ("a\\u2028b", "is not a plain identifier"),
        ("a b", "is not a plain identifier"),
        ("", "is empty"),
        (&long, "is longer than 128 bytes"),
    ];
    for at in [
        "field",
        "struct",
        "enum",
        "enum value",
        "enum value key",
        "packet",
        "variant",
        "message",
        "batch field",
    ] {
        for (name, why) in bad {
            let text = with_name(at, name);
            let got = match Schema::from_toml(&text, "game.toml") {
                Ok(_) => panic!("{at} {name:.20?} loaded"),
                Err(e) => e.to_string(),
            };
            assert!(got.contains(why), "{at} {name:.20?}: {got}");
            assert!(
                got.contains("(use ASCII letters, digits and _") && !got.contains('\n'),
                "{at}: {got}"
            );
            // The message quotes at most 40 characters of the name.
            assert!(got.len() < 400, "{at}: {} bytes", got.len());
        }
        assert!(
            Schema::from_toml(&with_name(at, "Ok_name2"), "game.toml").is_ok(),
            "{at}"
        );
    }
    let e = Schema::from_toml(&with_name("field", "a\\nb"), "game.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "game.toml:7:20: field name \"a\\nb\" is not a plain identifier (use ASCII letters, \
         digits and _, at most 128 bytes)"
    );
}

/// A check label is free text on one line: a newline, NUL or U+2028 is refused.
#[test]
fn check_labels_stay_on_one_line() {
    for label in ["a\\nb", "a\\u0000b", "a\\u2028b", "", &"x".repeat(200)] {
        let text = with_name("check label", label);
        let e = Schema::from_toml(&text, "game.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("check label"), "{label:.20?}: {e}");
    }
    assert!(Schema::from_toml(&with_name("check label", "end of header"), "game.toml").is_ok());
}

/// The protocol name is also a Wireshark protocol filter name Wireshark does not have: `p`
/// made tshark abort ("Protocol filter name cannot have length less than two") and `udp`,
/// `frame` or `data` failed to register silently.
#[test]
fn the_protocol_name_is_one_wireshark_accepts() {
    let load = |name: &str| Schema::from_toml(&with_name("protocol", name), "game.toml");
    for name in [
        "p",
        "",
        "a\\nb",
        "a\\\"b",
        "a\\u0000b",
        "a\\u2028b",
        "Demo",
        "2d",
        "a..b",
        "a.",
    ] {
        let e = load(name).unwrap_err().to_string();
        assert!(
            e.starts_with("game.toml:2:8: protocol name "),
            "{name:?}: {e}"
        );
    }
    assert!(
        load("p")
            .unwrap_err()
            .to_string()
            .contains("is shorter than 2 characters")
    );
    assert!(
        load(&"x".repeat(100_000))
            .unwrap_err()
            .to_string()
            .contains("longer than 128")
    );
    for name in ["udp", "frame", "data", "ip", "eth", "tcp", "quake"] {
        let e = load(name).unwrap_err().to_string();
        assert!(
            e.contains("is a protocol Wireshark already has"),
            "{name}: {e}"
        );
    }
    for name in ["arena", "my-game", "game.v2", "demo"] {
        assert!(load(name).is_ok(), "{name}");
    }
}
