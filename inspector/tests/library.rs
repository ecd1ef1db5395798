//! The inspector as a library (issue 15 section 2): a protocol that is not the demo, compiled
//! into a packet set and a batch message set, registered on its own ports with [`Cli`], gets
//! `decode`, `check` and `decode-bytes` with its own packet types, `--decode PORT=NAME` and
//! `--protocol-id`.

use bitlens::Cli;
use bitlens::capture::Timestamp;
use bitlens::capture::write::{SynthDatagram, WriteFormat, to_bytes};
use bitlens::cmd::common::{Context, DecodeOpts};
use bitlens::cmd::{check, decode, decode_bytes};
use bitlens_batch::{BatchStruct, BatchWriter, MessageEnum, UpdateStage};
use bitlens_codec::dissect::Status;
use bitlens_codec::packet::{Packet, Protocol, ProtocolId, write_packet};
use bitlens_codec::stream::Stream;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::LazyLock;

static ARENA: LazyLock<Protocol> = LazyLock::new(|| Protocol {
    name: "arena".into(),
    id: ProtocolId::U32(0xA2E7_A001),
    packet_types: vec!["Input".into(), "Chat".into()],
    mtu: 1200,
});

/// A small arena shooter's packets: aim and buttons, or a chat line.
#[derive(Debug, PartialEq)]
enum Arena {
    Input { aim: i32, buttons: u64 },
    Chat { text: String },
}

impl Packet for Arena {
    fn protocol() -> &'static Protocol {
        &ARENA
    }
    fn packet_type(&self) -> u32 {
        match self {
            Arena::Input { .. } => 0,
            Arena::Chat { .. } => 1,
        }
    }
    fn empty(t: u32) -> Option<Self> {
        match t {
            0 => Some(Arena::Input { aim: 0, buttons: 0 }),
            1 => Some(Arena::Chat {
                text: String::new(),
            }),
            _ => None,
        }
    }
    fn serialize_body<S: Stream>(&mut self, s: &mut S) -> bitlens_codec::Result<()> {
        match self {
            Arena::Input { aim, buttons } => {
                s.int_as("aim", aim, 0, 359)?;
                s.bits("buttons", buttons, 5)?;
                s.check("input")
            }
            Arena::Chat { text } => s.string("text", text, 63),
        }
    }
}

/// One batch message type: a kill notice.
#[derive(Debug, Default, BatchStruct)]
#[batch(message_type = 9)]
struct Kill {
    killer: u8,
    victim: u8,
}

/// The arena's batch messages.
#[derive(Debug, MessageEnum)]
enum ArenaMessage {
    Kill(Kill),
}

/// The game's inspector, as its `main` builds it.
fn cli() -> Cli {
    Cli::new("arena")
        .packets::<Arena>(7777, "arena")
        .message_enum::<ArenaMessage>(7778, "arena-batch")
}

fn packet(p: &mut Arena) -> Vec<u8> {
    let mut buf = [0u8; 1200];
    let n = write_packet(p, &mut buf).expect("writes");
    buf[..n].to_vec()
}

