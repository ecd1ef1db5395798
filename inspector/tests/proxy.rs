//! `bitlens proxy` and `bitlens replay` with real sockets on localhost: a test server and
//! clients speaking the demo protocol and a schema protocol (tests/data/arena.schema.toml), the
//! proxy binary between them, stopped with SIGINT as a user's Ctrl-C stops it.
//!
//! No test asserts a duration but lower bounds (a delayed datagram cannot arrive early); waits
//! are generous, and the impairment and mutation draws come from fixed seeds.

mod common;

use bitlens::capture::Capture;
use bitlens_codec::packet::{read_packet, write_packet};
use bitlens_schema::Schema;
use bitlens_testkit::demo::{self, DemoPacket, PacketA};
use common::BIN;
use common::proxy::{WAIT, proxy};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bitlens-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arena.schema.toml")
}

// ---- the test server ----

/// What the server's reader said of a datagram: `None` when it accepted it, else the error
/// kind and field.
type Verdict = Option<(String, String)>;

struct Received {
    peer: SocketAddr,
    bytes: Vec<u8>,
    verdict: Verdict,
}

/// A UDP server on 127.0.0.1 that reads every datagram with `reader` and, when `echo` is set,
/// sends accepted ones back to their sender.
struct Server {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(reader: fn(&[u8]) -> Verdict, echo: bool) -> Self {
        Self::on("127.0.0.1:0", reader, echo)
    }

    fn on(addr: &str, reader: fn(&[u8]) -> Verdict, echo: bool) -> Self {
        let socket = UdpSocket::bind(addr).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        // The proxy forwards in batches (sendmmsg): on a loaded machine this thread can be
        // descheduled while a run of several hundred arrives, which the default receive buffer
        // (about 200 small datagrams) would drop. The kernel caps the size (net.core.rmem_max).
        let _ =
            nix::sys::socket::setsockopt(&socket, nix::sys::socket::sockopt::RcvBuf, &(4 << 20));
        let addr = socket.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (Arc::clone(&received), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, peer)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let verdict = reader(&buf[..n]);
                let reply = echo && verdict.is_none();
                // Recorded before the echo: a client that has its reply finds the datagram in
                // `take()` (the other order raced under load).
                r.lock().unwrap().push(Received {
                    peer,
                    bytes: buf[..n].to_vec(),
                    verdict,
                });
                if reply {
                    let _ = socket.send_to(&buf[..n], peer);
                }
            }
        });
        Server {
            addr,
            received,
            stop,
            thread: Some(thread),
        }
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    /// Waits until the server has received `n` datagrams (or the generous timeout passes).
    fn wait_for(&self, n: usize) -> usize {
        let until = Instant::now() + WAIT;
        while self.count() < n && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.count()
    }

    fn take(&self) -> Vec<Received> {
        std::mem::take(&mut *self.received.lock().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn demo_reader(bytes: &[u8]) -> Verdict {
    read_packet::<DemoPacket>(bytes)
        .err()
        .map(|e| (e.kind().name().to_owned(), e.field().to_owned()))
}

fn arena() -> &'static Schema {
    static SCHEMA: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| Schema::load(&schema_path()).unwrap())
}

fn arena_reader(bytes: &[u8]) -> Verdict {
    arena()
        .read(bytes)
        .err()
        .map(|e| (e.kind().name().to_owned(), e.field().to_owned()))
}

fn arena_packet(packet_type: &str, json: Value) -> Vec<u8> {
    let v = arena().value_from_json(packet_type, &json).unwrap();
    let mut buf = [0u8; 1200];
    let n = arena().write(packet_type, &v, &mut buf).unwrap();
    buf[..n].to_vec()
}

fn demo_bytes(mut p: DemoPacket) -> Vec<u8> {
    let mut buf = [0u8; 1200];
    let n = write_packet(&mut p, &mut buf).unwrap();
    buf[..n].to_vec()
}

fn packet_a(x: i32) -> Vec<u8> {
    demo_bytes(DemoPacket::A(PacketA { x, y: 0, z: 0 }))
}

// ---- the proxy process ----

fn client() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s
}

