//! The proxy mutating a yojimbo message field behind netcode's encryption, on localhost with
//! real UDP sockets: the soak capture's client datagrams (`captures/yojimbo-soak.pcap`) are sent
//! through `bitlens proxy --decode PORT=yojimbo --netcode-key K --schema S --mutate ...` to a UDP
//! socket standing for the server. What arrives is decrypted with the session keys
//! (bitlens-netcode's own transport: the private key opens the connect token of the client's
//! request): every MAC verifies, the mutated field holds the value written, and every other
//! byte is the original's. The soak client sends its messages in fragmented packets only: the
//! fields a datagram carries are those of its own fragment of the packet it completes; the
//! others were forwarded before and are counted as rules that found nothing to work on, with
//! the reason.

mod common;

use bitlens::capture::Capture;
use bitlens::cmd::common::DecodeOpts;
use bitlens::proxy::Direction;
use bitlens::proxy::dissect::SessionDissector;
use bitlens::proxy::mutate::Mutator;
use bitlens::proxy::rules::Rule;
use bitlens::proxy::spec::Spec;
use bitlens_codec::dissect::Status;
use bitlens_codec::observe::Observation;
use bitlens_codec::transport::Transport;
use bitlens_netcode::{Netcode, parse_key};
use rand::SeedableRng;
use serde_json::Value as Json;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// The value the rule writes into the messages' `sequence` (16 bits, no range).
const VALUE: u64 = 0xbeef;

/// A UDP socket standing for the soak capture's server, and a proxy to it decoding yojimbo on
/// its port with the soak's key and schema, and `extra` arguments.
fn soak_proxy(extra: &[&str]) -> (UdpSocket, common::proxy::ProxyProc) {
    let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
    upstream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let decode = format!("{}=yojimbo", upstream.local_addr().unwrap().port());
    let mut args = vec![
        "--decode",
        &decode,
        "--netcode-key",
        "captures/yojimbo-reference.key",
        "--schema",
        "captures/yojimbo.schema.toml",
    ];
    args.extend_from_slice(extra);
    let proxy = common::proxy::proxy(upstream.local_addr().unwrap(), &args);
    (upstream, proxy)
}

/// The plaintext of each datagram, in order, decrypted by netcode with the server's private
/// key: its sequential pass learns the session keys from the client's connection request (the
/// datagrams are all from `client` to `server`). `None` for what carries no encrypted payload
/// (the request); a MAC that does not verify fails the test.
fn plaintexts(
    datagrams: &[Vec<u8>],
    client: SocketAddr,
    server: SocketAddr,
) -> Vec<Option<(usize, Vec<u8>)>> {
    let key =
        std::fs::read_to_string(common::root().join("captures/yojimbo-reference.key")).unwrap();
    let netcode = Netcode::new().with_private_key(parse_key(&key).unwrap());
    let mut tracker = netcode.tracker();
    datagrams
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let seen: Observation = tracker.observe(client, server, d);
            let u = netcode.unwrap(d, &seen, false);
            assert_eq!(
                u.status,
                Status::Ok,
                "datagram {i}: {:?} (the MAC must verify)",
                u.problem
            );
            u.payload.map(|p| (p.offset, p.bytes))
        })
        .collect()
}

/// Bit `b` of `bytes` (stream order: bit `b % 8` of byte `b / 8`).
fn bit(bytes: &[u8], b: usize) -> u64 {
    u64::from(bytes[b / 8] >> (b % 8) & 1)
}

