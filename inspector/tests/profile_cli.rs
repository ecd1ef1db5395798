//! `bitlens profile` (and `check --budget`) on the shipped captures: the table fits its width,
//! JSON adds up, the flame graph names the fields, budgets pass and fail naming what is over,
//! and no progress bar is ever written when stderr is not a terminal.

mod common;

use common::bitlens;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn the_table_is_sorted_by_cost_and_fits_its_width() {
    for (args, width) in [(vec![], 100), (vec!["--width", "72"], 72)] {
        let mut all = vec!["profile", "captures/demo.pcap"];
        all.extend(args);
        let o = bitlens(&all);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        for line in out.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}");
        }
        if width == 100 {
            assert!(out.contains("SceneUpdate.objects[].position.x"), "{out}");
        } else {
            // Names too long for the width are cut, with an ellipsis.
            assert!(out.contains("  SceneUpdate.object…\n"), "{out}");
        }
        assert!(out.contains("(IP + UDP headers)"), "{out}");
        assert!(
            out.contains("to 40000") && out.contains("from 40000"),
            "{out}"
        );
        // The fields table is sorted by bits.
        let table = out.split("field or overhead\n").nth(1).unwrap();
        let bits: Vec<u64> = table
            .lines()
            .take_while(|l| !l.is_empty())
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        assert!(
            bits.len() > 20 && bits.is_sorted_by(|a, b| a >= b),
            "{bits:?}"
        );
    }
}

