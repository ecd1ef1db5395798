//! Load and latency through a UDP relay (`bitlens proxy`, `socat`, or none), for
//! `benches/proxy.sh` and BENCHMARKS.md.
//!
//! The program is both ends: an echo server bound to `--server` and a client sending demo
//! `PacketA`s (x = a sequence number, so the proxy decodes them) to `--target`, which is the
//! relay in front of the server (or the server itself, for the direct baseline).
//!
//! ```text
//! cargo run --release -p bitlens --example proxy_load -- \
//!     --server 127.0.0.1:47001 --target 127.0.0.1:47002 latency [--rate 1000] [--seconds 3]
//! ... throughput [--rates 5000,10000,20000] [--seconds 2]
//! ... closed [--seconds 3]
//! ... burst [--count 200000]
//! ```
//!
//! - `latency`: round trips at `--rate` per second; prints the round-trip time at p50, p90,
//!   p99 and the maximum, in microseconds.
//! - `throughput`: for each rate, `--seconds` of round trips sent at that rate (a burst every
//!   millisecond); prints how many came back. A relay forwards two datagrams per round trip.
//! - `closed`: one client, one datagram in flight: the next is sent when the echo of the last
//!   is back (or after 20 ms without it); prints the round trips per second.
//! - `burst`: `--count` datagrams sent back to back, as fast as one thread sends, to a server
//!   that only counts them (its receive buffer set to 8 MiB: past `net.core.rmem_max` with
//!   `CAP_NET_ADMIN`, else as far as it lets it); prints how many arrived, and the kernel's count of
//!   datagrams dropped at full receive buffers on the host (`RcvbufErrors` of `/proc/net/snmp`)
//!   during the run, which tells a relay's losses from the server's.

use bitlens_codec::packet::{read_packet, write_packet};
use bitlens_testkit::demo::{DemoPacket, PacketA};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn packet(seq: u32) -> Vec<u8> {
    let mut p = DemoPacket::A(PacketA {
        x: seq as i32,
        y: 0,
        z: 0,
    });
    let mut buf = [0u8; 64];
    let n = write_packet(&mut p, &mut buf).expect("a PacketA fits");
    buf[..n].to_vec()
}

fn seq_of(bytes: &[u8]) -> Option<u32> {
    match read_packet::<DemoPacket>(bytes) {
        Ok(DemoPacket::A(a)) => Some(a.x as u32),
        _ => None,
    }
}

/// Echoes every datagram back to its sender until `stop`.
fn echo_server(addr: SocketAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let socket = UdpSocket::bind(addr).expect("bind the echo server");
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !stop.load(Ordering::Relaxed) {
            if let Ok((n, peer)) = socket.recv_from(&mut buf) {
                let _ = socket.send_to(&buf[..n], peer);
            }
        }
    })
}

/// Sends `total` round trips at `rate` per second (a burst each millisecond); returns the
/// send times, and the receive times of the replies by sequence number.
fn run(target: SocketAddr, rate: u64, total: u32) -> (Vec<Instant>, Vec<Option<Instant>>) {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("client socket");
    socket.connect(target).expect("connect");
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let received = Arc::new(Mutex::new(vec![None; total as usize]));
    let done = Arc::new(AtomicBool::new(false));
    let rx = socket.try_clone().expect("clone");
    let (r, d) = (Arc::clone(&received), Arc::clone(&done));
    let receiver = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !d.load(Ordering::Relaxed) {
            if let Ok(n) = rx.recv(&mut buf) {
                let now = Instant::now();
                if let Some(seq) = seq_of(&buf[..n])
                    && let Some(slot) = r.lock().expect("lock").get_mut(seq as usize)
                {
                    slot.get_or_insert(now);
                }
            }
        }
    });
    let packets: Vec<Vec<u8>> = (0..total).map(packet).collect();
    let mut sent = Vec::with_capacity(total as usize);
    let start = Instant::now();
    let per_ms = rate as f64 / 1000.0;
    let mut next = 0u32;
    let mut tick = 0u64;
    while next < total {
        tick += 1;
        let due = ((tick as f64 * per_ms) as u32).min(total);
        while next < due {
            sent.push(Instant::now());
            let _ = socket.send(&packets[next as usize]);
            next += 1;
        }
        let at = start + Duration::from_millis(tick);
        if let Some(wait) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    done.store(true, Ordering::Relaxed);
    receiver.join().expect("receiver");
    let received = received.lock().expect("lock").clone();
    (sent, received)
}