#[test]
fn the_proxy_mutates_a_yojimbo_message_field_behind_netcodes_encryption() {
    let capture = Capture::open(common::root().join("captures/yojimbo-soak.pcap")).unwrap();
    let sent: Vec<Vec<u8>> = capture
        .datagrams()
        .iter()
        .filter(|d| d.dst.port() == 40000)
        .map(|d| capture.payload(d).to_vec())
        .collect();
    let (client, server) = capture
        .datagrams()
        .iter()
        .find(|d| d.dst.port() == 40000)
        .map(|d| (d.src, d.dst))
        .unwrap();
    assert_eq!(sent.len(), 297, "the soak client's datagrams");

    let rule = format!(
        "name=seq,packet=yojimbo.packet (reassembled),\
         field=yojimbo.entries[*].messages[*].body.sequence,action=set,value={VALUE}"
    );
    let (upstream, proxy) = soak_proxy(&["--mutate", &rule, "--seed", "7"]);
    let proxy_addr = proxy.addr;

    // In lock step: each datagram is received by the "server" before the next is sent.
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut received = Vec::with_capacity(sent.len());
    let mut buf = [0u8; 2048];
    for d in &sent {
        socket.send_to(d, proxy_addr).unwrap();
        let (n, _) = upstream.recv_from(&mut buf).expect("the proxy forwards");
        received.push(buf[..n].to_vec());
    }
    let (lines, stderr, _) = proxy.interrupt();
    let summary: Vec<String> = stderr.lines().map(String::from).collect();

    // Every datagram arrives with its own length and a MAC that verifies.
    let before = plaintexts(&sent, client, server);
    let after = plaintexts(&received, client, server);
    let mutations: Vec<&Json> = lines.iter().filter(|l| !l["mutation"].is_null()).collect();
    let mut mutated_frames = Vec::new();
    let mut fields_written = 0;
    for l in &mutations {
        assert_eq!(l["packet_type"], "yojimbo.packet (reassembled)", "{l}");
        // The line shows the datagram as sent, decrypted and read again: ok.
        assert_eq!(l["status"], "ok", "{l}");
        let i = usize::try_from(l["frame"].as_u64().unwrap() - 1).unwrap();
        mutated_frames.push(i);
        let (offset, plain) = after[i].as_ref().expect("a payload");
        let (offset0, plain0) = before[i].as_ref().unwrap();
        assert_eq!((offset, plain.len()), (offset0, plain0.len()));
        // The header (prefix, sequence) is unchanged; the MAC is new.
        assert_eq!(received[i][..*offset], sent[i][..*offset]);
        assert_eq!(received[i].len(), sent[i].len());
        let ops = l["mutation"]["ops"].as_array().unwrap();
        let mut in_ops = vec![false; plain.len() * 8];
        for op in ops {
            assert_eq!(op["action"], "set", "{op}");
            let field = op["field"].as_str().unwrap();
            assert!(
                field.starts_with("yojimbo.entries[0].messages[")
                    && field.ends_with("].body.sequence"),
                "{field}"
            );
            let (at, bits) = (op["bit"].as_u64().unwrap(), op["bits"].as_u64().unwrap());
            assert_eq!(bits, 16);
            assert_eq!(op["new_value"].as_u64(), Some(VALUE));
            // The op's bits are datagram bits, inside this datagram's payload.
            let at = usize::try_from(at).unwrap() - offset * 8;
            let value = (0..16).fold(0, |v, k| v | bit(plain, at + k) << k);
            assert_eq!(value, VALUE, "the field holds the value written");
            let old = (0..16).fold(0, |v, k| v | bit(plain0, at + k) << k);
            assert_eq!(Some(old), op["old_value"].as_u64());
            assert_ne!(old, VALUE, "the field changed");
            in_ops[at..at + 16].iter_mut().for_each(|b| *b = true);
            fields_written += 1;
        }
        // Every other bit of the plaintext is the original's.
        for (b, _) in in_ops.iter().enumerate().filter(|(_, o)| !**o) {
            assert_eq!(bit(plain, b), bit(plain0, b), "datagram {i} bit {b}");
        }
    }
    // The datagrams no rule changed arrive byte for byte.
    for (i, (s, r)) in sent.iter().zip(&received).enumerate() {
        if !mutated_frames.contains(&i) {
            assert_eq!(s, r, "datagram {i} unchanged");
        }
    }
    assert!(fields_written >= mutations.len());
    // The rule fired on every completing datagram: those without the field are counted.
    assert!(
        summary
            .iter()
            .any(|l| l.contains("rule seq: 26 draws found nothing to work on")),
        "{summary:?}"
    );
}

