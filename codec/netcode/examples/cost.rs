//! What decrypting costs: the demo's sample packets, dissected in the clear and as netcode
//! payload packets (decrypted with a key log's session key, then dissected), one thread.
//!
//! `cargo run --release -p bitlens-netcode --example cost [DATAGRAMS]`
//!
//! Prints ns per datagram for the clear dissection and for the stacked one (the tracker's pass
//! included), for `dissect_values` (what `decode --json` runs) and `verdict` (what `check`
//! runs), and their ratio.

use bitlens_codec::dissect::Dissector;
use bitlens_codec::observe::Observation;
use bitlens_codec::transport::{Stack, Transport};
use bitlens_codec::write_packet;
use bitlens_netcode::{ClientKeys, Netcode, packet_ad, seal_packet, wire::sequence_bytes_for};
use bitlens_testkit::demo;
use std::collections::HashMap;
use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

const KEY: [u8; 32] = [0x5a; 32];
const PROTOCOL_ID: u64 = 0x6269_746c_656e_7331;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let client: SocketAddr = "127.0.0.1:50001".parse().unwrap();
    let server: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let samples = demo::samples();
    let mut clear = Vec::with_capacity(n);
    let mut sealed = Vec::with_capacity(n);
    for i in 0..n {
        let mut p = samples[i % samples.len()].clone();
        let mut buf = [0u8; 1200];
        let len = write_packet(&mut p, &mut buf).unwrap();
        let plain = buf[..len].to_vec();
        let seq = i as u64;
        let nbytes = sequence_bytes_for(seq);
        let prefix = 5 | (nbytes as u8) << 4;
        let mut d = vec![prefix];
        d.extend_from_slice(&seq.to_le_bytes()[..nbytes]);
        let mut body = plain.clone();
        let mac = seal_packet(&KEY, seq, &packet_ad(PROTOCOL_ID, prefix), &mut body);
        d.extend(body);
        d.extend(mac);
        clear.push(plain);
        sealed.push(d);
    }
    let keys = ClientKeys {
        protocol_id: PROTOCOL_ID,
        client_to_server: KEY,
        server_to_client: KEY,
    };
    let netcode = Netcode::new().with_keylog(HashMap::from([(client, keys)]));
    let demo_d = demo::dissector();
    let stack = Stack::new(Arc::new(netcode.clone()), Some(Arc::new(demo::dissector())));

    let time = |f: &mut dyn FnMut()| {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            f();
            best = best.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        }
        best
    };
    let clear_values = time(&mut || {
        for p in &clear {
            black_box(demo_d.dissect_values(p)).recycle();
        }
    });
    let stacked_values = time(&mut || {
        let mut tracker = netcode.tracker();
        for d in &sealed {
            let seen = tracker.observe(client, server, d);
            let x = stack.dissect_seen(d, &seen, true);
            assert_eq!(x.status, bitlens_codec::dissect::Status::Ok);
            black_box(x).recycle();
        }
    });
    let clear_verdict = time(&mut || {
        for p in &clear {
            black_box(demo_d.verdict(p));
        }
    });
    let stacked_verdict = time(&mut || {
        let mut tracker = netcode.tracker();
        for d in &sealed {
            let seen = tracker.observe(client, server, d);
            black_box(stack.verdict_seen(d, &seen));
        }
    });
    let tracker_only = time(&mut || {
        let mut tracker = netcode.tracker();
        for d in &sealed {
            black_box(tracker.observe(client, server, d));
        }
    });
    let open_only = time(&mut || {
        for (i, d) in sealed.iter().enumerate() {
            let nbytes = usize::from(d[0] >> 4);
            let ad = packet_ad(PROTOCOL_ID, d[0]);
            black_box(bitlens_netcode::open_packet(
                &KEY,
                i as u64,
                &ad,
                &d[1 + nbytes..],
            ));
        }
    });
    println!("open_packet alone: {open_only:.0} ns per datagram");
    let _ = Observation::NONE;
    let mean_len = clear.iter().map(Vec::len).sum::<usize>() as f64 / n as f64;
    println!("{n} demo datagrams, mean payload {mean_len:.1} bytes, best of 5, one thread");
    println!(
        "dissect_values: clear {clear_values:.0} ns, netcode {stacked_values:.0} ns, ratio {:.2}",
        stacked_values / clear_values
    );
    println!(
        "verdict:        clear {clear_verdict:.0} ns, netcode {stacked_verdict:.0} ns, ratio {:.2}",
        stacked_verdict / clear_verdict
    );
    println!("tracker pass alone: {tracker_only:.0} ns per datagram");
}
