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

/// A TOML value.
fn int(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    // Mostly small and edge values, now and then any i64.
    let v: i64 = match u.int_in_range(0..=9)? {
        0 => u.arbitrary()?,
        1 => *u.choose(&[i64::MIN, i64::MAX, -1, 0, 255, 256, 65535, 65536, 1 << 24])?,
        2 => i64::from(u.arbitrary::<u32>()?),
        3 => -i64::from(u.int_in_range(0..=1000)?),
        _ => u.int_in_range(0..=64)?,
    };
    Ok(v.to_string())
}

fn float(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let v: f64 = match u.int_in_range(0..=7)? {
        0 => f64::from(f32::from_bits(u.arbitrary()?)),
        1 => *u.choose(&[0.01, 0.001, 1e-30, 1e30, 0.5, 0.0, -0.0])?,
        2 => f64::from(u.int_in_range(-2000i32..=2000)?) / 8.0,
        _ => f64::from(u.int_in_range(-64i32..=64)?),
    };
    Ok(if v.is_nan() {
        "nan".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        // `{:?}` always writes a decimal point or an exponent: a TOML float.
        format!("{v:?}")
    })
}

fn quoted(s: &str) -> String {
    // A JSON string is a valid TOML basic string.
    serde_json::to_string(s).unwrap_or_default()
}

fn pick<'a>(u: &mut Unstructured<'_>, names: &[&'a str]) -> arbitrary::Result<&'a str> {
    u.choose(names).copied()
}

/// Now and then (1 in 24) a rule is broken on purpose: what the caller uses to pick a wrong key,
/// type or value.
fn broken(u: &mut Unstructured<'_>) -> arbitrary::Result<bool> {
    u.ratio(1, 24)
}

/// An inline table `{ k = v, ... }` from its entries.
fn table(entries: &[(String, String)]) -> String {
    let mut out = String::from("{ ");
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{k} = {v}");
    }
    out.push_str(" }");
    out
}

fn entry(k: &str, v: String) -> (String, String) {
    (k.to_owned(), v)
}

/// The keys of a bit-packed field of type `ty` (its `type` key first).
fn packet_type_keys(
    u: &mut Unstructured<'_>,
    ty: &str,
    depth: u32,
) -> arbitrary::Result<Vec<(String, String)>> {
    let mut e = vec![entry("type", quoted(ty))];
    match ty {
        "int" | "int64" | "int128" => {
            e.push(entry("min", int(u)?));
            e.push(entry("max", int(u)?));
        }
        "fixed" => {
            e.push(entry("integer_bits", u.int_in_range(0..=70)?.to_string()));
            e.push(entry("fraction_bits", u.int_in_range(0..=70)?.to_string()));
            e.push(entry("min", int(u)?));
            e.push(entry("max", int(u)?));
            if u.ratio(1, 3)? {
                e.push(entry("unsigned", u.arbitrary::<bool>()?.to_string()));
            }
        }
        "bits" => e.push(entry("bits", u.int_in_range(0..=65)?.to_string())),
        "quaternion" => e.push(entry("bits", u.int_in_range(1..=17)?.to_string())),
        "compressed_float" | "compressed_vector" => {
            e.push(entry("min", float(u)?));
            e.push(entry("max", float(u)?));
            e.push(entry("resolution", float(u)?));
        }
        "string" | "wstring" => e.push(entry("max_len", int(u)?)),
        "bytes" => e.push(entry("len", int(u)?)),
        "array" => {
            e.push(entry("max_len", int(u)?));
            e.push(entry("element", packet_element(u, depth)?));
        }
        "sparse_array" => {
            e.push(entry("max_objects", int(u)?));
            e.push(entry("element", quoted(pick(u, &STRUCTS)?)));
            if u.ratio(1, 4)? {
                e.push(entry("index_name", quoted(pick(u, &FIELDS)?)));
            }
        }
        "object_index" | "int_relative" => {
            if ty == "object_index" {
                e.push(entry("max_objects", int(u)?));
            }
            match u.int_in_range(0..=2)? {
                0 => {}
                1 => e.push(entry("previous", int(u)?)),
                _ => e.push(entry("previous", quoted(pick(u, &FIELDS)?))),
            }
        }
        "check" => e.push(entry(
            "label",
            quoted(pick(u, &["header", "end of packet", ""])?),
        )),
        "include" => e.push(entry("struct", quoted(pick(u, &STRUCTS)?))),
        "bit_run" => {
            e.push(entry("by", quoted(pick(u, &FIELDS)?)));
            let mut counts = Vec::new();
            for _ in 0..u.int_in_range(0..=4)? {
                counts.push(u.int_in_range(-1i64..=200)?.to_string());
            }
            e.push(entry("table", format!("[{}]", counts.join(", "))));
        }
        _ => {}
    }
    Ok(e)
}

fn packet_type(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0..=10)? {
        0 | 1 => pick(u, &STRUCTS)?.to_owned(),
        2 => pick(u, &ENUMS)?.to_owned(),
        3 => pick(u, &UNIONS)?.to_owned(),
        4 if broken(u)? => pick(u, &["i33", "S9", "U9", "packed_u32", ""])?.to_owned(),
        // The loader's own list: every built-in type, the ones added later included.
        _ => pick(u, bitlens_schema::BUILTINS)?.to_owned(),
    })
}