/// The number after `label` in the proxy's closing summary: "dropped 12" -> 12.
fn stat(stderr: &str, label: &str) -> u64 {
    let at = stderr
        .rfind(label)
        .unwrap_or_else(|| panic!("no {label:?} in {stderr}"));
    let rest = &stderr[at + label.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {label:?} in {stderr}"))
}

/// The number before `label`: "3 mappings idled out" -> 3.
fn stat_before(stderr: &str, label: &str) -> u64 {
    let at = stderr
        .rfind(label)
        .unwrap_or_else(|| panic!("no {label:?} in {stderr}"));
    let digits: String = stderr[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().unwrap()
}

// ---- forwarding ----

#[test]
fn several_clients_are_forwarded_both_ways_and_each_datagram_is_a_line() {
    let server = Server::start(demo_reader, true);
    let port = server.addr.port().to_string();
    let p = proxy(server.addr, &["--decode", &format!("{port}=demo")]);
    let clients: Vec<UdpSocket> = (0..3).map(|_| client()).collect();
    let mut buf = [0u8; 2048];
    for round in 0..5 {
        for (c, sock) in clients.iter().enumerate() {
            let x = (c * 100 + round) as i32;
            sock.send_to(&packet_a(x), p.addr).unwrap();
            let (n, from) = sock.recv_from(&mut buf).expect("the echo comes back");
            assert_eq!(from, p.addr, "replies come from the listen address");
            match read_packet::<DemoPacket>(&buf[..n]).unwrap() {
                DemoPacket::A(a) => assert_eq!(a.x, x, "client {c} got its own packet back"),
                other => panic!("{other:?}"),
            }
        }
    }
    // The server saw three peers, one upstream socket per client, none of them the clients.
    let received = server.take();
    let peers: BTreeSet<SocketAddr> = received.iter().map(|r| r.peer).collect();
    assert_eq!(peers.len(), 3);
    for c in &clients {
        assert!(!peers.contains(&c.local_addr().unwrap()));
    }
    let mut lines = Vec::new();
    p.lines_until(30, &mut lines);
    let (rest, stderr, ok) = p.interrupt();
    lines.extend(rest);
    assert!(ok, "{stderr}");
    assert_eq!(lines.len(), 30, "{stderr}");
    let frames: BTreeSet<u64> = lines.iter().map(|l| l["frame"].as_u64().unwrap()).collect();
    assert_eq!(frames, (1..=30).collect());
    let mut per_client: BTreeMap<(String, String), usize> = BTreeMap::new();
    for l in &lines {
        assert_eq!(l["decoder"], "demo", "{l}");
        assert_eq!(l["status"], "ok", "{l}");
        assert_eq!(l["packet_type"], "PacketA");
        assert_eq!(l["impairments"], serde_json::json!([]));
        assert!(l["mutation"].is_null());
        let client = l["client"].as_str().unwrap().to_owned();
        let dir = l["direction"].as_str().unwrap().to_owned();
        // Addresses are the client's and the server's, in the datagram's direction.
        let server_addr = server.addr.to_string();
        let (src, dst) = (l["src"].as_str().unwrap(), l["dst"].as_str().unwrap());
        match dir.as_str() {
            "to_server" => assert_eq!((src, dst), (client.as_str(), server_addr.as_str())),
            "to_client" => assert_eq!((src, dst), (server_addr.as_str(), client.as_str())),
            other => panic!("direction {other}"),
        }
        *per_client.entry((client, dir)).or_default() += 1;
    }
    assert_eq!(per_client.len(), 6);
    assert!(per_client.values().all(|&n| n == 5), "{per_client:?}");
    assert!(
        stderr.contains("30 datagrams (15 to the server, 15 to clients) from 3 clients"),
        "{stderr}"
    );
}

/// Back-to-back datagrams of several clients, sent before any reply is read, go through the
/// batched reads and sends (`recvmmsg`, one `sendmmsg` per run of datagrams leaving by one
/// socket; the replies of several clients share the listen socket's): every one arrives, each
/// client gets its own replies in the order it sent them, with and without a sink (`--quiet`
/// forwards without one).
#[test]
fn bursts_of_several_clients_arrive_whole_and_in_order_both_ways() {
    // 3 clients x 60: within the test server's default receive buffer, so nothing is lost
    // there however late it is scheduled.
    const EACH: i32 = 60;
    for quiet in [true, false] {
        let server = Server::start(demo_reader, true);
        let port = server.addr.port().to_string();
        let decode = format!("{port}=demo");
        let mut args = vec!["--decode", decode.as_str()];
        if quiet {
            args.push("--quiet");
        }
        let p = proxy(server.addr, &args);
        let clients: Vec<UdpSocket> = (0..3).map(|_| client()).collect();
        for x in 0..EACH {
            for (c, sock) in clients.iter().enumerate() {
                sock.send_to(&packet_a(c as i32 * 1000 + x), p.addr)
                    .unwrap();
            }
        }
        let mut buf = [0u8; 2048];
        for (c, sock) in clients.iter().enumerate() {
            let got: Vec<i32> = (0..EACH)
                .map(|_| {
                    let (n, from) = sock.recv_from(&mut buf).expect("every echo comes back");
                    assert_eq!(from, p.addr);
                    match read_packet::<DemoPacket>(&buf[..n]).unwrap() {
                        DemoPacket::A(a) => a.x,
                        other => panic!("{other:?}"),
                    }
                })
                .collect();
            let want: Vec<i32> = (0..EACH).map(|x| c as i32 * 1000 + x).collect();
            assert_eq!(got, want, "client {c}, quiet {quiet}");
        }
        let total = 2 * 3 * EACH as usize;
        let mut lines = Vec::new();
        if !quiet {
            p.lines_until(total, &mut lines);
        }
        let (rest, stderr, ok) = p.interrupt();
        lines.extend(rest);
        assert!(ok, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{total} datagrams ({} to the server, {} to clients) from 3 clients; sent {total};",
                total / 2,
                total / 2
            )),
            "{stderr}"
        );
        assert_eq!(stat_before(&stderr, "send errors"), 0, "{stderr}");
        if quiet {
            assert!(lines.is_empty());
        } else {
            assert_eq!(lines.len(), total, "{stderr}");
            let frames: BTreeSet<u64> =
                lines.iter().map(|l| l["frame"].as_u64().unwrap()).collect();
            assert_eq!(frames, (1..=total as u64).collect());
        }
    }
}

#[test]
fn a_mapping_idles_out_and_the_table_evicts_when_full() {
    let server = Server::start(demo_reader, true);
    let p = proxy(
        server.addr,
        &["--idle-timeout", "0.3", "--max-clients", "2", "--quiet"],
    );
    let a = client();
    let mut buf = [0u8; 2048];
    a.send_to(&packet_a(1), p.addr).unwrap();
    a.recv_from(&mut buf).unwrap();
    a.send_to(&packet_a(2), p.addr).unwrap();
    a.recv_from(&mut buf).unwrap();
    // Well past the idle timeout: the next datagram needs a new upstream socket.
    std::thread::sleep(Duration::from_millis(1500));
    a.send_to(&packet_a(3), p.addr).unwrap();
    a.recv_from(&mut buf).unwrap();
    let peers: Vec<SocketAddr> = server.take().iter().map(|r| r.peer).collect();
    assert_eq!(peers[0], peers[1], "one mapping while it is active");
    assert_ne!(peers[1], peers[2], "a new mapping after the idle timeout");
    // Three clients at once in a table of two: the least recently active goes.
    let others: Vec<UdpSocket> = (0..3).map(|_| client()).collect();
    for (i, c) in others.iter().enumerate() {
        c.send_to(&packet_a(10 + i as i32), p.addr).unwrap();
        c.recv_from(&mut buf).unwrap();
    }
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    assert!(stat_before(&stderr, "mappings idled out") >= 1, "{stderr}");
    assert!(stat_before(&stderr, "evicted") >= 1, "{stderr}");
    assert_eq!(stat_before(&stderr, "clients;"), 5, "{stderr}");
}

// ---- recording ----