#[test]
fn json_totals_add_up_and_failed_datagrams_stay_apart() {
    let o = bitlens(&["profile", "captures/faults.pcap", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "no progress or anything else: {}",
        text(&o.stderr)
    );
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    let sum = |key: &str, field: &str| -> u64 {
        p[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[field].as_u64().unwrap())
            .sum()
    };
    let total = p["decoded"]["bits"].as_u64().unwrap();
    assert_eq!(sum("fields", "bits") + sum("overhead", "bits"), total);
    assert_eq!(sum("packet_types", "bits"), total);
    // 1008 datagrams, 48 of them not decoded (faults and their fragments), counted apart.
    assert_eq!(p["datagrams"], 1008);
    assert_eq!(sum("not_decoded", "count"), 48);
    assert_eq!(p["decoded"]["count"], 960);
    let seconds = sum("seconds", "to_server") + sum("seconds", "from_server");
    let directions = sum("directions", "bits");
    assert_eq!(
        seconds, directions,
        "the series holds every datagram a dissector reads"
    );
}

#[test]
fn the_flame_graph_names_the_fields() {
    let svg = temp("demo.svg");
    let o = bitlens(&[
        "profile",
        "captures/demo.pcap",
        "--svg",
        svg.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(
        s.starts_with("<?xml") && s.contains("<svg"),
        "{}",
        &s[..200]
    );
    // Spaces in a frame's name are no-break spaces (folded stacks end at a space).
    for name in [
        "SceneUpdate",
        "objects[]",
        "position",
        "MoveRigidBody",
        "(check\u{a0}markers)",
    ] {
        assert!(s.contains(name), "{name} not in the SVG");
    }
    // An SVG that cannot be written is a file error naming it.
    let o = bitlens(&[
        "profile",
        "captures/demo.pcap",
        "--svg",
        "/nonexistent/x.svg",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("/nonexistent/x.svg"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn budgets_pass_and_fail_naming_what_is_over() {
    let ok = temp("ok.toml");
    std::fs::write(
        &ok,
        "largest_datagram = 1200\n[bytes_per_second]\nto_server = 100000\nfrom_server = 100000\n\
         [packet_type]\nSceneUpdate = 2000\n[message_type]\nMoveRigidBody = 500\n\
         [field]\n\"SceneUpdate.objects[].position.x\" = 17\n",
    )
    .unwrap();
    let tight = temp("tight.toml");
    std::fs::write(
        &tight,
        "largest_datagram = 100\n[bytes_per_second]\nto_server = 1000\n\
         [message_type]\nMoveRigidBody = 300\n\
         [field]\n\"SceneUpdate.objects[].position.x\" = 16\n\"Nope.x\" = 1\n",
    )
    .unwrap();
    for command in ["profile", "check"] {
        let o = bitlens(&[
            command,
            "captures/demo.pcap",
            "--budget",
            ok.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{command}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "{command}: {}", text(&o.stderr));
        let o = bitlens(&[
            command,
            "captures/demo.pcap",
            "--budget",
            tight.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{command}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        for want in [
            "over budget: field SceneUpdate.objects[].position.x: 17.0 bits per occurrence, \
             budget 16 (over by 1.0, 6.2%)",
            "over budget: largest datagram (frame ",
            "over budget: to server, busiest second: ",
            "over budget: message type MoveRigidBody: ",
            "budget: warning: field Nope.x is not in the capture",
        ] {
            assert!(err.contains(want), "{command}: {want:?} not in\n{err}");
        }
    }
    // A budget that is not one is a usage error naming the file.
    let bad = temp("bad.toml");
    std::fs::write(&bad, "[fields]\nx = 1\n").unwrap();
    let o = bitlens(&[
        "profile",
        "captures/demo.pcap",
        "--budget",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("bad.toml: not a budget") && err.lines().count() == 1,
        "{err}"
    );
}

/// Through yojimbo (the soak capture, its schema and key): `--json` has the channel and message
/// type rows, and a budget names a yojimbo message type and a body field of it, on `profile`
/// and on `check`.
#[test]
fn yojimbo_rows_in_json_and_budgets() {
    let args = [
        "captures/yojimbo-soak.pcap",
        "--decode",
        "40000=yojimbo",
        "--netcode-key",
        "captures/yojimbo-reference.key",
        "--schema",
        "captures/yojimbo.schema.toml",
    ];
    let o = bitlens(&[&["profile"][..], &args[..], &["--json"][..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let p: Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(p["channels"][0]["name"], "channel 1", "{}", p["channels"]);
    assert_eq!(p["message_types"][0]["name"], "TestMessage");
    assert_eq!(p["message_types"][0]["count"], 4167);
    let budget = temp("yojimbo-budget.toml");
    std::fs::write(
        &budget,
        "[message_type]\nTestMessage = 100\nTestBlockMessage = 18\n\
         [field]\n\"TestMessage.sequence\" = 15\n",
    )
    .unwrap();
    let b = budget.to_str().unwrap();
    for cmd in ["profile", "check"] {
        let o = bitlens(&[&[cmd][..], &args[..], &["--budget", b][..]].concat());
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("over budget: message type TestMessage: 111.4 bits per occurrence"),
            "{cmd}: {err}"
        );
        assert!(
            err.contains("over budget: field TestMessage.sequence: 16.0 bits per occurrence"),
            "{cmd}: {err}"
        );
        assert!(
            !err.contains("TestBlockMessage"),
            "within its budget: {err}"
        );
    }
}

#[test]
fn no_progress_bytes_when_stderr_is_not_a_terminal() {
    // Large enough for a bar on a terminal (over 4 MiB, over 100000 datagrams).
    let big = temp("big.pcap");
    let o = bitlens(&["synth", big.to_str().unwrap(), "--packets", "120000"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stderr.is_empty(), "synth: {}", text(&o.stderr));
    assert!(std::fs::metadata(&big).unwrap().len() > 4 << 20);
    let big = big.to_str().unwrap();
    for args in [
        vec!["decode", big],
        vec!["check", big],
        vec!["profile", big],
        vec!["profile", big, "--json"],
    ] {
        let o = bitlens(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(o.stderr.is_empty(), "{args:?}: {:?}", text(&o.stderr));
    }
}

fn chromium(args: &[&str], dir: &Path) -> Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1600,260",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("chromium runs")
}

#[test]
fn the_flame_graph_renders_in_a_headless_browser_and_shows_the_fields() {
    if !common::installed_or_skip("chromium", "--version") {
        return;
    }
    let svg = temp("browser.svg");
    let o = bitlens(&[
        "profile",
        "captures/demo.pcap",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let dir = svg.parent().unwrap();
    // The document as the browser has it after the flame graph's script laid out the labels
    // (cut to their frames' widths): the names it shows.
    let o = chromium(&["--dump-dom", svg.to_str().unwrap()], dir);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dom = text(&o.stdout);
    let shown: Vec<&str> = dom
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            t.split_once('>')
                .and_then(|(_, rest)| rest.split_once("</text>"))
        })
        .map(|(label, _)| label)
        .collect();
    for name in [
        "Batch",
        "SceneUpdate",
        "SpawnRoboCat",
        "elements[]",
        "mice[]",
        "body",
    ] {
        assert!(shown.contains(&name), "{name} not shown: {shown:?}");
    }
    let png = dir.join("browser.png");
    let o = chromium(
        &[
            &format!("--screenshot={}", png.display()),
            svg.to_str().unwrap(),
        ],
        dir,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} bytes",
        bytes.len()
    );
}

/// Issue 31.4: `--top 0` would show no row: a usage error (status 2) that says the range and
/// what shows every row, as `--help` does; `--top 1` shows one row and counts the rest.
#[test]
fn top_zero_is_refused_and_top_one_shows_one_row() {
    let o = bitlens(&["profile", "captures/demo.pcap", "--top", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("--top") && err.contains("N is 1 or more (leave --top out for every row)"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    let o = bitlens(&["profile", "captures/demo.pcap", "--top", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(" more rows (--top)"),
        "{}",
        text(&o.stdout)
    );
    let help = text(&bitlens(&["profile", "--help"]).stdout);
    assert!(help.contains("N is 1 or more; without --top"), "{help}");
}
