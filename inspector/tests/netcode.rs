//! netcode 1.02 with real peers: renetcode 2.0.0's client and server, connected in memory
//! (secure, with a known private key, and renet's unsecure mode, whose private key is 32 zero
//! bytes), exchange demo packets both ways and disconnect; every datagram goes into a capture
//! with real addresses. bitlens must decrypt every packet and hand the demo dissector exactly
//! the payload bytes renetcode delivered.
//!
//! `BITLENS_WRITE_NETCODE_CAPTURE=1 cargo test -p bitlens --test netcode shipped_capture`
//! rewrites `captures/netcode.pcap`, its key and its labels (captures/README.md).

mod common;

use bitlens::capture::Timestamp;
use bitlens::capture::write::{CaptureWriter, SynthDatagram, WriteFormat};
use bitlens_codec::dissect::{Dissector, Status};
use bitlens_codec::transport::Stack;
use bitlens_codec::write_packet;
use bitlens_netcode::{KeyLog, Netcode, open_packet, packet_ad};
use bitlens_testkit::demo;
use common::{bitlens, root};
use renetcode::{
    ClientAuthentication, ConnectToken, NetcodeClient, NetcodeServer, ServerAuthentication,
    ServerConfig, ServerResult,
};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

const PROTOCOL_ID: u64 = 0x6269_746c_656e_7331;
const KEY: [u8; 32] = *b"bitlens netcode test private key";
const START_SECS: u64 = 1_764_300_000;

/// One datagram on the wire.
#[derive(Clone)]
struct Sent {
    at: Duration,
    from: SocketAddr,
    to: SocketAddr,
    bytes: Vec<u8>,
}

/// A session's datagrams and the payloads each side's renetcode delivered, in order.
struct Session {
    wire: Vec<Sent>,
    to_server: Vec<Vec<u8>>,
    to_client: Vec<Vec<u8>>,
    /// The connect token's session keys (client to server, server to client), when the test
    /// holds the token (secure mode; in unsecure mode the client makes its own).
    keys: Option<([u8; 32], [u8; 32])>,
    client: SocketAddr,
    server: SocketAddr,
}

fn demo_payload(i: usize) -> Vec<u8> {
    let mut samples = demo::samples();
    let k = i % samples.len();
    let mut buf = [0u8; 1200];
    let n = write_packet(&mut samples[k], &mut buf).expect("a demo sample fits");
    buf[..n].to_vec()
}

struct Peers {
    server: NetcodeServer,
    client: NetcodeClient,
    s: Session,
    now: Duration,
}

impl Peers {
    fn send_to_server(&mut self, bytes: Vec<u8>) {
        let (from, to) = (self.s.client, self.s.server);
        self.s.wire.push(Sent {
            at: self.now,
            from,
            to,
            bytes: bytes.clone(),
        });
        let mut buf = bytes;
        let mut replies = Vec::new();
        match self.server.process_packet(from, &mut buf) {
            ServerResult::Payload { payload, .. } => self.s.to_server.push(payload.to_vec()),
            ServerResult::PacketToSend { payload, .. } => replies.push(payload.to_vec()),
            ServerResult::ClientConnected { payload, .. } => replies.push(payload.to_vec()),
            ServerResult::ClientDisconnected {
                payload: Some(p), ..
            } => replies.push(p.to_vec()),
            _ => {}
        }
        for r in replies {
            self.send_to_client(r);
        }
    }

    fn send_to_client(&mut self, bytes: Vec<u8>) {
        self.s.wire.push(Sent {
            at: self.now,
            from: self.s.server,
            to: self.s.client,
            bytes: bytes.clone(),
        });
        let mut buf = bytes;
        if let Some(p) = self.client.process_packet(&mut buf) {
            self.s.to_client.push(p.to_vec());
        }
    }

    fn step(&mut self) {
        let dt = Duration::from_millis(50);
        self.now += dt;
        if let Some((p, _)) = self.client.update(dt) {
            let p = p.to_vec();
            self.send_to_server(p);
        }
        self.server.update(dt);
        for id in self.server.clients_id() {
            if let ServerResult::PacketToSend { payload, .. } = self.server.update_client(id) {
                let p = payload.to_vec();
                self.send_to_client(p);
            }
        }
    }
}

