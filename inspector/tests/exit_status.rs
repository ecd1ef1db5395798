//! Issue 20, "exit codes disagree between subcommands": one rule for every subcommand of the
//! `bitlens` binary, stated in `--help` and the README: 0 ok, 1 the input was read and
//! rejected, 2 a usage or file error. Each subcommand is run through the real binary on inputs
//! that give each status it can give.

mod common;

use bitlens_codec::packet::write_packet;
use bitlens_testkit::demo;
use common::root;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Output, Stdio};

const RULE: &str = "Exit status: 0 ok; 1 the input was read and rejected; 2 a usage or file \
error";

fn run(args: &[&str], stdout: Stdio) -> Output {
    common::command()
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("bitlens runs")
}

/// Files for the cases, in a folder of the test `test` (tests run in parallel: one each).
struct Fixtures {
    dir: PathBuf,
}

impl Fixtures {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("bitlens-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let f = Fixtures { dir };
        let mut buf = [0u8; demo::MTU];
        let mut cat = demo::samples().pop().expect("a sample packet");
        let n = write_packet(&mut cat, &mut buf).expect("writes");
        f.write("packet.bin", &buf[..n]);
        buf[6] ^= 0x04;
        f.write("flipped.bin", &buf[..n]);
        f.write("a.json", br#"{"x": 1, "y": -2, "z": 3}"#);
        f.write("missing-field.json", br#"{"x": 1}"#);
        f.write("not.json", b"{x: 1");
        let save = std::fs::read(root().join("captures/savegame.tagged")).expect("the save");
        f.write("cut.tagged", &save[..save.len() - 3]);
        let vectors = std::fs::read_to_string(root().join("codec/tests/vectors/bitpacked.json"))
            .expect("the vectors");
        let wrong = vectors.replacen("2afca30f35fc67890900", "2afca30f35fc67890901", 1);
        assert_ne!(wrong, vectors, "the first vector's bytes were changed");
        f.write("wrong-vectors.json", wrong.as_bytes());
        f
    }

    fn write(&self, name: &str, bytes: &[u8]) {
        let path = self.dir.join(name);
        std::fs::create_dir_all(path.parent().expect("in the folder")).expect("a folder");
        std::fs::write(path, bytes).expect("writes");
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

#[test]
fn every_subcommand_follows_one_rule() {
    let f = Fixtures::new("exit-rule");
    let schema = "captures/demo.schema.toml";
    let (packet, flipped) = (f.path("packet.bin"), f.path("flipped.bin"));
    let out_pcap = f.path("out.pcap");
    let seeds = f.path("seeds");
    let game = f.path("game");
    f.write("game/Cargo.toml", b"[package]\nname = \"game\"\n");
    let [a, missing_field, not_json, cut, wrong] = [
        "a.json",
        "missing-field.json",
        "not.json",
        "cut.tagged",
        "wrong-vectors.json",
    ]
    .map(|n| f.path(n));
    let cases: Vec<(i32, Vec<&str>)> = vec![
        // The command line itself.
        (0, vec!["--help"]),
        (0, vec!["--version"]),
        (2, vec![]),
        (2, vec!["frobnicate"]),
        // inspect: shows, never rejects; a pipe is not a terminal.
        (2, vec!["inspect", "captures/demo.pcap"]),
        (2, vec!["inspect", "captures/no-such.pcap"]),
        // decode: shows, never rejects.
        (0, vec!["decode", "captures/faults.pcap"]),
        (2, vec!["decode", "captures/no-such.pcap"]),
        (
            2,
            vec!["decode", "captures/demo.pcap", "--decode", "1=nope"],
        ),
        // check: rejects a capture with datagrams that do not decode.
        (0, vec!["check", "captures/demo.pcap"]),
        (1, vec!["check", "captures/faults.pcap"]),
        (
            1,
            vec![
                "check",
                "captures/demo.pcap",
                "--decode",
                "40000=none",
                "--strict",
            ],
        ),
        (2, vec!["check", "captures"]),
        (2, vec!["check", "captures/demo.pcap", "--protocol-id", "x"]),
        (
            2,
            vec!["check", "captures/demo.pcap", "--schema", "README.md"],
        ),
        // profile: shows, never rejects but for a budget (inspector/tests/profile_cli.rs).
        (0, vec!["profile", "captures/faults.pcap"]),
        (0, vec!["profile", "captures/demo.pcap", "--json"]),
        (2, vec!["profile", "captures/no-such.pcap"]),
        (
            2,
            vec![
                "profile",
                "captures/demo.pcap",
                "--budget",
                "captures/no-such.toml",
            ],
        ),
        (
            2,
            vec!["profile", "captures/demo.pcap", "--budget", "README.md"],
        ),
        // decode-bytes: with the compiled demo protocol (the first registered) and a schema.
        (0, vec!["decode-bytes", &packet]),
        (0, vec!["decode-bytes", &packet, "--schema", schema]),
        (1, vec!["decode-bytes", &flipped]),
        (
            1,
            vec!["decode-bytes", &flipped, "--json", "--schema", schema],
        ),
        (1, vec!["decode-bytes", &packet, "--protocol-id", "0x1"]),
        (2, vec!["decode-bytes", "captures/no-such.bin"]),
        (2, vec!["decode-bytes", &packet, "--as", "nope"]),
        // proxy: runs until Ctrl-C (inspector/tests/proxy.rs); bad options are usage errors.
        (2, vec!["proxy", "--upstream", "127.0.0.1:9"]),
        (
            2,
            vec!["proxy", "--listen", "nowhere", "--upstream", "127.0.0.1:9"],
        ),
        (
            2,
            vec![
                "proxy",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "127.0.0.1:9",
                "--decode",
                "9=nope",
            ],
        ),
        // replay: a log that is not a proxy log is rejected input.
        (1, vec!["replay", &a, "--upstream", "127.0.0.1:9"]),
        (
            2,
            vec!["replay", "no-such.ndjson", "--upstream", "127.0.0.1:9"],
        ),
        // export-wireshark: a schema file, or a dissector of the program that has a schema
        // text (both of bitlens's are derived).
        (0, vec!["export-wireshark", "--schema", schema]),
        (2, vec!["export-wireshark"]),
        (2, vec!["export-wireshark", "--schema", "no-such.toml"]),
        (0, vec!["export-wireshark", "--as", "demo"]),
        // The derived message set: its [batch] section under the demo packets' [protocol].
        (0, vec!["export-wireshark", "--as", "batch"]),
        (2, vec!["export-wireshark", "--as", "nope"]),
        // seeds: the port is needed where the program reads several.
        (
            0,
            vec!["seeds", "captures/demo.pcap", "--port", "40000", &seeds],
        ),
        (2, vec!["seeds", "captures/demo.pcap", &seeds]),
        (
            2,
            vec!["seeds", "captures/demo.pcap", "--port", "1234", &seeds],
        ),
        (
            2,
            vec!["seeds", "captures/no-such.pcap", "--port", "1", &seeds],
        ),
        // fuzz-init: writes into a crate; a second run without --force would overwrite.
        (
            0,
            vec![
                "fuzz-init",
                "--packet",
                "game::Packet",
                "--crate-dir",
                &game,
            ],
        ),
        (
            2,
            vec![
                "fuzz-init",
                "--packet",
                "game::Packet",
                "--crate-dir",
                &game,
            ],
        ),
        (
            2,
            vec![
                "fuzz-init",
                "--packet",
                "game::Packet",
                "--crate-dir",
                "no-such",
            ],
        ),
        // synth
        (0, vec!["synth", &out_pcap, "--packets", "10"]),
        (2, vec!["synth", &out_pcap, "--packets", "0"]),
        (2, vec!["synth", "no-such-folder/x.pcap"]),
        // vectors
        (0, vec!["vectors", "codec/tests/vectors/bitpacked.json"]),
        (1, vec!["vectors", &wrong]),
        (2, vec!["vectors", "codec/tests/vectors/no-such.json"]),
        // tagged: a malformed document is rejected input.
        (0, vec!["tagged", "captures/savegame.tagged"]),
        (1, vec!["tagged", &cut]),
        (2, vec!["tagged", "captures/no-such.tagged"]),
        // encode: a value that does not fit is rejected input; a bad schema or type is usage.
        (
            0,
            vec![
                "encode", "--schema", schema, "--type", "PacketA", "--json", &a,
            ],
        ),
        (
            1,
            vec![
                "encode",
                "--schema",
                schema,
                "--type",
                "PacketA",
                "--json",
                &missing_field,
            ],
        ),
        (
            1,
            vec![
                "encode", "--schema", schema, "--type", "PacketA", "--json", &not_json,
            ],
        ),
        (
            2,
            vec!["encode", "--schema", schema, "--type", "Nope", "--json", &a],
        ),
        (
            2,
            vec![
                "encode",
                "--schema",
                "README.md",
                "--type",
                "PacketA",
                "--json",
                &a,
            ],
        ),
    ];
    for (want, args) in &cases {
        let o = run(args, Stdio::piped());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(*want),
            "bitlens {}: {err}",
            args.join(" ")
        );
        // A usage or file error says why on stderr; a rejection says why on either stream.
        let said = match want {
            2 => !err.trim().is_empty(),
            1 => !err.trim().is_empty() || !o.stdout.is_empty(),
            _ => true,
        };
        assert!(said, "bitlens {}: says why", args.join(" "));
    }
}

#[test]
fn an_output_that_cannot_be_written_is_a_file_error() {
    let f = Fixtures::new("exit-output");
    let full = || Stdio::from(File::create("/dev/full").expect("/dev/full"));
    let a = f.path("a.json");
    let args = [
        "encode",
        "--schema",
        "captures/demo.schema.toml",
        "--type",
        "PacketA",
        "--json",
        &a,
    ];
    let o = run(&args, full());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["check", "captures/demo.pcap"], full());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["profile", "captures/demo.pcap"], full());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Issue 31.1: standard output that cannot be written (`> /dev/full`) is named, the OS's
/// error number left out, with status 2, for every subcommand that writes to it; also a
/// small output that only fails when it is flushed at the end, and a one-line summary.
#[test]
fn a_full_standard_output_is_named() {
    let f = Fixtures::new("stdout-full");
    let full = || Stdio::from(File::create("/dev/full").expect("/dev/full"));
    let (small, synth) = (f.path("small.pcap"), f.path("synth.pcap"));
    let o = run(&["synth", "--packets", "2", &small], Stdio::null());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (a, packet) = (f.path("a.json"), f.path("packet.bin"));
    let schema = "captures/demo.schema.toml";
    let vectors = "codec/tests/vectors/bitpacked.json";
    let cases: &[&[&str]] = &[
        &["decode", "captures/demo.pcap"],
        &["decode", "--json", "captures/demo.pcap"],
        &["decode", &small],
        &["decode", "--json", &small],
        &["check", "captures/demo.pcap"],
        &["profile", "captures/demo.pcap"],
        &["profile", "--json", "captures/demo.pcap"],
        &["decode-bytes", &packet],
        &["decode-bytes", "--json", &packet],
        &["export-wireshark", "--schema", schema],
        &["tagged", "captures/savegame.tagged"],
        &["tagged", "--json", "captures/savegame.tagged"],
        &[
            "encode", "--schema", schema, "--type", "PacketA", "--json", &a,
        ],
        &["synth", "--packets", "2", &synth],
        &["vectors", vectors],
    ];
    for args in cases {
        let o = run(args, full());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            stderr,
            "bitlens: cannot write to standard output: No space left on device\n",
            "bitlens {}",
            args.join(" ")
        );
        assert_eq!(o.status.code(), Some(2), "bitlens {}", args.join(" "));
    }
}

#[test]
fn help_states_the_rule_for_every_subcommand() {
    let o = run(&["--help"], Stdio::piped());
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(help.contains(RULE), "{help}");
    let subcommands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert_eq!(
        subcommands,
        [
            "inspect",
            "decode",
            "check",
            "profile",
            "decode-bytes",
            "proxy",
            "replay",
            "export-wireshark",
            "seeds",
            "fuzz-init",
            "synth",
            "vectors",
            "tagged",
            "encode"
        ]
    );
    for c in &subcommands {
        let o = run(&[c, "--help"], Stdio::piped());
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{c}");
        assert!(text.contains(RULE), "{c}: {text}");
    }
}

/// A reader of stdout that goes away early (`bitlens ... | head -1`) stops the program quietly
/// with status 0, whichever subcommand writes: no "Broken pipe" message, no file-error status.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::io::Read;
    let root = root();
    let big = root.join("captures/demo.pcap");
    let tagged = root.join("captures/savegame.tagged");
    for args in [
        vec!["export-wireshark", "--as", "batch"],
        vec!["decode", big.to_str().unwrap(), "--fields"],
        vec!["tagged", tagged.to_str().unwrap(), "--json"],
    ] {
        let mut child = common::command()
            .args(&args)
            .current_dir(&root)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bitlens runs");
        // Read one byte, then close the pipe while the program is still writing.
        let mut first = [0u8; 1];
        child
            .stdout
            .take()
            .expect("piped")
            .read_exact(&mut first)
            .expect("some output");
        let out = child.wait_with_output().expect("bitlens ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    }
}

/// A reader that is gone before the program writes anything (`bitlens profile ... --json |
/// true`): the first write fails, and the program still ends quietly with status 0, also where
/// the output goes through `serde_json::to_writer` (whose error hides the I/O error's kind
/// from `source()`).
#[test]
fn a_pipe_closed_before_any_output_ends_quietly() {
    let root = root();
    let demo = root.join("captures/demo.pcap");
    let demo = demo.to_str().unwrap();
    for args in [
        vec!["profile", demo, "--json"],
        vec!["profile", demo],
        vec!["decode", demo, "--json"],
        vec!["check", demo],
    ] {
        let mut child = common::command()
            .args(&args)
            .current_dir(&root)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bitlens runs");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("bitlens ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    }
}

/// A reader of stderr that is gone (`bitlens check cut.pcap 2>&1 | head -1`, the error line
/// written after `head` left): the status is still the rule's, never a panic's 101.
#[test]
fn a_closed_error_pipe_keeps_the_status() {
    let f = Fixtures::new("closed-stderr");
    f.write("empty.pcap", b"");
    f.write(
        "budget.toml",
        b"[field]\n\"SceneUpdate.objects[].position.x\" = 16\n",
    );
    let demo = root().join("captures/demo.pcap");
    let demo = demo.to_str().expect("a UTF-8 path");
    let key = root().join("captures/netcode.key");
    let key = key.to_str().expect("a UTF-8 path");
    let (budget, plain) = (f.path("budget.toml"), f.path("plain.pcapng"));
    for (args, want) in [
        (vec!["check", &f.path("missing.pcap")], 2),
        (vec!["check", &f.path("empty.pcap")], 2),
        (vec!["decode-bytes", &f.path("flipped.bin")], 1),
        // The lines a run writes on stderr before its status: over budget, warnings.
        (vec!["check", demo, "--budget", &budget], 1),
        (vec!["profile", demo, "--budget", &budget], 1),
        (vec!["check", demo, "--netcode-key", key], 0),
        (vec!["decode", demo, "--write-plaintext", &plain], 0),
    ] {
        let mut child = common::command()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bitlens runs");
        drop(child.stderr.take());
        let status = child.wait().expect("bitlens ends");
        assert_eq!(status.code(), Some(want), "{args:?}");
    }
}

/// `--decode`'s help names every NAME the option takes, the transports too (it used to stop at
/// `schema and schema-batch ... or none`, while `--decode 40000=yojimbo` is how the README
/// reads a yojimbo game).
#[test]
fn decode_help_names_the_transports() {
    for sub in ["check", "decode", "profile", "inspect", "proxy"] {
        let o = run(&[sub, "--help"], Stdio::piped());
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("the transports netcode, netcode+NAME, yojimbo, or none"),
            "{sub}: {help}"
        );
        assert!(
            help.contains("PORT=yojimbo"),
            "{sub}: --netcode-key: {help}"
        );
    }
}

/// An output in a folder that does not exist: a file error whose line names the file and the
/// missing folder, not the OS's "No such file or directory (os error 2)" (helper trial3).
#[test]
fn an_output_in_a_missing_folder_names_the_folder() {
    let f = Fixtures::new("exit-missing-folder");
    let folder = f.path("no-such-folder");
    let out = format!("{folder}/out.pcapng");
    let cases: [&[&str]; 2] = [
        &["synth", &out, "--packets", "10"],
        &[
            "decode",
            "captures/netcode.pcap",
            "--decode",
            "5000=netcode+demo",
            "--netcode-key",
            "captures/netcode.key",
            "--write-plaintext",
            &out,
        ],
    ];
    for args in cases {
        let o = run(args, Stdio::null());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim_end(),
            format!("bitlens: {out}: cannot create: no such folder {folder}"),
            "bitlens {}",
            args.join(" ")
        );
    }
}

