//! `schema_load`: arbitrary schemas, then arbitrary bytes decoded with them.
//!
//! The input's first byte picks how the rest becomes a schema:
//!
//! - even: [`arb_schema`] builds one from `arbitrary` choices (packet structs, enums, tagged
//!   unions, a `[batch]` section), rendered as TOML. Names come from small pools so that references
//!   resolve, values are mostly valid, and now and then a choice breaks a rule (an unknown key
//!   or type, a value of the wrong kind, `min > max`, a reference that does not resolve, a
//!   cycle): the loader's checks deep in the language are reached, not only its TOML syntax.
//!   The bytes left over are the datagram.
//! - odd: the rest up to the first zero byte is the TOML text (lossy UTF-8), the bytes after it
//!   the datagram.
//!
//! A schema is either refused with a placed error (`file:line:col: what (what to change)`, the
//! line and column inside the text), or loads; then the datagram (and the datagram with its CRC,
//! or its batch length, made right, so that the bodies are reached) is read as a packet and as a
//! batch, and every reader agrees: verdict, read and trace give the same type and error, an
//! error's bit lies inside the data, an accepted packet or message re-encodes to the same bytes
//! and measures what it wrote, and a trace never holds more entries than
//! [`Schema::max_trace_fields`] promises. The fuzz target runs this under the guard allocator
//! (`fuzz/src/lib.rs`: no single allocation over 1 MiB), so the datagram is cut to
//! [`MAX_DATAGRAM`] bytes and traced only when its bound is at most [`MAX_TRACE_FIELDS`].

use arbitrary::Unstructured;
use bitlens_batch::{dissect_batch, read_batch};
use bitlens_codec::dissect::{MessageStatus, Problem, Status};
use bitlens_codec::packet::packet_crc;
use bitlens_schema::batch::BatchSchema;
use bitlens_schema::{Schema, SchemaError};
use std::fmt::Write as _;

/// The file name schema errors are placed in.
pub const FILE: &str = "fuzz.schema.toml";

/// Names a generated schema draws from: few, so that references between them resolve.
const STRUCTS: [&str; 6] = ["S0", "S1", "S2", "S3", "S4", "S5"];
const ENUMS: [&str; 3] = ["E0", "E1", "E2"];
const UNIONS: [&str; 3] = ["U0", "U1", "U2"];
const BATCH_STRUCTS: [&str; 5] = ["B0", "B1", "B2", "B3", "B4"];
const FIELDS: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

// The generator writes the TOML text straight into one `String`, drawing from `u` in the same
// order as it writes, with no `String` per value, entry or table: the text (and so what every
// corpus input means) is the same byte for byte as when each piece was a `String` of its own
// (`the_generator_renders_the_corpus_as_before`), at a few allocations per schema instead of
// a few hundred (fuzz/README.md, "Fuzz throughput, issue 30", the fifth pass).

/// A TOML integer.
fn int(u: &mut Unstructured<'_>, out: &mut String) -> arbitrary::Result<()> {
    // Mostly small and edge values, now and then any i64.
    let v: i64 = match u.int_in_range(0..=9)? {
        0 => u.arbitrary()?,
        1 => *u.choose(&[i64::MIN, i64::MAX, -1, 0, 255, 256, 65535, 65536, 1 << 24])?,
        2 => i64::from(u.arbitrary::<u32>()?),
        3 => -i64::from(u.int_in_range(0..=1000)?),
        _ => u.int_in_range(0..=64)?,
    };
    let _ = write!(out, "{v}");
    Ok(())
}

/// A TOML float.
fn float(u: &mut Unstructured<'_>, out: &mut String) -> arbitrary::Result<()> {
    let v: f64 = match u.int_in_range(0..=7)? {
        0 => f64::from(f32::from_bits(u.arbitrary()?)),
        1 => *u.choose(&[0.01, 0.001, 1e-30, 1e30, 0.5, 0.0, -0.0])?,
        2 => f64::from(u.int_in_range(-2000i32..=2000)?) / 8.0,
        _ => f64::from(u.int_in_range(-64i32..=64)?),
    };
    if v.is_nan() {
        out.push_str("nan");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "inf" } else { "-inf" });
    } else {
        // `{:?}` always writes a decimal point or an exponent: a TOML float.
        let _ = write!(out, "{v:?}");
    }
    Ok(())
}

