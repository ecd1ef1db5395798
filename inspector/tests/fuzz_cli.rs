//! `bitlens seeds` and `bitlens fuzz-init` through the built binary: what they write, their
//! summaries and their exit statuses.

mod common;

use common::bitlens;
use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-fuzz-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn seeds_writes_one_file_per_distinct_payload() {
    let dir = temp("seeds");
    let d = dir.to_str().unwrap();
    let out = bitlens(&["seeds", "captures/custom.pcap", "--port", "28500", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(
            "167 datagrams on the port, 146 distinct payloads: 146 seed files written, 0 already \
             there; 1 cut or fragmented datagram skipped"
        ),
        "{}",
        text(&out.stdout)
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 146);
    // Every file is a payload of the capture: a skirmish packet of at most its MTU.
    for f in &files {
        let n = std::fs::metadata(f).unwrap().len();
        assert!((4..=1024).contains(&n), "{}: {n} bytes", f.display());
        assert_eq!(f.file_name().unwrap().len(), 40);
    }
    // The demo capture's batch port holds none of them.
    let out = bitlens(&["seeds", "captures/custom.pcap", "--port", "40001", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no UDP datagram to or from port 40001"));
    let out = bitlens(&["seeds", "captures/nothing.pcap", "--port", "1", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("captures/nothing.pcap: no such file"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fuzz_init_writes_the_fuzz_crate_once() {
    let dir = temp("init");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"arena\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let out = bitlens(&["fuzz-init", "--packet", "arena::Packet", "--crate-dir", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("fuzz_targets/packet_read.rs") && stdout.contains("next:"),
        "{stdout}"
    );
    // A crate without the codec's `arbitrary` feature is told to add it; the seeds step names
    // the program that ran.
    assert!(
        stdout.contains("1. give arena a dev-dependency on bitlens-codec")
            && stdout.contains("2. seed each corpus from a capture: bitlens seeds CAPTURE"),
        "{stdout}"
    );
    for f in [
        "fuzz/Cargo.toml",
        "fuzz/fuzz_targets/hostile_lengths.rs",
        "tests/fuzz_corpus.rs",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let out = bitlens(&["fuzz-init", "--packet", "arena::Packet", "--crate-dir", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already exist (--force overwrites them)"));
    // With the dependency there, the step is left out.
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"arena\"\nversion = \"0.1.0\"\n\
         [dependencies]\nbitlens-codec = { version = \"0.1\", features = [\"arbitrary\"] }\n",
    )
    .unwrap();
    let out = bitlens(&[
        "fuzz-init",
        "--packet",
        "arena::Packet",
        "--crate-dir",
        d,
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains("dev-dependency") && stdout.contains("1. seed each corpus"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
