//! `--decode PORT=yojimbo` in every tool, on the reference's own captures
//! (`captures/yojimbo-*.pcap`, key `captures/yojimbo-reference.key`): `decode --json` and
//! `check` with the samples' configuration given from Rust as a game's `main` would
//! (`Cli::yojimbo`, hand-written `Typed` bodies), against the soak capture's labels (written by
//! an independent checker); without a configuration (the reliable header and the missing
//! configuration's reason); with wrong keys (netcode's MAC errors); a configuration the traffic
//! breaks (the yojimbo layer named); and the TUI's block node under tmux.

mod common;
#[path = "../../codec/yojimbo/tests/samples/mod.rs"]
mod samples;

use bitlens::Cli;
use bitlens::cmd::common::{Context, DecodeOpts};
use bitlens::cmd::{check, decode};
use bitlens_yojimbo::Config;
use common::tmux;
use samples::{client_server_config, soak_config};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The samples' inspector, as a game's `main` builds it.
fn cli(config: Config) -> Cli {
    Cli::new("soak")
        .yojimbo(config)
        .stacked(40000, "yojimbo", None)
}

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures")
}

fn keyed() -> DecodeOpts {
    DecodeOpts {
        netcode_key: Some(captures().join("yojimbo-reference.key")),
        ..DecodeOpts::default()
    }
}

