//! The `bitlens` binary on the shipped captures: exit codes, JSON shape, fault labels, and
//! hostile files (missing, corrupt, not a capture).

mod common;

use common::{bitlens, root};
use std::path::PathBuf;
use std::process::{Command, Output};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_passes_clean_captures() {
    for c in [
        "captures/demo.pcap",
        "captures/demo.pcapng",
        "captures/loopback-sll2.pcap",
        "captures/loopback-ethernet.pcap",
    ] {
        let o = bitlens(&["check", c]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{c}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stdout(&o).contains("with problems"), "{}", stdout(&o));
    }
}

#[test]
fn check_fails_the_fault_capture_and_names_first_problems() {
    let o = bitlens(&["check", "captures/faults.pcap"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    for kind in [
        "desync",
        "error/crc_mismatch",
        "error/out_of_range",
        "error/past_end",
        "truncated",
        "fragment",
    ] {
        assert!(out.contains(kind), "missing {kind} in:\n{out}");
    }
    assert!(
        out.contains("reader is 1 to 8 bits behind the writer"),
        "{out}"
    );
}

#[test]
fn every_labelled_fault_gets_its_expected_status() {
    let o = bitlens(&["decode", "--json", "captures/faults.pcap"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let by_frame: std::collections::HashMap<u64, serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["frame"].as_u64().unwrap(), v)
        })
        .collect();
    let labels = std::fs::read_to_string(root().join("captures/faults.labels.json")).unwrap();
    let mut n = 0;
    for line in labels.lines() {
        let label: serde_json::Value = serde_json::from_str(line).unwrap();
        let frame = label["frame"].as_u64().unwrap();
        let got = &by_frame[&frame]["status"];
        assert_eq!(
            got, &label["expect"],
            "frame {frame} ({}): {}",
            label["fault"], by_frame[&frame]
        );
        n += 1;
    }
    assert!(n >= 36, "only {n} labels");
    // Every datagram that is not labelled decodes (or is a later fragment without ports).
    let labelled: std::collections::HashSet<u64> = labels
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["frame"]
                .as_u64()
                .unwrap()
        })
        .collect();
    for (frame, v) in &by_frame {
        if !labelled.contains(frame) {
            assert!(
                v["status"] == "ok" || v["status"] == "undecoded",
                "frame {frame}: {v}"
            );
        }
    }
}

#[test]
fn a_cut_datagram_shows_its_udp_length_and_what_was_captured() {
    // Frame 188 of faults.pcap: a 52-byte snap length keeps 10 of its 37 payload bytes (the
    // UDP header says 45); frame 213, the first of three IP fragments, 56 of 170.
    let text = stdout(&bitlens(&["decode", "captures/faults.pcap"]));
    let line = |frame: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{frame} ")))
            .unwrap_or_else(|| panic!("no frame {frame}"))
            .to_owned()
    };
    assert!(
        line("188").contains("   37 B (10 captured)  demo - truncated"),
        "{}",
        line("188")
    );
    assert!(
        line("213").contains("  170 B (56 captured)  demo - fragment"),
        "{}",
        line("213")
    );
    assert!(line("1").contains(" B  demo"), "{}", line("1"));
    let json = stdout(&bitlens(&["decode", "--json", "captures/faults.pcap"]));
    let v: serde_json::Value = serde_json::from_str(json.lines().nth(187).unwrap()).unwrap();
    assert_eq!(
        (&v["frame"], &v["len"], &v["captured"]),
        (&188.into(), &37.into(), &10.into())
    );
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert!(v.get("captured").is_none(), "{v}");
}