/// A whole session: connect, `payloads` demo packets each way, the client disconnects.
fn session(secure: bool, payloads: usize) -> Session {
    let server: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let client: SocketAddr = "127.0.0.1:50001".parse().unwrap();
    let now = Duration::from_secs(START_SECS);
    let (auth, keys) = if secure {
        let token =
            ConnectToken::generate(now, PROTOCOL_ID, 300, 7, 15, vec![server], None, &KEY).unwrap();
        let keys = Some((token.client_to_server_key, token.server_to_client_key));
        (
            ClientAuthentication::Secure {
                connect_token: token,
            },
            keys,
        )
    } else {
        (
            ClientAuthentication::Unsecure {
                protocol_id: PROTOCOL_ID,
                client_id: 7,
                server_addr: server,
                user_data: None,
            },
            None,
        )
    };
    let mut p = Peers {
        server: NetcodeServer::new(ServerConfig {
            current_time: now,
            max_clients: 4,
            protocol_id: PROTOCOL_ID,
            public_addresses: vec![server],
            authentication: if secure {
                ServerAuthentication::Secure { private_key: KEY }
            } else {
                ServerAuthentication::Unsecure
            },
        }),
        client: NetcodeClient::new(now, auth).unwrap(),
        s: Session {
            wire: Vec::new(),
            to_server: Vec::new(),
            to_client: Vec::new(),
            keys,
            client,
            server,
        },
        now,
    };
    for _ in 0..40 {
        p.step();
        if p.client.is_connected() {
            break;
        }
    }
    assert!(p.client.is_connected(), "renetcode connects");
    for i in 0..payloads {
        let (_, packet) = p.client.generate_payload_packet(&demo_payload(i)).unwrap();
        let packet = packet.to_vec();
        p.send_to_server(packet);
        let (_, packet) = p
            .server
            .generate_payload_packet(7, &demo_payload(i + 1))
            .unwrap();
        let packet = packet.to_vec();
        p.send_to_client(packet);
        if i % 4 == 3 {
            p.step(); // keep-alives between payloads
        }
    }
    let (_, bye) = p.client.disconnect().unwrap();
    let bye = bye.to_vec();
    p.send_to_server(bye);
    assert_eq!(
        p.s.to_server.len(),
        payloads,
        "renetcode's server got every payload"
    );
    assert_eq!(
        p.s.to_client.len(),
        payloads,
        "renetcode's client got every payload"
    );
    p.s
}

fn netcode_with_key(key: [u8; 32]) -> Netcode {
    Netcode::new().with_private_key(key)
}

/// The stack's dissection of every datagram, in order, after the tracker saw them in order.
fn dissect_all(stack: &Stack, wire: &[Sent]) -> Vec<bitlens_codec::dissect::Dissection> {
    let mut tracker = stack.tracker().unwrap();
    let seen: Vec<_> = wire
        .iter()
        .map(|d| tracker.observe(d.from, d.to, &d.bytes))
        .collect();
    wire.iter()
        .zip(&seen)
        .map(|(d, o)| stack.dissect_seen(&d.bytes, o, false))
        .collect()
}

