//! Cross-checks the capture reader against an independent one: captures written by Wireshark's
//! `text2pcap`, `editcap` and `mergecap` (and by our own writer) must decode to the frame numbers,
//! times (to the nanosecond), addresses, ports and payloads that `tshark` reports.
//!
//! Needs the Debian packages `tshark` and `wireshark-common` (`scripts/install-test-deps.sh`).
//! Without them the test is skipped, except under CI, where it fails.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use bitlens::capture::write::{PcapngResolution, SynthDatagram, WriteFormat};
use bitlens::capture::{Capture, LinkType, Status, Timestamp};
use etherparse::PacketBuilder;

/// Seconds of the first frame: 2023-11-14 22:13:20 UTC.
const BASE_SECS: u64 = 1_700_000_000;

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `true` when the Wireshark tools are there; otherwise skips (or fails under CI).
fn tools_or_skip() -> bool {
    if ["tshark", "text2pcap", "editcap", "mergecap"]
        .iter()
        .all(|t| have(t))
    {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "tshark / text2pcap / editcap / mergecap not installed: run scripts/install-test-deps.sh"
        );
    }
    // Straight to stderr, past the test harness's output capture, so the skip is visible.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: tshark not installed (run scripts/install-test-deps.sh)"
    );
    false
}

fn run(cmd: &mut Command) {
    let out = cmd.env("TZ", "UTC").output().expect("tool runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn udp4(eth: bool, src: [u8; 4], dst: [u8; 4], ports: (u16, u16), payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    if eth {
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4(src, dst, 64)
            .udp(ports.0, ports.1)
            .write(&mut v, payload)
            .unwrap();
    } else {
        PacketBuilder::ipv4(src, dst, 64)
            .udp(ports.0, ports.1)
            .write(&mut v, payload)
            .unwrap();
    }
    v
}

fn udp6_ip(src: [u8; 16], dst: [u8; 16], ports: (u16, u16), payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    PacketBuilder::ipv6(src, dst, 64)
        .udp(ports.0, ports.1)
        .write(&mut v, payload)
        .unwrap();
    v
}

fn tcp4_ip() -> Vec<u8> {
    let mut v = Vec::new();
    PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(1234, 80, 1, 1000)
        .write(&mut v, b"GET")
        .unwrap();
    v
}

fn eth(ethertype_and_tags: &[u8], ip: &[u8]) -> Vec<u8> {
    let mut v = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    v.extend_from_slice(ethertype_and_tags);
    v.extend_from_slice(ip);
    v
}

fn sll2(ethertype: u16, ip: &[u8]) -> Vec<u8> {
    let mut v = ethertype.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0x03, 0x04, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0]);
    v.extend_from_slice(ip);
    v
}

/// A text2pcap input: each frame as a hex dump after a `HH:MM:SS.nnnnnnnnn` time line.
fn hexdump(frames: &[(u64, u32, Vec<u8>)]) -> String {
    let mut s = String::new();
    for (secs, nanos, frame) in frames {
        let t = BASE_SECS % 86_400 + secs;
        let _ = writeln!(
            s,
            "2023-11-14 {:02}:{:02}:{:02}.{nanos:09}",
            t / 3600,
            t / 60 % 60,
            t % 60
        );
        for (i, line) in frame.chunks(16).enumerate() {
            let _ = write!(s, "{:06x}", i * 16);
            for b in line {
                let _ = write!(s, " {b:02x}");
            }
            s.push('\n');
        }
    }
    s
}

/// Writes `frames` with text2pcap (`-l link`, pcapng unless `pcap`).
fn text2pcap(
    dir: &Path,
    name: &str,
    link: u32,
    pcap: bool,
    frames: &[(u64, u32, Vec<u8>)],
) -> PathBuf {
    let txt = dir.join(format!("{name}.txt"));
    std::fs::write(&txt, hexdump(frames)).unwrap();
    let out = dir.join(name);
    let mut cmd = Command::new("text2pcap");
    cmd.args(["-q", "-t", "%Y-%m-%d %H:%M:%S.%f", "-l", &link.to_string()]);
    if pcap {
        cmd.args(["-F", "pcap"]);
    }
    run(cmd.arg(&txt).arg(&out));
    out
}

/// One UDP datagram as both readers report it.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    time: String,
    src: String,
    dst: String,
    payload: String,
}