/// `s` as a TOML basic string: a JSON string is one, and the names and labels drawn here need
/// no escape (any other string goes through `serde_json`).
fn quoted(out: &mut String, s: &str) {
    if s.chars().all(|c| c != '"' && c != '\\' && !c.is_control()) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}

fn pick<'a>(u: &mut Unstructured<'_>, names: &[&'a str]) -> arbitrary::Result<&'a str> {
    u.choose(names).copied()
}

/// Now and then (1 in 24) a rule is broken on purpose: what the caller uses to pick a wrong key,
/// type or value.
fn broken(u: &mut Unstructured<'_>) -> arbitrary::Result<bool> {
    u.ratio(1, 24)
}

/// Opens an inline table `{ k = v, ... }`: the returned position is where its first entry
/// starts (see [`key`], [`put_name_first`], [`close`]).
fn open(out: &mut String) -> usize {
    out.push_str("{ ");
    out.len()
}

/// Starts the entry `k = ` of the table opened at `at` (its value is written next).
fn key(out: &mut String, at: usize, k: &str) {
    if out.len() > at {
        out.push_str(", ");
    }
    out.push_str(k);
    out.push_str(" = ");
}

/// Puts the entry `name = "{FIELDS[i % 8]}"` first in the table opened at `at`, which holds
/// entries already.
fn put_name_first(out: &mut String, at: usize, i: usize) {
    const NAMED: [&str; FIELDS.len()] = [
        "name = \"a\", ",
        "name = \"b\", ",
        "name = \"c\", ",
        "name = \"d\", ",
        "name = \"e\", ",
        "name = \"f\", ",
        "name = \"g\", ",
        "name = \"h\", ",
    ];
    out.insert_str(at, NAMED[i % FIELDS.len()]);
}

fn close(out: &mut String) {
    out.push_str(" }");
}

/// The keys of a bit-packed field of type `ty` (its `type` key first), in the table opened at
/// `at`.
fn packet_type_keys(
    u: &mut Unstructured<'_>,
    out: &mut String,
    at: usize,
    ty: &str,
    depth: u32,
) -> arbitrary::Result<()> {
    key(out, at, "type");
    quoted(out, ty);
    match ty {
        "int" | "int64" | "int128" => {
            key(out, at, "min");
            int(u, out)?;
            key(out, at, "max");
            int(u, out)?;
        }
        "fixed" => {
            key(out, at, "integer_bits");
            let _ = write!(out, "{}", u.int_in_range(0..=70)?);
            key(out, at, "fraction_bits");
            let _ = write!(out, "{}", u.int_in_range(0..=70)?);
            key(out, at, "min");
            int(u, out)?;
            key(out, at, "max");
            int(u, out)?;
            if u.ratio(1, 3)? {
                key(out, at, "unsigned");
                let _ = write!(out, "{}", u.arbitrary::<bool>()?);
            }
        }
        "bits" => {
            key(out, at, "bits");
            let _ = write!(out, "{}", u.int_in_range(0..=65)?);
        }
        "quaternion" => {
            key(out, at, "bits");
            let _ = write!(out, "{}", u.int_in_range(1..=17)?);
        }
        "compressed_float" | "compressed_vector" => {
            for k in ["min", "max", "resolution"] {
                key(out, at, k);
                float(u, out)?;
            }
        }
        "string" | "wstring" => {
            key(out, at, "max_len");
            int(u, out)?;
        }
        "bytes" => {
            key(out, at, "len");
            int(u, out)?;
        }
        "array" => {
            key(out, at, "max_len");
            int(u, out)?;
            key(out, at, "element");
            packet_element(u, out, depth)?;
        }
        "sparse_array" => {
            key(out, at, "max_objects");
            int(u, out)?;
            key(out, at, "element");
            quoted(out, pick(u, &STRUCTS)?);
            if u.ratio(1, 4)? {
                key(out, at, "index_name");
                quoted(out, pick(u, &FIELDS)?);
            }
        }
        "object_index" | "int_relative" => {
            if ty == "object_index" {
                key(out, at, "max_objects");
                int(u, out)?;
            }
            match u.int_in_range(0..=2)? {
                0 => {}
                1 => {
                    key(out, at, "previous");
                    int(u, out)?;
                }
                _ => {
                    key(out, at, "previous");
                    quoted(out, pick(u, &FIELDS)?);
                }
            }
        }
        "check" => {
            key(out, at, "label");
            quoted(out, pick(u, &["header", "end of packet", ""])?);
        }
        "include" => {
            key(out, at, "struct");
            quoted(out, pick(u, &STRUCTS)?);
        }
        "bit_run" => {
            key(out, at, "by");
            quoted(out, pick(u, &FIELDS)?);
            key(out, at, "table");
            out.push('[');
            for i in 0..u.int_in_range(0..=4)? {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}", u.int_in_range(-1i64..=200)?);
            }
            out.push(']');
        }
        _ => {}
    }
    Ok(())
}