fn check_session(secure: bool) {
    let s = session(secure, 10);
    let key = if secure { KEY } else { [0; 32] };
    let netcode = Arc::new(netcode_with_key(key));
    let stack = Stack::new(netcode.clone(), Some(Arc::new(demo::dissector())));
    let dissections = dissect_all(&stack, &s.wire);
    let mut to_server = s.to_server.iter();
    let mut to_client = s.to_client.iter();
    let mut seen_types = std::collections::BTreeSet::new();
    for (d, x) in s.wire.iter().zip(&dissections) {
        assert_eq!(x.status, Status::Ok, "{:?}", x.problem);
        seen_types.insert(d.bytes[0] & 0x0f);
        let layer = &x.layers[0];
        if layer.payload_bits.is_empty() {
            continue;
        }
        // The payload renetcode delivered, in order, is what the demo dissector read.
        let want = if d.from == s.client {
            to_server.next()
        } else {
            to_client.next()
        }
        .expect("a delivered payload for every payload packet");
        let alone = demo::dissector().dissect(want);
        assert_eq!(x.packet_type, alone.packet_type);
        let base = layer.payload_bits.start;
        assert_eq!(layer.payload_bits.len(), want.len() * 8);
        let inner = &x.trace.fields[layer.header.end..layer.trailer.start];
        assert_eq!(inner.len(), alone.trace.fields.len());
        for (a, b) in alone.trace.fields.iter().zip(inner) {
            assert_eq!(
                (a.path(), a.bit + base, &a.value),
                (b.path(), b.bit, &b.value)
            );
        }
        assert!(x.trace.get("netcode.mac").is_some() && x.trace.get("netcode.sequence").is_some());
    }
    assert!(to_server.next().is_none() && to_client.next().is_none());
    // Request, challenge, response, keep-alive, payload, disconnect (renetcode sends no denied
    // packet in a session that connects).
    assert_eq!(
        seen_types.into_iter().collect::<Vec<_>>(),
        [0, 2, 3, 4, 5, 6]
    );
    // Without keys: headers read, every encrypted packet's payload reported encrypted.
    let bare = Stack::new(Arc::new(Netcode::new()), Some(Arc::new(demo::dissector())));
    for x in dissect_all(&bare, &s.wire) {
        assert_eq!(x.status, Status::Encrypted, "{:?}", x.problem);
        assert!(x.problem.is_none());
    }
    // The request's token shows the session keys the client got.
    let request = &dissections[0];
    let Some(keys) = s.keys else {
        return; // unsecure: the client's own token; its keys are not public
    };
    assert_eq!(
        request
            .trace
            .get("netcode.token.client_to_server_key")
            .map(|f| &f.value),
        Some(&bitlens_codec::Value::Bytes(keys.0.to_vec()))
    );
    assert_eq!(
        request
            .trace
            .get("netcode.token.client_id")
            .map(|f| &f.value),
        Some(&bitlens_codec::Value::Int(7))
    );

    // The session keys from a key log instead of the server's key: the same plaintext.
    let mut log = KeyLog::new(Vec::new());
    log.client(s.client, PROTOCOL_ID, &keys.0, &keys.1).unwrap();
    let logged = bitlens_netcode::parse_keylog(&String::from_utf8(log.into_inner()).unwrap());
    let by_log = Stack::new(
        Arc::new(Netcode::new().with_keylog(logged.unwrap())),
        Some(Arc::new(demo::dissector())),
    );
    for (a, b) in dissect_all(&by_log, &s.wire)
        .iter()
        .zip(&dissections)
        .skip(1)
    {
        assert_eq!((a.status, &a.trace.fields), (b.status, &b.trace.fields));
    }
    // Wrong session keys: a MAC error on every encrypted packet.
    let mut log = KeyLog::new(Vec::new());
    log.client(s.client, PROTOCOL_ID, &[1; 32], &[2; 32])
        .unwrap();
    let wrong = Netcode::new().with_keylog(
        bitlens_netcode::parse_keylog(&String::from_utf8(log.into_inner()).unwrap()).unwrap(),
    );
    let wrong = Stack::new(Arc::new(wrong), Some(Arc::new(demo::dissector())));
    for (d, x) in s.wire.iter().zip(dissect_all(&wrong, &s.wire)) {
        if d.bytes[0] & 0x0f == 0 {
            continue;
        }
        assert_eq!(x.status, Status::Error);
        let p = x.problem.unwrap();
        assert_eq!((p.kind, p.field.as_str()), ("mac_mismatch", "netcode.mac"));
    }
}

#[test]
fn renetcode_secure_session_decrypts_completely() {
    check_session(true);
}

#[test]
fn renetcode_unsecure_session_decrypts_with_the_zero_key() {
    check_session(false);
}

