//! A netcode 1.02 capture of `bitlens synth`'s demo traffic and the same datagrams in the
//! clear, for BENCHMARKS.md's "what decrypting costs" (issue 26): the time of `bitlens decode
//! --json` and `check` through `netcode+demo` against the same inner datagrams decoded as
//! `demo`, end to end as a user runs them.
//!
//! ```text
//! cargo run --release -p bitlens --example netcode_capture -- OUT_DIR [DATAGRAMS]
//! ```
//!
//! Writes `OUT_DIR/clear.pcap` (the game port's datagrams of `synth --seed 1`: four clients
//! and their server on the demo port; the batch port's are left out), `OUT_DIR/netcode.pcap`
//! (each of them as a netcode payload packet: prefix, sequence, the payload sealed with
//! ChaCha20-Poly1305 under its client's session key for that direction, the MAC; same
//! addresses and times) and `OUT_DIR/netcode.keylog` (one key log line per client).
//! Decode them with
//!
//! ```text
//! bitlens decode OUT_DIR/clear.pcap --json
//! bitlens decode OUT_DIR/netcode.pcap --decode 40000=netcode+demo \
//!     --netcode-keylog OUT_DIR/netcode.keylog --json
//! ```

use bitlens::capture::write::{CaptureWriter, SynthDatagram, WriteFormat};
use bitlens_netcode::{packet_ad, seal_packet, wire::sequence_bytes_for};
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The protocol id of the key log lines.
const PROTOCOL_ID: u64 = 0x6269_746c_656e_7331;
/// The prefix byte's packet type: payload.
const PAYLOAD: u8 = 5;

/// The session keys of the `i`-th client: client to server, server to client.
fn keys(i: usize) -> ([u8; 32], [u8; 32]) {
    ([0x10 + i as u8; 32], [0x80 + i as u8; 32])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("OUT_DIR [DATAGRAMS]"));
    let n: usize = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("DATAGRAMS"));
    std::fs::create_dir_all(&dir).expect("OUT_DIR");
    let format = WriteFormat::PcapEthernet { nanos: true };
    let mut clear = CaptureWriter::create(dir.join("clear.pcap"), format).expect("clear.pcap");
    let mut sealed = CaptureWriter::create(dir.join("netcode.pcap"), format).expect("netcode.pcap");
    let port = bitlens_testkit::demo::PORT;
    // Per client: its number (for its keys) and the next sequence of each direction.
    let mut clients: HashMap<SocketAddr, (usize, [u64; 2])> = HashMap::new();
    let mut written = 0;
    for (d, _) in bitlens::synth::datagrams(usize::MAX, 1, false) {
        if written == n {
            break;
        }
        let to_server = d.dst.port() == port;
        if !to_server && d.src.port() != port {
            continue;
        }
        let client = if to_server { d.src } else { d.dst };
        let next = clients.len();
        let (i, seqs) = clients.entry(client).or_insert((next, [0, 0]));
        let (c2s, s2c) = keys(*i);
        let (key, seq) = if to_server {
            (c2s, &mut seqs[0])
        } else {
            (s2c, &mut seqs[1])
        };
        let nbytes = sequence_bytes_for(*seq);
        let prefix = PAYLOAD | (nbytes as u8) << 4;
        let mut body = d.payload.to_vec();
        let mac = seal_packet(&key, *seq, &packet_ad(PROTOCOL_ID, prefix), &mut body);
        let mut bytes = vec![prefix];
        bytes.extend_from_slice(&seq.to_le_bytes()[..nbytes]);
        bytes.extend_from_slice(&body);
        bytes.extend_from_slice(&mac);
        *seq += 1;
        sealed
            .write(&SynthDatagram::new(d.time, d.src, d.dst, bytes))
            .expect("write netcode.pcap");
        clear.write(&d).expect("write clear.pcap");
        written += 1;
    }
    clear.finish().expect("clear.pcap");
    sealed.finish().expect("netcode.pcap");
    let mut keylog = std::fs::File::create(dir.join("netcode.keylog")).expect("netcode.keylog");
    let mut by_number: Vec<_> = clients.iter().collect();
    by_number.sort_by_key(|(_, (i, _))| *i);
    for (addr, (i, _)) in by_number {
        let (c2s, s2c) = keys(*i);
        writeln!(
            keylog,
            "NETCODE_CLIENT {addr} {PROTOCOL_ID:#018x} {} {}",
            hex::encode(c2s),
            hex::encode(s2c)
        )
        .expect("write netcode.keylog");
    }
    println!(
        "{written} datagrams of {} clients on port {port}: {}",
        clients.len(),
        dir.display()
    );
}