fn json_lines(cli: &Cli, capture: &str, opts: &DecodeOpts) -> Vec<Json> {
    let dissectors = opts
        .dissectors(&Context::new("bitlens", cli.dissectors()))
        .expect("valid options");
    let mut out = Vec::new();
    let damage = decode::run(
        &captures().join(capture),
        &dissectors,
        true,
        false,
        &mut out,
    )
    .expect("decodes");
    assert_eq!(damage, None);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn check_table(cli: &Cli, capture: &str, opts: &DecodeOpts) -> (check::Outcome, String) {
    let dissectors = opts
        .dissectors(&Context::new("bitlens", cli.dissectors()))
        .expect("valid options");
    let mut table = Vec::new();
    let o = check::run(&captures().join(capture), &dissectors, &mut table).expect("checks");
    (o, String::from_utf8(table).unwrap())
}

/// A datagram's fields by path (the last of a repeated path).
fn fields(line: &Json) -> BTreeMap<String, Json> {
    line["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_owned(), f["value"].clone()))
        .collect()
}

fn labels() -> Vec<Json> {
    std::fs::read_to_string(captures().join("yojimbo-soak.labels.json"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The messages of a datagram's connection packet, as the labels list them: per entry, its
/// channel and `[id, type, sequence]` per message.
fn messages(f: &BTreeMap<String, Json>) -> Vec<(i64, Vec<[i64; 3]>)> {
    let mut entries = Vec::new();
    for e in 0.. {
        let p = format!("yojimbo.entries[{e}]");
        let Some(channel) = f.get(&format!("{p}.channel")) else {
            if f.contains_key(&format!("{p}.block_message")) {
                panic!("channel elided with two channels");
            }
            break;
        };
        let mut ms = Vec::new();
        for m in 0.. {
            let Some(ty) = f.get(&format!("{p}.messages[{m}].type")) else {
                break;
            };
            let id = &f[&format!("{p}.ids[{m}]")];
            let seq = &f[&format!("{p}.messages[{m}].body.sequence")];
            ms.push([
                id.as_i64().unwrap(),
                ty.as_i64().unwrap(),
                seq.as_i64().unwrap(),
            ]);
        }
        entries.push((channel.as_i64().unwrap(), ms));
    }
    entries
}

#[test]
fn the_soak_capture_decodes_every_message_and_block_with_a_programs_configuration() {
    let cli = cli(soak_config());
    let lines = json_lines(&cli, "yojimbo-soak.pcap", &keyed());
    check_soak(&lines);
    // check: nothing wrong, nothing encrypted.
    let (o, table) = check_table(&cli, "yojimbo-soak.pcap", &keyed());
    assert_eq!((o.problems, o.encrypted, o.undecoded), (0, 0, 0), "{table}");
    assert!(table.contains("yojimbo.packet (reassembled)"), "{table}");
}

/// The `bitlens` binary's arguments that read a yojimbo capture with the samples' key.
fn soak_args<'a>(command: &'a str, capture: &'a str) -> Vec<&'a str> {
    vec![
        command,
        capture,
        "--decode",
        "40000=yojimbo",
        "--netcode-key",
        "yojimbo-reference.key",
    ]
}

/// [`soak_args`] with the soak's configuration (`--schema yojimbo.schema.toml`).
fn configured_args<'a>(command: &'a str, capture: &'a str) -> Vec<&'a str> {
    let mut args = soak_args(command, capture);
    args.extend(["--schema", "yojimbo.schema.toml"]);
    args
}

fn stdout_json(out: &std::process::Output) -> Vec<Json> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_reference_captures_decode_with_their_schemas() {
    let mut args = configured_args("decode", "yojimbo-soak.pcap");
    args.push("--json");
    let out = bitlens(&args);
    assert!(out.status.success(), "{out:?}");
    check_soak(&stdout_json(&out));
    let args = configured_args("check", "yojimbo-soak.pcap");
    let out = bitlens(&args);
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert!(table.contains("618 of 618 datagrams with a decoder decoded, 0 with problems"));

    // profile: a reassembled packet's and a block's entries (numbered after the datagram's
    // bits) are not counted again: the rows add up to the datagrams' bits.
    let args = configured_args("profile", "yojimbo-soak.pcap");
    let out = bitlens(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let total: f64 = text
        .lines()
        .skip_while(|l| !l.contains("field or overhead"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let share = l.split_whitespace().nth(2).unwrap();
            share.trim_end_matches('%').parse::<f64>().unwrap()
        })
        .sum();
    assert!((99.0..=100.5).contains(&total), "{total}\n{text}");

    let mut args = soak_args("decode", "yojimbo-client-server.pcap");
    args.extend(["--json", "--schema", "yojimbo-client-server.schema.toml"]);
    let out = bitlens(&args);
    assert!(out.status.success(), "{out:?}");
    check_client_server(&stdout_json(&out));
}

/// The soak capture's datagrams as `decode --json` gives them, against its labels and the
/// sample's source.
fn check_soak(lines: &[Json]) {
    let labels = labels();
    assert_eq!(lines.len(), 618);
    let (mut messages_seen, mut blocks, mut reassembled) = (0, Vec::new(), 0);
    for (line, label) in lines.iter().zip(&labels) {
        let frame = line["frame"].as_u64().unwrap();
        assert_eq!(label["frame"].as_u64(), Some(frame));
        assert_eq!(line["status"], "ok", "frame {frame}: {line}");
        assert_eq!(line["decoder"], "yojimbo");
        let f = fields(line);
        if label["netcode"] != "payload" {
            continue;
        }
        // Every payload's MAC verified (netcode's entry, no error), the reliable header read.
        assert!(f.contains_key("netcode.mac"), "frame {frame}");
        if let Some(r) = label.get("reliable") {
            assert_eq!(f["yojimbo.reliable.sequence"], r["seq"], "frame {frame}");
            let seq = r["seq"].as_i64().unwrap();
            let ack = match f.get("yojimbo.reliable.ack_delta") {
                Some(d) => (seq - d.as_i64().unwrap()).rem_euclid(65536),
                None => f["yojimbo.reliable.ack"].as_i64().unwrap(),
            };
            assert_eq!(Some(ack), r["ack"].as_i64(), "frame {frame}");
        }
        if let Some(r) = label.get("reliable_fragment") {
            assert_eq!(f["yojimbo.reliable.sequence"], r["seq"], "frame {frame}");
            assert_eq!(
                f["yojimbo.reliable.fragment_id"], r["fragment"],
                "frame {frame}"
            );
            if label.get("reassembled").is_none() {
                let k = r["fragment"].as_u64().unwrap() + 1;
                let n = r["num_fragments"].as_u64().unwrap();
                assert_eq!(
                    line["packet_type"],
                    format!("yojimbo.fragment {k} of {n}"),
                    "frame {frame}"
                );
            }
        }
        if let Some(r) = label.get("reassembled") {
            reassembled += 1;
            assert_eq!(line["packet_type"], "yojimbo.packet (reassembled)");
            let what = f["yojimbo.reassembled"].as_str().unwrap().to_owned();
            let head = format!("packet {}: {} bytes from datagrams ", r["seq"], r["bytes"]);
            let from = what
                .strip_prefix(&head)
                .unwrap_or_else(|| panic!("frame {frame}: {what}"));
            // The first copy of each fragment (the labels also list repeated copies).
            let from: Vec<u64> = from.split(", ").map(|x| x.parse().unwrap()).collect();
            let frames = r["frames"].as_array().unwrap();
            assert!(
                from.iter().all(|x| frames.contains(&Json::from(*x))),
                "frame {frame}: {what}"
            );
            assert_eq!(from.last(), Some(&frame));
        }
        // Every connection packet decodes, with the labels' messages.
        if let Some(c) = label.get("connection") {
            let want: Vec<(i64, Vec<[i64; 3]>)> = c["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let ms = e["messages"].as_array().map_or(Vec::new(), |ms| {
                        ms.iter()
                            .map(|m| {
                                let m = m.as_array().unwrap();
                                [0, 1, 2].map(|i| m[i].as_i64().unwrap())
                            })
                            .collect()
                    });
                    (e["channel"].as_i64().unwrap(), ms)
                })
                .collect();
            let got = messages(&f);
            messages_seen += got.iter().map(|(_, m)| m.len()).sum::<usize>();
            assert_eq!(got, want, "frame {frame}");
            assert_eq!(
                f["yojimbo.num_entries"].as_u64(),
                Some(want.len() as u64),
                "frame {frame}"
            );
        }
        // A complete block on the datagram that completed it, with its bytes.
        if let Some(b) = label.get("block_complete") {
            let p = "yojimbo.blocks[0]";
            assert_eq!(f[&format!("{p}.channel")], b["channel"], "frame {frame}");
            assert_eq!(f[&format!("{p}.message_id")], b["message_id"]);
            assert_eq!(f[&format!("{p}.type_name")], "TestBlockMessage");
            assert_eq!(f[&format!("{p}.body.sequence")], b["sequence"]);
            let data = hex::decode(f[&format!("{p}.data")].as_str().unwrap()).unwrap();
            assert_eq!(Some(data.len() as u64), b["size"].as_u64());
            let seq = b["sequence"].as_u64().unwrap();
            assert!(
                data.iter()
                    .enumerate()
                    .all(|(j, &x)| x == (seq as usize + j) as u8),
                "frame {frame}: the sample's block bytes"
            );
            // The datagrams it came from (those its fragments' first copies came in; the
            // labels count every copy, YOJIMBO-NOTES.md): payloads of the same direction,
            // ascending, the last this one.
            let from: Vec<u64> = f[&format!("{p}.datagrams")]
                .as_str()
                .unwrap()
                .split(", ")
                .map(|x| x.parse().unwrap())
                .collect();
            assert!(from.windows(2).all(|w| w[0] < w[1]), "frame {frame}");
            for x in &from {
                let l = &labels[*x as usize - 1];
                assert_eq!(l["netcode"], "payload", "frame {frame}: {x}");
                assert_eq!(l["dir"], label["dir"], "frame {frame}: {x}");
            }
            assert_eq!(from.last(), Some(&frame));
            blocks.push((frame, data.len()));
        } else {
            assert!(!f.contains_key("yojimbo.blocks[0]"), "frame {frame}");
        }
    }
    assert_eq!(messages_seen, 4167, "TestMessage entries");
    assert_eq!(reassembled, 73);
    assert_eq!(
        blocks.iter().map(|b| b.1).collect::<Vec<_>>(),
        [2674, 2377, 2707, 2740]
    );
    // The incomplete block at the end is reported on a disconnect, as a note.
    let incomplete = lines.iter().any(|l| {
        fields(l).values().any(|v| {
            v.as_str()
                .is_some_and(|s| s.starts_with("block of message 251 on channel 1 incomplete"))
        })
    });
    assert!(incomplete, "the unfinished block 251 is reported");
    // And so are the fragmented packets whose fragments the simulated loss dropped.
    let lost: usize = lines
        .iter()
        .map(|l| {
            let f = fields(l);
            f.values()
                .filter(|v| v.as_str().is_some_and(|s| s.contains(" incomplete: ")))
                .filter(|v| v.as_str().is_some_and(|s| s.starts_with("packet ")))
                .count()
        })
        .sum();
    assert_eq!(lost, 63, "packets never complete");
}

#[test]
fn the_client_server_capture_decodes_its_empty_packets() {
    let cli = cli(client_server_config());
    let lines = json_lines(&cli, "yojimbo-client-server.pcap", &keyed());
    check_client_server(&lines);
    let (o, table) = check_table(&cli, "yojimbo-client-server.pcap", &keyed());
    assert_eq!((o.problems, o.encrypted), (0, 0), "{table}");
}

/// The client/server capture: every payload an empty connection packet.
fn check_client_server(lines: &[Json]) {
    assert_eq!(lines.len(), 362);
    let mut payloads = 0;
    for line in lines {
        assert_eq!(line["status"], "ok", "{line}");
        let f = fields(line);
        if line["packet_type"] == "yojimbo.packet" {
            payloads += 1;
            assert_eq!(f["yojimbo.num_entries"], 0, "{line}");
            assert_eq!(f["yojimbo.connection_packet"], "00");
        }
    }
    assert_eq!(payloads, 346);
}

fn bitlens(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bitlens"))
        .args(args)
        .current_dir(captures())
        .output()
        .expect("runs")
}

#[test]
fn without_a_configuration_the_reliable_header_shows_and_the_reason_is_given() {
    let out = bitlens(&[
        "decode",
        "--json",
        "yojimbo-soak.pcap",
        "--decode",
        "40000=yojimbo",
        "--netcode-key",
        "yojimbo-reference.key",
    ]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Json> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Frame 25: the first payload, `3e 00 00 01 00 00 00 00` (sequence 0, ack 0 - 1).
    let six = &lines[24];
    assert_eq!(six["status"], "encrypted");
    assert_eq!(six["error"]["kind"], "no_configuration");
    assert!(
        six["error"]["message"]
            .as_str()
            .unwrap()
            .contains("give --schema with a [yojimbo] section")
    );
    let f = fields(six);
    assert_eq!(f["yojimbo.reliable.sequence"], 0);
    assert_eq!(f["yojimbo.reliable.ack_delta"], 1);
    assert!(f.contains_key("netcode.mac"));
    assert!(!f.contains_key("yojimbo.num_entries"));
    let payloads = lines
        .iter()
        .filter(|l| l["packet_type"].as_str().unwrap().starts_with("yojimbo"))
        .count();
    assert_eq!(payloads, 358);
    assert!(lines.iter().all(|l| l["status"] != "error"));

    let out = bitlens(&soak_args("check", "yojimbo-soak.pcap"));
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert!(
        table.contains("yojimbo: encrypted/no_configuration"),
        "{table}"
    );
    // The decrypted payloads (reliable header and connection packet) for other tools: one
    // datagram per payload packet, at the same addresses.
    let plain = std::env::temp_dir().join(format!("bitlens-yojimbo-{}.pcapng", std::process::id()));
    let plain_arg = plain.to_str().unwrap();
    let mut args = soak_args("decode", "yojimbo-soak.pcap");
    args.extend(["--write-plaintext", plain_arg]);
    let out = bitlens(&args);
    assert!(out.status.success(), "{out:?}");
    let out = bitlens(&["decode", "--json", plain_arg]);
    let written = stdout_json(&out);
    std::fs::remove_file(&plain).ok();
    assert_eq!(written.len(), 358);
    assert_eq!(written[0]["frame"], 1);
    assert_eq!(
        written[0]["len"], 9,
        "frame 25's plaintext: header and empty packet"
    );
    // A transport that reads its payload itself takes no inner dissector.
    let out = bitlens(&[
        "check",
        "yojimbo-soak.pcap",
        "--decode",
        "40000=yojimbo+demo",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("name it alone, as in --decode PORT=yojimbo"),
        "{err}"
    );
    // Wireshark's Lua cannot decrypt: no half dissector is exported, in one line.
    for name in ["yojimbo", "netcode+demo"] {
        let out = bitlens(&["export-wireshark", "--as", name]);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("a Wireshark Lua dissector cannot decrypt it"),
            "{err}"
        );
    }
}

#[test]
fn wrong_keys_are_netcodes_errors() {
    let dir = std::env::temp_dir().join(format!("bitlens-yojimbo-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A wrong private key: the connection request's token does not open.
    let key = dir.join("wrong.key");
    std::fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    let opts = DecodeOpts {
        netcode_key: Some(key),
        ..DecodeOpts::default()
    };
    let cli = cli(soak_config());
    let lines = json_lines(&cli, "yojimbo-soak.pcap", &opts);
    assert_eq!(lines[0]["error"]["kind"], "token_mac_mismatch");
    let (o, table) = check_table(&cli, "yojimbo-soak.pcap", &opts);
    assert_eq!(o.problems, 1, "{table}");
    assert!(
        table.contains("netcode: error/token_mac_mismatch"),
        "{table}"
    );
    // Wrong session keys (a key log): every encrypted packet's MAC fails, at netcode's MAC.
    let log = dir.join("wrong.keylog");
    let line = format!(
        "NETCODE_CLIENT 127.0.0.1:50512 0 {} {}\n",
        "22".repeat(32),
        "33".repeat(32)
    );
    std::fs::write(&log, line).unwrap();
    let opts = DecodeOpts {
        netcode_keylog: Some(log),
        ..DecodeOpts::default()
    };
    let lines = json_lines(&cli, "yojimbo-soak.pcap", &opts);
    let macs = lines
        .iter()
        .filter(|l| l["error"]["kind"] == "mac_mismatch" && l["error"]["field"] == "netcode.mac")
        .count();
    assert_eq!(macs, 617, "every packet but the request");
    let (o, table) = check_table(&cli, "yojimbo-soak.pcap", &opts);
    assert_eq!(o.problems, 617, "{table}");
    assert!(table.contains("netcode: error/mac_mismatch"), "{table}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_configuration_the_traffic_breaks_is_the_yojimbo_layers_error() {
    // At most 1 packet fragment: every fragment of the soak's 2- and 3-fragment packets is
    // refused at reliable.io's fragment count, and the check names the yojimbo layer.
    let mut config = soak_config();
    config.reliable.max_fragments = 1;
    let cli = cli(config);
    let lines = json_lines(&cli, "yojimbo-soak.pcap", &keyed());
    let refused: Vec<&Json> = lines.iter().filter(|l| l["status"] == "error").collect();
    assert_eq!(refused.len(), 290, "every fragment datagram");
    for l in &refused {
        assert_eq!(l["error"]["kind"], "packet_fragment_count");
        assert_eq!(
            l["error"]["field"],
            "yojimbo.reliable.num_fragments_minus_1"
        );
        // The fragment header's fourth byte, inside netcode's payload (after 1 + 8 + header).
        assert!(l["error"]["bit"].as_u64().unwrap() > 8 * 4);
    }
    let (o, table) = check_table(&cli, "yojimbo-soak.pcap", &keyed());
    assert_eq!(o.problems, 290, "{table}");
    assert!(
        table.contains("yojimbo: error/packet_fragment_count"),
        "{table}"
    );
}

/// The samples' inspector as a program (`cli(soak_config())`), for the tmux test to run in a
/// real terminal: the test binary runs itself with `BITLENS_YOJIMBO_PROGRAM` holding the
/// arguments, separated by spaces (none holds one). Without that variable (an ordinary test run) it does nothing.
#[test]
fn samples_program() {
    let Ok(args) = std::env::var("BITLENS_YOJIMBO_PROGRAM") else {
        return;
    };
    let args = std::iter::once("soak").chain(args.split_whitespace());
    std::process::exit(cli(soak_config()).status_from(args).into());
}

#[test]
fn the_tui_shows_a_complete_block_as_its_own_node() {
    if !tmux::or_skip() {
        return;
    }
    // The test binary is the game's program (`samples_program`), run in the captures folder.
    let command = format!(
        "cd captures && BITLENS_YOJIMBO_PROGRAM='inspect yojimbo-soak.pcap --decode \
         40000=yojimbo --netcode-key yojimbo-reference.key' {} --exact samples_program \
         --nocapture --test-threads=1",
        std::env::current_exe().expect("the test binary").display()
    );
    tmux::session("yojimbo", &command, |socket| {
        tmux::expect(socket, &["Packets 1/618"]);
        // Frame 188 completed the block of message 81 (client to server).
        tmux::send_keys(socket, &["/", "188", "Enter"]);
        tmux::expect(socket, &["yojimbo.packet (reassembled)"]);
        tmux::send_keys(socket, &["Enter", "G"]);
        // The block: a node of its own in the yojimbo scope, listing its datagrams.
        tmux::expect(
            socket,
            &[
                "▾ blocks",
                "▾ [0] = \"channel 1, message 81 (TestBlockMessage",
                "type_name = \"TestBlockMessage\"",
                "datagrams = \"152, 153, 157, 184, 188\"",
            ],
        );
        tmux::send_keys(socket, &["q"]);
    });
}

/// With the key but without `--schema`, yojimbo's payloads decrypt but are not read: `check`'s
/// summary must not say they are "encrypted without a key" (helper trial3).
#[test]
fn check_without_a_configuration_does_not_blame_the_key() {
    let out = bitlens(&soak_args("check", "yojimbo-soak.pcap"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let last = stdout.lines().last().expect("a summary line");
    assert_eq!(
        last,
        "260 of 618 datagrams with a decoder decoded, 0 with problems, 358 encrypted and not \
         read (no key or no configuration, above)"
    );
    assert!(
        stdout.contains("give --schema with a [yojimbo] section"),
        "{stdout}"
    );
}

/// Issue 31.8: a key that does not open the connect tokens is not "no key": the summary says
/// the payloads could not be opened with the given key, for yojimbo and for bare netcode.
#[test]
fn check_with_a_wrong_key_says_the_key_does_not_open_them() {
    let wrong = std::env::temp_dir().join(format!("bitlens-wrong-{}.key", std::process::id()));
    std::fs::write(&wrong, format!("{}\n", "07".repeat(32))).expect("writes the key");
    let wrong = wrong.to_str().expect("a UTF-8 path");
    let mut yojimbo = configured_args("check", "yojimbo-soak.pcap");
    let key = yojimbo
        .iter()
        .position(|&a| a == "--netcode-key")
        .expect("a key")
        + 1;
    yojimbo[key] = wrong;
    let netcode = [
        "check",
        "netcode.pcap",
        "--decode",
        "5000=netcode+demo",
        "--netcode-key",
        wrong,
    ];
    for args in [&yojimbo[..], &netcode[..]] {
        let out = bitlens(args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().expect("a summary line");
        assert!(
            last.ends_with(
                " encrypted that could not be opened with the given key (token_mac_mismatch, \
                 above)"
            ),
            "{}: {stdout}",
            args[1]
        );
        assert!(!last.contains("without a key"), "{last}");
    }
    // The right key: nothing of it.
    let out = bitlens(&[
        "check",
        "netcode.pcap",
        "--decode",
        "5000=netcode+demo",
        "--netcode-key",
        "netcode.key",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("could not be opened"), "{stdout}");
    // No key at all: still "without a key".
    let out = bitlens(&["check", "netcode.pcap", "--decode", "5000=netcode+demo"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("encrypted without a key"), "{stdout}");
}

/// The first `n` records of the pcap `bytes` (a capture stopped early, as a user's may be).
fn pcap_prefix(bytes: &[u8], n: usize) -> Vec<u8> {
    let mut end = 24;
    for _ in 0..n {
        let len = u32::from_le_bytes(bytes[end + 8..end + 12].try_into().unwrap()) as usize;
        end += 16 + len;
    }
    bytes[..end].to_vec()
}

/// Issue 31.7: a block whose fragments stopped arriving because the capture ended is named by
/// `check` (its own section) and `decode` (a warning), with the fragments seen of how many;
/// the whole soak capture ends with disconnects, which report what they held themselves.
#[test]
fn a_block_pending_at_the_capture_s_end_is_reported() {
    let soak = std::fs::read(captures().join("yojimbo-soak.pcap")).expect("the soak capture");
    let cut = std::env::temp_dir().join(format!("bitlens-soak560-{}.pcap", std::process::id()));
    std::fs::write(&cut, pcap_prefix(&soak, 560)).expect("writes the cut capture");
    let cut_path = cut.to_str().expect("a UTF-8 path");
    let block = "yojimbo 127.0.0.1:40000 -> 127.0.0.1:50512: block of message 251 on channel 1 \
                 incomplete: 3 of 9 fragments arrived, in datagrams 516, 517, 524, 525, 544, 550";
    let out = bitlens(&configured_args("check", cut_path));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("\nstill in reassembly when the capture ended:\n"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("\n  {block}\n")), "{stdout}");
    assert!(
        stdout.contains("-> 127.0.0.1:50512: 29 fragmented packets incomplete (sequences 28, "),
        "{stdout}"
    );
    let out = bitlens(&configured_args("decode", cut_path));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "bitlens: warning: {cut_path}: still in reassembly when the capture ended: {block}\n"
        )),
        "{stderr}"
    );
    // `profile` says it too: a note line each in the table, a list in the JSON.
    let out = bitlens(&configured_args("profile", cut_path));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let note = "note: still in reassembly when the capture ended: ";
    assert_eq!(stdout.matches(note).count(), 3, "{stdout}");
    assert!(
        stdout.contains(&format!("\n{note}yojimbo 127.0.0.1:40000 -> ")),
        "{stdout}"
    );
    let mut json = configured_args("profile", cut_path);
    json.push("--json");
    let out = bitlens(&json);
    let profile: Json = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let pending = profile["pending"].as_array().expect("a list of lines");
    assert_eq!(pending.len(), 3, "{pending:?}");
    assert!(pending.iter().any(|l| l == block), "{pending:?}");
    // The whole capture: its disconnects ended the connections, nothing is left pending.
    let out = bitlens(&configured_args("check", "yojimbo-soak.pcap"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("still in reassembly"), "{stdout}");
    let out = bitlens(&configured_args("profile", "yojimbo-soak.pcap"));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("still in reassembly"),
        "nothing pending, no note"
    );
    let mut json = configured_args("profile", "yojimbo-soak.pcap");
    json.push("--json");
    let profile: Json = serde_json::from_slice(&bitlens(&json).stdout).expect("one JSON object");
    assert!(profile.get("pending").is_none(), "left out when empty");
    let _ = std::fs::remove_file(&cut);
}
