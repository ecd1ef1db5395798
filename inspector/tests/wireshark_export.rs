//! The dissector `bitlens export-wireshark` writes, run by the real `tshark`, agrees with
//! `bitlens decode --json`: the same field paths, values, bit offsets and widths, ranges,
//! compressed-float codes, check markers, statuses, first errors and desync analyses, datagram
//! by datagram, on every shipped capture, on synthetic traffic with faults, and on a schema that
//! uses every construct of the language (captures/every.schema.toml).
//!
//! tshark prints its tree as PDML; each item's label is "name: value [bit B, N bits, extras]",
//! the tree's nesting gives the path. Compressed floats may differ only in their digits: values
//! compare as the same f32 (or f64), codes exactly.
//!
//! Needs the Debian package `tshark` (`scripts/install-test-deps.sh`). Without it the tests are
//! skipped, except under CI, where they fail.

mod common;

use common::{bitlens, installed_or_skip, root};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-ws-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Exports the dissector for `schema` into `dir` and returns its path.
fn export(dir: &Path, schema: &Path, args: &[&str]) -> PathBuf {
    let mut all = vec!["--schema", schema.to_str().unwrap()];
    all.extend_from_slice(args);
    export_as(dir, "proto.lua", &all)
}

/// Runs `export-wireshark ARGS` and writes its Lua into `dir/file`, returning that path.
fn export_as(dir: &Path, file: &str, args: &[&str]) -> PathBuf {
    let mut all = vec!["export-wireshark"];
    all.extend_from_slice(args);
    let out = bitlens(&all);
    assert!(
        out.status.success(),
        "export {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lua = dir.join(file);
    std::fs::write(&lua, &out.stdout).unwrap();
    lua
}

// ---- tshark's side: PDML ----------------------------------------------------------------------

/// One element of tshark's PDML tree.
#[derive(Debug, Default)]
struct Item {
    name: String,
    label: String,
    show: String,
    children: Vec<Item>,
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let end = rest[i..].find(';').map(|j| i + j).expect("entity ends");
        let entity = &rest[i + 1..end];
        match entity {
            "quot" => out.push('"'),
            "amp" => out.push('&'),
            "lt" => out.push('<'),
            "gt" => out.push('>'),
            "apos" => out.push('\''),
            e if e.starts_with("#x") => {
                out.push(char::from_u32(u32::from_str_radix(&e[2..], 16).unwrap()).unwrap())
            }
            e if e.starts_with('#') => out.push(char::from_u32(e[1..].parse().unwrap()).unwrap()),
            e => panic!("entity {e}"),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn attr(line: &str, key: &str) -> Option<String> {
    let pat = format!(" {key}=\"");
    let i = line.find(&pat)? + pat.len();
    let j = line[i..].find('"')? + i;
    Some(unescape(&line[i..j]))
}

/// Runs tshark with the dissector over `capture`: each frame's number and its top-level items
/// (protocols).
fn tshark(lua: &Path, capture: &Path) -> BTreeMap<u64, Vec<Item>> {
    let out = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .args(["-o", "ip.defragment:FALSE", "-T", "pdml", "-r"])
        .arg(capture)
        .output()
        .expect("tshark runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark: {stderr}");
    assert!(!stderr.contains("Lua"), "tshark: {stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut frames = BTreeMap::new();
    let mut stack: Vec<Item> = Vec::new();
    // An element's attributes may hold raw newlines (a string field's value): join its lines.
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut joined;
        let mut t = line.trim_start();
        if (t.starts_with("<field ") || t.starts_with("<proto ")) && !t.ends_with('>') {
            joined = t.to_owned();
            for more in lines.by_ref() {
                joined.push('\n');
                joined.push_str(more);
                if more.ends_with('>') {
                    break;
                }
            }
            t = &joined;
        }
        if t.starts_with("<packet>") {
            stack = vec![Item::default()];
        } else if t.starts_with("</packet>") {
            let packet = stack.pop().expect("packet");
            let frame = packet
                .children
                .iter()
                .find(|p| p.name == "frame")
                .and_then(|p| p.children.iter().find(|f| f.name == "frame.number"))
                .map(|f| f.show.parse().unwrap())
                .expect("frame number");
            frames.insert(frame, packet.children);
        } else if t.starts_with("<proto ") || t.starts_with("<field ") {
            let item = Item {
                name: attr(t, "name").unwrap_or_default(),
                label: attr(t, "showname").unwrap_or_default(),
                show: attr(t, "show").unwrap_or_default(),
                children: Vec::new(),
            };
            if t.ends_with("/>") {
                stack.last_mut().unwrap().children.push(item);
            } else {
                stack.push(item);
            }
        } else if t.starts_with("</proto>") || t.starts_with("</field>") {
            let item = stack.pop().unwrap();
            stack.last_mut().unwrap().children.push(item);
        }
    }
    frames
}

/// A field item's label: "name: value [bit B, N bits, extras]" (or bytes for batches).
#[derive(Debug, Clone, PartialEq)]
struct Label {
    /// The read stopped at this field.
    failed: bool,
    leaf: String,
    value: Option<String>,
    bit: u64,
    bits: u64,
    range: Option<String>,
    code: Option<u64>,
}

fn parse_label(label: &str) -> Option<Label> {
    let failed = label.ends_with("  <- read stopped here");
    let label = label
        .strip_suffix("  <- read stopped here")
        .unwrap_or(label);
    let (open, unit) = match label.rfind(" [bit ") {
        Some(i) => (i, 1),
        None => (label.rfind(" [byte ")?, 8),
    };
    let head = &label[..open];
    let bracket = label[open + 2..].strip_suffix(']')?;
    let mut parts = bracket.split(", ");
    let bit: u64 = parts.next()?.split(' ').nth(1)?.parse().ok()?;
    let bits: u64 = parts.next()?.split(' ').next()?.parse().ok()?;
    let mut range = None;
    let mut code = None;
    for p in parts {
        if let Some(c) = p.strip_prefix("code ") {
            code = Some(c.parse().ok()?);
        } else if p.contains("..=") {
            range = Some(p.to_owned());
        }
    }
    let (leaf, value) = match head.split_once(": ") {
        Some((l, v)) => (l.to_owned(), Some(v.to_owned())),
        None => (head.to_owned(), None),
    };
    Some(Label {
        failed,
        leaf,
        value,
        bit: bit * unit,
        bits: bits * unit,
        range,
        code,
    })
}

fn join(path: &str, leaf: &str) -> String {
    if path.is_empty() || leaf.starts_with('[') {
        format!("{path}{leaf}")
    } else {
        format!("{path}.{leaf}")
    }
}

/// A check marker (or the CRC) as the dissector shows it.
#[derive(Debug, PartialEq)]
struct Check {
    label: String,
    bit: u64,
    ok: bool,
    expected: u32,
    found: u32,
}

fn parse_check(item: &Item, crc: bool) -> Check {
    let l = &item.label;
    let hex_after = |key: &str| {
        let i = l.find(key).unwrap() + key.len();
        u32::from_str_radix(&l[i..i + 8], 16).unwrap()
    };
    let bit = parse_label(l).unwrap().bit;
    Check {
        label: if crc {
            "crc32".into()
        } else {
            item.show.clone()
        },
        bit,
        ok: l.contains('\u{2713}'),
        expected: hex_after("expected 0x"),
        found: hex_after("found 0x"),
    }
}

/// What the dissector showed for one datagram (or one batch message): the dissector's own
/// items by name, and the fields.
#[derive(Debug, Default)]
struct Shown {
    meta: BTreeMap<String, String>,
    experts: Vec<String>,
    checks: Vec<Check>,
    fields: Vec<(String, Label)>,
    /// Batch messages: label and items.
    messages: Vec<(Label, Shown)>,
}

fn walk(proto: &str, items: &[Item], path: &str, out: &mut Shown) {
    let meta = |n: &str| format!("{proto}.{n}");
    for item in items {
        let n = item.name.as_str();
        if n == "_ws.expert" {
            for c in &item.children {
                if let Some(kind) = c.name.strip_prefix(&format!("{proto}.expert.")) {
                    out.experts.push(kind.to_owned());
                }
            }
            continue;
        }
        if n == "_ws.lua.error" {
            out.meta.insert("lua error".into(), item.label.clone());
        }
        if n.starts_with("_ws.") {
            continue;
        }
        if n == meta("crc32") || n == meta("check") {
            out.checks.push(parse_check(item, n == meta("crc32")));
            walk(proto, &item.children, path, out);
            continue;
        }
        if n == meta("padding") || n == meta("batch_len") || n == meta("body") {
            walk(proto, &item.children, path, out);
            continue;
        }
        if n == meta("header") {
            // A batch message's header: type, stage and length, as "name: value" labels.
            for c in &item.children {
                let l = parse_label(&c.label).expect("header label");
                out.meta.insert(l.leaf, l.value.unwrap_or_default());
            }
            continue;
        }
        if ["status", "packet", "error", "desync"]
            .iter()
            .any(|m| n == meta(m))
        {
            out.meta
                .insert(n[proto.len() + 1..].to_owned(), item.show.clone());
            continue;
        }
        if n == meta("message") {
            let label = parse_label(&item.label).expect("message label");
            let mut m = Shown::default();
            walk(proto, &item.children, "", &mut m);
            out.messages.push((label, m));
            continue;
        }
        let label =
            parse_label(&item.label).unwrap_or_else(|| panic!("label of {n}: {:?}", item.label));
        let p = join(path, &label.leaf);
        if label.value.is_some() || label.code.is_some() || label.failed {
            out.fields.push((p.clone(), label.clone()));
        }
        walk(proto, &item.children, &p, out);
    }
}

// ---- bitlens's side: decode --json --------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct JField {
    path: String,
    bit: u64,
    bits: u64,
    value: Box<RawValue>,
    min: Box<RawValue>,
    max: Box<RawValue>,
}

#[derive(Debug, Deserialize)]
struct JCheck {
    label: String,
    bit: u64,
    ok: bool,
    expected: u32,
    found: u32,
}

#[derive(Debug, Deserialize)]
struct JProblem {
    kind: String,
    message: String,
}

#[derive(Debug, Deserialize)]
struct JDesync {
    message: String,
}

#[derive(Debug, Deserialize)]
struct JMessage {
    index: u64,
    offset: u64,
    #[serde(rename = "type")]
    message_type: u8,
    name: Option<String>,
    stage: u8,
    stage_name: Option<String>,
    len: u64,
    status: String,
    error: Option<JProblem>,
    fields: Vec<JField>,
}

#[derive(Debug, Deserialize)]
struct JDatagram {
    frame: u64,
    decoder: String,
    status: String,
    packet_type: Option<String>,
    fields: Vec<JField>,
    checks: Vec<JCheck>,
    error: Option<JProblem>,
    desync: Option<JDesync>,
    messages: Option<Vec<JMessage>>,
}

fn decode_json(schema: &Path, capture: &Path, decode: &[&str]) -> Vec<JDatagram> {
    let mut args = vec![
        "decode",
        capture.to_str().unwrap(),
        "--json",
        "--schema",
        schema.to_str().unwrap(),
    ];
    for d in decode {
        args.extend(["--decode", d]);
    }
    let out = bitlens(&args);
    assert!(
        out.status.success(),
        "decode: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

// ---- comparison -----------------------------------------------------------------------------

/// A float as bitlens printed it and as the dissector did: the same f64, or the same f32 when
/// the dissector printed an f32 (the digits may differ, the value may not).
fn same_float(json: f64, text: &str) -> bool {
    let Ok(t) = text.parse::<f64>() else {
        return false;
    };
    t.to_bits() == json.to_bits()
        || (f64::from(t as f32) == t && (t as f32).to_bits() == (json as f32).to_bits())
}

/// A string as the dissector quotes it: `"`, `\\` and control characters escaped as Rust's
/// `{:?}` escapes them, everything else as is.
fn quoted(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The exact decimal expansion of a double (no trailing zeros).
fn exact_decimal(x: f64) -> String {
    let s = format!("{x:.1100}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn same_value(raw: &str, text: Option<&str>) -> bool {
    // A value too long for Wireshark's 240-byte label is shown cut, ending in "…": its start
    // must be the value's start.
    if let Some(prefix) = text.and_then(|t| t.strip_suffix('\u{2026}')) {
        return if raw.starts_with('"') {
            let s: String = serde_json::from_str(raw).unwrap();
            quoted(&s).starts_with(prefix) || s.starts_with(prefix)
        } else if raw.contains(['.', 'e', 'E']) {
            exact_decimal(raw.parse().unwrap()).starts_with(prefix)
        } else {
            raw.starts_with(prefix)
        };
    }
    match (raw, text) {
        ("null", None) => true,
        (_, None) | ("null", Some(_)) => false,
        ("true" | "false", Some(t)) => raw == t,
        // A string, an enum's name (shown with its number), bytes in hex, or a float that
        // JSON cannot spell ("nan", "nan:0x7fc00001", "inf", "-inf": the same text).
        (r, Some(t)) if r.starts_with('"') => {
            let s: String = serde_json::from_str(r).unwrap();
            t == quoted(&s) || t == s || t.starts_with(&format!("{s} ("))
        }
        (r, Some(t)) if r.starts_with('[') => {
            let xs: Vec<serde_json::Value> = serde_json::from_str(r).unwrap();
            let Some(inner) = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
                return false;
            };
            let ts: Vec<&str> = inner.split(", ").collect();
            ts.len() == xs.len()
                && xs.iter().zip(&ts).all(|(x, t)| match x {
                    serde_json::Value::Number(n) => n.as_f64().is_some_and(|x| same_float(x, t)),
                    serde_json::Value::String(s) => s == t,
                    _ => false,
                })
        }
        (r, Some(t)) if r.contains(['.', 'e', 'E']) => same_float(r.parse().unwrap(), t),
        (r, Some(t)) => r == t,
    }
}

fn bits_at(payload: &[u8], bit: u64, bits: u64) -> u64 {
    (0..bits).fold(0, |v, i| {
        let b = bit + i;
        v | (u64::from(payload[(b / 8) as usize] >> (b % 8) & 1) << i)
    })
}

/// The mismatches between bitlens's fields and the dissector's.
fn compare_fields(
    what: &str,
    json: &[JField],
    shown: &[(String, Label)],
    payload: &[u8],
    bad: &mut Vec<String>,
) {
    if json.len() != shown.len() {
        bad.push(format!(
            "{what}: {} fields, the dissector shows {}: {:?} vs {:?}",
            json.len(),
            shown.len(),
            json.iter().map(|f| &f.path).collect::<Vec<_>>(),
            shown.iter().map(|f| &f.0).collect::<Vec<_>>()
        ));
        return;
    }
    for (j, (path, l)) in json.iter().zip(shown) {
        // Bounds past 64 bits are JSON strings; the label shows the digits.
        let range = match (j.min.get(), j.max.get()) {
            ("null", "null") => None,
            (a, b) => Some(format!("{}..={}", a.trim_matches('"'), b.trim_matches('"'))),
        };
        let ok = j.path == *path
            && j.bit == l.bit
            && j.bits == l.bits
            && same_value(j.value.get(), l.value.as_deref())
            && range == l.range;
        // A compressed float: the code shown is the one on the wire, in the field's range.
        let code_ok = l
            .code
            .is_none_or(|c| c == bits_at(payload, l.bit, l.bits) && range.is_some());
        if !ok || !code_ok {
            bad.push(format!(
                "{what}: bitlens {} bit {} bits {} value {} range {range:?}; dissector {path} {l:?}",
                j.path,
                j.bit,
                j.bits,
                j.value.get()
            ));
            return;
        }
    }
}

/// Compares one capture; returns the number of datagrams each side decoded.
fn agree(lua: &Path, schema: &Path, capture: &Path, proto: &str, decode: &[&str]) -> usize {
    let json = decode_json(schema, capture, decode);
    let trees = tshark(lua, capture);
    let cap = bitlens::capture::Capture::open(capture).unwrap();
    let payloads: BTreeMap<u64, &[u8]> = cap
        .datagrams()
        .iter()
        .map(|d| (d.frame, cap.payload(d)))
        .collect();
    let batch_proto = format!("{proto}_batch");
    let mut bad = Vec::new();
    let mut decoded = 0;
    for d in &json {
        let what = format!("{}: frame {}", capture.display(), d.frame);
        let items = trees.get(&d.frame).map_or(&[][..], Vec::as_slice);
        let find = |name: &str| items.iter().find(|p| p.name == name);
        let payload = payloads.get(&d.frame).copied().unwrap_or(&[]);
        match d.decoder.as_str() {
            "none" => {
                if find(proto).is_some() || find(&batch_proto).is_some() {
                    bad.push(format!("{what}: undecoded by bitlens, dissected by tshark"));
                }
            }
            // tshark hands no empty UDP payload to a dissector; bitlens reads it and finds
            // nothing where the CRC (or the batch length) should be.
            "schema" | "schema-batch" if payload.is_empty() => {
                let kind = d.error.as_ref().map(|e| e.kind.as_str());
                if kind != Some("past_end") || find(proto).is_some() {
                    bad.push(format!("{what}: an empty datagram, {kind:?}"));
                }
            }
            "schema" => {
                let Some(p) = find(proto) else {
                    bad.push(format!("{what}: the dissector did not run"));
                    continue;
                };
                decoded += 1;
                let mut s = Shown::default();
                walk(proto, &p.children, "", &mut s);
                compare_packet(&what, d, &s, payload, &mut bad);
            }
            "schema-batch" => {
                let Some(p) = find(&batch_proto) else {
                    bad.push(format!("{what}: the batch dissector did not run"));
                    continue;
                };
                decoded += 1;
                let mut s = Shown::default();
                walk(&batch_proto, &p.children, "", &mut s);
                compare_batch(&what, d, &s, payload, &mut bad);
            }
            other => panic!("decoder {other}"),
        }
    }
    let shown: Vec<&String> = match std::env::var("WS_SKIP") {
        Ok(skip) => bad.iter().filter(|b| !b.contains(&skip)).collect(),
        Err(_) => bad.iter().collect(),
    };
    assert!(
        shown.is_empty(),
        "{} disagreements, the first ones:\n{}",
        bad.len(),
        shown
            .iter()
            .take(12)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    decoded
}

fn compare_packet(what: &str, d: &JDatagram, s: &Shown, payload: &[u8], bad: &mut Vec<String>) {
    let meta = |k: &str| s.meta.get(k).map(String::as_str);
    if let Some(e) = meta("lua error") {
        bad.push(format!("{what}: {e}"));
        return;
    }
    if meta("status") != Some(d.status.as_str()) {
        bad.push(format!(
            "{what}: status {} vs {:?}",
            d.status,
            meta("status")
        ));
        return;
    }
    if meta("packet") != d.packet_type.as_deref() {
        bad.push(format!(
            "{what}: packet type {:?} vs {:?}",
            d.packet_type,
            meta("packet")
        ));
    }
    match &d.error {
        Some(e) => {
            if meta("error") != Some(e.message.as_str()) || s.experts != [e.kind.clone()] {
                bad.push(format!(
                    "{what}: error {} {:?} vs {:?} {:?}",
                    e.kind,
                    e.message,
                    s.experts,
                    meta("error")
                ));
            }
        }
        None => {
            if meta("error").is_some() || !s.experts.is_empty() {
                bad.push(format!(
                    "{what}: no error, the dissector says {:?}",
                    meta("error")
                ));
            }
        }
    }
    if meta("desync") != d.desync.as_ref().map(|x| x.message.as_str()) {
        bad.push(format!(
            "{what}: desync {:?} vs {:?}",
            d.desync.as_ref().map(|x| &x.message),
            meta("desync")
        ));
    }
    let checks: Vec<Check> = d
        .checks
        .iter()
        .map(|c| Check {
            label: c.label.clone(),
            bit: c.bit,
            ok: c.ok,
            expected: c.expected,
            found: c.found,
        })
        .collect();
    if checks != s.checks {
        bad.push(format!("{what}: checks {checks:?} vs {:?}", s.checks));
    }
    compare_fields(what, &d.fields, &s.fields, payload, bad);
}

fn compare_batch(what: &str, d: &JDatagram, s: &Shown, payload: &[u8], bad: &mut Vec<String>) {
    let meta = |k: &str| s.meta.get(k).map(String::as_str);
    if let Some(e) = meta("lua error").or_else(|| {
        s.messages
            .iter()
            .find_map(|m| m.1.meta.get("lua error").map(String::as_str))
    }) {
        bad.push(format!("{what}: {e}"));
        return;
    }
    if meta("status") != Some(d.status.as_str()) {
        bad.push(format!(
            "{what}: status {} vs {:?}",
            d.status,
            meta("status")
        ));
        return;
    }
    if meta("error") != d.error.as_ref().map(|e| e.message.as_str()) {
        bad.push(format!(
            "{what}: batch error {:?} vs {:?}",
            d.error.as_ref().map(|e| &e.message),
            meta("error")
        ));
    }
    let messages = d.messages.as_deref().unwrap_or(&[]);
    if messages.len() != s.messages.len() {
        bad.push(format!(
            "{what}: {} messages vs {}",
            messages.len(),
            s.messages.len()
        ));
        return;
    }
    for (m, (label, shown)) in messages.iter().zip(&s.messages) {
        let what = format!("{what} message {}", m.index);
        let name = m.name.as_deref().unwrap_or("unknown");
        let stage = match &m.stage_name {
            Some(n) => format!("{n} ({})", m.stage),
            None => m.stage.to_string(),
        };
        let header = [
            ("index", format!("[{}]", m.index), label.leaf.clone()),
            (
                "name",
                name.to_owned(),
                label.value.clone().unwrap_or_default(),
            ),
            ("offset", (m.offset * 8).to_string(), label.bit.to_string()),
            ("len", ((m.len + 4) * 8).to_string(), label.bits.to_string()),
            ("type", m.message_type.to_string(), shown.meta_or("type")),
            ("stage", stage, shown.meta_or("stage")),
            ("status", m.status.clone(), shown.meta_or("status")),
        ];
        for (key, ours, theirs) in header {
            // A corrupt header's claimed length runs past the datagram: the item stops at its end.
            if key == "len" && m.status == "error" && m.fields.is_empty() {
                continue;
            }
            if ours != theirs {
                bad.push(format!("{what}: {key} {ours:?} vs {theirs:?}"));
            }
        }
        let error = m.error.as_ref().map(|e| e.message.as_str());
        if shown.meta.get("error").map(String::as_str) != error {
            bad.push(format!(
                "{what}: error {error:?} vs {:?}",
                shown.meta.get("error")
            ));
        }
        if let Some(e) = &m.error
            && !shown.experts.contains(&e.kind)
            && !s.experts.contains(&e.kind)
        {
            bad.push(format!("{what}: no expert info {}", e.kind));
        }
        compare_fields(&what, &m.fields, &shown.fields, payload, bad);
    }
}

impl Shown {
    fn meta_or(&self, k: &str) -> String {
        self.meta.get(k).cloned().unwrap_or_default()
    }
}

// ---- the tests --------------------------------------------------------------------------------

#[test]
fn shipped_captures_agree_with_decode() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("shipped");
    let schema = root().join("captures/demo.schema.toml");
    let lua = export(&dir, &schema, &["--port", "40000", "--batch-port", "40001"]);
    for name in [
        "demo.pcap",
        "demo.pcapng",
        "faults.pcap",
        "loopback-sll2.pcap",
        "loopback-ethernet.pcap",
    ] {
        let n = agree(
            &lua,
            &schema,
            &root().join("captures").join(name),
            "demo",
            &[],
        );
        assert!(n >= 100, "{name}: {n} datagrams decoded");
    }
}

/// The demo's batches through the Lua dissector exported from the derived message set
/// (`export-wireshark --as batch`: `#[derive(MessageEnum)]`'s `[batch]` section, under the
/// `[protocol]` of the derived packet set), against `decode --json` reading the same derived
/// text as `--schema`.
#[test]
fn the_derived_message_sets_dissector_agrees_with_decode() {
    use bitlens_codec::PacketSet;
    use bitlens_testkit::{batch_demo::DemoMessage, demo::DemoPacket};
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("derived-batch");
    let schema = dir.join("derived.toml");
    let text = format!("{}\n{}", DemoPacket::schema(), DemoMessage::schema());
    std::fs::write(&schema, text).unwrap();
    // Without ports: the one bitlens reads with `batch`; the packets of the same [protocol]
    // are found by the dissector's heuristic (their CRC), so all of demo.pcap is dissected.
    let lua = export_as(&dir, "default.lua", &["--as", "batch"]);
    let n = agree(
        &lua,
        &schema,
        &root().join("captures/demo.pcap"),
        "demo",
        &[],
    );
    assert!(n >= 100, "demo.pcap: {n} datagrams decoded");
    // With both ports: the faults too (a corrupt CRC defeats the heuristic).
    let lua = export_as(
        &dir,
        "ports.lua",
        &["--as", "batch", "--port", "40000", "--batch-port", "40001"],
    );
    let n = agree(
        &lua,
        &schema,
        &root().join("captures/faults.pcap"),
        "demo",
        &[],
    );
    assert!(n >= 100, "faults.pcap: {n} datagrams decoded");
}

/// A program's packet set and its message set in one Lua file (`--as demo --as batch`), each
/// on the port the program reads it with unless told otherwise; the issue's two invocations
/// (`--as batch --port P` dropped the batch's own port and went heuristic, `--as demo
/// --batch-port P` was refused without saying what to do) now work or say what to add.
#[test]
fn a_packet_set_and_its_message_set_export_into_one_file() {
    use bitlens_codec::PacketSet;
    use bitlens_testkit::{batch_demo::DemoMessage, demo::DemoPacket};
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("both");
    let schema = dir.join("derived.toml");
    let text = format!("{}\n{}", DemoPacket::schema(), DemoMessage::schema());
    std::fs::write(&schema, text).unwrap();
    let faults = root().join("captures/faults.pcap");
    // faults.pcap has corrupt CRCs and a batch whose first length runs past the end: only a
    // dissector on both ports (not the heuristics) sees them as bitlens does.
    for (file, args) in [
        ("both.lua", &["--as", "demo", "--as", "batch"][..]),
        (
            "both-ports.lua",
            &[
                "--as",
                "demo",
                "--port",
                "40000",
                "--as",
                "batch",
                "--batch-port",
                "40001",
            ][..],
        ),
        ("batch-port.lua", &["--as", "batch", "--port", "40000"][..]),
    ] {
        let lua = export_as(&dir, file, args);
        let n = agree(&lua, &schema, &faults, "demo", &[]);
        assert!(n >= 100, "{args:?}: faults.pcap: {n} datagrams decoded");
    }
    let o = bitlens(&["export-wireshark", "--as", "demo", "--batch-port", "40001"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"demo\" is a packet set without a [batch] section; add --as batch"),
        "{err}"
    );
    let o = bitlens(&["export-wireshark", "--as", "batch", "--as", "batch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("are both message sets"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The custom protocol's capture (examples/custom-protocol, a derived packet set on UDP 28500)
/// through the Lua dissector exported from its derived schema text.
#[test]
fn the_custom_protocols_capture_agrees_with_decode() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("custom");
    let schema = root().join("captures/custom.schema.toml");
    let lua = export(&dir, &schema, &["--port", "28500"]);
    let n = agree(
        &lua,
        &schema,
        &root().join("captures/custom.pcap"),
        "skirmish",
        &["28500=schema"],
    );
    assert!(n >= 100, "custom.pcap: {n} datagrams decoded");
}

#[test]
fn synthetic_traffic_with_faults_agrees_with_decode() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("synth");
    let schema = root().join("captures/demo.schema.toml");
    let lua = export(&dir, &schema, &["--port", "40000", "--batch-port", "40001"]);
    let capture = dir.join("synth.pcap");
    let out = bitlens(&[
        "synth",
        capture.to_str().unwrap(),
        "--packets",
        "10000",
        "--seed",
        "18",
        "--faults",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = agree(&lua, &schema, &capture, "demo", &[]);
    assert!(n >= 9000, "{n} datagrams decoded");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- the every-construct schema: packets made through the schema, then damaged -------------

/// xorshift64*: the generator of the test traffic (same seed, same capture).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (u128::from(self.next()) % span) as i128) as i64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn float(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// Text of at most `max` bytes: letters, sometimes quotes, control characters, non-ASCII.
    fn text(&mut self, max: usize) -> String {
        const PIECES: [&str; 12] = [
            "a", "Z", "7", " ", "-", "\"", "\\", "\n", "\u{1}", "é", "✓", "🦀",
        ];
        let mut s = String::new();
        let n = self.below(max + 1);
        loop {
            let p = PIECES[self.below(PIECES.len())];
            if s.len() + p.len() > n {
                return s;
            }
            s.push_str(p);
        }
    }
    fn quaternion(&mut self) -> serde_json::Value {
        let q: Vec<f64> = (0..4).map(|_| self.float(-1.0, 1.0)).collect();
        let n = q.iter().map(|c| c * c).sum::<f64>().sqrt().max(1e-9);
        serde_json::json!(q.iter().map(|c| c / n).collect::<Vec<_>>())
    }
    fn f32_value(&mut self) -> serde_json::Value {
        match self.below(12) {
            0 => serde_json::json!("nan"),
            1 => serde_json::json!("-inf"),
            2 => serde_json::json!(-0.0),
            _ => {
                let x = f32::from_bits(self.next() as u32);
                if x.is_finite() {
                    serde_json::json!(x)
                } else {
                    serde_json::json!(1.5)
                }
            }
        }
    }
}

const EVERY_TYPES: [&str; 8] = [
    "Scalars",
    "Floats",
    "Texts",
    "Lists",
    "Relatives",
    "Nested",
    "Wide",
    "Unions",
];

/// A random value of packet type `t` of captures/every.schema.toml.
fn every_value(rng: &mut Rng, t: &str) -> serde_json::Value {
    use serde_json::json;
    let team = |rng: &mut Rng| match rng.below(3) {
        0 => json!(["red", "blue", "spectator", "rogue"][rng.below(4)]),
        _ => json!(rng.range(-3, 7)),
    };
    let point = |rng: &mut Rng| json!({"x": rng.range(-1000, 1000), "y": rng.range(-1000, 1000)});
    let inner = |rng: &mut Rng| json!({"level": rng.range(0, 255), "tag": rng.range(0, 7)});
    const WEAPONS: [&str; 4] = ["fists", "pistol", "rifle", "rocket"];
    match t {
        "Scalars" => json!({
            "flag": rng.chance(50), "small": rng.range(-100, 100), "fixed": 42,
            "odd": rng.range(126, 4097), "i8": rng.range(-128, 127), "i16": rng.range(-32768, 32767),
            "i32": rng.range(i32::MIN.into(), i32::MAX.into()), "i64": rng.next() as i64,
            "u8": rng.range(0, 255), "u16": rng.range(0, 65535), "u32": rng.range(0, u32::MAX.into()),
            "u64": rng.next(), "wide": rng.range(-1_000_000_000_000_000, 1_000_000_000_000_000),
            "huge": rng.range(-9_000_000_000_000_000_000, 9_000_000_000_000_000_000),
            "near_top": rng.range(9_223_372_036_854_775_802, 9_223_372_036_854_775_806),
            "b5": rng.range(0, 31), "b40": rng.range(0, (1 << 40) - 1), "b64": rng.next(),
            "team": team(rng), "weapon": WEAPONS[rng.below(4)],
            "status": rng.range(0, 255),
        }),
        "Floats" => {
            let d = match rng.below(6) {
                0 => json!("inf"),
                1 => json!(-0.0),
                _ => json!(rng.float(-1e300, 1e300)),
            };
            json!({
            "f": rng.f32_value(),
            "d": d,
            "aim": rng.float(-200.0, 200.0), "fine": rng.float(0.0, 100000.0),
            "odd_range": rng.float(-1.0, 3.0),
            "vel": [rng.float(-33.0, 33.0), rng.float(-32.0, 32.0), rng.float(-32.0, 32.0)],
            "rot": rng.quaternion(), "rot2": rng.quaternion(), "rot16": rng.quaternion(),
            })
        }
        "Texts" => {
            let has = rng.chance(50);
            let blob: Vec<u8> = (0..5).map(|_| rng.next() as u8).collect();
            let mut v = json!({
                "name": rng.text(31), "note": rng.text(40), "vast": rng.text(10),
                "blob": blob, "empty": "", "has_motd": has,
            });
            if has {
                v["motd"] = json!(rng.text(60));
            } else {
                v["hidden"] = json!(rng.range(0, 255));
            }
            v
        }
        "Lists" => {
            let mut slots: Vec<i64> = (0..rng.below(5)).map(|_| rng.range(0, 299)).collect();
            slots.sort_unstable();
            slots.dedup();
            let actors: Vec<_> = slots
                .iter()
                .map(|&slot| {
                    let alive = rng.chance(60);
                    let mut a = json!({"slot": slot, "alive": alive, "at": point(rng)});
                    if alive {
                        a["hp"] = json!(rng.range(0, 200));
                    }
                    a
                })
                .collect();
            json!({
                "nums": (0..rng.below(11)).map(|_| rng.range(0, 4095)).collect::<Vec<_>>(),
                "flags": (0..rng.below(9)).map(|_| rng.chance(50)).collect::<Vec<_>>(),
                "points": (0..rng.below(5)).map(|_| point(rng)).collect::<Vec<_>>(),
                "names": (0..rng.below(4)).map(|_| rng.text(10)).collect::<Vec<_>>(),
                "dirs": (0..rng.below(4))
                    .map(|_| json!([rng.float(-1.0, 1.0), rng.float(-1.0, 1.0), rng.float(-1.0, 1.0)]))
                    .collect::<Vec<_>>(),
                "teams": (0..rng.below(5)).map(|_| team(rng)).collect::<Vec<_>>(),
                "grid": (0..rng.below(4))
                    .map(|_| (0..rng.below(4)).map(|_| rng.range(0, 255)).collect::<Vec<_>>())
                    .collect::<Vec<_>>(),
                "rots": (0..rng.below(3)).map(|_| rng.quaternion()).collect::<Vec<_>>(),
                "ids": (0..rng.below(4)).map(|_| rng.range(11, 100)).collect::<Vec<_>>(),
                "rels": (0..rng.below(4))
                    .map(|_| {
                        let tiers = [rng.range(1001, 1010), rng.range(1001, 1300), rng.range(1001, i32::MAX.into())];
                        tiers[rng.below(3)]
                    })
                    .collect::<Vec<_>>(),
                "vast": (0..rng.below(3)).map(|_| point(rng)).collect::<Vec<_>>(),
                "actors": actors,
            })
        }
        "Relatives" => {
            let base = rng.range(0, 1000);
            let step = |rng: &mut Rng| {
                let tiers = [
                    1,
                    rng.range(2, 6),
                    rng.range(7, 300),
                    rng.range(300, 80_000),
                ];
                tiers[rng.below(4)]
            };
            let seq = (100 + step(rng)).min(i64::from(i32::MAX) - 1);
            let wide_base = rng.range(0, i64::from(i32::MAX) - 1);
            json!({
                "base": base, "next": (base + step(rng)).min(2000), "tiny": rng.range(0, 50),
                "seq": seq, "seq2": (seq + step(rng)).min(i32::MAX.into()),
                "after": rng.range(6, 100_000),
                "wide_base": wide_base, "rel_wide": (wide_base + step(rng)).min(i32::MAX.into()),
            })
        }
        "Unions" => {
            // The tag by name, sometimes by number.
            let tag = |rng: &mut Rng, name: &str, i: usize| {
                if rng.chance(20) {
                    json!(i)
                } else {
                    json!(name)
                }
            };
            let shape = |rng: &mut Rng| match rng.below(5) {
                0 => json!({"variant": tag(rng, "Nothing", 0)}),
                1 => {
                    let filled = rng.chance(50);
                    let mut c = json!({"variant": tag(rng, "Circle", 1), "r": rng.range(0, 1000), "filled": filled});
                    if filled {
                        c["color"] = json!(rng.range(0, 255));
                    }
                    c
                }
                2 => {
                    let w = rng.range(1, 100);
                    let steps = [1, rng.range(2, 20), rng.range(21, 150)];
                    let next = (w + steps[rng.below(3)]).min(200);
                    json!({"variant": tag(rng, "Box", 2), "w": w, "h": rng.range(1, 100), "next": next})
                }
                3 => json!({
                    "variant": tag(rng, "Poly", 3), "w": rng.chance(50),
                    "pts": (0..rng.below(5)).map(|_| point(rng)).collect::<Vec<_>>(),
                    "label": rng.text(8),
                }),
                _ => {
                    let mut p = point(rng);
                    p["variant"] = tag(rng, "Dot", 4);
                    p
                }
            };
            let has = rng.chance(50);
            let mut v = json!({
                "shape": shape(rng),
                "only": {"kind": "Spot", "x": rng.range(-1000, 1000), "y": rng.range(-1000, 1000)},
                "shapes": (0..rng.below(4)).map(|_| shape(rng)).collect::<Vec<_>>(),
                "has": has,
                "held": {"id": rng.range(0, 255), "inner": shape(rng)},
            });
            if has {
                v["maybe"] = shape(rng);
            }
            v
        }
        "Wide" => {
            let i128_in = |rng: &mut Rng, lo: i128, hi: i128| {
                let span = (hi as u128).wrapping_sub(lo as u128);
                let r = u128::from(rng.next()) << 64 | u128::from(rng.next());
                let r = match span.checked_add(1) {
                    Some(n) => r % n,
                    None => r,
                };
                (lo as u128).wrapping_add(r).cast_signed().to_string()
            };
            let wtext = |rng: &mut Rng, max: usize| {
                const UNITS: [&str; 6] = ["a", "é", "мир", "\u{FFFD}", "🦀", "Z"];
                let mut s = String::new();
                loop {
                    let p = UNITS[rng.below(UNITS.len())];
                    if s.encode_utf16().count() + p.encode_utf16().count() > rng.below(max + 1) {
                        return s;
                    }
                    s.push_str(p);
                }
            };
            json!({
                "narrow": rng.range(-5, 1000),
                "mid": rng.range(-9_000_000_000_000_000_000, 9_000_000_000_000_000_000),
                "full": i128_in(rng, i128::MIN, i128::MAX),
                "odd": i128_in(rng, -1_180_591_620_717_411_303_424, 1_180_591_620_717_411_303_000),
                "top": i128_in(rng, 1, i128::MAX),
                "u": (u128::from(rng.next()) << 64 | u128::from(rng.next())).to_string(),
                "q8": rng.range(-25600, 25600) as f64 / 256.0,
                "q64": rng.float(-1e6, 1e6),
                "uq": rng.float(0.0, 60000.0),
                "unit": rng.float(-1.0, 0.0),
                "w": wtext(rng, 12),
                "ws": (0..rng.below(3)).map(|_| wtext(rng, 4)).collect::<Vec<_>>(),
            })
        }
        _ => json!({
            "version": rng.range(1, 3), "a": inner(rng), "b": inner(rng),
            "deep": {"inner": inner(rng), "pts": (0..rng.below(3)).map(|_| point(rng)).collect::<Vec<_>>()},
            "name": rng.chance(50),
        }),
    }
}

/// A random body of batch message type `t` (1, 2, 3 or 9) of captures/every.schema.toml.
fn every_message(rng: &mut Rng, t: u8) -> bitlens_schema::DynValue {
    use bitlens_schema::{DynStruct, DynValue as V};
    let s = |fields: Vec<(&str, V)>| V::Struct(DynStruct::new(fields));
    let vec2 = |rng: &mut Rng| {
        s(vec![
            ("x", V::F32(rng.float(-10.0, 10.0) as f32)),
            ("y", V::F32(f32::from_bits(rng.next() as u32 & 0x7F7F_FFFF))),
        ])
    };
    match t {
        1 => s(vec![
            ("ok", V::Bool(rng.chance(50))),
            ("u8", V::Int(rng.range(1, 200))),
            ("u16", V::Int(rng.range(0, 65535))),
            ("u32", V::Int(rng.range(0, 1_000_000))),
            ("u64", V::U64(rng.next().max(5))),
            ("i8", V::Int(rng.range(-100, 100))),
            ("i16", V::Int(rng.range(-32768, 32767))),
            ("i32", V::Int(rng.range(-70000, 70000))),
            (
                "i64",
                V::Int(rng.range(-9_000_000_000_000_000_000, 9_000_000_000_000_000_000)),
            ),
            ("f32", V::F32(f32::from_bits(rng.next() as u32))),
            ("f64", V::F64(rng.float(-1e20, 1e20))),
        ]),
        2 => s(vec![
            ("pu32", V::Int(rng.range(1, u32::MAX.into()))),
            ("pu64", V::U64(rng.next() >> rng.below(64))),
            ("pi32", V::Int(rng.range(-1000, 1000))),
            ("pi64", V::Int((rng.next() as i64) >> rng.below(64))),
        ]),
        3 => {
            let has = rng.chance(50);
            let raw: Vec<u8> = (0..3).map(|_| rng.next() as u8).collect();
            let var: Vec<u8> = (0..rng.below(21)).map(|_| rng.next() as u8).collect();
            let words = (0..rng.below(5)).map(|_| V::Str(rng.text(8))).collect();
            s(vec![
                ("has_text", V::Bool(has)),
                ("text", if has { V::Str(rng.text(40)) } else { V::Null }),
                ("raw", V::Bytes(raw)),
                ("var", V::Bytes(var)),
                ("words", V::Array(words)),
            ])
        }
        _ => s(vec![
            ("where", vec2(rng)),
            (
                "stamp",
                s(vec![
                    ("seq", V::Int(rng.range(0, 60000))),
                    ("on", V::Bool(rng.chance(50))),
                    (
                        "pos",
                        V::Array(vec![
                            V::Int(rng.range(-500, 500)),
                            V::Int(rng.range(-500, 500)),
                        ]),
                    ),
                ]),
            ),
            (
                "flags",
                V::Array((0..3).map(|_| V::Bool(rng.chance(50))).collect()),
            ),
            (
                "levels",
                V::Array((0..2).map(|_| V::Int(rng.range(1, 9))).collect()),
            ),
            (
                "path",
                V::Array((0..rng.below(6)).map(|_| vec2(rng)).collect()),
            ),
            (
                "ids",
                V::Array(
                    (0..rng.below(7))
                        .map(|_| V::Int(rng.range(0, 100)))
                        .collect(),
                ),
            ),
            (
                "grid",
                V::Array(
                    (0..rng.below(3))
                        .map(|_| {
                            V::Array((0..rng.below(3)).map(|_| V::Int(rng.range(0, 9))).collect())
                        })
                        .collect(),
                ),
            ),
        ]),
    }
}

/// Re-signs a packet's CRC (with the schema's protocol id): damage behind a valid CRC.
fn reseal(schema: &bitlens_schema::Schema, p: &mut [u8]) {
    if p.len() >= 4 {
        let crc = bitlens_codec::packet::packet_crc(schema.protocol().id, p);
        p[..4].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Sets the bits of the field at `path` (as the trace places it) to `value`, and re-signs.
fn patch(schema: &bitlens_schema::Schema, p: &mut [u8], path: &str, value: u64) {
    let (_, trace) = schema.trace(p);
    let f = trace.get(path).unwrap_or_else(|| {
        panic!(
            "no field {path} in {:?}",
            trace.fields.iter().map(|f| f.path()).collect::<Vec<_>>()
        )
    });
    for i in 0..f.bits.min(64) {
        let b = f.bit + i;
        if value >> i & 1 == 1 {
            p[b / 8] |= 1 << (b % 8);
        } else {
            p[b / 8] &= !(1 << (b % 8));
        }
    }
    reseal(schema, p);
}

/// Datagrams made for the readers' rarest paths: lengths and counts near 2^61 (a needed bit
/// count that saturates at 2^64 - 1), values out of range past i64::MAX, a relative integer
/// sent absolute below its tier, an i64::MIN against an `abs_max`, varints out of a 32-bit range.
fn every_edges(schema: &bitlens_schema::Schema) -> Vec<(u16, Vec<u8>)> {
    use bitlens_batch::{BatchWriter, UpdateStage};
    use bitlens_tagged::varint::encode_varint;
    let packet = |t: &str, json: serde_json::Value| {
        let v = schema.value_from_json(t, &json).unwrap();
        let mut buf = vec![0; schema.protocol().mtu];
        let n = schema.write(t, &v, &mut buf).unwrap();
        buf.truncate(n);
        buf
    };
    let mut rng = Rng(7);
    let mut out = Vec::new();
    let texts = every_value(&mut rng, "Texts");
    for (path, value) in [
        ("vast.len", 1u64 << 60),
        ("note.len", (1 << 40) - 1),
        ("name.len", 31),
    ] {
        let mut p = packet("Texts", texts.clone());
        patch(schema, &mut p, path, value);
        out.push((40000, p));
    }
    let mut lists = every_value(&mut rng, "Lists");
    lists["vast"] = serde_json::json!([]);
    let mut p = packet("Lists", lists);
    patch(schema, &mut p, "vast.len", 1 << 60);
    out.push((40000, p));
    let scalars = every_value(&mut rng, "Scalars");
    for (path, value) in [
        ("near_top", 7u64),
        ("huge", u64::MAX),
        ("odd", 4095),
        ("small", 255),
    ] {
        let mut p = packet("Scalars", scalars.clone());
        patch(schema, &mut p, path, value);
        out.push((40000, p));
    }
    // Floats: a quaternion whose three sent components are all at the top code (the rebuilt
    // largest is 0, below them): no seed-style writer's, accepted all the same (readers refuse
    // no quaternion encoding).
    // (From their own generator: the traffic after them stays what it was.)
    let mut own = Rng(0x0021_0021_0021_0021);
    let floats = every_value(&mut own, "Floats");
    let mut p = packet("Floats", floats.clone());
    for part in ["rot.a", "rot.b", "rot.c"] {
        patch(schema, &mut p, part, 511);
    }
    out.push((40000, p));
    // Floats: `fine` (M = 99,999,992, not stable) holds 18712250, the standard's code for
    // 18712.251953125 (issue 21): a code between the values bitlens's own read-then-write
    // reaches, accepted by both readers, with the standard's value.
    let mut p = packet("Floats", floats.clone());
    patch(schema, &mut p, "fine", 18_712_250);
    let (_, read) = schema.read(&p).expect("a code <= M is accepted");
    let mut again = vec![0; schema.protocol().mtu];
    let n = schema.write("Floats", &read, &mut again).unwrap();
    assert_ne!(again[..n], p[..], "18712250 should not re-encode to itself");
    out.push((40000, p));
    // Texts: a NUL byte inside the name (serialize 1.0 refuses it).
    let mut texts = every_value(&mut own, "Texts");
    texts["name"] = serde_json::json!("abc");
    let mut p = packet("Texts", texts);
    patch(schema, &mut p, "name.utf8", 0x00_6261);
    out.push((40000, p));
    // seq: six 0 flags, then the value 5, not above previous (100): refused (serialize 1.0);
    // then 150, a difference a tier could carry: accepted (serialize 1.0 refuses nothing more).
    let mut relatives = every_value(&mut rng, "Relatives");
    relatives["seq"] = serde_json::json!(500_000);
    relatives["seq2"] = serde_json::json!(600_000);
    for value in [5, 150] {
        let mut p = packet("Relatives", relatives.clone());
        patch(schema, &mut p, "seq.value", value);
        out.push((40000, p));
    }

    // rel_wide after wide_base (issue 29.7: every refusal of the interpreter's int_relative,
    // each compared with tshark): 103650 sent absolute after 65535 (a tier could carry it:
    // accepted); -1 sent absolute (not above previous); d = 6 and d = 1 past i32::MAX; a
    // previous that is not an i32 (invalid_argument).
    let mut wide = every_value(&mut Rng(0x29_07), "Relatives");
    let mut wide_packet = |base: i64, value: i64| {
        wide["wide_base"] = serde_json::json!(base);
        wide["rel_wide"] = serde_json::json!(value);
        packet("Relatives", wide.clone())
    };
    let mut p = wide_packet(65535, 65535 + 69_915);
    patch(schema, &mut p, "rel_wide.value", 103_650);
    out.push((40000, p));
    let mut p = wide_packet(65535, 65535 + 69_915);
    patch(schema, &mut p, "rel_wide.value", u64::from(u32::MAX));
    out.push((40000, p));
    for (base, value, patched) in [
        (2_147_483_640, 2_147_483_646, 2_147_483_645u64),
        (2_147_483_646, 2_147_483_647, 2_147_483_647),
        (2_147_483_646, 2_147_483_647, 3_000_000_000),
    ] {
        let mut p = wide_packet(base, value);
        patch(schema, &mut p, "wide_base", patched);
        out.push((40000, p));
    }
    for (p, verdict) in out[out.len() - 5..].iter().zip([
        "ok",
        "out_of_range",
        "out_of_range",
        "out_of_range",
        "invalid_argument",
    ]) {
        let got = match schema.verdict(&p.1).1 {
            Ok(()) => "ok".to_owned(),
            Err(e) => e.kind().name().to_owned(),
        };
        assert_eq!(got, verdict, "a rel_wide edge");
    }

    // tiny (max_objects 50): six 0 flags ask for a difference past the last tier it has.
    let mut p = packet("Relatives", every_value(&mut rng, "Relatives"));
    let (_, trace) = schema.trace(&p);
    let bit = trace.get("tiny").unwrap().bit;
    for b in bit..bit + 6 {
        p[b / 8] &= !(1 << (b % 8));
    }
    reseal(schema, &mut p);
    out.push((40000, p));
    // A union's tag past its last variant, at the top level and as an array element.
    let mut unions = every_value(&mut rng, "Unions");
    unions["shapes"] = serde_json::json!([{"variant": "Nothing"}]);
    for path in ["shape.variant", "shapes[0].variant"] {
        let mut p = packet("Unions", unions.clone());
        patch(schema, &mut p, path, 6);
        out.push((40000, p));
    }

    // Wide: an int128 offset of all ones past i128::MAX ("1 + offset"), an odd range's offset
    // past its span, wide-string code units that are not text.
    let wide = every_value(&mut rng, "Wide");
    for (path, value) in [("top", u64::MAX), ("odd", u64::MAX)] {
        let mut p = packet("Wide", wide.clone());
        let (_, trace) = schema.trace(&p);
        let f = trace.get(path).unwrap();
        for i in 0..f.bits {
            let b = f.bit + i;
            p[b / 8] |= u8::from(value >> (i % 64) & 1 == 1) << (b % 8);
        }
        reseal(schema, &mut p);
        out.push((40000, p));
    }
    let mut w = wide.clone();
    w["w"] = serde_json::json!("abcd");
    for unit in [0xD800u64, 0xDC00, 0, 0x1_0000] {
        let mut p = packet("Wide", w.clone());
        patch(schema, &mut p, "w.utf16[1]", unit);
        out.push((40000, p));
    }
    let mut p = packet("Wide", w.clone());
    patch(schema, &mut p, "w.utf16[3]", 0xDBFF);
    out.push((40000, p));

    let batch = schema.batch().unwrap();
    let mut batches = Vec::new();
    // Prims with i64 = i64::MIN (|v| = 2^63 > abs_max) and u64 below its min.
    let prims = every_message(&mut rng, 1);
    let mut body = vec![0u8; 64];
    let n = batch.encode_body(1, &prims, &mut body).unwrap();
    body.truncate(n);
    let mut b1 = body.clone();
    b1[23..31].copy_from_slice(&i64::MIN.to_le_bytes());
    let mut b2 = body.clone();
    b2[8..16].copy_from_slice(&4u64.to_le_bytes());
    batches.push((1, b1));
    batches.push((1, b2));
    // Packed: pi32 = zig-zag 2^32 (out of i32), pu32 = 2^32 (out of u32), a varint of 11 bytes.
    let varint = |x: u64| {
        let (b, n) = encode_varint(x);
        b[b.len() - n..].to_vec()
    };
    let packed =
        |a: u64, b: u64, c: u64, d: u64| [varint(a), varint(b), varint(c), varint(d)].concat();
    batches.push((2, packed(7, 1, 1 << 32, 3)));
    batches.push((2, packed(1 << 32, 1, 2, 3)));
    batches.push((2, packed(7, u64::MAX, 2, u64::MAX)));
    batches.push((2, [varint(7), vec![0xFF; 11]].concat()));
    for (t, body) in batches {
        let mut buf = vec![0u8; 200];
        let mut w = BatchWriter::new(&mut buf).unwrap();
        w.push_raw(t, UpdateStage(1), &body).unwrap();
        let n = w.finish();
        buf.truncate(n);
        out.push((40001, buf));
    }
    out
}

/// `n` datagrams of the every-construct protocol: valid packets and batches of every type, and
/// the same damaged every way a reader must notice (bits flipped, cut, lengthened, another id,
/// a corrupt CRC, oversized; batch bodies flipped, batches cut with and without a fixed length).
fn every_traffic(n: usize, seed: u64) -> Vec<(u16, Vec<u8>)> {
    use bitlens_batch::{BatchWriter, UpdateStage};
    let schema = bitlens_schema::Schema::load(&root().join("captures/every.schema.toml")).unwrap();
    let batch = schema.batch().unwrap();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = every_edges(&schema);
    while out.len() < n {
        if rng.chance(70) {
            let t = EVERY_TYPES[rng.below(EVERY_TYPES.len())];
            let json = every_value(&mut rng, t);
            let value = schema
                .value_from_json(t, &json)
                .unwrap_or_else(|e| panic!("{t}: {e}: {json}"));
            let mut buf = vec![0; schema.protocol().mtu];
            let len = schema
                .write(t, &value, &mut buf)
                .unwrap_or_else(|e| panic!("{t}: {e}"));
            buf.truncate(len);
            match rng.below(10) {
                0..=3 => {}
                4 | 5 => {
                    for _ in 0..1 + rng.below(3) {
                        let bit = 32 + rng.below((buf.len() - 4) * 8);
                        buf[bit / 8] ^= 1 << (bit % 8);
                    }
                    reseal(&schema, &mut buf);
                }
                6 => {
                    buf.truncate(rng.below(buf.len() + 1));
                    reseal(&schema, &mut buf);
                }
                7 => {
                    for _ in 0..1 + rng.below(3) {
                        buf.push(rng.next() as u8);
                    }
                    reseal(&schema, &mut buf);
                }
                8 => {
                    for b in buf.iter_mut().skip(5) {
                        *b = rng.next() as u8;
                    }
                    reseal(&schema, &mut buf);
                }
                _ => match rng.below(3) {
                    0 => {
                        let i = rng.below(buf.len());
                        buf[i] ^= 0x10;
                    }
                    1 => buf.resize(schema.protocol().mtu + 1 + rng.below(50), 0xAB),
                    _ => {
                        let crc = bitlens_codec::packet::packet_crc(
                            bitlens_codec::ProtocolId::U64(0x0123_4567_89AB_CDEE),
                            &buf,
                        );
                        buf[..4].copy_from_slice(&crc.to_le_bytes());
                    }
                },
            }
            out.push((40000, buf));
        } else {
            let mut buf = vec![0; 1200];
            let mut w = BatchWriter::new(&mut buf).unwrap();
            for _ in 0..1 + rng.below(4) {
                let stage = UpdateStage(rng.below(4) as u8);
                if rng.chance(10) {
                    let body: Vec<u8> = (0..rng.below(6)).map(|_| rng.next() as u8).collect();
                    w.push_raw(5, stage, &body).unwrap();
                } else {
                    let t = [1, 2, 3, 9][rng.below(4)];
                    let value = every_message(&mut rng, t);
                    batch
                        .push(&mut w, stage, t, &value)
                        .unwrap_or_else(|e| panic!("{t}: {e}"));
                }
            }
            let len = w.finish();
            buf.truncate(len);
            match rng.below(8) {
                0..=3 => {}
                4 | 5 => {
                    for _ in 0..1 + rng.below(3) {
                        let i = 2 + rng.below(buf.len() - 2);
                        buf[i] ^= 1 << rng.below(8);
                    }
                }
                6 => {
                    buf.truncate(rng.below(buf.len() + 1));
                    if buf.len() >= 2 {
                        let n = buf.len() as u16;
                        buf[..2].copy_from_slice(&n.to_le_bytes());
                    }
                }
                _ => buf.truncate(rng.below(buf.len())),
            }
            out.push((40001, buf));
        }
    }
    out
}

fn write_every(path: &Path, traffic: &[(u16, Vec<u8>)]) {
    use bitlens::capture::Timestamp;
    use bitlens::capture::write::{SynthDatagram, WriteFormat, write_file};
    let datagrams: Vec<SynthDatagram<'_>> = traffic
        .iter()
        .enumerate()
        .map(|(i, (port, payload))| {
            let time = Timestamp::from_nanos(1_700_000_000_000_000_000 + i as i128 * 1_000_000);
            let client = format!("10.0.0.{}:{}", 10 + i % 4, 50000 + i % 4)
                .parse()
                .unwrap();
            let server = format!("10.0.0.1:{port}").parse().unwrap();
            let (src, dst) = if i % 2 == 0 {
                (client, server)
            } else {
                (server, client)
            };
            SynthDatagram::new(time, src, dst, payload.as_slice())
        })
        .collect();
    write_file(path, WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
}

/// The kinds of error and status `decode --json` reports for a capture (datagrams and messages).
fn verdicts(schema: &Path, capture: &Path) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::new();
    for d in decode_json(schema, capture, &[]) {
        seen.insert(format!("{}:{}", d.decoder, d.status));
        if let Some(e) = &d.error {
            seen.insert(format!("{}:{}", d.decoder, e.kind));
        }
        if let Some(t) = &d.packet_type {
            seen.insert(format!("type:{t}"));
        }
        for m in d.messages.iter().flatten() {
            seen.insert(format!("message:{}", m.status));
            if let Some(e) = &m.error {
                seen.insert(format!("message:{}", e.kind));
            }
        }
    }
    seen
}

#[test]
fn every_construct_agrees_with_decode() {
    let schema = root().join("captures/every.schema.toml");
    let committed = root().join("captures/every.pcap");
    let dir = tmp_dir("every");
    // The committed capture is this generator's output: BITLENS_BLESS=1 writes it again.
    let small = dir.join("every.pcap");
    write_every(&small, &every_traffic(400, 1));
    if std::env::var_os("BITLENS_BLESS").is_some() {
        std::fs::copy(&small, &committed).unwrap();
    }
    assert_eq!(
        std::fs::read(&small).unwrap(),
        std::fs::read(&committed).unwrap(),
        "captures/every.pcap is not what the generator writes: BITLENS_BLESS=1 cargo test -p bitlens --test wireshark_export every"
    );
    let big = dir.join("every-4000.pcap");
    write_every(&big, &every_traffic(4000, 2));
    // The traffic reaches every packet type, every error kind of both layers, and every status.
    let seen = verdicts(&schema, &big);
    let mut missing = Vec::new();
    for t in EVERY_TYPES {
        missing.push(format!("type:{t}"));
    }
    for k in [
        "ok",
        "error",
        "desync",
        "past_end",
        "out_of_range",
        "nonzero_padding",
        "check_mismatch",
        "crc_mismatch",
        "invalid_utf8",
        "trailing_data",
        "too_long",
        "invalid_utf16",
        "interior_nul",
        "invalid_argument",
    ] {
        missing.push(format!("schema:{k}"));
    }
    for k in ["ok", "error", "batch_length", "body_length", "past_end"] {
        missing.push(format!("schema-batch:{k}"));
    }
    for k in [
        "ok",
        "error",
        "unknown_type",
        "past_end",
        "out_of_range",
        "invalid_varint",
        "invalid_utf8",
        "body_length",
        "trailing_body",
    ] {
        missing.push(format!("message:{k}"));
    }
    missing.retain(|k| !seen.contains(k));
    assert!(
        missing.is_empty(),
        "the traffic never shows {missing:?} (it shows {seen:?})"
    );

    if !installed_or_skip("tshark", "--version") {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let lua = export(&dir, &schema, &["--port", "40000", "--batch-port", "40001"]);
    agree(&lua, &schema, &committed, "every", &[]);
    let n = agree(&lua, &schema, &big, "every", &[]);
    assert!(n > 3500, "{n} datagrams decoded");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_ports_the_dissectors_claim_what_their_guards_accept() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("heuristic");
    let schema = root().join("captures/demo.schema.toml");
    let lua = export(&dir, &schema, &[]);
    let capture = root().join("captures/faults.pcap");
    let trees = tshark(&lua, &capture);
    let mut claimed = [0usize; 2];
    for d in decode_json(&schema, &capture, &[]) {
        let items = trees.get(&d.frame).map_or(&[][..], Vec::as_slice);
        let has = |name: &str| items.iter().any(|p| p.name == name);
        // A packet: its CRC holds (it is whole and within the MTU). A batch: whole, and its
        // lengths add up (an error inside a message body does not matter).
        let packet =
            d.decoder == "schema" && d.checks.first().is_some_and(|c| c.label == "crc32" && c.ok);
        let batch = d.decoder == "schema-batch" && d.status == "ok";
        assert_eq!(has("demo"), packet, "frame {}: {d:?}", d.frame);
        assert_eq!(has("demo_batch"), batch, "frame {}: {d:?}", d.frame);
        claimed[0] += usize::from(packet);
        claimed[1] += usize::from(batch);
    }
    assert!(claimed[0] > 500 && claimed[1] > 100, "{claimed:?}");
    // What they claim, they decode as bitlens does.
    agree(
        &lua,
        &schema,
        &root().join("captures/demo.pcap"),
        "demo",
        &[],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_errors_say_what_to_change() {
    let schema = root().join("captures/demo.schema.toml");
    let every = root().join("captures/every.schema.toml");
    let out = bitlens(&[
        "export-wireshark",
        "--schema",
        schema.to_str().unwrap(),
        "--name",
        "Demo",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("protocol name \"Demo\" is not a Wireshark filter name"),
        "{err}"
    );
    let tiny = tmp_dir("errors").join("tiny.toml");
    std::fs::write(
        &tiny,
        "[protocol]\nname = \"tiny\"\nid = 1\nmtu = 100\npackets = [\"A\"]\n[struct.A]\nfields = [{ name = \"x\", type = \"u8\" }]\n",
    )
    .unwrap();
    let out = bitlens(&[
        "export-wireshark",
        "--schema",
        tiny.to_str().unwrap(),
        "--batch-port",
        "9",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--batch-port needs a schema with a [batch] section"),
        "{err}"
    );
    let out = bitlens(&["export-wireshark", "--schema", "no-such.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such.toml: no such file"));
    // The name given is the filter prefix of every field; a one-type protocol has no type field.
    let out = bitlens(&[
        "export-wireshark",
        "--schema",
        every.to_str().unwrap(),
        "--name",
        "ev2",
    ]);
    let lua = String::from_utf8(out.stdout).unwrap();
    assert!(lua.contains("ProtoField.int32(\"ev2.small\", \"small\", base.DEC)"));
    assert!(lua.contains("ProtoField.uint32(\"ev2.status_int\", \"status\", base.DEC)"));
    assert!(lua.contains("ProtoField.bool(\"ev2.name_bool\", \"name\")"));
    assert!(lua.contains("Proto(\"ev2_batch\""));
    let out = bitlens(&["export-wireshark", "--schema", tiny.to_str().unwrap()]);
    let lua = String::from_utf8(out.stdout).unwrap();
    assert!(lua.contains("FRAME.ntypes = 1") && lua.contains("FRAME.ptype = false"));
    assert!(lua.contains("PROTO:register_heuristic(\"udp\", heuristic_packet)"));
    assert!(!lua.contains("BPROTO"));
    let _ = std::fs::remove_dir_all(tiny.parent().unwrap());
}

#[test]
fn a_protocol_of_one_packet_type_has_no_type_field() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("one-type");
    let path = dir.join("one.toml");
    std::fs::write(
        &path,
        "[protocol]\nname = \"one\"\nid = 0x51\nmtu = 64\npackets = [\"Only\"]\n\
         [struct.Only]\nfields = [{ name = \"x\", type = \"int\", min = -5, max = 900 }, \
         { name = \"tag\", type = \"string\", max_len = 7 }]\n",
    )
    .unwrap();
    let schema = bitlens_schema::Schema::load(&path).unwrap();
    let mut traffic = Vec::new();
    for (x, tag) in [(-5, ""), (17, "seven77"), (900, "é")] {
        let v = schema
            .value_from_json("Only", &serde_json::json!({"x": x, "tag": tag}))
            .unwrap();
        let mut buf = [0u8; 64];
        let n = schema.write("Only", &v, &mut buf).unwrap();
        traffic.push((40000, buf[..n].to_vec()));
        let mut bad = buf[..n].to_vec();
        bad[4] ^= 0xFF;
        reseal(&schema, &mut bad);
        traffic.push((40000, bad));
    }
    let capture = dir.join("one.pcap");
    write_every(&capture, &traffic);
    let lua = export(&dir, &path, &["--port", "40000"]);
    assert_eq!(agree(&lua, &path, &capture, "one", &[]), 6);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A derived protocol (the testkit's showcase: every attribute of the derive, tagged unions and
/// relative array elements among them) exported from the schema text the derive writes: arbitrary
/// packets, every other one with a bit flipped behind a valid CRC, agree with decode.
#[test]
fn the_derived_showcase_protocol_agrees_with_decode() {
    use bitlens_codec::{PacketSet, generate};
    use bitlens_testkit::showcase::{MTU, Showcase};
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("showcase");
    let path = dir.join("showcase.toml");
    std::fs::write(&path, Showcase::schema()).unwrap();
    let schema = bitlens_schema::Schema::load(&path).unwrap();
    let mut rng = Rng(16);
    let mut traffic = Vec::new();
    let mut types = std::collections::BTreeSet::new();
    while traffic.len() < 800 {
        let data: Vec<u8> = (0..64 + rng.below(600)).map(|_| rng.next() as u8).collect();
        let Ok(mut p) = generate::packet::<Showcase>(&mut arbitrary::Unstructured::new(&data))
        else {
            continue;
        };
        let mut buf = vec![0u8; MTU];
        let Ok(n) = bitlens_codec::write_packet(&mut p, &mut buf) else {
            continue;
        };
        buf.truncate(n);
        types.insert(bitlens_codec::packet::Packet::packet_type(&p));
        if traffic.len() % 2 == 1 && n > 4 {
            let bit = 32 + rng.below((n - 4) * 8);
            buf[bit / 8] ^= 1 << (bit % 8);
            reseal(&schema, &mut buf);
        }
        traffic.push((40000, buf));
    }
    assert_eq!(types.len(), 11, "every packet type drawn: {types:?}");
    let capture = dir.join("showcase.pcap");
    write_every(&capture, &traffic);
    let lua = export(&dir, &path, &["--port", "40000"]);
    assert_eq!(agree(&lua, &path, &capture, "showcase", &[]), 800);
    let _ = std::fs::remove_dir_all(&dir);
}

fn strip_indices(path: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The frames tshark's display filter `filter` keeps, listed without a shown tree (the path
/// Wireshark's packet list and a plain `tshark -Y` take: values only, no labels).
fn filtered(lua: &Path, capture: &Path, filter: &str) -> Vec<u64> {
    let out = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .args(["-o", "ip.defragment:FALSE", "-r"])
        .arg(capture)
        .args(["-Y", filter])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "{filter}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn display_filters_select_what_decode_reports() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("filters");
    let schema = root().join("captures/demo.schema.toml");
    let lua = export(&dir, &schema, &["--port", "40000", "--batch-port", "40001"]);
    let capture = root().join("captures/faults.pcap");
    let json = decode_json(&schema, &capture, &[]);
    // The numeric values at `path` (array indices left out): of the packet, or of its messages.
    fn values<'a>(fields: impl Iterator<Item = &'a JField>, path: &str) -> Vec<f64> {
        fields
            .filter(|f| strip_indices(&f.path) == path)
            .filter_map(|f| f.value.get().parse().ok())
            .collect()
    }
    let value = |d: &JDatagram, path: &str| values(d.fields.iter(), path);
    let batch_value = |d: &JDatagram, path: &str| {
        values(d.messages.iter().flatten().flat_map(|m| &m.fields), path)
    };
    type Pick = Box<dyn Fn(&JDatagram) -> bool>;
    let cases: Vec<(&str, Pick)> = vec![
        (
            "demo.status == \"error\"",
            Box::new(|d| d.decoder == "schema" && d.status == "error"),
        ),
        (
            "demo.status == \"desync\"",
            Box::new(|d| d.status == "desync"),
        ),
        (
            "demo.status == \"truncated\"",
            Box::new(|d| d.decoder == "schema" && d.status == "truncated"),
        ),
        (
            "demo.packet == \"RoboCat\"",
            Box::new(|d| d.packet_type.as_deref() == Some("RoboCat")),
        ),
        (
            "demo.health > 90",
            Box::new(move |d| value(d, "health").iter().any(|&h| h > 90.0)),
        ),
        (
            "demo.objects.position.x > 100",
            Box::new(move |d| value(d, "objects.position.x").iter().any(|&x| x > 100.0)),
        ),
        (
            "demo.expert.out_of_range",
            Box::new(|d| {
                d.decoder == "schema" && d.error.as_ref().is_some_and(|e| e.kind == "out_of_range")
            }),
        ),
        (
            "demo_batch.status == \"error\"",
            Box::new(|d| d.decoder == "schema-batch" && d.status == "error"),
        ),
        (
            "demo_batch.health < 30",
            Box::new(move |d| batch_value(d, "health").iter().any(|&h| h < 30.0)),
        ),
    ];
    for (filter, pick) in cases {
        let expected: Vec<u64> = json.iter().filter(|d| pick(d)).map(|d| d.frame).collect();
        assert!(!expected.is_empty(), "{filter}: no frame to find");
        assert_eq!(filtered(&lua, &capture, filter), expected, "{filter}");
    }
    // 64-bit fields: negative values and values past i64::MAX filter by their value too.
    let schema = root().join("captures/every.schema.toml");
    let lua = export(&dir, &schema, &["--port", "40000", "--batch-port", "40001"]);
    let capture = root().join("captures/every.pcap");
    let json = decode_json(&schema, &capture, &[]);
    let big = 9.3e18;
    let cases: Vec<(&str, Pick)> = vec![
        (
            "every.huge < 0",
            Box::new(move |d| value(d, "huge").iter().any(|&v| v < 0.0)),
        ),
        (
            "every.i64 < 0",
            Box::new(move |d| value(d, "i64").iter().any(|&v| v < 0.0)),
        ),
        (
            "every.u64 > 9300000000000000000",
            Box::new(move |d| value(d, "u64").iter().any(|&v| v > big)),
        ),
        (
            "every.b64 > 9300000000000000000",
            Box::new(move |d| value(d, "b64").iter().any(|&v| v > big)),
        ),
        (
            "every_batch.i64 < 0",
            Box::new(move |d| batch_value(d, "i64").iter().any(|&v| v < 0.0)),
        ),
        (
            "every.q8 > 50",
            Box::new(move |d| value(d, "q8").iter().any(|&v| v > 50.0)),
        ),
        (
            "every_batch.u64 > 9300000000000000000",
            Box::new(move |d| batch_value(d, "u64").iter().any(|&v| v > big)),
        ),
        // Packed signed fields filter by the value, not by its zig-zag code.
        (
            "every_batch.pi32 < 0",
            Box::new(move |d| batch_value(d, "pi32").iter().any(|&v| v < 0.0)),
        ),
        (
            "every_batch.pi64 < -1000",
            Box::new(move |d| batch_value(d, "pi64").iter().any(|&v| v < -1000.0)),
        ),
        // A union's tag filters by its number (its label names the variant), a variant's
        // fields by the union's path.
        (
            "every.shape.variant == 2",
            Box::new(|d| {
                d.fields
                    .iter()
                    .any(|f| f.path == "shape.variant" && f.value.get() == "\"Box\"")
            }),
        ),
        (
            "every.shapes.r > 600",
            Box::new(move |d| value(d, "shapes.r").iter().any(|&v| v > 600.0)),
        ),
    ];
    for (filter, pick) in cases {
        let expected: Vec<u64> = json.iter().filter(|d| pick(d)).map(|d| d.frame).collect();
        assert!(!expected.is_empty(), "{filter}: no frame to find");
        assert_eq!(filtered(&lua, &capture, filter), expected, "{filter}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bit_run` (issue 27.3): the Lua dissector reads the same groups, paths, values and errors as
/// `decode --json`, for runs of every length of the table (nothing, under a group, whole groups,
/// groups and a rest, a negative index), and runs cut short by the end of the datagram.
#[test]
fn bit_runs_agree_with_decode() {
    if !installed_or_skip("tshark", "--version") {
        return;
    }
    let dir = tmp_dir("bitrun");
    let text = "[protocol]\nname = \"runs\"\nid = 0x52554E53\nmtu = 1200\npackets = [\"P\"]\n\
                [struct.P]\nfields = [\n\
                { name = \"k\", type = \"int\", min = -5, max = 100 },\n\
                { name = \"pad\", type = \"bit_run\", by = \"k\", table = [0, 3, 32, 70, 45, 96] },\n\
                { name = \"tail\", type = \"bool\" },\n]\n";
    let schema_path = dir.join("runs.schema.toml");
    std::fs::write(&schema_path, text).unwrap();
    let schema = bitlens_schema::Schema::from_toml(text, "runs.schema.toml").unwrap();
    let counts = [0u32, 3, 32, 70, 45, 96];
    let mut rng = Rng(27);
    let mut traffic = Vec::new();
    for i in 0..240 {
        let k = rng.range(-5, 100);
        let n = counts[k.rem_euclid(6) as usize];
        let mut groups = Vec::new();
        let mut left = n;
        while left > 0 {
            let w = left.min(32);
            groups.push(rng.next() & ((1u64 << w) - 1));
            left -= w;
        }
        let json = serde_json::json!({"k": k, "pad": groups, "tail": i % 2 == 0});
        let value = schema.value_from_json("P", &json).unwrap();
        let mut buf = vec![0u8; 1200];
        let len = schema.write("P", &value, &mut buf).unwrap();
        buf.truncate(len);
        if i % 8 == 7 {
            // A longer run than the datagram holds: k patched to pick 96 bits, re-signed.
            patch(&schema, &mut buf, "k", 5 + 5);
        }
        traffic.push((40000, buf));
    }
    let capture = dir.join("runs.pcap");
    write_every(&capture, &traffic);
    let seen = verdicts(&schema_path, &capture);
    for want in ["schema:ok", "schema:past_end"] {
        assert!(seen.contains(want), "no {want} in {seen:?}");
    }
    let lua = export(&dir, &schema_path, &["--port", "40000"]);
    let n = agree(&lua, &schema_path, &capture, "runs", &[]);
    assert_eq!(n, 240);
    let _ = std::fs::remove_dir_all(&dir);
}