#[test]
fn the_recording_reads_back_in_bitlens_and_tshark() {
    let server = Server::start(demo_reader, true);
    let port = server.addr.port().to_string();
    let decode = format!("{port}=demo");
    let rec = tmp("session.pcapng");
    let p = proxy(
        server.addr,
        &[
            "--decode",
            &decode,
            "--record",
            rec.to_str().unwrap(),
            "--drop",
            "p=0.5,dir=to_client",
            "--seed",
            "4",
        ],
    );
    let clients = [client(), client()];
    for i in 0..10 {
        let c = &clients[i % 2];
        c.send_to(&demo_bytes(demo::samples()[i % 6].clone()), p.addr)
            .unwrap();
    }
    let mut lines = Vec::new();
    p.lines_until(20, &mut lines);
    // Ctrl-C: the recording is flushed and closed.
    let (rest, stderr, ok) = p.interrupt();
    lines.extend(rest);
    assert!(ok, "{stderr}");
    assert_eq!(lines.len(), 20, "{stderr}");

    let capture = Capture::open(&rec).unwrap();
    assert!(capture.damage().is_none(), "{:?}", capture.damage());
    assert_eq!(capture.datagrams().len(), 20);
    for (d, l) in capture.datagrams().iter().zip(&lines) {
        assert_eq!(d.frame, l["frame"].as_u64().unwrap());
        assert_eq!(d.src.to_string(), l["src"].as_str().unwrap());
        assert_eq!(d.dst.to_string(), l["dst"].as_str().unwrap());
        assert_eq!(
            d.time.to_string(),
            l["time"].as_str().unwrap(),
            "nanosecond times"
        );
        assert_eq!(capture.payload(d).len() as u64, l["len"].as_u64().unwrap());
    }
    // `bitlens decode --json` of the recording gives the live lines, minus the proxy's keys.
    let out = Command::new(BIN)
        .args(["decode", "--json", "--decode", &decode])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(out.status.success());
    let decoded: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (live, file) in lines.iter().zip(&decoded) {
        let mut live = live.clone();
        for k in ["direction", "client", "impairments", "delay_us", "mutation"] {
            live.as_object_mut().unwrap().remove(k);
        }
        assert_eq!(&live, file);
    }

    if !have_tshark() {
        return;
    }
    let out = Command::new("tshark")
        .env("TZ", "UTC")
        .args(["-r"])
        .arg(&rec)
        .args([
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "frame.number",
            "-e",
            "ip.src",
            "-e",
            "udp.srcport",
            "-e",
            "ip.dst",
            "-e",
            "udp.dstport",
            "-e",
            "frame.time_epoch",
            "-e",
            "udp.length",
            "-e",
            "frame.comment",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), 20, "{text}");
    for (row, l) in rows.iter().zip(&lines) {
        let src: SocketAddr = l["src"].as_str().unwrap().parse().unwrap();
        let dst: SocketAddr = l["dst"].as_str().unwrap().parse().unwrap();
        assert_eq!(row[0], l["frame"].to_string());
        assert_eq!(
            (row[1], row[2]),
            (
                src.ip().to_string().as_str(),
                src.port().to_string().as_str()
            )
        );
        assert_eq!(
            (row[3], row[4]),
            (
                dst.ip().to_string().as_str(),
                dst.port().to_string().as_str()
            )
        );
        assert_eq!(
            row[5],
            l["time"].as_str().unwrap(),
            "tshark reads the nanoseconds"
        );
        assert_eq!(row[6], (l["len"].as_u64().unwrap() + 8).to_string());
        let dir = l["direction"].as_str().unwrap();
        assert!(
            row[7].starts_with(&format!(
                "bitlens {dir} client {}",
                l["client"].as_str().unwrap()
            )),
            "{row:?}"
        );
        let dropped = l["impairments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i == "drop");
        assert_eq!(row[7].ends_with("; drop"), dropped, "{row:?}");
    }
}

fn have_tshark() -> bool {
    if Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("tshark not installed: run scripts/install-test-deps.sh");
    }
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipped: tshark not installed");
    false
}

// ---- impairment ----

/// Sends `n` PacketAs (x = 0..n) from one client, paced so that loopback loses nothing, and
/// returns the x values the server received, in order, with the proxy's lines and stderr.
fn impaired_run(args: &[&str], n: usize) -> (Vec<i32>, Vec<Value>, String) {
    let server = Server::start(demo_reader, false);
    let mut all = vec![
        "--decode".to_owned(),
        format!("{}=demo", server.addr.port()),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let p = proxy(server.addr, &all);
    let c = client();
    let mut lines = Vec::new();
    for x in 0..n {
        c.send_to(&packet_a(x as i32), p.addr).unwrap();
        if x % 50 == 49 {
            // Let the proxy's lines (one per datagram) catch up: no burst outruns a buffer.
            p.lines_until(x + 1, &mut lines);
        }
    }
    p.lines_until(n, &mut lines);
    let forwarded: usize = lines
        .iter()
        .map(|l| {
            let imp = l["impairments"].as_array().unwrap();
            if imp.iter().any(|i| i == "drop") {
                0
            } else if imp.iter().any(|i| i == "duplicate") {
                2
            } else {
                1
            }
        })
        .sum();
    server.wait_for(forwarded);
    // Held and delayed datagrams have all come out once the server has them all.
    let (rest, stderr, ok) = p.interrupt();
    lines.extend(rest);
    assert!(ok, "{stderr}");
    let xs = server
        .take()
        .iter()
        .map(|r| match read_packet::<DemoPacket>(&r.bytes).unwrap() {
            DemoPacket::A(a) => a.x,
            other => panic!("{other:?}"),
        })
        .collect();
    (xs, lines, stderr)
}

#[test]
fn drops_fall_in_their_band_and_a_seed_repeats_them() {
    let args_json = ["--drop", "p=0.3,dir=to_server", "--seed", "7"];
    let (xs, lines, stderr) = impaired_run(&args_json, 1000);
    let dropped: BTreeSet<i32> = lines
        .iter()
        .filter(|l| {
            l["impairments"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i == "drop")
        })
        .map(x_of)
        .collect();
    // 1000 draws at 0.3: mean 300, standard deviation 14.5; the band is 5 deviations wide.
    assert!((228..=372).contains(&dropped.len()), "{}", dropped.len());
    assert_eq!(stat(&stderr, "dropped"), dropped.len() as u64);
    let expected: Vec<i32> = (0..1000).filter(|x| !dropped.contains(x)).collect();
    assert_eq!(xs, expected, "everything else arrives, in order");
    // The same seed and traffic drop the same datagrams.
    let (again, _, _) = impaired_run(&args_json, 1000);
    assert_eq!(again, xs);
    let (other_seed, _, _) = impaired_run(&["--drop", "p=0.3,dir=to_server", "--seed", "8"], 1000);
    assert_ne!(other_seed, xs);
}

#[test]
fn duplicates_delays_and_reordering_keep_every_datagram() {
    let (xs, lines, _) = impaired_run(&["--duplicate", "p=0.2", "--seed", "1"], 300);
    let dup: BTreeSet<i32> = lines
        .iter()
        .filter(|l| {
            l["impairments"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i == "duplicate")
        })
        .map(x_of)
        .collect();
    assert!((20..=100).contains(&dup.len()), "{}", dup.len());
    let expected: Vec<i32> = (0..300)
        .flat_map(|x| {
            if dup.contains(&x) {
                vec![x, x]
            } else {
                vec![x]
            }
        })
        .collect();
    assert_eq!(xs, expected);

    let (xs, lines, _) = impaired_run(&["--reorder", "p=0.3,hold_ms=1000", "--seed", "2"], 300);
    let drawn: BTreeSet<i32> = lines
        .iter()
        .filter(|l| {
            l["impairments"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i == "reorder")
        })
        .map(x_of)
        .collect();
    assert!((40..=140).contains(&drawn.len()), "{}", drawn.len());
    // The model: a drawn datagram is held unless one is held already; the next datagram sent
    // releases it right behind itself.
    let mut model = Vec::new();
    let mut holding = None;
    for x in 0..300 {
        if drawn.contains(&x) && holding.is_none() {
            holding = Some(x);
        } else {
            model.push(x);
            model.extend(holding.take());
        }
    }
    model.extend(holding);
    assert_eq!(xs, model);

    // Delay: 40 ± 10 ms on every reply; a reply never arrives earlier than 30 ms.
    let server = Server::start(demo_reader, true);
    let p = proxy(
        server.addr,
        &["--delay", "ms=40,jitter_ms=10,dir=to_client", "--seed", "3"],
    );
    let c = client();
    let mut buf = [0u8; 2048];
    for x in 0..10 {
        let t = Instant::now();
        c.send_to(&packet_a(x), p.addr).unwrap();
        c.recv_from(&mut buf).unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(30),
            "{:?}",
            t.elapsed()
        );
    }
    let (lines, _, ok) = p.interrupt();
    assert!(ok);
    for l in lines.iter().filter(|l| l["direction"] == "to_client") {
        let us = l["delay_us"].as_u64().unwrap();
        assert!((30_000..=50_000).contains(&us), "{us}");
    }
}