fn tshark_rows(file: &Path) -> BTreeMap<u64, Row> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args([
            "-o",
            "ip.defragment:FALSE",
            "-Y",
            "udp",
            "-T",
            "fields",
            "-E",
            "occurrence=f",
        ])
        .args([
            "-e",
            "frame.number",
            "-e",
            "frame.time_epoch",
            "-e",
            "ip.src",
            "-e",
            "ipv6.src",
        ])
        .args([
            "-e",
            "ip.dst",
            "-e",
            "ipv6.dst",
            "-e",
            "udp.srcport",
            "-e",
            "udp.dstport",
            "-e",
            "udp.payload",
        ])
        .env("TZ", "UTC")
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 9, "tshark line {line:?}");
        let sock = |ip4: &str, ip6: &str, port: &str| {
            let ip = if ip4.is_empty() {
                format!("[{ip6}]")
            } else {
                ip4.to_string()
            };
            format!("{ip}:{port}")
                .parse::<SocketAddr>()
                .unwrap()
                .to_string()
        };
        rows.insert(
            f[0].parse().unwrap(),
            Row {
                time: f[1].to_string(),
                src: sock(f[2], f[3], f[6]),
                dst: sock(f[4], f[5], f[7]),
                payload: f[8].replace(':', ""),
            },
        );
    }
    rows
}

fn our_rows(file: &Path) -> (Capture, BTreeMap<u64, Row>) {
    let c = Capture::open(file).unwrap();
    assert!(c.damage().is_none(), "{}: {:?}", file.display(), c.damage());
    let rows = c
        .datagrams()
        .iter()
        .map(|d| {
            let row = Row {
                time: d.time.to_string(),
                src: d.src.to_string(),
                dst: d.dst.to_string(),
                payload: hex::encode(c.payload(d)),
            };
            (d.frame, row)
        })
        .collect();
    (c, rows)
}

/// Our reader and tshark agree on `file`; returns our capture for further checks.
fn cross_check(file: &Path) -> Capture {
    let (c, mut ours) = our_rows(file);
    // A frame cut inside the UDP header is ours (Truncated, ports 0) but not tshark's `udp`.
    ours.retain(|frame, _| {
        let d = c.datagrams().iter().find(|d| d.frame == *frame).unwrap();
        !(d.status == Status::Truncated && d.src.port() == 0 && d.dst.port() == 0)
    });
    let theirs = tshark_rows(file);
    assert!(!theirs.is_empty(), "{}: tshark saw no UDP", file.display());
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{}: frame numbers",
        file.display()
    );
    for (frame, row) in &ours {
        let d = c.datagrams().iter().find(|d| d.frame == *frame).unwrap();
        let t = &theirs[frame];
        if d.status == Status::Truncated {
            // tshark shows what is there of a cut payload, or nothing.
            assert!(
                t.payload.starts_with(&row.payload) || t.payload.is_empty(),
                "{}: frame {frame}",
                file.display()
            );
            assert_eq!(
                (&row.time, &row.src, &row.dst),
                (&t.time, &t.src, &t.dst),
                "{}: frame {frame}",
                file.display()
            );
        } else {
            assert_eq!(row, t, "{}: frame {frame}", file.display());
        }
    }
    c
}