fn packet_type(u: &mut Unstructured<'_>) -> arbitrary::Result<&'static str> {
    Ok(match u.int_in_range(0..=10)? {
        0 | 1 => pick(u, &STRUCTS)?,
        2 => pick(u, &ENUMS)?,
        3 => pick(u, &UNIONS)?,
        4 if broken(u)? => pick(u, &["i33", "S9", "U9", "packed_u32", ""])?,
        // The loader's own list: every built-in type, the ones added later included.
        _ => pick(u, bitlens_schema::BUILTINS)?,
    })
}

/// An array element: a type name, or an inline table without a name.
fn packet_element(u: &mut Unstructured<'_>, out: &mut String, depth: u32) -> arbitrary::Result<()> {
    let ty = packet_type(u)?;
    if depth > 2 || u.ratio(1, 3)? {
        quoted(out, ty);
        return Ok(());
    }
    let at = open(out);
    packet_type_keys(u, out, at, ty, depth + 1)?;
    if broken(u)? {
        key(out, at, "name");
        quoted(out, "x");
    }
    close(out);
    Ok(())
}

fn packet_field(u: &mut Unstructured<'_>, out: &mut String, i: usize) -> arbitrary::Result<()> {
    let ty = packet_type(u)?;
    let at = open(out);
    packet_type_keys(u, out, at, ty, 0)?;
    if !(matches!(ty, "check" | "align" | "end" | "include") || broken(u)?) {
        put_name_first(out, at, i);
    }
    if u.ratio(1, 6)? {
        let k = if u.arbitrary()? { "if" } else { "unless" };
        key(out, at, k);
        quoted(out, pick(u, &FIELDS)?);
    }
    if broken(u)? {
        let k = pick(u, &["mni", "len", "doc"])?;
        key(out, at, k);
        int(u, out)?;
    }
    close(out);
    Ok(())
}

fn enum_section(u: &mut Unstructured<'_>, out: &mut String, name: &str) -> arbitrary::Result<()> {
    let _ = writeln!(out, "[enum.{name}]");
    let n = u.int_in_range(0..=5)?;
    if u.arbitrary()? {
        out.push_str("values = [");
        for (i, name) in FIELDS.iter().take(n).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            quoted(out, name);
        }
        out.push_str("]\n");
    } else {
        out.push_str("values = ");
        let at = open(out);
        for name in FIELDS.iter().take(n) {
            key(out, at, name);
            int(u, out)?;
        }
        close(out);
        out.push('\n');
    }
    Ok(())
}

