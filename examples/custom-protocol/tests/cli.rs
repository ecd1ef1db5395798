//! The README's commands for the game's own inspector (`src/main.rs`, ten lines of
//! `bitlens::Cli`), run through the real `skirmish` binary on `captures/custom.pcap`: `check`
//! exits 1 listing the session's faults, `decode --json` gives every labelled frame the status
//! its label expects and skirmish's packet types, `seeds` takes the protocol's port,
//! `export-wireshark --as skirmish` writes a dissector from the derived schema text.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skirmish(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skirmish"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("skirmish runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn check_lists_the_sessions_faults() {
    let o = skirmish(&["check", "captures/custom.pcap"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for line in [
        "decoders: 28500=skirmish",
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
    let o = skirmish(&["decode", "captures/custom.pcap", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let labels: Vec<Value> = std::fs::read_to_string(root().join("captures/custom.labels.json"))
        .expect("the labels")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON label"))
        .collect();
    assert_eq!(labels.len(), 6);
    let mut types = std::collections::BTreeSet::new();
    let mut n = 0;
    for line in text(&o.stdout).lines() {
        let j: Value = serde_json::from_str(line).expect("a JSON line");
        let frame = j["frame"].as_u64().expect("a frame number");
        let want = labels
            .iter()
            .find(|l| l["frame"].as_u64() == Some(frame))
            .map_or("ok", |l| l["expect"].as_str().expect("an expected status"));
        assert_eq!(j["status"].as_str(), Some(want), "frame {frame}");
        assert_eq!(j["decoder"].as_str(), Some("skirmish"), "frame {frame}");
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

#[test]
fn seeds_reads_the_protocols_port() {
    let dir = std::env::temp_dir().join(format!("skirmish-seeds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_string_lossy().into_owned();
    let o = skirmish(&["seeds", "captures/custom.pcap", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("167 datagrams on the port"), "{out}");
    let written = std::fs::read_dir(&dir).expect("the corpus folder").count();
    assert!(written > 100, "{written} seed files");
    std::fs::remove_dir_all(&dir).expect("removes the folder");
}

#[test]
fn export_wireshark_reads_the_derived_schema() {
    let o = skirmish(&["export-wireshark", "--as", "skirmish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lua = text(&o.stdout);
    assert!(lua.contains("Proto(\"skirmish\""), "{lua}");
    for field in ["players_alive", "entities", "team_only", "movement.forward"] {
        assert!(lua.contains(field), "{field} missing");
    }
}

#[test]
fn fuzz_init_names_the_games_own_binary_in_its_next_steps() {
    let dir = std::env::temp_dir().join(format!("skirmish-fuzz-init-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"arena\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let o = skirmish(&["fuzz-init", "--packet", "arena::Packet", "--crate-dir", d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("skirmish seeds CAPTURE --port PORT"), "{out}");
    // The files it writes name it too (issue 29.11: they said `bitlens fuzz-init`).
    for file in ["fuzz/Cargo.toml", "tests/fuzz_corpus.rs"] {
        let written = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(
            written.contains("Written by `skirmish fuzz-init --packet arena::Packet`")
                && !written.contains("bitlens fuzz-init")
                && !written.contains("bitlens seeds"),
            "{file}: {written}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn proxy_messages_name_the_games_own_binary() {
    // issue 29.11: `skirmish proxy` printed `bitlens proxy:`.
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_skirmish"))
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "127.0.0.1:28500",
            "--quiet",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("skirmish runs");
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    err.read_line(&mut first).expect("a start-up line");
    assert!(
        first.starts_with("skirmish proxy: listening on 127.0.0.1:")
            && first.contains("decoding port 28500 as skirmish"),
        "{first}"
    );
    let stopped = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).expect("the summary");
    let status = child.wait().expect("the proxy stops");
    assert!(status.success(), "{rest}");
    assert!(rest.starts_with("skirmish proxy: 0 datagrams"), "{rest}");
    assert!(!rest.contains("bitlens"), "{rest}");
}

#[test]
fn warnings_and_the_usage_line_name_the_games_own_binary() {
    // polish 2: a warning of the shared options began `bitlens: warning:`.
    let dir = std::env::temp_dir().join(format!("skirmish-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("server.key");
    std::fs::write(&key, "00".repeat(32)).unwrap();
    let o = skirmish(&[
        "check",
        "captures/custom.pcap",
        "--netcode-key",
        key.to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert!(
        err.starts_with("skirmish: warning: the --netcode-* options apply to no port"),
        "{err}"
    );
    assert!(!err.contains("bitlens"), "{err}");
    // The usage line names the program as `Cli::new` does, whatever its executable is called
    // (here a link named `arena-inspector`), as its errors do.
    let link = dir.join("arena-inspector");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_skirmish"), &link).unwrap();
    let o = Command::new(&link).arg("frobnicate").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("Usage: skirmish <COMMAND>"), "{err}");
    assert!(!err.contains("arena-inspector"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
