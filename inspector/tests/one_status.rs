//! Issue 20, "the same datagram gets two statuses": the text output, the JSON output, `check`'s
//! table and the TUI give every datagram one status, over every shipped capture, a synthetic
//! capture with labelled faults, and batches whose framing holds while one message is corrupt
//! (JSON called those "ok" while text, `check` and the TUI said "error").

mod common;

use common::root;

use bitlens::Dissectors;
use bitlens::capture::Capture;
use bitlens::capture::Timestamp;
use bitlens::capture::write::{SynthDatagram, WriteFormat, to_bytes};
use bitlens::tui::{App, Key};
use bitlens_codec::dissect::Status;
use bitlens_testkit::{batch_demo, demo};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn bitlens(args: &[&str]) -> (Option<i32>, String) {
    let o = common::bitlens(args);
    (o.status.code(), String::from_utf8(o.stdout).expect("UTF-8"))
}

/// The dissectors of the `bitlens` binary.
fn shipped() -> Dissectors {
    let mut d = Dissectors::new();
    d.register(demo::PORT, Arc::new(demo::dissector()));
    d.register(batch_demo::PORT, Arc::new(batch_demo::dissector()));
    d
}

/// Every datagram's (packet type, status) as `decode --json` gives them.
fn json_statuses(capture: &str) -> Vec<(String, String)> {
    let (code, out) = bitlens(&["decode", "--json", capture]);
    assert_eq!(code, Some(0), "{capture}");
    out.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON");
            let t = v["packet_type"].as_str().unwrap_or("-").to_owned();
            (t, v["status"].as_str().expect("a status").to_owned())
        })
        .collect()
}

/// Every datagram's (packet type, status) as `decode` (text) gives them: the words after the
/// length (`37 B`, or `37 B (10 captured)` for a datagram the capture cut) on each summary
/// line are the decoder, the packet type and the status.
fn text_statuses(capture: &str) -> Vec<(String, String)> {
    let (code, out) = bitlens(&["decode", capture]);
    assert_eq!(code, Some(0), "{capture}");
    out.lines()
        .map(|l| {
            let (_, rest) = l.split_once(" B").expect("a summary line");
            let rest = match rest.strip_prefix(" (") {
                Some(note) => note.split_once(" captured)").expect("a captured note").1,
                None => rest,
            };
            let mut words = rest.trim_start().split(' ');
            let _decoder = words.next();
            let t = words.next().expect("a packet type").to_owned();
            (t, words.next().expect("a status").to_owned())
        })
        .collect()
}

/// `check`'s table: counts per (packet type, status), zeros left out, and its exit status.
fn check_table(capture: &str) -> (Option<i32>, BTreeMap<(String, String), usize>) {
    let (code, out) = bitlens(&["check", capture]);
    let mut lines = out.lines().skip_while(|l| !l.starts_with("packet type"));
    let header: Vec<&str> = lines
        .next()
        .expect("the table")
        .split_whitespace()
        .collect();
    let statuses = &header[2..];
    // Every status has a column, but `encrypted` only when some datagram is (a transport
    // without its key): tables of captures without transports keep their shape.
    let shown: Vec<&str> = Status::ALL
        .iter()
        .map(|s| s.name())
        .filter(|&s| s != "encrypted" || statuses.contains(&"encrypted"))
        .collect();
    assert_eq!(statuses, &shown[..]);
    let mut table = BTreeMap::new();
    for l in lines.take_while(|l| !l.starts_with("total")) {
        let mut cols = l.split_whitespace();
        let t = cols.next().expect("a packet type").to_owned();
        for (status, n) in statuses.iter().zip(cols) {
            let n: usize = n.parse().expect("a count");
            if n > 0 {
                table.insert((t.clone(), (*status).to_owned()), n);
            }
        }
    }
    (code, table)
}

fn tally(statuses: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let mut t = BTreeMap::new();
    for s in statuses {
        *t.entry(s.clone()).or_insert(0) += 1;
    }
    t
}