/// A capture: two inputs, a chat line, a kill batch, and an input with a flipped bit.
fn capture(dir: &std::path::Path) -> PathBuf {
    let client: SocketAddr = "10.0.0.5:51000".parse().unwrap();
    let server: SocketAddr = "10.0.0.1:7777".parse().unwrap();
    let batches: SocketAddr = "10.0.0.1:7778".parse().unwrap();
    let mut flipped = packet(&mut Arena::Input { aim: 5, buttons: 1 });
    flipped[4] ^= 0x02;
    let mut batch = vec![0u8; 64];
    let mut w = BatchWriter::new(&mut batch).unwrap();
    let kill = &mut Kill {
        killer: 3,
        victim: 4,
    };
    assert!(w.push(UpdateStage::UPDATE, kill).unwrap());
    let n = w.finish();
    batch.truncate(n);
    let payloads = [
        (
            server,
            packet(&mut Arena::Input {
                aim: 90,
                buttons: 3,
            }),
        ),
        (
            server,
            packet(&mut Arena::Input {
                aim: 359,
                buttons: 0,
            }),
        ),
        (server, packet(&mut Arena::Chat { text: "gg".into() })),
        (batches, batch),
        (server, flipped),
    ];
    let datagrams: Vec<_> = payloads
        .into_iter()
        .enumerate()
        .map(|(i, (dst, p))| {
            let t = Timestamp::from_nanos(1_700_000_000_000_000_000 + i as i128 * 16_000_000);
            SynthDatagram::new(t, client, dst, p)
        })
        .collect();
    let path = dir.join("arena.pcap");
    let bytes = to_bytes(WriteFormat::PcapEthernet { nanos: true }, &datagrams).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json_lines(path: &std::path::Path, opts: &DecodeOpts) -> Vec<serde_json::Value> {
    let dissectors = opts
        .dissectors(&Context::new("bitlens", cli().dissectors()))
        .expect("valid options");
    let mut out = Vec::new();
    let damage = decode::run(path, &dissectors, true, false, &mut out).expect("decodes");
    assert_eq!(damage, None);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_games_own_protocol_decodes_and_checks_with_its_own_types() {
    let dir = temp_dir("library");
    let path = capture(&dir);
    let lines = json_lines(&path, &DecodeOpts::default());
    let seen: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|v| {
            (
                v["decoder"].as_str().unwrap(),
                v["packet_type"].as_str().unwrap_or("-"),
                v["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("arena", "Input", "ok"),
            ("arena", "Input", "ok"),
            ("arena", "Chat", "ok"),
            ("arena-batch", "Batch", "ok"),
            ("arena", "-", "error"),
        ]
    );
    assert_eq!(lines[0]["fields"][1]["path"], "aim");
    assert_eq!(lines[0]["fields"][1]["value"], 90);
    assert_eq!(lines[0]["checks"][1]["label"], "input");
    assert_eq!(lines[3]["messages"][0]["name"], "Kill");
    assert_eq!(lines[3]["messages"][0]["fields"][1]["path"], "victim");
    assert_eq!(lines[4]["error"]["kind"], "crc_mismatch");

    // check: one datagram does not decode.
    let dissectors = cli().dissectors().clone();
    let mut table = Vec::new();
    let o = check::run(&path, &dissectors, &mut table).expect("checks");
    assert_eq!((o.problems, o.undecoded, o.damage), (1, 0, None));
    let table = String::from_utf8(table).unwrap();
    assert!(
        table.contains("decoders: 7777=arena 7778=arena-batch"),
        "{table}"
    );
    assert!(table.lines().any(|l| l.starts_with("Input ")), "{table}");

    // --protocol-id: every CRC is checked with another id; --decode moves a protocol.
    let other = DecodeOpts {
        protocol_id: Some("0x1".into()),
        ..DecodeOpts::default()
    };
    let lines = json_lines(&path, &other);
    assert!(
        lines[..3]
            .iter()
            .all(|v| v["error"]["kind"] == "crc_mismatch")
    );
    assert_eq!(lines[3]["status"], "ok", "batches have no protocol id");
    let moved = DecodeOpts {
        decode: vec!["7777=none".into()],
        ..DecodeOpts::default()
    };
    let lines = json_lines(&path, &moved);
    assert_eq!(lines[0]["status"], "undecoded");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn decode_bytes_reads_with_a_compiled_dissector() {
    let bytes = packet(&mut Arena::Chat { text: "hi".into() });
    let d = cli()
        .dissectors()
        .by_name("arena")
        .cloned()
        .expect("registered");
    let mut out = Vec::new();
    let got = decode_bytes::run(d.as_ref(), None, &bytes, false, &mut out).expect("runs");
    assert_eq!((got.status, got.packet_type), (Status::Ok, Some("Chat")));
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("text = \"hi\""), "{text}");
    assert!(text.ends_with(&format!("accepted: Chat, {} bits\n", got.trace.bits_read)));
    // A datagram re-signed after a change decodes again (what the proxy's mutations do).
    let mut changed = bytes.clone();
    changed[5] ^= 0x01;
    assert_eq!(d.verdict(&changed).status, Status::Error);
    assert!(d.seal(&mut changed));
    assert_ne!(
        d.verdict(&changed).problem.map(|p| p.kind),
        Some("crc_mismatch")
    );
}

#[test]
fn a_derived_message_set_exports_only_under_a_packet_sets_protocol() {
    use bitlens::cmd::export_wireshark::run_dissector;
    use bitlens_schema::WiresharkOptions;
    let dissectors = cli().dissectors().clone();
    let d = dissectors.by_name("arena-batch").expect("registered");
    let text = d.schema_text().expect("a derived set has a schema text");
    assert!(text.starts_with("[batch]\nmessages = [\n  { type = 9, name = \"Kill\" },"));
    assert!(
        text.contains("{ name = \"victim\", type = \"u8\" }"),
        "{text}"
    );
    // The arena's packets are hand-written, without a schema text: no [protocol] to put the
    // section under, and the error says what to do.
    let mut options = WiresharkOptions::default();
    let e = run_dissector(&dissectors, "arena-batch", &mut options).unwrap_err();
    assert!(
        e.to_string().contains("no packet set with a schema text")
            && e.to_string().contains("give --schema FILE"),
        "{e}"
    );
}