/// An array element: a type name, or an inline table without a name.
fn packet_element(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<String> {
    let ty = packet_type(u)?;
    if depth > 2 || u.ratio(1, 3)? {
        return Ok(quoted(&ty));
    }
    let mut e = packet_type_keys(u, &ty, depth + 1)?;
    if broken(u)? {
        e.push(entry("name", quoted("x")));
    }
    Ok(table(&e))
}

fn packet_field(u: &mut Unstructured<'_>, i: usize) -> arbitrary::Result<String> {
    let ty = packet_type(u)?;
    let mut e = packet_type_keys(u, &ty, 0)?;
    if !(matches!(ty.as_str(), "check" | "align" | "end" | "include") || broken(u)?) {
        e.insert(0, entry("name", quoted(FIELDS[i % FIELDS.len()])));
    }
    if u.ratio(1, 6)? {
        let key = if u.arbitrary()? { "if" } else { "unless" };
        e.push(entry(key, quoted(pick(u, &FIELDS)?)));
    }
    if broken(u)? {
        e.push(entry(pick(u, &["mni", "len", "doc"])?, int(u)?));
    }
    Ok(table(&e))
}

fn enum_section(u: &mut Unstructured<'_>, out: &mut String, name: &str) -> arbitrary::Result<()> {
    let _ = writeln!(out, "[enum.{name}]");
    let n = u.int_in_range(0..=5)?;
    if u.arbitrary()? {
        let names: Vec<String> = (0..n).map(|i| quoted(FIELDS[i])).collect();
        let _ = writeln!(out, "values = [{}]", names.join(", "));
    } else {
        let mut e = Vec::new();
        for name in FIELDS.iter().take(n) {
            e.push(entry(name, int(u)?));
        }
        let _ = writeln!(out, "values = {}", table(&e));
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
        let _ = writeln!(out, "tag_name = {}", quoted(tag));
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
    let mut variants = Vec::new();
    for i in 0..n {
        let body = if broken(u)? {
            pick(u, &["E0", "U0", "S9", "u8"])?
        } else {
            pick(u, &STRUCTS)?
        };
        variants.push(match u.int_in_range(0..=3)? {
            // Named after its body: the same struct twice is a duplicate variant.
            0 => quoted(body),
            1 => table(&[entry("name", quoted(&format!("V{i}")))]),
            2 if broken(u)? => table(&[entry("body", quoted(body))]),
            _ => table(&[
                entry("name", quoted(&format!("V{i}"))),
                entry("body", quoted(body)),
            ]),
        });
    }
    let _ = writeln!(out, "variants = [{}]", variants.join(", "));
    Ok(())
}

fn struct_section(
    u: &mut Unstructured<'_>,
    out: &mut String,
    header: &str,
    fields: &[String],
) -> arbitrary::Result<()> {
    let _ = writeln!(out, "[{header}]");
    if broken(u)? {
        let _ = writeln!(out, "feilds = []");
    }
    let _ = writeln!(out, "fields = [");
    for f in fields {
        let _ = writeln!(out, "  {f},");
    }
    let _ = writeln!(out, "]");
    Ok(())
}

/// The keys of a batch field of type `ty` (its `type` key first).
fn batch_type_keys(
    u: &mut Unstructured<'_>,
    ty: &str,
    depth: u32,
) -> arbitrary::Result<Vec<(String, String)>> {
    let mut e = vec![entry("type", quoted(ty))];
    let ranged = |u: &mut Unstructured<'_>, e: &mut Vec<(String, String)>, signed: bool| {
        if signed {
            if u.ratio(1, 3)? {
                e.push(entry("abs_max", int(u)?));
            }
        } else {
            if u.ratio(1, 3)? {
                e.push(entry("min", int(u)?));
            }
            if u.ratio(1, 3)? {
                e.push(entry("max", int(u)?));
            }
        }
        arbitrary::Result::Ok(())
    };
    match ty {
        "u8" | "u16" | "u32" | "u64" | "packed_u32" | "packed_u64" => ranged(u, &mut e, false)?,
        "i8" | "i16" | "i32" | "i64" | "packed_i32" | "packed_i64" => ranged(u, &mut e, true)?,
        "string" => e.push(entry("max_len", int(u)?)),
        "bytes" => {
            let key = if u.arbitrary()? { "len" } else { "max_len" };
            e.push(entry(key, int(u)?));
        }
        "pod" => {
            if u.arbitrary()? {
                let prim = pick(u, &batch_types(true))?;
                e.push(entry("element", quoted(prim)));
                e.push(entry("len", int(u)?));
                ranged(u, &mut e, prim.starts_with('i'))?;
            } else {
                e.push(entry("element", quoted(pick(u, &BATCH_STRUCTS)?)));
            }
        }
        "array" => {
            e.push(entry("max_len", int(u)?));
            let ety = batch_type(u)?;
            let element = if depth > 2 || u.ratio(1, 3)? {
                quoted(&ety)
            } else {
                table(&batch_type_keys(u, &ety, depth + 1)?)
            };
            e.push(entry("element", element));
        }
        _ => {}
    }
    Ok(e)
}

/// The batch loader's fixed-width types (what a `pod` holds), or its other built-in types.
fn batch_types(fixed_width: bool) -> Vec<&'static str> {
    bitlens_schema::batch::BATCH_TYPES
        .iter()
        .copied()
        .filter(|t| bitlens_schema::batch::is_fixed_width(t) == fixed_width)
        .collect()
}