#[test]
fn capture_agrees_with_tshark() {
    if !tools_or_skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("bitlens-capture-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let v6a = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let v6b = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&[0; 20]);
    let big: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    let ethernet_frames = vec![
        (
            0,
            123_456_789,
            udp4(true, [10, 0, 0, 1], [10, 0, 0, 2], (5000, 40000), b"hello"),
        ),
        (0, 500_000_000, arp),
        (
            1,
            1,
            eth(
                &[0x81, 0x00, 0x00, 0x2A, 0x86, 0xDD],
                &udp6_ip(v6a, v6b, (40001, 6000), b"vlan v6"),
            ),
        ),
        (1, 999_999_999, eth(&[0x08, 0x00], &tcp4_ip())),
        (
            2,
            0,
            eth(
                &[0x88, 0xA8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x2A, 0x08, 0x00],
                &udp4(false, [192, 168, 1, 1], [192, 168, 1, 2], (1, 2), b""),
            ),
        ),
        (
            3,
            42_000,
            udp4(true, [10, 0, 0, 3], [10, 0, 0, 4], (40000, 5001), &big),
        ),
    ];
    let eth_ns = text2pcap(&dir, "eth.pcapng", 1, false, &ethernet_frames);
    let c = cross_check(&eth_ns);
    assert_eq!(c.frames(), 6);
    assert_eq!(c.datagrams().len(), 4);
    assert_eq!(c.datagrams()[0].time.to_string(), "1700000000.123456789");

    // The same frames through editcap: ns pcap, µs pcap, µs pcapng (no if_tsresol: default µs),
    // cut to 60 bytes.
    let ns_pcap = dir.join("eth-ns.pcap");
    run(Command::new("editcap")
        .args(["-F", "nsecpcap"])
        .arg(&eth_ns)
        .arg(&ns_pcap));
    cross_check(&ns_pcap);
    let us_pcap = dir.join("eth-us.pcap");
    run(Command::new("editcap")
        .args(["-F", "pcap"])
        .arg(&eth_ns)
        .arg(&us_pcap));
    let c = cross_check(&us_pcap);
    assert_eq!(c.datagrams()[0].time.to_string(), "1700000000.123456000");
    let us_pcapng = dir.join("eth-us.pcapng");
    run(Command::new("editcap")
        .args(["-F", "pcapng"])
        .arg(&us_pcap)
        .arg(&us_pcapng));
    let c = cross_check(&us_pcapng);
    assert_eq!(c.datagrams()[0].time.to_string(), "1700000000.123456000");
    let cut = dir.join("eth-cut.pcapng");
    run(Command::new("editcap")
        .args(["-s", "60"])
        .arg(&eth_ns)
        .arg(&cut));
    let c = cross_check(&cut);
    let last = c.datagrams().last().unwrap();
    assert_eq!(
        (last.status, last.captured_len, last.original_len),
        (Status::Truncated, 60, 1042)
    );

    // Linux cooked v2 loopback, written by text2pcap as a µs pcap.
    let lo4 = udp4(
        false,
        [127, 0, 0, 1],
        [127, 0, 0, 1],
        (40000, 40001),
        b"loopback",
    );
    let lo6 = udp6_ip(
        [0; 15]
            .iter()
            .chain(&[1])
            .copied()
            .collect::<Vec<_>>()
            .try_into()
            .unwrap(),
        {
            let mut a = [0; 16];
            a[15] = 1;
            a
        },
        (40002, 40003),
        b"loopback6",
    );
    let sll2_frames = vec![
        (10, 5_000, sll2(0x0800, &lo4)),
        (10, 6_000, sll2(0x0800, &tcp4_ip())),
        (11, 0, sll2(0x86DD, &lo6)),
    ];
    let sll2_pcap = text2pcap(&dir, "sll2.pcap", 276, true, &sll2_frames);
    let c = cross_check(&sll2_pcap);
    assert_eq!(c.datagrams()[0].link_type, LinkType::LINUX_SLL2);

    // A merged pcapng with two interfaces: Ethernet at ns and SLL2 at µs.
    let sll2_pcapng = dir.join("sll2.pcapng");
    run(Command::new("editcap")
        .args(["-F", "pcapng"])
        .arg(&sll2_pcap)
        .arg(&sll2_pcapng));
    let merged = dir.join("merged.pcapng");
    run(Command::new("mergecap")
        .arg("-w")
        .arg(&merged)
        .arg(&eth_ns)
        .arg(&sll2_pcapng));
    let c = cross_check(&merged);
    assert_eq!(c.interfaces().len(), 2);
    assert_ne!(c.interfaces()[0].link_type, c.interfaces()[1].link_type);
    assert_ne!(c.interfaces()[0].resolution, c.interfaces()[1].resolution);

    // BSD loopback (NULL, little-endian family) and raw IPv4.
    let mut null4 = 2u32.to_le_bytes().to_vec();
    null4.extend_from_slice(&lo4);
    let mut null6 = 30u32.to_le_bytes().to_vec();
    null6.extend_from_slice(&udp6_ip(v6a, v6b, (9, 10), b"darwin"));
    cross_check(&text2pcap(
        &dir,
        "null.pcap",
        0,
        true,
        &[(20, 1, null4), (20, 2, null6)],
    ));
    cross_check(&text2pcap(
        &dir,
        "raw.pcapng",
        228,
        false,
        &[(30, 7, lo4.clone()), (30, 8, tcp4_ip())],
    ));

    // Our own writer, read back by tshark: SLL2 loopback, and a pcapng in 2^-20 s units with
    // an if_tsoffset (where pcap-file 2.0.0 got times wrong).
    let out = [
        SynthDatagram::new(
            Timestamp::from_nanos(1_700_000_000_987_654_321),
            "127.0.0.1:40000".parse().unwrap(),
            "127.0.0.1:40001".parse().unwrap(),
            &b"synth"[..],
        ),
        SynthDatagram::new(
            Timestamp::from_nanos(1_700_000_001_000_000_999),
            "[::1]:40000".parse().unwrap(),
            "[::1]:40001".parse().unwrap(),
            &b"synth6"[..],
        ),
    ];
    let ours = dir.join("ours-sll2.pcap");
    bitlens::capture::write::write_file(&ours, WriteFormat::PcapSll2Loopback { nanos: true }, &out)
        .unwrap();
    cross_check(&ours);
    let ours = dir.join("ours-lo.pcap");
    bitlens::capture::write::write_file(
        &ours,
        WriteFormat::PcapEthernetLoopback { nanos: false },
        &out,
    )
    .unwrap();
    cross_check(&ours);
    for resolution in [
        PcapngResolution::PowerOfTwo(20),
        PcapngResolution::PowerOfTwo(29),
        PcapngResolution::Micro,
        PcapngResolution::Nano,
    ] {
        let ours = dir.join("ours-res.pcapng");
        let format = WriteFormat::PcapngEthernet {
            resolution,
            ts_offset_secs: 1_600_000_000,
        };
        bitlens::capture::write::write_file(&ours, format, &out).unwrap();
        cross_check(&ours);
    }

    let _ = std::fs::remove_dir_all(&dir);
}

/// `tshark`'s `udp.length - 8` and `data.len` (the payload bytes in the frame) per frame.
fn tshark_lengths(file: &Path) -> BTreeMap<u64, (u64, u64)> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["-o", "ip.defragment:FALSE", "-Y", "udp", "-T", "fields"])
        .args(["-e", "frame.number", "-e", "udp.length", "-e", "data.len"])
        .output()
        .expect("tshark runs");
    assert!(out.status.success(), "tshark on {}", file.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let udp_len: u64 = f[1].parse().unwrap();
            // No payload bytes in the frame: no `data` at all.
            let present = if f[2].is_empty() {
                0
            } else {
                f[2].parse().unwrap()
            };
            (f[0].parse().unwrap(), (udp_len - 8, present))
        })
        .collect()
}