/// The TUI's status of every datagram: the list's (the background verdicts) and the detail
/// pane's (the dissection of the packet under the cursor), which must agree.
fn tui_statuses(capture: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(capture).expect("the capture");
    let capture = Capture::from_bytes("capture", bytes).expect("a capture");
    let mut app = App::new(
        Arc::new(capture),
        Arc::new(shipped()),
        false,
        (120, 40),
        "bitlens",
    );
    app.summarize_all();
    let n = app.capture.datagrams().len();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let s = app.summary(i).expect("summarized");
        let t = app
            .type_names
            .get(usize::from(s.packet_type))
            .map_or("-", String::as_str);
        let detail = app.detail.as_ref().expect("a packet is open");
        assert_eq!(detail.datagram, i);
        assert_eq!(
            (detail.dissection.status, detail.dissection.packet_type),
            (s.status, (t != "-").then_some(t)),
            "datagram {i}: the list and the detail pane disagree"
        );
        out.push((t.to_owned(), s.status.name().to_owned()));
        app.handle_key(Key::Down);
    }
    out
}

/// Text == JSON == check == TUI for every datagram of `capture`; returns JSON's statuses.
fn one_status(capture: &str) -> Vec<(String, String)> {
    let json = json_statuses(capture);
    assert!(!json.is_empty(), "{capture}");
    assert_eq!(text_statuses(capture), json, "{capture}: text and JSON");
    let (code, table) = check_table(capture);
    assert_eq!(table, tally(&json), "{capture}: check's table and JSON");
    let problems = json
        .iter()
        .any(|(_, s)| Status::from_name(s).expect("a known status").is_problem());
    assert_eq!(
        code,
        Some(i32::from(problems)),
        "{capture}: check's exit status"
    );
    let path = root().join(capture);
    assert_eq!(tui_statuses(&path), json, "{capture}: the TUI and JSON");
    json
}

/// A temporary folder of this test (tests run in parallel: one each).
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[test]
fn every_shipped_capture_has_one_status_per_datagram() {
    let mut captures: Vec<String> = std::fs::read_dir(root().join("captures"))
        .expect("captures/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .map(|p| format!("captures/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    captures.sort();
    assert!(captures.len() >= 5, "{captures:?}");
    for c in &captures {
        one_status(c);
    }
}

#[test]
fn a_synthetic_capture_with_faults_has_one_status_per_datagram() {
    let dir = temp_dir("one-status-faults");
    let path = dir.join("faults.pcap");
    let p = path.to_str().expect("UTF-8");
    let (code, _) = bitlens(&["synth", p, "--packets", "1500", "--seed", "11", "--faults"]);
    assert_eq!(code, Some(0));
    let statuses = one_status(p);
    for s in ["ok", "error", "desync", "truncated", "fragment"] {
        assert!(statuses.iter().any(|(_, x)| x == s), "no {s} datagram");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Batches on the batch port: clean, one message body corrupt (framing intact), a framing
/// error. The second is the case the issue found: "ok" in JSON, "error" everywhere else.
#[test]
fn a_batch_with_one_corrupt_message_is_an_error_everywhere() {
    let clean = batch_demo::sample_batch();
    // The spawn message's health (the byte after its 2-byte packed network id) past 100.
    let mut corrupt_body = clean.clone();
    let health = 2 + 4 + 2;
    assert!(corrupt_body[health] <= 100, "the sample cat's health");
    corrupt_body[health] = 101;
    let mut corrupt_framing = clean.clone();
    corrupt_framing[2 + 2] = 0xFF; // the first message's length, past the end
    let client: SocketAddr = "10.0.0.11:50001".parse().unwrap();
    let server: SocketAddr = format!("10.0.0.1:{}", batch_demo::PORT).parse().unwrap();
    let datagrams: Vec<_> = [&clean, &corrupt_body, &corrupt_framing, &clean]
        .iter()
        .enumerate()
        .map(|(i, payload)| {
            let t = Timestamp::from_nanos(1_700_000_000_000_000_000 + i as i128 * 16_000_000);
            SynthDatagram::new(t, client, server, payload.to_vec())
        })
        .collect();
    let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
    let dir = temp_dir("one-status-batches");
    let path = dir.join("batches.pcap");
    std::fs::write(&path, bytes).unwrap();
    let p = path.to_str().expect("UTF-8");
    let statuses: Vec<String> = one_status(p).into_iter().map(|(_, s)| s).collect();
    assert_eq!(statuses, ["ok", "error", "error", "ok"]);
    // JSON names the corrupt message's problem as the datagram's error, and in the message.
    let (_, out) = bitlens(&["decode", "--json", p]);
    let second: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(second["error"]["field"], "[0].health");
    assert_eq!(second["messages"][0]["status"], "error");
    assert_eq!(second["messages"][0]["error"], second["error"]);
    assert_eq!(second["messages"][1]["status"], "ok");
    std::fs::remove_dir_all(&dir).ok();
}