/// Writes `wire` as a pcap file.
fn write_pcap(path: &Path, wire: &[Sent]) {
    let mut w = CaptureWriter::create(path, WriteFormat::PcapEthernet { nanos: false }).unwrap();
    for d in wire {
        let t = Timestamp::from_nanos(d.at.as_nanos() as i128);
        w.write(&SynthDatagram::new(t, d.from, d.to, &d.bytes[..]))
            .unwrap();
    }
    w.finish().unwrap();
}

/// The faults of the shipped capture, each a copy of a real datagram changed: (label, kind).
fn with_faults(s: &Session) -> (Vec<Sent>, Vec<(usize, &'static str, &'static str)>) {
    let mut wire = s.wire.clone();
    let mut labels = Vec::new();
    let payload_at = |wire: &[Sent], nth: usize| {
        wire.iter()
            .enumerate()
            .filter(|(_, d)| d.bytes[0] & 0x0f == 5)
            .nth(nth)
            .map(|(i, _)| i)
            .unwrap()
    };
    // A tampered MAC: one bit of a payload packet's MAC flipped (in place: a copy after the
    // original would be a replay first, which the standard checks before the MAC).
    let i = payload_at(&wire, 2);
    let last = wire[i].bytes.len() - 1;
    wire[i].bytes[last] ^= 1;
    labels.push((i, "error", "mac_mismatch"));
    // A replay: a payload packet sent again, unchanged.
    let i = payload_at(&wire, 6);
    let d = wire[i].clone();
    wire.insert(i + 1, d);
    labels.push((i + 1, "error", "replay"));
    // A cut packet: a payload packet's first 12 bytes.
    let i = payload_at(&wire, 9);
    let mut d = wire[i].clone();
    d.bytes.truncate(12);
    wire.insert(i + 1, d);
    labels.push((i + 1, "error", "too_small"));
    // A wrong protocol id: a connection request of another game (id + 1).
    let mut d = wire[0].clone();
    d.bytes[14] ^= 1;
    let n = wire.len() - 1;
    d.at = wire[n].at;
    wire.push(d);
    labels.push((n + 1, "error", "protocol_id"));
    // Sort labels by index (inserting shifted nothing before them: each insert is after the
    // earlier ones).
    labels.sort();
    (wire, labels)
}