/// A capture damaged before its first datagram (its first record claims 2 GiB): `inspect`
/// does not open the TUI on an empty list but says the damage on one line, exit status 2,
/// as `decode` does (helper trial3). With stdout a pipe, before the fix it said only
/// "inspect needs a terminal".
#[test]
fn inspect_refuses_a_capture_damaged_before_any_datagram() {
    let f = Fixtures::new("exit-inspect-damaged");
    let demo = std::fs::read(root().join("captures/demo.pcap")).expect("the demo capture");
    let mut bytes = demo[..2000].to_vec();
    bytes[32..36].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    f.write("first-record.pcap", &bytes);
    let path = f.path("first-record.pcap");
    let want = format!(
        "bitlens: {path}: frame 1 at byte 24: record claims 2147483663 bytes with its header, \
         more than the 16 MiB limit"
    );
    for cmd in ["inspect", "decode"] {
        let o = run(&[cmd, &path], Stdio::piped());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert_eq!(err.trim_end(), want, "{cmd}");
    }
}

/// `profile --svg` into a missing folder or onto a folder: the same plain one-line reasons as
/// the capture outputs, exit status 2 (helper trial3).
#[test]
fn a_flame_graph_output_says_why_it_cannot_be_created() {
    let f = Fixtures::new("exit-svg-folder");
    let folder = f.path("no-such-folder");
    let out = format!("{folder}/x.svg");
    let o = run(
        &["profile", "captures/demo.pcap", "--svg", &out],
        Stdio::null(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("bitlens: {out}: cannot create: no such folder {folder}")
    );
    let o = run(
        &["profile", "captures/demo.pcap", "--svg", "captures"],
        Stdio::null(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "bitlens: captures: cannot create: is a folder, not a file"
    );
}
