//! `captures/custom.pcap` (a session of examples/custom-protocol's skirmish protocol, not the
//! demo) through `bitlens --schema captures/custom.schema.toml`, as the README shows it: `check`
//! exits 1 and lists the faults, `decode --json` gives every labelled frame the status its label
//! expects and skirmish's packet types.

mod common;

use common::text;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const SCHEMA: [&str; 4] = [
    "--schema",
    "captures/custom.schema.toml",
    "--decode",
    "28500=schema",
];

fn bitlens(args: &[&str]) -> Output {
    common::command()
        .args(args)
        .args(SCHEMA)
        .output()
        .expect("bitlens runs")
}

#[test]
fn check_lists_the_sessions_faults() {
    let o = bitlens(&["check", "captures/custom.pcap"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for line in [
        "desync              frame 37",
        "error/crc_mismatch  frame 127",
        "error/out_of_range  frame 64",
        "error/past_end      frame 110",
        "truncated           frame 146",
        "161 of 167 datagrams",
    ] {
        assert!(out.contains(line), "{line} missing:\n{out}");
    }
}

#[test]
fn decode_gives_the_labelled_statuses_and_skirmish_types() {
    let o = bitlens(&["decode", "captures/custom.pcap", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let labels: Vec<Value> = std::fs::read_to_string(root.join("captures/custom.labels.json"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(labels.len(), 6);
    let mut types = std::collections::BTreeSet::new();
    let mut n = 0;
    for line in text(&o.stdout).lines() {
        let j: Value = serde_json::from_str(line).unwrap();
        let frame = j["frame"].as_u64().unwrap();
        let want = labels
            .iter()
            .find(|l| l["frame"].as_u64() == Some(frame))
            .map_or("ok", |l| l["expect"].as_str().unwrap());
        assert_eq!(j["status"].as_str(), Some(want), "frame {frame}");
        if let Some(t) = j["packet_type"].as_str() {
            types.insert(t.to_owned());
        }
        n += 1;
    }
    assert_eq!(n, 167);
    assert_eq!(
        types.into_iter().collect::<Vec<_>>(),
        ["Chat", "Input", "Snapshot"]
    );
}