#[test]
fn shipped_capture_decodes_as_labelled() {
    let dir = root().join("captures");
    if std::env::var_os("BITLENS_WRITE_NETCODE_CAPTURE").is_some() {
        let s = session(true, 12);
        let (wire, labels) = with_faults(&s);
        write_pcap(&dir.join("netcode.pcap"), &wire);
        let hex: String = KEY.iter().map(|b| format!("{b:02x}")).collect();
        std::fs::write(dir.join("netcode.key"), format!("{hex}\n")).unwrap();
        let json: Vec<String> = labels
            .iter()
            .map(|(i, status, kind)| {
                format!(
                    "  {{\"frame\": {}, \"status\": \"{status}\", \"kind\": \"{kind}\"}}",
                    i + 1
                )
            })
            .collect();
        std::fs::write(
            dir.join("netcode.labels.json"),
            format!("[\n{}\n]\n", json.join(",\n")),
        )
        .unwrap();
    }
    let args = [
        "--decode",
        "5000=netcode+demo",
        "--netcode-key",
        "captures/netcode.key",
        "--netcode-protocol-id",
        "0x6269746c656e7331",
    ];
    let mut decode = vec!["decode", "--json", "captures/netcode.pcap"];
    decode.extend(args);
    let o = bitlens(&decode);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let labels: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("netcode.labels.json")).unwrap())
            .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut labelled = std::collections::BTreeMap::new();
    for l in &labels {
        labelled.insert(l["frame"].as_u64().unwrap(), l);
    }
    assert_eq!(labelled.len(), 4);
    let mut payloads = 0;
    for line in &lines {
        let frame = line["frame"].as_u64().unwrap();
        match labelled.get(&frame) {
            Some(l) => {
                assert_eq!(line["status"], l["status"], "frame {frame}");
                assert_eq!(line["error"]["kind"], l["kind"], "frame {frame}");
                assert!(
                    line["error"]["field"]
                        .as_str()
                        .unwrap()
                        .starts_with("netcode")
                );
            }
            None => {
                assert_eq!(line["status"], "ok", "frame {frame}: {}", line["error"]);
                if line["fields"].as_array().unwrap().iter().any(|f| {
                    f["path"] == "crc32"
                        || f["path"]
                            .as_str()
                            .is_some_and(|p| !p.starts_with("netcode"))
                }) {
                    payloads += 1;
                }
            }
        }
    }
    assert_eq!(
        payloads, 23,
        "12 demo packets each way but the tampered one, field by field"
    );
    // check: exit 1 (the faults), the layer named in the first-problem kinds.
    let mut check = vec!["check", "captures/netcode.pcap"];
    check.extend(args);
    let o = bitlens(&check);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    for kind in ["mac_mismatch", "replay", "too_small", "protocol_id"] {
        assert!(
            text.contains(&format!("netcode: error/{kind}")),
            "{kind} in\n{text}"
        );
    }
    // A wrong key: the requests' tokens do not decrypt; check exits 1.
    let dir = tempdir();
    let wrong = dir.join("wrong.key");
    std::fs::write(&wrong, "00".repeat(31) + "01").unwrap();
    let o = bitlens(&[
        "check",
        "captures/netcode.pcap",
        "--decode",
        "5000=netcode+demo",
        "--netcode-key",
        wrong.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("netcode: error/token_mac_mismatch"), "{text}");
    // Without a key: every datagram's header read, its payload encrypted; not a failure.
    let o = bitlens(&[
        "check",
        "captures/netcode.pcap",
        "--decode",
        "5000=netcode+demo",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("encrypted"), "{text}");
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("bitlens-netcode-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_payload_bytes_decrypt_with_the_session_key_alone() {
    // The layout as the standard writes it, checked against renetcode's bytes directly: the
    // nonce from the sequence, the associated data version + protocol id + prefix.
    let s = session(true, 1);
    let d = s
        .wire
        .iter()
        .find(|d| d.bytes[0] & 0x0f == 5 && d.from == s.client)
        .unwrap();
    let n = usize::from(d.bytes[0] >> 4);
    let mut seq = [0u8; 8];
    seq[..n].copy_from_slice(&d.bytes[1..1 + n]);
    let plain = open_packet(
        &s.keys.unwrap().0,
        u64::from_le_bytes(seq),
        &packet_ad(PROTOCOL_ID, d.bytes[0]),
        &d.bytes[1 + n..],
    );
    assert_eq!(plain.as_ref(), s.to_server.first());
}

/// `decode --write-plaintext`: the decrypted payloads as a capture that bitlens and the real
/// tshark, with the exported Lua dissector, read field by field (same addresses and times).
#[test]
fn plaintext_capture_reads_in_tshark_field_by_field() {
    let dir = tempdir().join("plaintext");
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain.pcapng");
    let keyed = [
        "--decode",
        "5000=netcode+demo",
        "--netcode-key",
        "captures/netcode.key",
    ];
    let mut args = vec![
        "decode",
        "--json",
        "captures/netcode.pcap",
        "--write-plaintext",
    ];
    args.push(plain.to_str().unwrap());
    args.extend(keyed);
    let o = bitlens(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let parse = |o: &Output| -> Vec<serde_json::Value> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // The original datagrams whose payload decrypted, with the inner fields only.
    let inner = |fields: &serde_json::Value| -> Vec<serde_json::Value> {
        fields
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| !f["path"].as_str().unwrap().starts_with("netcode"))
            .cloned()
            .collect()
    };
    let originals: Vec<_> = parse(&o)
        .into_iter()
        .filter(|l| {
            l["status"] == "ok"
                && l["packet_type"]
                    .as_str()
                    .is_some_and(|t| !t.starts_with("netcode"))
        })
        .collect();
    assert_eq!(originals.len(), 23);
    let p = plain.to_str().unwrap();
    let back = parse(&bitlens(&["decode", "--json", p, "--decode", "5000=demo"]));
    assert_eq!(back.len(), originals.len());
    for (a, b) in originals.iter().zip(&back) {
        for k in ["time", "src", "dst", "packet_type", "status"] {
            assert_eq!(a[k], b[k], "{k}");
        }
        let shifted: Vec<serde_json::Value> = inner(&a["fields"]);
        let plain_fields = inner(&b["fields"]);
        assert_eq!(shifted.len(), plain_fields.len());
        for (x, y) in shifted.iter().zip(&plain_fields) {
            assert_eq!((&x["path"], &x["value"]), (&y["path"], &y["value"]));
        }
    }
    // The real tshark with the exported dissector: every frame is a demo packet of the same type,
    // ok.
    let tshark_ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !tshark_ok {
        assert!(std::env::var_os("CI").is_none(), "tshark not installed");
        eprintln!("skipped the tshark half: tshark not installed (scripts/install-test-deps.sh)");
        return;
    }
    let lua = dir.join("demo.lua");
    let o = bitlens(&["export-wireshark", "--as", "demo", "--port", "5000"]);
    std::fs::write(&lua, &o.stdout).unwrap();
    let o = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .args([
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "_ws.col.Protocol",
            "-e",
            "_ws.col.Info",
            "-r",
        ])
        .arg(&plain)
        .output()
        .expect("tshark runs");
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), originals.len(), "{text}");
    for (row, a) in rows.iter().zip(&originals) {
        let cols: Vec<&str> = row.split('\t').collect();
        assert_eq!(cols[1], "demo", "{row}");
        let t = a["packet_type"].as_str().unwrap();
        assert!(
            cols[2].contains(t) && cols[2].contains("ok"),
            "{row} vs {t}"
        );
    }
}