fn batch_type(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0..=9)? {
        0 | 1 => pick(u, &BATCH_STRUCTS)?.to_owned(),
        2 if broken(u)? => pick(u, &["int", "S0", "u128"])?.to_owned(),
        3..=5 => pick(u, &batch_types(true))?.to_owned(),
        _ => pick(u, &batch_types(false))?.to_owned(),
    })
}

fn batch_field(u: &mut Unstructured<'_>, i: usize) -> arbitrary::Result<String> {
    let ty = batch_type(u)?;
    let mut e = batch_type_keys(u, &ty, 0)?;
    if !broken(u)? {
        e.insert(0, entry("name", quoted(FIELDS[i % FIELDS.len()])));
    }
    if u.ratio(1, 6)? {
        let key = if u.arbitrary()? { "if" } else { "unless" };
        e.push(entry(key, quoted(pick(u, &FIELDS)?)));
    }
    if broken(u)? {
        e.push(entry(pick(u, &["abs_max", "len", "min"])?, int(u)?));
    }
    Ok(table(&e))
}

/// An arbitrary schema as TOML text: `[protocol]`, enums, unions, packet structs and, often, a `[batch]`
/// section with message types and batch structs (see the module doc).
///
/// # Errors
/// When the input runs out.
pub fn arb_schema(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let mut out = String::new();
    out.push_str("[protocol]\n");
    let _ = writeln!(out, "name = {}", quoted("fuzz"));
    if u.arbitrary()? {
        let _ = writeln!(out, "id = {}", int(u)?);
        let _ = writeln!(out, "id_bits = {}", u.choose(&[32, 64, 16])?);
    } else {
        let _ = writeln!(out, "id = {}", u.arbitrary::<u32>()?);
    }
    let mtu = match u.int_in_range(0..=4)? {
        0 => int(u)?,
        1 => "5".to_owned(),
        2 => "64".to_owned(),
        _ => "1200".to_owned(),
    };
    let _ = writeln!(out, "mtu = {mtu}");
    let mut packets = Vec::new();
    for _ in 0..u.int_in_range(0..=3)? {
        let s = pick(u, &STRUCTS)?;
        packets.push(if u.ratio(1, 4)? {
            table(&[
                entry("name", quoted(&format!("P{}", packets.len()))),
                entry("body", quoted(s)),
            ])
        } else {
            quoted(s)
        });
    }
    let _ = writeln!(out, "packets = [{}]", packets.join(", "));

    for name in ENUMS.iter().take(u.int_in_range(0..=ENUMS.len())?) {
        enum_section(u, &mut out, name)?;
    }
    for name in UNIONS.iter().take(u.int_in_range(0..=UNIONS.len())?) {
        union_section(u, &mut out, name)?;
    }
    for name in STRUCTS.iter().take(u.int_in_range(1..=STRUCTS.len())?) {
        let mut fields = Vec::new();
        for i in 0..u.int_in_range(0..=6)? {
            fields.push(packet_field(u, i)?);
        }
        struct_section(u, &mut out, &format!("struct.{name}"), &fields)?;
    }
    if u.ratio(2, 3)? {
        out.push_str("[batch]\n");
        let mut messages = Vec::new();
        for _ in 0..u.int_in_range(0..=4)? {
            let mut e = vec![
                entry("type", int(u)?),
                entry("name", quoted(pick(u, &["M0", "M1", "M2", "B0"])?)),
            ];
            if u.arbitrary()? {
                e.push(entry("body", quoted(pick(u, &BATCH_STRUCTS)?)));
            }
            messages.push(table(&e));
        }
        let _ = writeln!(out, "messages = [{}]", messages.join(", "));
        if u.ratio(1, 4)? {
            let _ = writeln!(out, "stages = [{}, {}]", quoted("a"), quoted("b"));
        }
        for name in BATCH_STRUCTS
            .iter()
            .take(u.int_in_range(0..=BATCH_STRUCTS.len())?)
        {
            let mut fields = Vec::new();
            for i in 0..u.int_in_range(0..=6)? {
                fields.push(batch_field(u, i)?);
            }
            struct_section(u, &mut out, &format!("batch.struct.{name}"), &fields)?;
        }
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
    assert!(shown.starts_with(&format!("{FILE}:")), "{shown}");
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        (1..=lines.len()).contains(&e.line),
        "line {} outside the {} lines: {shown}",
        e.line,
        lines.len()
    );
    let width = lines[e.line - 1].chars().count();
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