// ---- mutation and replay ----

#[test]
fn mutations_land_as_logged_the_server_rejects_them_and_replay_resends_them() {
    let server = Server::start(demo_reader, false);
    let port = server.addr.port().to_string();
    let log = tmp("mutations.ndjson");
    let rules = tmp("rules.toml");
    std::fs::write(
        &rules,
        r#"
seed = 11
[[mutate]]
name = "cat health"
packet = "RoboCat"
field = "health"
action = "out_of_range"

[[mutate]]
name = "scene desync"
packet = "SceneUpdate"
field = "objects"
action = "desync"

[[mutate]]
name = "b overclaim"
packet = "PacketB"
field = "elements.len"
action = "overclaim"

[[mutate]]
name = "c stale"
packet = "PacketC"
field = "b"
action = "flip"
bits = 3
crc = "stale"

[[mutate]]
name = "body cut"
packet = "RigidBody"
field = "orientation.c"
action = "truncate"
"#,
    )
    .unwrap();
    let p = proxy(
        server.addr,
        &[
            "--decode",
            &format!("{port}=demo"),
            "--rules",
            rules.to_str().unwrap(),
            "--mutation-log",
            log.to_str().unwrap(),
            "--quiet",
        ],
    );
    let c = client();
    for round in 0..3 {
        for s in demo::samples() {
            let _ = round;
            c.send_to(&demo_bytes(s), p.addr).unwrap();
        }
    }
    assert_eq!(server.wait_for(18), 18);
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    let received = server.take();
    let expected = [
        ("PacketA", None),
        ("PacketB", Some(("past_end", "elements.len"))),
        ("PacketC", Some(("crc_mismatch", ""))),
        ("RigidBody", Some(("past_end", "orientation"))),
        ("SceneUpdate", Some(("check_mismatch", "objects"))),
        ("RoboCat", Some(("out_of_range", "health"))),
    ];
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(logged.len(), 15, "every datagram but the PacketAs");
    let mut logged_iter = logged.iter();
    for (i, r) in received.iter().enumerate() {
        let (packet_type, want) = expected[i % 6];
        let got = r.verdict.as_ref().map(|(k, f)| (k.as_str(), f.as_str()));
        match want {
            None => assert_eq!(got, None, "{packet_type}"),
            Some((kind, field)) => {
                let (k, f) = got.unwrap_or_else(|| panic!("{packet_type} accepted"));
                assert_eq!(k, kind, "{packet_type}");
                assert!(f.starts_with(field), "{packet_type}: {f}");
                let l = logged_iter.next().unwrap();
                let m = &l["mutation"];
                assert_eq!(m["packet_type"], packet_type);
                assert_eq!(
                    m["sent"].as_str().unwrap(),
                    hex::encode(&r.bytes),
                    "the server got the logged bytes"
                );
                // The proxy's own decode of what it sent agrees with the server.
                assert_eq!(l["error"]["kind"], kind, "{l}");
            }
        }
    }
    // The out-of-range value the server reports is the one logged.
    let cat = logged
        .iter()
        .find(|l| l["mutation"]["rule"] == "cat health")
        .unwrap();
    let op = &cat["mutation"]["ops"][0];
    assert_eq!(
        (
            op["field"].as_str(),
            op["bit"].as_u64(),
            op["bits"].as_u64()
        ),
        (Some("health"), Some(35), Some(7))
    );
    let new = op["new_value"].as_i64().unwrap();
    assert!((101..=127).contains(&new));
    assert!(
        cat["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{new} out of range 0..=100")),
        "{cat}"
    );
    assert_eq!(cat["mutation"]["ops"][1]["action"], "resign");
    let stale = logged
        .iter()
        .find(|l| l["mutation"]["rule"] == "c stale")
        .unwrap();
    assert_eq!(stale["mutation"]["crc"], "stale");

    // Replay: a fresh server receives exactly the logged bytes, in order.
    let fresh = Server::start(demo_reader, false);
    let out = Command::new(BIN)
        .arg("replay")
        .arg(&log)
        .args(["--upstream", &fresh.addr.to_string(), "--gap-ms", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fresh.wait_for(15), 15);
    let replayed = fresh.take();
    for (r, l) in replayed.iter().zip(&logged) {
        assert_eq!(
            hex::encode(&r.bytes),
            l["mutation"]["sent"].as_str().unwrap()
        );
    }
    let kinds: Vec<_> = replayed
        .iter()
        .map(|r| r.verdict.clone().unwrap().0)
        .collect();
    let sent_kinds: Vec<_> = received
        .iter()
        .filter_map(|r| r.verdict.clone())
        .map(|v| v.0)
        .collect();
    assert_eq!(kinds, sent_kinds);
    // One frame only.
    let frame = logged[4]["frame"].to_string();
    let out = Command::new(BIN)
        .arg("replay")
        .arg(&log)
        .args(["--upstream", &fresh.addr.to_string(), "--frame", &frame])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(fresh.wait_for(1), 1);
    assert_eq!(
        hex::encode(&fresh.take()[0].bytes),
        logged[4]["mutation"]["sent"].as_str().unwrap()
    );
    // A log whose edits do not fit its bytes is refused.
    let bad = tmp("bad.ndjson");
    let text = std::fs::read_to_string(&log).unwrap();
    let first = text.lines().next().unwrap();
    let v: Value = serde_json::from_str(first).unwrap();
    let original = v["mutation"]["original"].as_str().unwrap();
    let flipped = format!(
        "{}{}",
        &original[..10],
        if &original[10..11] == "0" { "1" } else { "0" }
    );
    std::fs::write(&bad, first.replace(original, &(flipped + &original[11..]))).unwrap();
    let out = Command::new(BIN)
        .arg("replay")
        .arg(&bad)
        .args(["--upstream", &fresh.addr.to_string()])
        .output()
        .unwrap();
    // A log whose edits do not give its bytes is rejected input (exit status 1).
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.ndjson:1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_schema_protocol_is_mutated_at_its_rate_and_fuzzed() {
    let server = Server::start(arena_reader, true);
    let port = server.addr.port().to_string();
    let schema = schema_path();
    let p = proxy(
        server.addr,
        &[
            "--schema",
            schema.to_str().unwrap(),
            "--decode",
            &format!("{port}=schema"),
            "--mutate",
            "name=aim,packet=PlayerInput,field=aim.x,action=out_of_range,p=10%",
            "--seed",
            "5",
        ],
    );
    let c = client();
    for seq in 0..300 {
        let input = arena_packet(
            "PlayerInput",
            serde_json::json!({"sequence": seq, "aim": {"x": (seq * 7) % 1800, "y": -5}, "buttons": 3}),
        );
        c.send_to(&input, p.addr).unwrap();
        if seq % 50 == 49 {
            server.wait_for(seq + 1);
        }
    }
    server.wait_for(300);
    let mut lines = Vec::new();
    p.lines_until(300, &mut lines);
    let (rest, stderr, ok) = p.interrupt();
    lines.extend(rest);
    assert!(ok, "{stderr}");
    let received = server.take();
    assert_eq!(received.len(), 300);
    let rejected: Vec<&Received> = received.iter().filter(|r| r.verdict.is_some()).collect();
    // 300 draws at 0.1: mean 30, deviation 5.2.
    assert!((10..=56).contains(&rejected.len()), "{}", rejected.len());
    for r in &rejected {
        assert_eq!(r.verdict, Some(("out_of_range".into(), "aim.x".into())));
    }
    let mutated: Vec<&Value> = lines.iter().filter(|l| !l["mutation"].is_null()).collect();
    assert_eq!(mutated.len(), rejected.len());
    for l in &mutated {
        assert_eq!(l["decoder"], "schema");
        assert_eq!(l["error"]["field"], "aim.x");
        let op = &l["mutation"]["ops"][0];
        let v = op["new_value"].as_i64().unwrap();
        assert!((1801..=2295).contains(&v), "{v}");
    }
    // Accepted inputs were echoed: the replies decode as the schema too.
    assert!(
        lines
            .iter()
            .filter(|l| l["direction"] == "to_client")
            .all(|l| l["status"] == "ok")
    );

    // --fuzz on the same protocol: the proxy's decode of each fuzzed datagram (in the log)
    // says what the server's reader says of it.
    let log = tmp("fuzz.ndjson");
    let p = proxy(
        server.addr,
        &[
            "--schema",
            schema.to_str().unwrap(),
            "--decode",
            &format!("{port}=schema"),
            "--fuzz",
            "50%",
            "--seed",
            "9",
            "--quiet",
            "--mutation-log",
            log.to_str().unwrap(),
        ],
    );
    for seq in 0..100 {
        let input = arena_packet(
            "PlayerInput",
            serde_json::json!({"sequence": seq, "aim": {"x": 1, "y": 2}, "buttons": 1}),
        );
        c.send_to(&input, p.addr).unwrap();
    }
    server.wait_for(100);
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    let fuzzed = stat(&stderr, "mutated");
    assert!((25..=75).contains(&fuzzed), "{fuzzed}");
    let received = server.take();
    assert_eq!(received.len(), 100);
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(logged.len() as u64, fuzzed);
    let mut refused = 0;
    for l in &logged {
        let sent = l["mutation"]["sent"].as_str().unwrap();
        let r = received
            .iter()
            .find(|r| hex::encode(&r.bytes) == sent)
            .expect("the server got it");
        let server_says = r.verdict.as_ref().map(|v| v.0.as_str());
        let proxy_says = l["error"]["kind"].as_str();
        assert_eq!(server_says, proxy_says, "{l}");
        refused += usize::from(server_says.is_some());
    }
    // A flipped bit may leave a valid packet (a sequence number, an aim still in range).
    assert!(refused > 0 && refused as u64 <= fuzzed);
    let actions: BTreeSet<&str> = logged
        .iter()
        .map(|l| l["mutation"]["ops"][0]["action"].as_str().unwrap())
        .collect();
    assert!(actions.len() >= 3, "{actions:?}");
}

/// The `x` of a PacketA line.
fn x_of(l: &Value) -> i32 {
    let fields = l["fields"].as_array().unwrap();
    let x = fields
        .iter()
        .find(|f| f["path"] == "x")
        .unwrap_or_else(|| panic!("{l}"));
    x["value"].as_i64().unwrap() as i32
}

// ---- robustness ----

#[test]
fn hostile_traffic_and_a_closed_server_never_stop_the_proxy() {
    // A server port with nothing behind it: the kernel answers ICMP port unreachable.
    let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let mut p = proxy(
        closed_addr,
        &[
            "--quiet",
            "--max-clients",
            "8",
            "--delay",
            "ms=300",
            "--queue",
            "50",
        ],
    );
    let c = client();
    for x in 0..20 {
        c.send_to(&packet_a(x), p.addr).unwrap();
    }
    // The largest UDP payload over IPv4.
    let huge = vec![0xA5u8; 65_507];
    c.send_to(&huge, p.addr).unwrap();
    // Past their delay, the datagrams have gone to the closed port and come back refused.
    std::thread::sleep(Duration::from_millis(800));
    assert!(p.alive());
    // A flood from 40 more source ports, in a table of 8 clients and a queue of 50.
    let flooders: Vec<UdpSocket> = (0..40).map(|_| client()).collect();
    for f in &flooders {
        // One small datagram each first, paced: every flooder gets a mapping.
        f.send_to(&[1u8; 100], p.addr).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    for round in 0..20 {
        for f in &flooders {
            let size = if round % 4 == 0 { 30_000 } else { 500 };
            let _ = f.send_to(&huge[..size], p.addr);
        }
    }
    std::thread::sleep(Duration::from_millis(800));
    assert!(p.alive());
    // The server comes up on the same port: traffic flows again (delayed by 300 ms).
    let server = Server::on(&closed_addr.to_string(), demo_reader, true);
    let fresh = client();
    let mut buf = [0u8; 2048];
    fresh.send_to(&packet_a(99), p.addr).unwrap();
    let (n, _) = fresh
        .recv_from(&mut buf)
        .expect("forwarded once the server is back");
    assert_eq!(&buf[..n], &packet_a(99)[..]);
    let peak_kb = peak_memory_kb(p.child.id());
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    assert!(server.count() >= 1);
    assert!(
        stat_before(&stderr, "refused by the server") > 0,
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{closed_addr} refused a datagram of client")),
        "{stderr}"
    );
    assert!(stat_before(&stderr, "evicted") >= 30, "{stderr}");
    assert!(
        stat_before(&stderr, "queue full") > 0,
        "the delay queue was bounded: {stderr}"
    );
    // 821 datagrams of up to 64 KiB passed: 30 MB if any of it were kept. The queue of 50 and
    // the channel of 1024 bound what may be.
    if let Some(kb) = peak_kb {
        assert!(kb < 150_000, "peak resident memory {kb} kB");
    }
}

/// The peak resident set of a process (Linux), in kB.
fn peak_memory_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn bad_options_are_one_line_errors() {
    for (args, want) in [
        (
            vec!["--listen", "127.0.0.1:0", "--upstream", "nowhere"],
            "--upstream \"nowhere\"",
        ),
        (
            vec![
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "127.0.0.1:9",
                "--drop",
                "p=2",
            ],
            "probability",
        ),
        (
            vec![
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "127.0.0.1:9",
                "--mutate",
                "field=x",
            ],
            "needs action",
        ),
        (
            vec![
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "127.0.0.1:9",
                "--delay",
                "ms=5,colour=red",
            ],
            "unknown key \"colour\"",
        ),
        (
            vec![
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "127.0.0.1:9",
                "--rules",
                "/nonexistent.toml",
            ],
            "no such file",
        ),
    ] {
        let out = Command::new(BIN).arg("proxy").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("bitlens: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// Runs `bitlens ARGS` for at most 10 s: its exit code (`None` if it was still running and was
/// killed) and stderr.
fn run_briefly(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (code, err)
}

/// Exit 2 and one line holding `want`, for `bitlens ARGS`.
fn refused(args: &[&str], want: &str) {
    let (code, err) = run_briefly(args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(
        err.starts_with("bitlens: ") && err.contains(want),
        "{args:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
}

#[test]
fn extreme_durations_are_refused_at_start() {
    // issue 29.1: each of these panicked (exit 101), at start-up or at the first datagram.
    let base = [
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "127.0.0.1:9",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let rules = tmp("huge-delay.toml");
    std::fs::write(&rules, "[impair]\ndelay = { ms = 1e300 }\n").unwrap();
    let jitter_rules = tmp("huge-jitter.toml");
    std::fs::write(
        &jitter_rules,
        "[impair]\ndelay = { ms = 5, jitter_ms = 1e308 }\n",
    )
    .unwrap();
    let rules_s = rules.display().to_string();
    let jitter_s = jitter_rules.display().to_string();
    for (extra, want) in [
        (
            vec!["--delay", "ms=1e300"],
            "--delay \"ms=1e300\": ms must be at most 3600000 (one hour) (found 1e300)",
        ),
        (vec!["--delay", "ms=1e22"], "ms must be at most 3600000"),
        (
            vec!["--delay", "ms=5,jitter_ms=1e308"],
            "jitter_ms must be at most 3600000",
        ),
        (
            vec!["--reorder", "p=1,hold_ms=1e300"],
            "hold_ms must be at most 3600000",
        ),
        (
            vec!["--idle-timeout", "1e20"],
            "--idle-timeout must be a number of seconds > 0 and at most 86400 (one day) (found 1e20)",
        ),
        (
            vec!["--rules", &rules_s],
            "[impair] delay: ms must be at most",
        ),
        (
            vec!["--rules", &jitter_s],
            "[impair] delay: jitter_ms must be at most",
        ),
    ] {
        let args = with(&extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, want);
        if extra[0] == "--rules" {
            let (_, err) = run_briefly(&args);
            assert!(err.contains(extra[1]), "names the file: {err}");
        }
    }
    // replay's gap: a usage error from the argument parser.
    let (code, err) = run_briefly(&[
        "replay",
        "log",
        "--upstream",
        "127.0.0.1:9",
        "--gap-ms",
        "3600001",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--gap-ms") && err.contains("3600001"), "{err}");
}

/// A replay log of one crafted line (line 2, after a line without mutation).
fn crafted_log(name: &str, ops: &str, original: &str, sent: &str) -> PathBuf {
    let path = tmp(name);
    std::fs::write(
        &path,
        format!(
            "{{\"frame\":1,\"direction\":\"to_server\",\"client\":\"127.0.0.1:5\",\"mutation\":null}}\n\
             {{\"frame\":3,\"direction\":\"to_server\",\"client\":\"127.0.0.1:5\",\"mutation\":\
             {{\"rule\":\"r\",\"packet_type\":null,\"crc\":\"stale\",\"ops\":[{ops}],\
             \"original\":\"{original}\",\"sent\":\"{sent}\"}}}}\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn crafted_replay_logs_are_rejected_not_sent() {
    // issue 29.2: bit = 2^64 - 8 made `bit + bits` wrap past the bounds check (a set: exit
    // 101, an index out of bounds; a truncate: the bytes sent uncut with exit 0).
    let server = Server::start(demo_reader, false);
    let up = server.addr.to_string();
    for (name, ops, sent, want) in [
        (
            "wrap-set.ndjson",
            r#"{"action":"set","field":"f","bit":18446744073709551608,"bits":8,"old":"00000000","new":"11111111"}"#,
            "000000ff",
            "op 1 (set): 8 bits at bit 18446744073709551608 are not inside the 4-byte datagram",
        ),
        (
            "wrap-truncate.ndjson",
            r#"{"action":"truncate","bit":18446744073709551608,"bits":40}"#,
            "01020304",
            "op 1 (truncate): cuts 40 bits at bit 18446744073709551608 of a 4-byte datagram",
        ),
        (
            "nothing-cut.ndjson",
            r#"{"action":"truncate","bit":32,"bits":0}"#,
            "01020304",
            "op 1 (truncate): cuts 0 bits at bit 32",
        ),
    ] {
        let log = crafted_log(name, ops, "01020304", sent);
        let (code, err) = run_briefly(&["replay", log.to_str().unwrap(), "--upstream", &up]);
        assert_eq!(code, Some(1), "{name}: {err}");
        let at = format!("bitlens: {}:2 (frame 3): {want}", log.display());
        assert!(err.starts_with(&at), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(server.count(), 0, "nothing was sent");
}

#[test]
fn a_listen_address_the_upstream_resolves_to_is_refused() {
    // issue 29.3: one datagram looped forever (73,536 datagrams in 3 s).
    for (listen, upstream) in [
        ("127.0.0.1:7790", "127.0.0.1:7790"),
        ("0.0.0.0:7790", "127.0.0.1:7790"),
    ] {
        refused(
            &["proxy", "--listen", listen, "--upstream", upstream],
            "a forwarding loop",
        );
    }
}

/// One run of two clients (A, then B) sending `n` datagrams each in bursts to an echoing
/// server through an impairing and fuzzing proxy: per client and direction, the impairments
/// and mutation of each datagram in the order of its direction.
fn two_way_decisions(n: usize) -> BTreeMap<(usize, String), Vec<(Value, Value)>> {
    let server = Server::start(demo_reader, true);
    let port = server.addr.port().to_string();
    let p = proxy(
        server.addr,
        &[
            "--decode",
            &format!("{port}=demo"),
            "--drop",
            "p=0.2",
            "--duplicate",
            "p=0.2",
            "--fuzz",
            "10%",
            "--fuzz-direction",
            "both",
            "--seed",
            "5",
        ],
    );
    let clients = [client(), client()];
    let mut lines = Vec::new();
    // A's first datagram is the first the proxy sees: A is its first client in every run.
    clients[0].send_to(&packet_a(0), p.addr).unwrap();
    p.lines_until(1, &mut lines);
    let mut sent = 1;
    for burst in 0..n / 25 {
        for k in 0..25 {
            let x = (burst * 25 + k) as i32;
            for (i, c) in clients.iter().enumerate() {
                if i == 0 && x == 0 {
                    continue;
                }
                c.send_to(&packet_a(x), p.addr).unwrap();
                sent += 1;
            }
        }
        // At least as many lines as datagrams sent: the proxy keeps up (no socket buffer
        // overflows), and the replies still arrive while the next burst goes out.
        p.lines_until(sent, &mut lines);
    }
    // Until the lines stop coming.
    loop {
        let before = lines.len();
        while let Ok(l) = p.lines.recv_timeout(Duration::from_millis(500)) {
            lines.push(serde_json::from_str(&l).unwrap());
        }
        if lines.len() == before {
            break;
        }
    }
    let (rest, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    lines.extend(rest);
    let who: BTreeMap<String, usize> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| (c.local_addr().unwrap().to_string(), i))
        .collect();
    lines.sort_by_key(|l| l["frame"].as_u64().unwrap());
    let mut out: BTreeMap<(usize, String), Vec<(Value, Value)>> = BTreeMap::new();
    for l in lines {
        let c = who[l["client"].as_str().unwrap()];
        let dir = l["direction"].as_str().unwrap().to_owned();
        out.entry((c, dir))
            .or_default()
            .push((l["impairments"].clone(), l["mutation"].clone()));
    }
    out
}

#[test]
fn a_seed_repeats_with_traffic_both_ways() {
    // issue 29.8: one random stream served both directions in arrival order, so the replies
    // interleaving differently changed the decisions (708 of 5000 in the issue).
    let a = two_way_decisions(500);
    let b = two_way_decisions(500);
    for key in a.keys().chain(b.keys()) {
        let (x, y) = (&a[key], &b[key]);
        let differ = x.iter().zip(y).filter(|(p, q)| p != q).count();
        assert_eq!(
            (differ, x.len()),
            (0, y.len()),
            "{key:?}: {differ} of {} decisions differ",
            x.len()
        );
    }
    assert_eq!(a.len(), 4, "two clients, two directions");
    let to_client = &a[&(0, "to_client".to_owned())];
    assert!(to_client.len() > 200, "{}", to_client.len());
    let dropped = |v: &[(Value, Value)]| {
        v.iter()
            .filter(|(i, _)| i.as_array().unwrap().iter().any(|i| i == "drop"))
            .count()
    };
    assert!(dropped(to_client) > 20, "replies are impaired too");
    // The two clients draw from streams of their own.
    assert_ne!(
        a[&(0, "to_server".to_owned())],
        a[&(1, "to_server".to_owned())]
    );
}

#[test]
fn a_replay_that_would_send_nothing_says_why() {
    // issue 29.10: `--frame N` of a datagram to the client, or an empty log, exited 0 having
    // sent nothing.
    let server = Server::start(demo_reader, false);
    let up = server.addr.to_string();
    let empty = tmp("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    let to_client = tmp("to-client.ndjson");
    std::fs::write(
        &to_client,
        r#"{"frame":3,"direction":"to_client","client":"127.0.0.1:5","mutation":{"rule":"r","packet_type":null,"crc":"stale","ops":[{"action":"set","field":"f","bit":0,"bits":8,"old":"00000001","new":"00000010"}],"original":"01020304","sent":"02020304"}}"#,
    )
    .unwrap();
    let (e, c) = (empty.display(), to_client.display());
    for (log, extra, want) in [
        (
            &empty,
            vec![],
            format!("bitlens: {e}: the log has no mutated datagram: nothing to replay"),
        ),
        (
            &to_client,
            vec!["--frame", "3"],
            format!("bitlens: {c}: frame 3 went to a client: replay it with --to-client"),
        ),
        (
            &to_client,
            vec![],
            format!(
                "bitlens: {c}: the log has no mutated datagram to the server; 1 went to a \
                 client: replay them with --to-client"
            ),
        ),
    ] {
        let mut args = vec!["replay", log.to_str().unwrap(), "--upstream", &up];
        args.extend(extra);
        let (code, err) = run_briefly(&args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end(), want);
    }
    // The same frame with --to-client goes.
    let (code, err) = run_briefly(&[
        "replay",
        to_client.to_str().unwrap(),
        "--upstream",
        &up,
        "--to-client",
        "--frame",
        "3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(server.wait_for(1), 1);
    assert_eq!(server.take()[0].bytes, [2, 2, 3, 4]);
}

#[test]
fn rules_that_can_never_fire_are_refused_at_start() {
    // issue 29.10: packet=NoSuchPacket was accepted and never fired; a rules file's unknown
    // impairment did not name the file.
    let base = [
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "127.0.0.1:9",
    ];
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain([
            "--decode",
            "9=demo",
            "--mutate",
            "packet=NoSuchPacket,action=desync",
        ])
        .collect();
    refused(
        &args,
        "rule rule1: packet=\"NoSuchPacket\" is not a packet type of demo on port 9 (known: ",
    );
    let (_, err) = run_briefly(&args);
    assert!(err.contains("RoboCat") && err.contains("PacketA"), "{err}");
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--mutate", "packet=RoboCat,action=desync"])
        .collect();
    refused(
        &args,
        "packet=\"RoboCat\" can never match: port 9 has no dissector (--decode 9=NAME)",
    );
    let rules = tmp("warp.toml");
    std::fs::write(&rules, "[impair]\nwarp = { p = 0.1 }\n").unwrap();
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--rules", rules.to_str().unwrap()])
        .collect();
    refused(
        &args,
        &format!(
            "bitlens: {}: [impair] warp: unknown impairment (known: drop, duplicate, delay, reorder)",
            rules.display()
        ),
    );
}

#[test]
fn a_rule_without_a_field_to_work_on_says_why_in_the_summary() {
    // issue 29.10: the summary said "found no field" where the field is `name.len`, or where
    // a range fills its bits.
    let server = Server::start(demo_reader, false);
    let port = server.addr.port().to_string();
    let p = proxy(
        server.addr,
        &[
            "--decode",
            &format!("{port}=demo"),
            "--quiet",
            "--mutate",
            "name=over,packet=RoboCat,field=name,action=overclaim",
            "--mutate",
            "name=oob,packet=PacketA,field=x,action=out_of_range",
        ],
    );
    let c = client();
    c.send_to(&demo_bytes(demo::samples().pop().unwrap()), p.addr)
        .unwrap();
    c.send_to(&packet_a(5), p.addr).unwrap();
    assert_eq!(server.wait_for(2), 2);
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(
            "bitlens proxy: rule over: 1 draw found nothing to work on: name of RoboCat is a \
             string or an array, not a length: overclaim works on its length, field=name.len"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "bitlens proxy: rule oob: 1 draw found nothing to work on: x's range \
             -2147483648..=2147483647 fills its 32 bits: out_of_range has no value above the \
             range to write"
        ),
        "{stderr}"
    );
}

#[test]
fn a_recording_that_cannot_be_written_is_an_error_not_a_count() {
    // issue 29.10: "recorded 142 frames" was printed after failing to write them.
    let server = Server::start(demo_reader, false);
    let mut p = proxy(server.addr, &["--record", "/dev/full", "--quiet"]);
    let c = client();
    for x in 0..5 {
        c.send_to(&packet_a(x), p.addr).unwrap();
    }
    // The first flush fails: the proxy stops by itself.
    let until = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = p.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < until, "the proxy did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    let stderr = p.stderr.lock().unwrap().clone();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("recorded"), "{stderr}");
    assert!(
        stderr.contains("bitlens: /dev/full: ") && stderr.contains("No space left"),
        "{stderr}"
    );
}

#[test]
fn the_socket_buffer_is_the_size_asked_and_the_start_up_line_says_so() {
    // issue 30 aim 5: a size the system's cap allows is granted as asked, forced or not.
    let server = Server::start(demo_reader, true);
    // Issue 31.2: in the largest exact unit (not "1024 KiB"); GiB is a unit too.
    let p = proxy(server.addr, &["--quiet", "--socket-buffer", "1MiB"]);
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("socket buffers 1 MiB receive, 1 MiB send"),
        "{stderr}"
    );
    let p = proxy(server.addr, &["--quiet", "--socket-buffer", "1GiB"]);
    let (_, stderr, ok) = p.interrupt();
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("asked 1 GiB") || stderr.contains("1 GiB receive"),
        "{stderr}"
    );
    // Clap's usage error (exit 2), naming the option and what a size is.
    for (bad, want) in [
        (
            "2048MiB",
            "a size from 64KiB to 1GiB (bytes, KiB, MiB or GiB)",
        ),
        ("63KiB", "a size from 64KiB to 1GiB"),
        ("2GiB", "a size from 64KiB to 1GiB"),
        ("1TiB", "a size is bytes, or a number of KiB, MiB or GiB"),
        ("lots", "a size is bytes, or a number of KiB, MiB or GiB"),
    ] {
        let (code, err) = run_briefly(&[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "127.0.0.1:9",
            "--socket-buffer",
            bad,
        ]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(
            err.contains("--socket-buffer") && err.contains(want),
            "{bad}: {err}"
        );
    }
}

/// `proxy ... > /dev/full`: the lines cannot be written; the proxy says so as decode does
/// ("cannot write to standard output: REASON", the OS's error number left out) and exits 2.
#[test]
fn a_full_standard_output_stops_the_proxy_with_status_2() {
    use std::io::{BufRead, BufReader};
    let server = Server::start(demo_reader, false);
    let full = std::fs::File::create("/dev/full").expect("/dev/full");
    let mut child = Command::new(BIN)
        .args(["proxy", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(server.addr.to_string())
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let addr: SocketAddr = first
        .strip_prefix("bitlens proxy: listening on ")
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_else(|| panic!("no start-up line: {first}"))
        .parse()
        .unwrap();
    // Enough lines to fill the output's buffer, sent until the proxy stops.
    let c = client();
    let until = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("the proxy did not stop on a full standard output");
        }
        for x in 0..64 {
            let _ = c.send_to(&packet_a(x), addr);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(2), "{rest}");
    assert!(
        rest.lines()
            .any(|l| l == "bitlens: cannot write to standard output: No space left on device"),
        "{rest}"
    );
    assert!(!rest.contains("os error"), "{rest}");
}