/// `decode --json` gives `len` as the UDP header declares it and `captured` (only when it
/// differs) as the bytes in the frame, as tshark does, on a capture with fragments and snap
/// length cuts and on the demo capture cut by `editcap -s` (inside the payload, and right after
/// the UDP header).
#[test]
fn decode_len_and_captured_agree_with_tshark() {
    if !tools_or_skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("bitlens-len-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let captures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../captures");
    let mut files = vec![captures.join("faults.pcap")];
    for snap in ["60", "42"] {
        let cut = dir.join(format!("demo-s{snap}.pcap"));
        run(Command::new("editcap")
            .args(["-s", snap])
            .arg(captures.join("demo.pcap"))
            .arg(&cut));
        files.push(cut);
    }
    for file in &files {
        let theirs = tshark_lengths(file);
        let out = Command::new(env!("CARGO_BIN_EXE_bitlens"))
            .args(["decode", "--json"])
            .arg(file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (mut compared, mut cut) = (0, 0);
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let frame = v["frame"].as_u64().unwrap();
            let len = v["len"].as_u64().unwrap();
            let captured = v.get("captured").map(|c| c.as_u64().unwrap());
            assert_ne!(captured, Some(len), "{}: frame {frame}", file.display());
            match theirs.get(&frame) {
                Some(&want) => {
                    assert_eq!(
                        (len, captured.unwrap_or(len)),
                        want,
                        "{}: frame {frame}: {line}",
                        file.display()
                    );
                    compared += 1;
                    cut += usize::from(captured.is_some());
                }
                // A later IP fragment has no UDP header: ours without ports, not tshark's `udp`.
                None => assert_eq!(v["status"], "undecoded", "{}: {line}", file.display()),
            }
        }
        assert_eq!(compared, theirs.len(), "{}", file.display());
        assert!(cut > 0, "{}: nothing was cut", file.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lying length fields are flaws where tshark's expert info says the same: a UDP length past
/// the IP payload ("Bad length value"), an IPv4 total length or IPv6 payload length past the
/// end of an uncut frame ("exceeds packet length" / "exceeds framing length", with our room);
/// a frame cut by `editcap -s` has none. `decode --json` reports them as `flaw`.
#[test]
fn length_flaws_agree_with_tshark_expert_info() {
    if !tools_or_skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("bitlens-flaw-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v4 = || {
        udp4(
            true,
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            (5000, 40000),
            b"payload",
        )
    };
    let v6a = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let mut udp_lie = v4();
    udp_lie[14 + 20 + 4..14 + 20 + 6].copy_from_slice(&2000u16.to_be_bytes());
    let mut ip_lie = v4();
    ip_lie[14 + 2..14 + 4].copy_from_slice(&3000u16.to_be_bytes());
    let mut v6_lie = eth(&[0x86, 0xDD], &udp6_ip(v6a, v6a, (1, 40000), b"six"));
    v6_lie[14 + 4..14 + 6].copy_from_slice(&500u16.to_be_bytes());
    let big = udp4(true, [10, 0, 0, 1], [10, 0, 0, 2], (5000, 40000), &[7; 300]);
    let frames: Vec<(u64, u32, Vec<u8>)> = [v4(), udp_lie, ip_lie, v6_lie, big]
        .into_iter()
        .enumerate()
        .map(|(i, f)| (i as u64, 0, f))
        .collect();
    let whole = text2pcap(&dir, "lies.pcap", 1, true, &frames);
    let cut = dir.join("lies-cut.pcap");
    run(Command::new("editcap")
        .args(["-s", "100"])
        .arg(&whole)
        .arg(&cut));

    for file in [&whole, &cut] {
        let out = Command::new("tshark")
            .arg("-r")
            .arg(file)
            .args([
                "-T",
                "fields",
                "-e",
                "frame.number",
                "-e",
                "_ws.expert.message",
            ])
            .output()
            .unwrap();
        let expert: BTreeMap<u64, String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (n, m) = l.split_once('\t').unwrap();
                (n.parse().unwrap(), m.to_owned())
            })
            .collect();
        let c = Capture::open(file).unwrap();
        assert_eq!(c.datagrams().len(), 5);
        let mut flaws = 0;
        for d in c.datagrams() {
            let said = &expert[&d.frame];
            let ours = d.flaw.map(|f| (f.field.name(), f.claimed, f.room));
            match ours {
                Some(("udp.length", claimed, _)) => {
                    assert!(
                        said.contains(&format!("Bad length value {claimed} > IP payload length")),
                        "{said}"
                    )
                }
                Some(("ip.len", _, room)) => assert!(
                    said.contains(&format!(
                        "IPv4 total length exceeds packet length ({room} bytes)"
                    )),
                    "{said}"
                ),
                Some(("ipv6.plen", _, room)) => assert!(
                    said.contains(&format!(
                        "IPv6 payload length exceeds framing length ({room} bytes)"
                    )),
                    "{said}"
                ),
                Some(other) => panic!("{other:?}"),
                None => assert!(
                    !said.contains("length value") && !said.contains("length exceeds"),
                    "frame {}: tshark says {said}",
                    d.frame
                ),
            }
            flaws += usize::from(ours.is_some());
        }
        assert_eq!(flaws, 3, "{}", file.display());
        // The cut frame 5 is truncated by the snap length, and no flaw.
        assert_eq!(
            (c.datagrams()[4].status, c.datagrams()[4].flaw),
            (
                if file == &cut {
                    Status::Truncated
                } else {
                    Status::Whole
                },
                None
            )
        );

        // `decode --json` carries the same flaws.
        let out = Command::new(env!("CARGO_BIN_EXE_bitlens"))
            .args(["decode", "--json"])
            .arg(file)
            .output()
            .unwrap();
        for (line, d) in String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .zip(c.datagrams())
        {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            match d.flaw {
                Some(f) => assert_eq!(
                    v["flaw"],
                    serde_json::json!({
                        "field": f.field.name(),
                        "offset": f.offset,
                        "claimed": f.claimed,
                        "room": f.room,
                        "message": f.to_string(),
                    })
                ),
                None => assert!(v.get("flaw").is_none(), "{line}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