/// The proxy's field map of each client datagram, in process: a datagram that completes a
/// fragmented packet carries the fields of its own fragment at their bits in the opened
/// datagram (each holds the value its dissection read there), and names the packet's other
/// fields (earlier fragments) and the blocks' as read elsewhere; a rule aimed at those leaves
/// the datagram as it was and says why.
#[test]
fn a_reassembled_packets_fields_are_placed_in_the_fragment_that_carries_them() {
    let capture = Capture::open(common::root().join("captures/yojimbo-soak.pcap")).unwrap();
    let opts = DecodeOpts {
        decode: vec!["40000=yojimbo".into()],
        schema: Some(common::root().join("captures/yojimbo.schema.toml")),
        netcode_key: Some(common::root().join("captures/yojimbo-reference.key")),
        ..DecodeOpts::default()
    };
    let none = bitlens::dissectors::Dissectors::new();
    let dissectors = opts
        .dissectors(&bitlens::Context::new("bitlens", &none))
        .expect("valid options");
    let server: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let dis = SessionDissector::new(dissectors, server);
    let spec = |t: &str| Rule::from_spec(Spec::from_cli("--mutate", t, None).unwrap(), 1).unwrap();
    let (mut placed, mut elsewhere, mut refused) = (0, 0, 0);
    for d in capture.datagrams() {
        let payload = capture.payload(d);
        let seen = dis.observe(d.src, d.dst, payload);
        if d.dst != server {
            continue;
        }
        let map = dis.field_map(payload, &seen);
        if map.packet_type.as_deref() != Some("yojimbo.packet (reassembled)") {
            assert!(map.elsewhere.is_empty(), "{map:?}");
            continue;
        }
        let opened = dis.open(payload, &seen).expect("the key opens it");
        for f in map
            .fields
            .iter()
            .filter(|f| f.path.starts_with("yojimbo.entries"))
        {
            assert!(f.bit + f.bits <= payload.len() * 8, "{f:?}");
            if let (Some(wire), 1..=64) = (f.wire, f.bits) {
                let v = (0..f.bits).fold(0u64, |v, k| v | bit(&opened, f.bit + k) << k);
                // A ranged field sends `value - min`.
                let lo = f.range.map_or(0, |r| r.0);
                assert_eq!(i128::from(v) + lo, wire, "frame {}: {}", d.frame, f.path);
                placed += 1;
            }
        }
        elsewhere += map.elsewhere.len();
        // A block's fields come from other datagrams' block fragments: never mutated here.
        if map
            .elsewhere
            .iter()
            .any(|p| p.starts_with("yojimbo.blocks["))
        {
            let mut m = Mutator::new(
                vec![spec(
                    "field=yojimbo.blocks[*].body.sequence,action=set,value=1",
                )],
                None,
            );
            let mut bytes = payload.to_vec();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            let done = m.mutate(Direction::ToServer, &mut bytes, &dis, &seen, &mut rng);
            assert!(done.is_none());
            assert_eq!(bytes, payload, "left as it was");
            let why = m.misses().join("\n");
            assert!(why.contains("read from other datagrams"), "{why}");
            refused += 1;
        }
    }
    assert!(placed > 300, "{placed} fields placed");
    assert!(elsewhere > 100, "{elsewhere} fields elsewhere");
    assert!(refused >= 1);
}

/// The proxy's sequential pass reports at exit what it still held in reassembly, as `check`
/// does at a capture's end: the soak client's datagrams among the capture's first 560 stop
/// part way through fragmented packets.
#[test]
fn the_proxy_says_at_exit_what_was_left_in_reassembly() {
    let capture = Capture::open(common::root().join("captures/yojimbo-soak.pcap")).unwrap();
    let sent: Vec<Vec<u8>> = capture.datagrams()[..560]
        .iter()
        .filter(|d| d.dst.port() == 40000)
        .map(|d| capture.payload(d).to_vec())
        .collect();
    let (upstream, proxy) = soak_proxy(&["--quiet"]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0u8; 2048];
    for d in &sent {
        socket.send_to(d, proxy.addr).unwrap();
        upstream.recv_from(&mut buf).expect("the proxy forwards");
    }
    let (_, stderr, ok) = proxy.interrupt();
    assert!(ok, "{stderr}");
    let want = format!(
        "bitlens proxy: warning: still in reassembly when the proxy stopped: yojimbo {} -> {}: \
         29 fragmented packets incomplete (sequences 3, 5, 7, ",
        socket.local_addr().unwrap(),
        upstream.local_addr().unwrap()
    );
    assert!(stderr.contains(&want), "{want}\n{stderr}");
    assert_eq!(stderr.matches("still in reassembly").count(), 1, "{stderr}");
}