#[test]
fn lying_ip_and_udp_lengths_are_named_by_decode_and_check() {
    let dir = std::env::temp_dir().join(format!("bitlens-lies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = std::fs::read(root().join("captures/demo.pcap")).unwrap();
    // Frame 1's UDP length and frame 2's IPv4 total length (Ethernet, IPv4 without options).
    let udp_len_at = 24 + 16 + 14 + 20 + 4;
    bytes[udp_len_at..udp_len_at + 2].copy_from_slice(&2000u16.to_be_bytes());
    let first_len = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    let ip_len_at = 24 + 16 + first_len + 16 + 14 + 2;
    bytes[ip_len_at..ip_len_at + 2].copy_from_slice(&3000u16.to_be_bytes());
    let lies = dir.join("lies.pcap");
    std::fs::write(&lies, &bytes).unwrap();
    let lies = lies.to_str().unwrap();

    let text = stdout(&bitlens(&["decode", lies]));
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    assert!(first.contains(" demo - truncated  "), "{first}");
    assert!(
        first.ends_with(&format!(
            "{lies}: frame 1 at byte {udp_len_at}: UDP length 2000 is more than the 23 bytes the \
             IP header leaves for the datagram (a malformed UDP header, not a snap-length cut)"
        )),
        "{first}"
    );
    let second = lines.next().unwrap();
    assert!(
        second.contains(" ok  "),
        "the datagram itself is whole: {second}"
    );
    assert!(
        second.contains(&format!(
            "{lies}: frame 2 at byte {ip_len_at}: IPv4 total length 3000"
        )),
        "{second}"
    );

    let o = bitlens(&["check", lies]);
    assert_eq!(o.status.code(), Some(1), "frame 1 cannot be decoded");
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "flaw/udp.length  frame 1: at byte {udp_len_at}: UDP length 2000 is more than"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "flaw/ip.len      frame 2: at byte {ip_len_at}: IPv4 total length 3000"
        )),
        "{out}"
    );
    // The truncation is the flaw's: no separate "truncated" kind blames the snap length.
    assert!(!out.contains("captured (cut by the snap length)"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn decode_json_has_the_documented_keys() {
    let o = bitlens(&["decode", "--json", "captures/faults.pcap"]);
    let first = stdout(&o).lines().next().unwrap().to_owned();
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    for key in [
        "frame",
        "time",
        "src",
        "dst",
        "len",
        "decoder",
        "status",
        "packet_type",
        "fields",
        "checks",
        "error",
        "desync",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["frame"], 1);
    assert_eq!(
        v["time"].as_str().unwrap().split('.').nth(1).unwrap().len(),
        9
    );
    let f = &v["fields"][0];
    for key in ["path", "bit", "bits", "value", "min", "max"] {
        assert!(f.get(key).is_some(), "field misses {key}: {f}");
    }
    let c = &v["checks"][0];
    for key in ["label", "bit", "ok", "expected", "found"] {
        assert!(c.get(key).is_some(), "check misses {key}: {c}");
    }
    // The desynced frame 13 carries the locator's verdict.
    let d13: serde_json::Value = serde_json::from_str(stdout(&o).lines().nth(12).unwrap()).unwrap();
    assert_eq!(d13["status"], "desync");
    assert_eq!(d13["error"]["kind"], "check_mismatch");
    assert_eq!(d13["desync"]["label"], "end of packet");
    assert!(
        d13["desync"]["found_bit"].as_u64().unwrap()
            > d13["desync"]["expected_bit"].as_u64().unwrap()
    );
}

#[test]
fn pcap_and_pcapng_of_the_same_traffic_decode_alike() {
    let a = stdout(&bitlens(&["decode", "--json", "captures/demo.pcap"]));
    let b = stdout(&bitlens(&["decode", "--json", "captures/demo.pcapng"]));
    let strip = |s: &str| -> Vec<serde_json::Value> {
        s.lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                // pcap keeps microseconds, this pcapng nanoseconds.
                let t = v["time"].as_str().unwrap()[..17].to_owned();
                v["time"] = t.into();
                v
            })
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn missing_file_is_one_line_and_exit_2() {
    for cmd in ["check", "decode", "inspect"] {
        let o = bitlens(&[cmd, "captures/no-such.pcap"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("captures/no-such.pcap"), "{err}");
    }
    // A folder where a file belongs: the same one line, not the OS's "Is a directory".
    for cmd in ["check", "decode", "inspect", "tagged"] {
        let o = bitlens(&[cmd, "captures"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = stderr(&o);
        assert_eq!(
            err.trim(),
            "bitlens: captures: is a folder, not a file",
            "{cmd}"
        );
    }
}

#[test]
fn every_command_names_a_missing_file_or_a_folder_in_one_line() {
    let schema = "captures/demo.schema.toml";
    for (bad, why) in [
        ("captures/no-such", "no such file"),
        ("captures", "is a folder, not a file"),
    ] {
        for args in [
            vec![
                "encode", "--schema", bad, "--type", "PacketA", "--json", schema,
            ],
            vec![
                "encode", "--schema", schema, "--type", "PacketA", "--json", bad,
            ],
            vec!["decode-bytes", "--schema", bad, schema],
            vec!["decode-bytes", "--schema", schema, bad],
            vec!["decode", "--schema", bad, "captures/demo.pcap"],
            vec!["vectors", bad],
            vec!["tagged", bad],
        ] {
            let o = bitlens(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(
                stderr(&o).trim(),
                format!("bitlens: {bad}: {why}"),
                "{args:?}"
            );
        }
    }
}

#[test]
fn corrupt_capture_shows_packets_before_the_damage() {
    let dir = std::env::temp_dir().join(format!("bitlens-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(root().join("captures/demo.pcap")).unwrap();
    // Cut the file in the middle of a record.
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 7]).unwrap();
    let o = bitlens(&["decode", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).lines().count() > 100,
        "the packets before the damage are shown"
    );
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cut.pcap") && err.contains("frame"), "{err}");
    // Not a capture at all.
    let junk = dir.join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture file at all").unwrap();
    let o = bitlens(&["check", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("junk.pcap"));
    // A record claiming 4 GiB.
    let mut absurd = bytes[..24 + 16].to_vec();
    absurd[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let huge = dir.join("huge.pcap");
    std::fs::write(&huge, &absurd).unwrap();
    let o = bitlens(&["check", huge.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("frame 1"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn wrong_arguments_exit_2() {
    assert_eq!(bitlens(&["check"]).status.code(), Some(2));
    assert_eq!(bitlens(&["frobnicate"]).status.code(), Some(2));
    let o = bitlens(&["check", "captures/demo.pcap", "--decode", "notaport=demo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a UDP port"), "{}", stderr(&o));
    let o = bitlens(&["check", "captures/demo.pcap", "--decode", "40000=nope"]);
    assert_eq!(o.status.code(), Some(2));
    // Port 0 is no datagram's port: a usage error in one line, not a decoder never used.
    let o = bitlens(&["check", "captures/demo.pcap", "--decode", "0=demo"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "bitlens: --decode \"0=demo\": port 0 is not a UDP port a datagram can have (1 to 65535)\n"
    );
}

#[test]
fn protocol_id_override_and_decode_as() {
    // Another protocol id: every CRC fails.
    let o = bitlens(&["check", "captures/demo.pcap", "--protocol-id", "0x12345678"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("error/crc_mismatch"));
    // Remove the default decoder: nothing is decoded, which is not a failure unless --strict.
    let o = bitlens(&["check", "captures/demo.pcap", "--decode", "40000=none"]);
    assert_eq!(o.status.code(), Some(0));
    let o = bitlens(&[
        "check",
        "captures/demo.pcap",
        "--decode",
        "40000=none",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn strict_fails_a_capture_whose_link_type_bitlens_does_not_read() {
    // demo.pcap with its link type (bytes 20..24 of the pcap header) set to 12345: every frame
    // is skipped, nothing is checked; only --strict says so by its exit status.
    let mut bytes = std::fs::read(root().join("captures/demo.pcap")).unwrap();
    bytes[20..24].copy_from_slice(&12345u32.to_le_bytes());
    let path = std::env::temp_dir().join(format!("bitlens-link-{}.pcap", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let p = path.to_str().unwrap();
    let o = bitlens(&["check", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("2000 unsupported link type"),
        "{}",
        stdout(&o)
    );
    // The warning names the link type and the frames, and says what --strict does.
    let warning = format!(
        "bitlens: warning: {p}: 2000 frames of link type 12345 skipped: bitlens does not read \
         that link type, nothing in them was checked (check --strict fails on them)\n"
    );
    assert_eq!(stderr(&o), warning);
    let o = bitlens(&["check", p, "--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(stderr(&o), warning);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn inspect_refuses_a_pipe() {
    let o = bitlens(&["inspect", "captures/demo.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs a terminal"), "{}", stderr(&o));
}

#[test]
fn synth_is_deterministic() {
    let dir = std::env::temp_dir().join(format!("bitlens-synth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.pcap");
    let b = dir.join("b.pcap");
    assert!(
        bitlens(&[
            "synth",
            a.to_str().unwrap(),
            "--packets",
            "300",
            "--seed",
            "9"
        ])
        .status
        .success()
    );
    assert!(
        bitlens(&[
            "synth",
            b.to_str().unwrap(),
            "--packets",
            "300",
            "--seed",
            "9"
        ])
        .status
        .success()
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // The shipped demo capture is what the documented command writes.
    let c = dir.join("demo.pcap");
    assert!(
        bitlens(&[
            "synth",
            c.to_str().unwrap(),
            "--packets",
            "2000",
            "--seed",
            "1"
        ])
        .status
        .success()
    );
    assert_eq!(
        std::fs::read(&c).unwrap(),
        std::fs::read(root().join("captures/demo.pcap")).unwrap(),
        "captures/demo.pcap is stale: re-run the command in captures/README.md"
    );
    // And the fault capture with its labels, written as they are made.
    let f = dir.join("faults.pcap");
    let args = ["--packets", "1000", "--seed", "2", "--faults"];
    assert!(
        bitlens(&[&["synth", f.to_str().unwrap()], &args[..]].concat())
            .status
            .success()
    );
    for (ours, shipped) in [
        (f.clone(), "captures/faults.pcap"),
        (
            dir.join("faults.labels.json"),
            "captures/faults.labels.json",
        ),
    ] {
        assert_eq!(
            std::fs::read(&ours).unwrap(),
            std::fs::read(root().join(shipped)).unwrap(),
            "{shipped} is stale: re-run the command in captures/README.md"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Peak resident memory of `bitlens ARGS` in KiB, by GNU time (`None` without it).
fn peak_rss_kib(args: &[&str]) -> Option<u64> {
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(common::BIN)
        .args(args)
        .output()
        .ok()?;
    assert!(o.status.success(), "{}", stderr(&o));
    stderr(&o).lines().last()?.trim().parse().ok()
}

#[test]
fn synth_memory_does_not_grow_with_the_packet_count() {
    let dir = std::env::temp_dir().join(format!("bitlens-synth-rss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("x.pcap");
    let run = |packets: &str| {
        peak_rss_kib(&[
            "synth",
            out.to_str().unwrap(),
            "--packets",
            packets,
            "--faults",
        ])
    };
    let (Some(small), Some(large)) = (run("5000"), run("50000")) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "/usr/bin/time (GNU time) is missing"
        );
        eprintln!("skipped: no /usr/bin/time");
        return;
    };
    // Holding every datagram took about 1.4 KiB each: 60 MiB more for the larger run.
    assert!(
        large < small + 8 * 1024,
        "5000 datagrams: {small} KiB, 50000: {large} KiB"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parallel_decode_keeps_capture_order_and_check_counts_everything_once() {
    let dir = std::env::temp_dir().join(format!("bitlens-par-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cap = dir.join("many.pcap");
    // Several 2048-datagram chunks, with faults spread over all of them.
    assert!(
        bitlens(&[
            "synth",
            cap.to_str().unwrap(),
            "--packets",
            "9000",
            "--seed",
            "5",
            "--faults"
        ])
        .status
        .success()
    );
    let o = bitlens(&["decode", "--json", cap.to_str().unwrap()]);
    let frames: Vec<u64> = stdout(&o)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["frame"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(
        frames.windows(2).all(|w| w[0] < w[1]),
        "frames out of order"
    );
    let o = bitlens(&["check", cap.to_str().unwrap()]);
    let out = stdout(&o);
    let total: usize = out
        .lines()
        .find(|l| l.starts_with("total"))
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse::<usize>().unwrap())
        .sum();
    assert_eq!(total, frames.len(), "{out}");
    // The first desync is the first labelled one, whichever thread found it.
    let labels = std::fs::read_to_string(dir.join("many.labels.json")).unwrap();
    let first_desync = labels
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["expect"] == "desync")
        .unwrap()["frame"]
        .as_u64()
        .unwrap();
    let desync_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("desync"))
        .unwrap();
    assert!(
        desync_line.contains(&format!("frame {first_desync}:")),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: a schema whose compressed float range is not stable loads with a warning on
/// stderr (file, line and column), and the standard's code in a packet is accepted.
#[test]
fn an_unstable_range_warns_when_the_schema_loads() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-warnings");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let schema = dir.join("unstable.toml");
    std::fs::write(
        &schema,
        "[protocol]\nname = \"issue21\"\nid = 0x534B524D\nmtu = 1200\npackets = [\"P\"]\n\n\
         [struct.P]\nfields = [\n  { name = \"v\", type = \"compressed_float\", min = 0.0, \
         max = 12582911.0, resolution = 1.0 },\n]\n",
    )
    .expect("schema file");
    let packet = dir.join("p.bin");
    std::fs::write(
        &packet,
        [
            0xd3, 0xc1, 0xa7, 0x7e, 0x40, 0xf0, 0x79, 0xe2, 0xac, 0x08, 0x99,
        ],
    )
    .expect("packet file");
    let (s, p) = (schema.to_str().unwrap(), packet.to_str().unwrap());
    let o = bitlens(&["decode-bytes", "--schema", s, p]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{s}:9:50: warning: compressed float 0..=12582911 at 1 is not stable"
        )),
        "{err}"
    );
    assert!(stdout(&o).contains("v = 7991360"), "{}", stdout(&o));
}

#[test]
fn counts_of_one_are_singular() {
    // polish 5: "1 frames, 1 UDP datagrams", "1 of 1 datagrams", "1 datagrams".
    let dir = std::env::temp_dir().join(format!("bitlens-one-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("one.pcap");
    let p = path.to_str().unwrap();
    let o = bitlens(&["synth", p, "--packets", "1", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(said.contains(&format!("{p}: 1 datagram (")), "{said}");
    let o = bitlens(&["check", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!("{p}: 1 frame, 1 UDP datagram\n")),
        "{out}"
    );
    assert!(
        out.contains("1 of 1 datagram with a decoder decoded, 0 with problems"),
        "{out}"
    );
    let o = bitlens(&["profile", p]);
    assert!(stdout(&o).contains(": 1 datagram over "), "{}", stdout(&o));
    std::fs::remove_dir_all(&dir).ok();
}