/// `RcvbufErrors` of the host's UDP counters: datagrams dropped at a full receive buffer.
fn rcvbuf_errors() -> Option<u64> {
    let snmp = std::fs::read_to_string("/proc/net/snmp").ok()?;
    let mut lines = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let at = names.split_whitespace().position(|n| n == "RcvbufErrors")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// Closed loop: one round trip in flight for `seconds`; returns the round trips completed and
/// the datagrams given up on (20 ms without their echo).
fn closed_loop(target: SocketAddr, seconds: f64) -> (u64, u64) {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("client socket");
    socket.connect(target).expect("connect");
    socket
        .set_read_timeout(Some(Duration::from_millis(20)))
        .expect("timeout");
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let mut buf = [0u8; 2048];
    let (mut done, mut lost, mut seq) = (0u64, 0u64, 0u32);
    let mut out = [0u8; 64];
    while Instant::now() < end {
        let mut p = DemoPacket::A(PacketA {
            x: seq as i32,
            y: 0,
            z: 0,
        });
        let n = write_packet(&mut p, &mut out).expect("a PacketA fits");
        let _ = socket.send(&out[..n]);
        loop {
            match socket.recv(&mut buf) {
                Ok(n) if seq_of(&buf[..n]) == Some(seq) => {
                    done += 1;
                    break;
                }
                // A late echo of a datagram already given up on.
                Ok(_) => {}
                Err(_) => {
                    lost += 1;
                    break;
                }
            }
        }
        seq = seq.wrapping_add(1);
    }
    (done, lost)
}

/// Sends `count` datagrams back to back to `target` in front of a counting server at
/// `server`; returns how many the server received and the host's receive-buffer drops.
fn burst(server: SocketAddr, target: SocketAddr, count: u32) -> (u64, Option<u64>, usize) {
    let sink = UdpSocket::bind(server).expect("bind the counting server");
    // 8 MiB, forced past net.core.rmem_max with CAP_NET_ADMIN (root) as the proxy's is: the
    // server must not be where a relayed burst is lost.
    use nix::sys::socket::{getsockopt, setsockopt, sockopt};
    let _ = setsockopt(&sink, sockopt::RcvBuf, &(8 << 20));
    if getsockopt(&sink, sockopt::RcvBuf).unwrap_or(0) < 16 << 20 {
        let _ = setsockopt(&sink, sockopt::RcvBufForce, &(8 << 20));
    }
    let granted = getsockopt(&sink, sockopt::RcvBuf).unwrap_or(0);
    sink.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let counter = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut got = 0u64;
        // Until half a second passes without a datagram (the first may take a while).
        let mut idle = 0;
        while idle < 2 + 4 * u32::from(got == 0) {
            match sink.recv(&mut buf) {
                Ok(_) => {
                    got += 1;
                    idle = 0;
                }
                Err(_) => idle += 1,
            }
        }
        got
    });
    std::thread::sleep(Duration::from_millis(100));
    let before = rcvbuf_errors();
    let socket = UdpSocket::bind("127.0.0.1:0").expect("client socket");
    socket.connect(target).expect("connect");
    let packets: Vec<Vec<u8>> = (0..count.min(1 << 16)).map(packet).collect();
    for i in 0..count {
        let _ = socket.send(&packets[i as usize % packets.len()]);
    }
    let got = counter.join().expect("counter");
    let drops = before.zip(rcvbuf_errors()).map(|(b, a)| a - b);
    (got, drops, granted)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server: SocketAddr = arg(&args, "--server")
        .unwrap_or("127.0.0.1:47001")
        .parse()
        .expect("--server ADDR:PORT");
    let target: SocketAddr = arg(&args, "--target")
        .unwrap_or("127.0.0.1:47002")
        .parse()
        .expect("--target ADDR:PORT");
    let seconds: f64 = arg(&args, "--seconds").map_or(2.0, |s| s.parse().expect("--seconds"));
    if args.iter().any(|a| a == "burst") {
        let count: u32 = arg(&args, "--count").map_or(200_000, |s| s.parse().expect("--count"));
        let start = Instant::now();
        let (got, drops, granted) = burst(server, target, count);
        let drops = drops.map_or("?".to_string(), |d| d.to_string());
        println!(
            "burst: {got} of {count} delivered ({:.1}%), lost {}; host receive-buffer drops {drops}; server SO_RCVBUF {granted}; {:.2} s",
            got as f64 * 100.0 / f64::from(count),
            u64::from(count) - got,
            start.elapsed().as_secs_f64()
        );
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let echo = echo_server(server, Arc::clone(&stop));
    if args.iter().any(|a| a == "closed") {
        let (done, lost) = closed_loop(target, seconds);
        println!(
            "closed: {:.0} round trips/s ({done} in {seconds} s, {lost} given up after 20 ms)",
            done as f64 / seconds
        );
    } else if args.iter().any(|a| a == "latency") {
        let rate: u64 = arg(&args, "--rate").map_or(1000, |s| s.parse().expect("--rate"));
        let total = (rate as f64 * seconds) as u32;
        let (sent, received) = run(target, rate, total);
        let mut rtt: Vec<u128> = sent
            .iter()
            .zip(&received)
            .filter_map(|(s, r)| r.map(|r| r.duration_since(*s).as_micros()))
            .collect();
        rtt.sort_unstable();
        let q = |p: f64| {
            rtt.get(((rtt.len() as f64 - 1.0) * p) as usize)
                .copied()
                .unwrap_or(0)
        };
        println!(
            "latency: {} of {} round trips at {rate}/s; rtt us p50 {} p90 {} p99 {} max {}",
            rtt.len(),
            total,
            q(0.5),
            q(0.9),
            q(0.99),
            rtt.last().copied().unwrap_or(0)
        );
    } else {
        let rates: Vec<u64> = arg(&args, "--rates")
            .unwrap_or("5000,10000,20000,40000,60000,80000,100000")
            .split(',')
            .map(|r| r.parse().expect("--rates N,N"))
            .collect();
        for rate in rates {
            let total = (rate as f64 * seconds) as u32;
            let (_, received) = run(target, rate, total);
            let back = received.iter().filter(|r| r.is_some()).count();
            println!(
                "throughput: {rate} round trips/s ({} datagrams/s through a relay): {back} of {total} back, lost {}",
                rate * 2,
                total as usize - back
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = echo.join();
}
