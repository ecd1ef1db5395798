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

use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tshark_or_skip() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("tshark not installed: run scripts/install-test-deps.sh");
    }
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: tshark not installed (run scripts/install-test-deps.sh)"
    );
    false
}

fn tmp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-ws-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bitlens(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bitlens"))
        .args(args)
        .output()
        .expect("bitlens runs")
}

/// Exports the dissector for `schema` into `dir` and returns its path.
fn export(dir: &Path, schema: &Path, args: &[&str]) -> PathBuf {
    let mut all = vec!["export-wireshark", "--schema", schema.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = bitlens(&all);
    assert!(
        out.status.success(),
        "export failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lua = dir.join("proto.lua");
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
    leaf: String,
    value: Option<String>,
    bit: u64,
    bits: u64,
    range: Option<String>,
    code: Option<u64>,
}

fn parse_label(label: &str) -> Option<Label> {
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
        if n.starts_with("_ws.") {
            continue;
        }
        if n == meta("crc32") || n == meta("check") {
            out.checks.push(parse_check(item, n == meta("crc32")));
            walk(proto, &item.children, path, out);
            continue;
        }
        if n == meta("padding") || n == meta("batch_len") || n == meta("body") {
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
        if label.value.is_some() || label.code.is_some() {
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

fn same_value(raw: &str, text: Option<&str>) -> bool {
    match (raw, text) {
        ("null", None) => true,
        ("null", Some(t)) => ["NaN", "inf", "-inf"].contains(&t),
        (_, None) => false,
        ("true" | "false", Some(t)) => raw == t,
        (r, Some(t)) if r.starts_with('"') => {
            let s: String = serde_json::from_str(r).unwrap();
            t == quoted(&s) || t == s || t.starts_with(&format!("{s} ("))
        }
        (r, Some(t)) if r.starts_with('[') => {
            let xs: Vec<Option<f64>> = serde_json::from_str(r).unwrap();
            let Some(inner) = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
                return false;
            };
            let ts: Vec<&str> = inner.split(", ").collect();
            ts.len() == xs.len()
                && xs.iter().zip(&ts).all(|(x, t)| match x {
                    Some(x) => same_float(*x, t),
                    None => ["NaN", "inf", "-inf"].contains(t),
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
        let range = match (j.min.get(), j.max.get()) {
            ("null", "null") => None,
            (a, b) => Some(format!("{a}..={b}")),
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
    if !tshark_or_skip() {
        return;
    }
    let dir = tmp_dir("shipped");
    let schema = repo().join("captures/demo.schema.toml");
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
            &repo().join("captures").join(name),
            "demo",
            &[],
        );
        assert!(n >= 100, "{name}: {n} datagrams decoded");
    }
}