/// A `[union.NAME]` section: variants without a body, named after their body struct, or named
/// with a body; now and then a tag name that a body's field also has, a body that is not a
/// struct, a duplicate or missing variant, an unknown key.
fn union_section(u: &mut Unstructured<'_>, out: &mut String, name: &str) -> arbitrary::Result<()> {
    let _ = writeln!(out, "[union.{name}]");
    if u.ratio(1, 4)? {
        // "a" is also the first field of every struct: refused as a body's tag.
        let tag = pick(u, &["kind", "a", "variant", ""])?;
        out.push_str("tag_name = ");
        quoted(out, tag);
        out.push('\n');
    }
    if broken(u)? {
        let _ = writeln!(out, "{} = 1", pick(u, &["tag", "variant", "fields"])?);
    }
    if broken(u)? {
        let _ = writeln!(
            out,
            "variants = {}",
            pick(u, &["\"S0\"", "3", "{ name = \"V\" }"])?
        );
        return Ok(());
    }
    let n = if broken(u)? {
        0
    } else {
        u.int_in_range(1..=4)?
    };
    out.push_str("variants = [");
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        let body = if broken(u)? {
            pick(u, &["E0", "U0", "S9", "u8"])?
        } else {
            pick(u, &STRUCTS)?
        };
        let named = |out: &mut String, at: usize| {
            key(out, at, "name");
            let _ = write!(out, "\"V{i}\"");
        };
        match u.int_in_range(0..=3)? {
            // Named after its body: the same struct twice is a duplicate variant.
            0 => quoted(out, body),
            1 => {
                let at = open(out);
                named(out, at);
                close(out);
            }
            2 if broken(u)? => {
                let at = open(out);
                key(out, at, "body");
                quoted(out, body);
                close(out);
            }
            _ => {
                let at = open(out);
                named(out, at);
                key(out, at, "body");
                quoted(out, body);
                close(out);
            }
        }
    }
    out.push_str("]\n");
    Ok(())
}