/// The proxy through encryption: a renetcode client and server on localhost UDP, the proxy
/// between them with the server's key. It decrypts live (the NDJSON lines carry the demo
/// fields), and a mutation of a demo field is made in the plaintext and re-encrypted with the
/// session key and the packet's own sequence: renetcode's server accepts the packet (its MAC
/// verifies) and delivers the mutated payload, and the mutation log names the field.
#[test]
fn the_proxy_mutates_behind_the_encryption() {
    use std::net::UdpSocket;
    use std::time::Instant;

    let server_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    server_socket.set_nonblocking(true).unwrap();
    let upstream = server_socket.local_addr().unwrap();
    let dir = tempdir().join("proxy");
    std::fs::create_dir_all(&dir).unwrap();
    let key_file = dir.join("server.key");
    std::fs::write(
        &key_file,
        KEY.iter().map(|b| format!("{b:02x}")).collect::<String>(),
    )
    .unwrap();
    let decode = format!("{}=netcode+demo", upstream.port());
    let key = key_file.to_str().unwrap();
    let proxy = common::proxy::proxy(
        upstream,
        &[
            "--decode",
            &decode,
            "--netcode-key",
            key,
            "--mutate",
            "packet=PacketA,field=x,action=set,value=424242,p=100%",
            "--seed",
            "3",
        ],
    );
    let proxy_addr = proxy.addr;

    let start = Duration::from_secs(START_SECS);
    let token =
        ConnectToken::generate(start, PROTOCOL_ID, 300, 9, 15, vec![proxy_addr], None, &KEY)
            .unwrap();
    let mut server = NetcodeServer::new(ServerConfig {
        current_time: start,
        max_clients: 4,
        protocol_id: PROTOCOL_ID,
        public_addresses: vec![proxy_addr],
        authentication: ServerAuthentication::Secure { private_key: KEY },
    });
    let mut client = NetcodeClient::new(
        start,
        ClientAuthentication::Secure {
            connect_token: token,
        },
    )
    .unwrap();
    let client_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    client_socket.set_nonblocking(true).unwrap();
    let mut delivered: Vec<Vec<u8>> = Vec::new();
    let mut sent = 0;
    let began = Instant::now();
    let mut last = Instant::now();
    let mut buf = [0u8; 1500];
    while delivered.len() < 3 && began.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
        let dt = last.elapsed();
        last = Instant::now();
        if let Some((p, to)) = client.update(dt) {
            client_socket.send_to(p, to).unwrap();
        }
        while let Ok((n, _)) = client_socket.recv_from(&mut buf) {
            let _ = client.process_packet(&mut buf[..n]);
        }
        server.update(dt);
        while let Ok((n, from)) = server_socket.recv_from(&mut buf) {
            match server.process_packet(from, &mut buf[..n]) {
                ServerResult::Payload { payload, .. } => delivered.push(payload.to_vec()),
                ServerResult::PacketToSend { addr, payload }
                | ServerResult::ClientConnected { addr, payload, .. } => {
                    server_socket.send_to(payload, addr).unwrap();
                }
                _ => {}
            }
        }
        for id in server.clients_id() {
            if let ServerResult::PacketToSend { addr, payload } = server.update_client(id) {
                server_socket.send_to(payload, addr).unwrap();
            }
        }
        if client.is_connected() && sent < 3 {
            let mut a = demo::DemoPacket::A(demo::PacketA { x: 1, y: 2, z: 3 });
            let mut p = [0u8; 64];
            let n = write_packet(&mut a, &mut p).unwrap();
            let (to, packet) = client.generate_payload_packet(&p[..n]).unwrap();
            client_socket.send_to(packet, to).unwrap();
            sent += 1;
        }
    }
    assert_eq!(
        delivered.len(),
        3,
        "renetcode's server accepted the re-encrypted packets"
    );
    for p in &delivered {
        match bitlens_codec::read_packet::<demo::DemoPacket>(p).unwrap() {
            demo::DemoPacket::A(a) => assert_eq!((a.x, a.y, a.z), (424242, 2, 3)),
            other => panic!("{other:?}"),
        }
    }
    // The NDJSON lines: the mutated payload packets decrypted live, the mutation naming x.
    let (lines, _, _) = proxy.interrupt();
    let mutated: Vec<&serde_json::Value> =
        lines.iter().filter(|l| !l["mutation"].is_null()).collect();
    assert_eq!(mutated.len(), 3, "{lines:?}");
    for l in &mutated {
        assert_eq!(l["packet_type"], "PacketA");
        assert_eq!(l["status"], "ok", "{}", l["error"]);
        assert_eq!(l["mutation"]["ops"][0]["field"], "x");
        let x = l["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == "x")
            .unwrap();
        assert_eq!(x["value"], 424242);
    }
    assert!(
        lines
            .iter()
            .any(|l| l["packet_type"] == "netcode.keep_alive" && l["status"] == "ok"),
        "control packets decrypt live too"
    );
}

/// A key file or key log that does not read is a usage error (exit status 2), one line naming
/// the file (and the line).
#[test]
fn bad_keys_are_usage_errors_naming_the_file() {
    let dir = tempdir().join("badkeys");
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("short.key");
    std::fs::write(&key, "abcd\n").unwrap();
    let log = dir.join("bad.log");
    std::fs::write(&log, "# ok\nNETCODE_CLIENT 127.0.0.1:1 7 00 11\n").unwrap();
    let capture = std::path::PathBuf::from("captures/netcode.pcap");
    for (flag, file, says) in [
        ("--netcode-key", &key, "expected a key of 64 hex digits"),
        (
            "--netcode-keylog",
            &log,
            "line 2: expected a key of 64 hex digits",
        ),
        // A capture given for the key: what was expected, not "not UTF-8 text".
        (
            "--netcode-key",
            &capture,
            "expected a key of 64 hex digits, found binary data",
        ),
        (
            "--netcode-keylog",
            &capture,
            "expected a key log (lines `NETCODE_CLIENT ...`), found binary data",
        ),
    ] {
        let o = bitlens(&[
            "check",
            "captures/netcode.pcap",
            "--decode",
            "5000=netcode+demo",
            flag,
            file.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(file.to_str().unwrap()) && err.contains(says),
            "{err}"
        );
    }
    let o = bitlens(&[
        "check",
        "captures/netcode.pcap",
        "--decode",
        "5000=netcode+nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// The C reference (netcode 139beae's own client and server) and yojimbo 1.9.1's soak sample,
/// captured on localhost with their sample keys (captures/README.md): every datagram decrypts
/// and reads, in `decode --json` and in `check`, whose exit status is 0.
#[test]
fn the_reference_implementations_captures_decrypt_completely() {
    for (capture, key, datagrams) in [
        ("netcode-reference.pcap", "netcode-reference.key", 84),
        ("yojimbo-soak.pcap", "yojimbo-reference.key", 618),
        ("yojimbo-client-server.pcap", "yojimbo-reference.key", 362),
    ] {
        let capture = format!("captures/{capture}");
        let key = format!("captures/{key}");
        let args = ["--decode", "40000=netcode", "--netcode-key", &key];
        let check = bitlens(&[&["check", &capture][..], &args[..]].concat());
        assert_eq!(
            check.status.code(),
            Some(0),
            "{capture}: {}",
            String::from_utf8_lossy(&check.stdout)
        );
        let json = bitlens(&[&["decode", "--json", &capture][..], &args[..]].concat());
        let lines: Vec<serde_json::Value> = String::from_utf8(json.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), datagrams, "{capture}");
        for l in &lines {
            assert_eq!(l["status"], "ok", "{capture}: {l}");
            // Status ok: the MAC verified (a MAC that does not is the datagram's error).
            let mac = l["fields"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["path"] == "netcode.mac"));
            let request = l["packet_type"] == "netcode.connection_request";
            assert!(
                request || mac.is_some(),
                "{capture}: every packet but the request carries a MAC: {l}"
            );
        }
    }
}

/// netcode keys with no port read through netcode, or a `--write-plaintext` that decrypted
/// nothing: a warning on stderr says which `--decode` is missing (the run still succeeds).
#[test]
fn netcode_options_without_a_netcode_port_are_pointed_out() {
    let o = bitlens(&[
        "check",
        "captures/netcode.pcap",
        "--netcode-key",
        "captures/netcode.key",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("apply to no port"), "{err}");
    assert!(err.contains("--decode PORT=netcode+NAME"), "{err}");
    // With the port, no warning.
    let o = bitlens(&[
        "check",
        "captures/netcode.pcap",
        "--decode",
        "5000=netcode+demo",
        "--netcode-key",
        "captures/netcode.key",
    ]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("apply to no port"));

    let dir = std::env::temp_dir().join(format!("bitlens-plain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("plain.pcapng");
    let o = bitlens(&[
        "decode",
        "captures/demo.pcap",
        "--write-plaintext",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("no payload was decrypted"), "{err}");
}

/// A key log with wrong session keys for the shipped capture's client: no packet opens, so
/// none moves a replay window (netcode 1.02's reader moves it only after a packet opened):
/// every encrypted packet is a MAC error, the resent one (frame 12) too, and none a replay.
#[test]
fn a_wrong_key_log_gives_mac_errors_and_no_replays() {
    let dir = tempdir().join("wrong-keylog");
    std::fs::create_dir_all(&dir).unwrap();
    let mut log = KeyLog::new(Vec::new());
    let client: SocketAddr = "127.0.0.1:50001".parse().unwrap();
    log.client(client, PROTOCOL_ID, &[1; 32], &[2; 32]).unwrap();
    let path = dir.join("wrong.keylog");
    std::fs::write(&path, log.into_inner()).unwrap();
    let args = [
        "--decode",
        "5000=netcode+demo",
        "--netcode-keylog",
        path.to_str().unwrap(),
    ];
    let mut check = vec!["check", "captures/netcode.pcap"];
    check.extend(args);
    let o = bitlens(&check);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("netcode: error/mac_mismatch"), "{text}");
    assert!(!text.contains("replay"), "{text}");
    let mut decode = vec!["decode", "--json", "captures/netcode.pcap"];
    decode.extend(args);
    let o = bitlens(&decode);
    let lines: Vec<serde_json::Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let frame12 = lines.iter().find(|l| l["frame"] == 12).unwrap();
    assert_eq!(frame12["error"]["kind"], "mac_mismatch", "{frame12}");
    let kinds: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l["error"]["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["mac_mismatch", "too_small"].into(),
        "only what does not open, and the cut packet (found before decryption)"
    );
}