/// A struct section `[{prefix}{name}]` with up to 6 fields, each written by `field`; now and
/// then a misspelt `feilds` key before them (drawn after the fields, as it always was).
fn struct_section(
    u: &mut Unstructured<'_>,
    out: &mut String,
    prefix: &str,
    name: &str,
    field: fn(&mut Unstructured<'_>, &mut String, usize) -> arbitrary::Result<()>,
) -> arbitrary::Result<()> {
    let _ = writeln!(out, "[{prefix}{name}]");
    let keys_at = out.len();
    out.push_str("fields = [\n");
    for i in 0..u.int_in_range(0..=6)? {
        out.push_str("  ");
        field(u, out, i)?;
        out.push_str(",\n");
    }
    out.push_str("]\n");
    if broken(u)? {
        out.insert_str(keys_at, "feilds = []\n");
    }
    Ok(())
}

/// Writes `k = v` in the table opened at `at` when `ranged` draws it: the optional bounds of a
/// batch integer (`abs_max` when `signed`, else `min` and `max`).
fn batch_range(
    u: &mut Unstructured<'_>,
    out: &mut String,
    at: usize,
    signed: bool,
) -> arbitrary::Result<()> {
    let keys: &[&str] = if signed {
        &["abs_max"]
    } else {
        &["min", "max"]
    };
    for k in keys {
        if u.ratio(1, 3)? {
            key(out, at, k);
            int(u, out)?;
        }
    }
    Ok(())
}

/// The keys of a batch field of type `ty` (its `type` key first), in the table opened at `at`.
fn batch_type_keys(
    u: &mut Unstructured<'_>,
    out: &mut String,
    at: usize,
    ty: &str,
    depth: u32,
) -> arbitrary::Result<()> {
    key(out, at, "type");
    quoted(out, ty);
    match ty {
        "u8" | "u16" | "u32" | "u64" | "packed_u32" | "packed_u64" => {
            batch_range(u, out, at, false)?
        }
        "i8" | "i16" | "i32" | "i64" | "packed_i32" | "packed_i64" => {
            batch_range(u, out, at, true)?
        }
        "string" => {
            key(out, at, "max_len");
            int(u, out)?;
        }
        "bytes" => {
            let k = if u.arbitrary()? { "len" } else { "max_len" };
            key(out, at, k);
            int(u, out)?;
        }
        "pod" => {
            if u.arbitrary()? {
                let prim = pick(u, batch_types(true))?;
                key(out, at, "element");
                quoted(out, prim);
                key(out, at, "len");
                int(u, out)?;
                batch_range(u, out, at, prim.starts_with('i'))?;
            } else {
                key(out, at, "element");
                quoted(out, pick(u, &BATCH_STRUCTS)?);
            }
        }
        "array" => {
            key(out, at, "max_len");
            int(u, out)?;
            let ety = batch_type(u)?;
            key(out, at, "element");
            if depth > 2 || u.ratio(1, 3)? {
                quoted(out, ety);
            } else {
                let inner = open(out);
                batch_type_keys(u, out, inner, ety, depth + 1)?;
                close(out);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The batch loader's fixed-width types (what a `pod` holds), or its other built-in types.
fn batch_types(fixed_width: bool) -> &'static [&'static str] {
    static TYPES: std::sync::LazyLock<[Vec<&'static str>; 2]> = std::sync::LazyLock::new(|| {
        [false, true].map(|fixed| {
            bitlens_schema::batch::BATCH_TYPES
                .iter()
                .copied()
                .filter(|t| bitlens_schema::batch::is_fixed_width(t) == fixed)
                .collect()
        })
    });
    &TYPES[usize::from(fixed_width)]
}

fn batch_type(u: &mut Unstructured<'_>) -> arbitrary::Result<&'static str> {
    Ok(match u.int_in_range(0..=9)? {
        0 | 1 => pick(u, &BATCH_STRUCTS)?,
        2 if broken(u)? => pick(u, &["int", "S0", "u128"])?,
        3..=5 => pick(u, batch_types(true))?,
        _ => pick(u, batch_types(false))?,
    })
}

fn batch_field(u: &mut Unstructured<'_>, out: &mut String, i: usize) -> arbitrary::Result<()> {
    let ty = batch_type(u)?;
    let at = open(out);
    batch_type_keys(u, out, at, ty, 0)?;
    if !broken(u)? {
        put_name_first(out, at, i);
    }
    if u.ratio(1, 6)? {
        let k = if u.arbitrary()? { "if" } else { "unless" };
        key(out, at, k);
        quoted(out, pick(u, &FIELDS)?);
    }
    if broken(u)? {
        let k = pick(u, &["abs_max", "len", "min"])?;
        key(out, at, k);
        int(u, out)?;
    }
    close(out);
    Ok(())
}

/// The `[batch]` section: message types, now and then stages, and batch structs.
fn batch_section(u: &mut Unstructured<'_>, out: &mut String) -> arbitrary::Result<()> {
    out.push_str("[batch]\n");
    out.push_str("messages = [");
    for i in 0..u.int_in_range(0..=4)? {
        if i > 0 {
            out.push_str(", ");
        }
        let at = open(out);
        key(out, at, "type");
        int(u, out)?;
        key(out, at, "name");
        quoted(out, pick(u, &["M0", "M1", "M2", "B0"])?);
        if u.arbitrary()? {
            key(out, at, "body");
            quoted(out, pick(u, &BATCH_STRUCTS)?);
        }
        close(out);
    }
    out.push_str("]\n");
    if u.ratio(1, 4)? {
        out.push_str("stages = [\"a\", \"b\"]\n");
    }
    for name in BATCH_STRUCTS
        .iter()
        .take(u.int_in_range(0..=BATCH_STRUCTS.len())?)
    {
        struct_section(u, out, "batch.struct.", name, batch_field)?;
    }
    Ok(())
}

/// An arbitrary schema as TOML text: `[protocol]`, enums, unions, packet structs and, often, a `[batch]`
/// section with message types and batch structs (see the module doc).
///
/// # Errors
/// When the input runs out.
pub fn arb_schema(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let mut out = String::with_capacity(4096);
    out.push_str("[protocol]\n");
    out.push_str("name = \"fuzz\"\n");
    if u.arbitrary()? {
        out.push_str("id = ");
        int(u, &mut out)?;
        let _ = writeln!(out, "\nid_bits = {}", u.choose(&[32, 64, 16])?);
    } else {
        let _ = writeln!(out, "id = {}", u.arbitrary::<u32>()?);
    }
    out.push_str("mtu = ");
    match u.int_in_range(0..=4)? {
        0 => int(u, &mut out)?,
        1 => out.push('5'),
        2 => out.push_str("64"),
        _ => out.push_str("1200"),
    }
    out.push_str("\npackets = [");
    for i in 0..u.int_in_range(0..=3)? {
        if i > 0 {
            out.push_str(", ");
        }
        let s = pick(u, &STRUCTS)?;
        if u.ratio(1, 4)? {
            let at = open(&mut out);
            key(&mut out, at, "name");
            let _ = write!(out, "\"P{i}\"");
            key(&mut out, at, "body");
            quoted(&mut out, s);
            close(&mut out);
        } else {
            quoted(&mut out, s);
        }
    }
    out.push_str("]\n");

    for name in ENUMS.iter().take(u.int_in_range(0..=ENUMS.len())?) {
        enum_section(u, &mut out, name)?;
    }
    for name in UNIONS.iter().take(u.int_in_range(0..=UNIONS.len())?) {
        union_section(u, &mut out, name)?;
    }
    for name in STRUCTS.iter().take(u.int_in_range(1..=STRUCTS.len())?) {
        struct_section(u, &mut out, "struct.", name, packet_field)?;
    }
    if u.ratio(2, 3)? {
        batch_section(u, &mut out)?;
    }
    Ok(out)
}

/// The schema text and the datagram an input holds (see the module doc).
pub fn schema_case(data: &[u8]) -> Option<(String, &[u8])> {
    let (&mode, rest) = data.split_first()?;
    if mode & 1 == 1 {
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        return Some((text, rest.get(end + 1..).unwrap_or(&[])));
    }
    let mut u = Unstructured::new(rest);
    let text = arb_schema(&mut u).ok()?;
    let used = rest.len() - u.len();
    Some((text, &rest[used..]))
}

/// A refused schema's error is placed inside the text and says what to change.
fn check_error(text: &str, e: &SchemaError) {
    let shown = e.to_string();
    assert!(
        shown
            .strip_prefix(FILE)
            .is_some_and(|rest| rest.starts_with(':')),
        "{shown}"
    );
    let lines = text.split('\n').count();
    assert!(
        (1..=lines).contains(&e.line),
        "line {} outside the {lines} lines: {shown}",
        e.line,
    );
    let width = text
        .split('\n')
        .nth(e.line - 1)
        .map_or(0, |line| line.chars().count());
    assert!(
        (1..=width + 1).contains(&e.col),
        "column {} outside line {} ({width} characters): {shown}",
        e.col,
        e.line
    );
    assert!(
        e.message.ends_with(')') && e.message.contains(" ("),
        "a schema error says in parentheses what to change: {shown}"
    );
}

/// The longest datagram the harness decodes: the rest of a longer input is left out. A read
/// builds a value per field (40 bytes each), one array of at most a value per bit: 2048 bytes
/// keep the largest array under the guard allocator's 1 MiB.
pub const MAX_DATAGRAM: usize = 2048;

/// The most trace entries the harness records: a trace keeps its entries in one vector
/// (`size_of::<TraceField>()` bytes each, 224 on x86_64) that grows by doubling, so 4096 is the
/// largest power of two under the guard allocator's 1 MiB. Datagrams whose bound
/// ([`Schema::max_trace_fields`]) is larger are read without a trace.
pub const MAX_TRACE_FIELDS: usize = {
    let fit = (1 << 20) / std::mem::size_of::<bitlens_codec::trace::TraceField>();
    1 << (usize::BITS - 1 - fit.leading_zeros())
};

/// Reads `data` as a packet of `schema` with every reader; they agree, the trace holds no more
/// entries than its bound, and an accepted packet re-encodes to `data` and measures its bits.
fn check_packet(schema: &Schema, data: &[u8]) {
    let (vt, verdict) = schema.verdict(data);
    let read = schema.read(data);
    // An accepted value's bits and measure, computed once for the trace's and the writer's
    // checks below.
    let counted = read.as_ref().ok().map(|(t, value)| {
        let name = &schema.protocol().packet_types[*t as usize];
        let bits = schema.count(name, value).expect("an accepted value counts");
        // serialize 1.0's measure is a bound: 7 bits per align wherever it falls.
        let bound = schema
            .measure(name, value)
            .expect("an accepted value measures");
        assert!(bound >= bits, "measure {bound} < {bits} bits read");
        bits
    });
    let bound = schema.max_trace_fields(data.len());
    if bound <= MAX_TRACE_FIELDS {
        let (tt, trace) = schema.trace(data);
        assert_eq!(vt, tt, "verdict and trace read other packet types");
        assert_eq!(
            trace.error.as_ref(),
            verdict.as_ref().err(),
            "trace and verdict disagree"
        );
        assert!(
            trace.fields.len() <= bound,
            "a trace of {} entries, over its bound {bound}",
            trace.fields.len()
        );
        if let Some(bits) = counted {
            assert_eq!(bits, trace.bits_read, "count differs from the bits read");
        }
    }
    match read {
        Ok((t, value)) => {
            assert!(verdict.is_ok(), "read accepted what verdict refused");
            assert_eq!(Some(t), vt);
            let name = &schema.protocol().packet_types[t as usize];
            let mut buf = vec![0u8; data.len()];
            let n = match schema.write(name, &value, &mut buf) {
                Ok(n) => n,
                Err(e) => panic!("an accepted packet does not re-encode: {e}"),
            };
            if &buf[..n] != data {
                // serialize 1.0 lets a writer send what writes back otherwise: a compressed
                // float on an unstable range (the schema warns), a near-tie quaternion, a
                // relative integer in the absolute tier. Then the re-encoding must settle.
                let (_, read) = schema.trace(data);
                assert!(
                    !schema.warnings().is_empty()
                        || !crate::fuzzing::near_ties(&read).is_empty()
                        || !crate::fuzzing::absolute_relatives(&read).is_empty(),
                    "an accepted packet re-encodes to other bytes"
                );
                let (_, again) = schema
                    .read(&buf[..n])
                    .unwrap_or_else(|e| panic!("the re-encoded packet does not read: {e}"));
                let mut twice = vec![0u8; buf.len()];
                let m = schema
                    .write(name, &again, &mut twice)
                    .unwrap_or_else(|e| panic!("the re-read packet does not write: {e}"));
                // Once more, it may move again only where the same reasons hold (a quantized
                // near tie can be a near tie itself).
                let (_, read_again) = schema.trace(&buf[..n]);
                assert!(
                    twice[..m] == buf[..n]
                        || !schema.warnings().is_empty()
                        || !crate::fuzzing::near_ties(&read_again).is_empty()
                        || !crate::fuzzing::absolute_relatives(&read_again).is_empty(),
                    "the writer's own bytes re-encode to other bytes"
                );
            }
            let bits = counted.expect("counted above");
            assert_eq!(bits.div_ceil(8), n, "count differs from the bytes written");
        }
        Err(e) => {
            assert_eq!(
                Some(&e),
                verdict.as_ref().err(),
                "read and verdict disagree"
            );
            assert!(e.bit() <= data.len() * 8, "error bit past the data: {e}");
        }
    }
}

/// Trace entries a batch dissection records per message besides its body: the message's scope,
/// its header's scope, type, stage and length.
const MESSAGE_ENTRIES: usize = 5;

/// Reads `data` as a batch of `schema`'s `[batch]` section: the verdict, the dissection and the
/// decoder agree, every accepted message re-encodes to its body and measures its length, and
/// the dissection holds no more entries than the bound its messages' lengths give.
fn check_batch(b: &BatchSchema, data: &[u8]) {
    let verdict = bitlens_batch::check_batch(b, data);
    let messages = match read_batch(data) {
        Ok(m) => m,
        Err(e) => {
            assert_eq!(
                verdict,
                Err(e),
                "verdict and reader disagree on the framing"
            );
            let d = dissect_batch(b, data);
            assert_eq!(d.status, Status::Error);
            assert_eq!(d.problem, Some(Problem::from(&e)));
            return;
        }
    };
    // What the decoder says of each message, the framing error that ends the batch, and the
    // dissection's bound: the batch length, then per message its entries and its body's bound.
    let mut decoded = Vec::new();
    let mut framing = None;
    let mut bound = 1usize;
    for item in messages {
        let raw = match item {
            Ok(raw) => raw,
            Err(e) => {
                framing = Some(e);
                bound = bound.saturating_add(MESSAGE_ENTRIES);
                break;
            }
        };
        bound = bound
            .saturating_add(MESSAGE_ENTRIES)
            .saturating_add(b.max_trace_fields(raw.body.len()));
        let d = b.decode(&raw);
        if let Ok(Some(value)) = &d {
            check_reencodes(b, raw.header.message_type, value, raw.body);
        }
        decoded.push((raw.body.len(), d.map(|v| v.is_some())));
    }
    let first_body_error = decoded.iter().find_map(|(_, d)| d.err());
    let expected = match (framing, first_body_error) {
        (Some(e), _) | (None, Some(e)) => Err(e),
        (None, None) => Ok(decoded.len()),
    };
    assert_eq!(verdict, expected, "verdict and decoder disagree");
    if bound > MAX_TRACE_FIELDS {
        // Decoded without a dissection: see MAX_TRACE_FIELDS.
        return;
    }
    let d = dissect_batch(b, data);
    assert!(
        d.trace.fields.len() <= bound,
        "a dissection of {} entries, over its bound {bound}",
        d.trace.fields.len()
    );
    assert_eq!(
        d.status,
        if expected.is_ok() {
            Status::Ok
        } else {
            Status::Error
        },
        "dissection and verdict disagree"
    );
    assert_eq!(d.problem, expected.err().as_ref().map(Problem::from));
    let views = d.messages.as_deref().unwrap_or_default();
    for (i, (len, dec)) in decoded.iter().enumerate() {
        let view = &views[i];
        assert_eq!(
            view.len, *len,
            "message {i}: dissection and reader disagree on its length"
        );
        assert!(
            view.body.len() <= b.max_trace_fields(*len),
            "message {i} traced {} entries, over its bound {}",
            view.body.len(),
            b.max_trace_fields(*len)
        );
        let want = match dec {
            Ok(true) => MessageStatus::Ok,
            Ok(false) => MessageStatus::UnknownType,
            Err(_) => MessageStatus::Error,
        };
        assert_eq!(
            view.status, want,
            "message {i}: dissection and decode disagree"
        );
        assert_eq!(
            view.problem,
            dec.err().as_ref().map(Problem::from),
            "message {i}: dissection and decode disagree on the error"
        );
        if let Err(e) = dec {
            assert!(e.offset() <= data.len(), "error offset past the data: {e}");
        }
    }
    // A corrupt header that could be read is listed after the messages, marked as the error.
    assert!(views.len() <= decoded.len() + usize::from(framing.is_some()));
}

/// An accepted message body re-encodes to its bytes and measures its length.
fn check_reencodes(b: &BatchSchema, ty: u8, value: &bitlens_schema::DynValue, body: &[u8]) {
    let mut buf = vec![0u8; body.len()];
    let n = match b.encode_body(ty, value, &mut buf) {
        Ok(n) => n,
        Err(e) => panic!("an accepted message does not re-encode: {e}"),
    };
    assert_eq!(
        &buf[..n],
        body,
        "an accepted message re-encodes to other bytes"
    );
    assert_eq!(b.measure(ty, value), Ok(n), "measure differs from the body");
}

/// `schema_load`: an arbitrary schema is refused with a placed error, or loads and decodes
/// arbitrary bytes with every reader agreeing (module doc).
pub fn schema_load(data: &[u8]) {
    let Some((text, datagram)) = schema_case(data) else {
        return;
    };
    let datagram = &datagram[..datagram.len().min(MAX_DATAGRAM)];
    let schema = match Schema::from_toml(&text, FILE) {
        Ok(s) => s,
        Err(e) => return check_error(&text, &e),
    };
    check_packet(&schema, datagram);
    if datagram.len() >= 4 {
        // Random bytes almost never carry the right CRC: fix it, so that bodies are read.
        let mut fixed = datagram.to_vec();
        let crc = packet_crc(schema.protocol().id, &fixed);
        fixed[..4].copy_from_slice(&crc.to_le_bytes());
        check_packet(&schema, &fixed);
    }
    if let Some(b) = schema.batch() {
        check_batch(b, datagram);
        if let Ok(len) = u16::try_from(datagram.len())
            && len >= 2
        {
            // The same for the batch's total length.
            let mut fixed = datagram.to_vec();
            fixed[..2].copy_from_slice(&len.to_le_bytes());
            check_batch(b, &fixed);
        }
    }
}
