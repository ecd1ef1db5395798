//! Instruction counts of serialize.rs's throughput workload through serialize.rs and bitlens in
//! the same shapes (built and run by `benches/serialize_rs.sh count`, which says how): the
//! bitlens side is `codec/benches/common/throughput.rs`, the serialize.rs side below makes the
//! same calls as the peers' harness (`../shared/peers/serialize-rs/`) with its serialize function
//! out of line too. `MODE LIB`: MODE one of none, vary, write, read, measure, bp-write, bp-read;
//! LIB bitlens or serialize.rs.

use serialize::Stream as _;
use std::hint::black_box;

#[path = "../../codec/benches/common/throughput.rs"]
#[allow(dead_code)]
mod bl;
use bl::{BP_SIZE, Packet, VARIANTS};

#[path = "srs.rs"]
mod srs;

#[inline(never)]
fn ser_srs<S: serialize::Stream>(p: &mut Packet, s: &mut S) -> serialize::Result<(), S::Error> {
    srs::fields(p, s)
}

#[inline(never)]
fn write_srs(p: &mut Packet, buffer: &mut [u8; 256], n: u64) {
    let mut rng = 1u64;
    for _ in 0..n {
        rng = p.vary(rng);
        let k = {
            let mut s = serialize::WriteStream::new(buffer);
            ser_srs(p, &mut s).unwrap();
            s.flush();
            s.bytes_processed()
        };
        black_box(&buffer);
        black_box(k);
    }
}

#[inline(never)]
fn read_srs(bufs: &[[u8; 256]], len: usize, n: u64) {
    for i in 0..n as usize {
        let mut s = serialize::ReadStream::new(&bufs[i & (VARIANTS - 1)], len);
        let mut q = Packet::default();
        ser_srs(&mut q, &mut s).unwrap();
        black_box(&q);
    }
}

#[inline(never)]
fn measure_srs(p: &mut Packet, n: u64) {
    let mut rng = 1u64;
    for _ in 0..n {
        rng = p.vary(rng);
        let mut s = serialize::MeasureStream::new();
        ser_srs(p, &mut s).unwrap();
        black_box(s.bits_processed());
    }
}

#[inline(never)]
fn bp_write_srs(a: &mut [u8], values: &[u32; 16]) -> u64 {
    srs::bp_write(a, values)
}

#[inline(never)]
fn bp_read_srs(a: &[u8]) -> u64 {
    srs::bp_read(a)
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let lib = std::env::args().nth(2).unwrap_or_else(|| "bitlens".into());
    let srs = match lib.as_str() {
        "bitlens" => false,
        "serialize.rs" => true,
        l => panic!("unknown library {l:?}: bitlens or serialize.rs"),
    };
    // The same bytes from both, and each reads the other's.
    let (bl_bufs, len) = bl::variants();
    let mut srs_bufs = vec![[0u8; 256]; VARIANTS];
    let mut p = Packet::init();
    let mut rng = 1u64;
    for (i, buf) in srs_bufs.iter_mut().enumerate() {
        rng = p.vary(rng);
        let mut w = serialize::WriteStream::new(buf);
        ser_srs(&mut p, &mut w).unwrap();
        w.flush();
        assert_eq!(w.bytes_processed() as usize, len);
        assert_eq!(buf[..len], bl_bufs[i][..len], "variant {i}");
    }
    let values = black_box(bl::bp_values());
    let mut buf = vec![0u8; BP_SIZE + 8];
    let mut p = Packet::init();
    let mut out = [0u8; 256];
    const PACKETS: u64 = 100_000;
    const PASSES: usize = 20;
    match (mode.as_str(), srs) {
        ("none", _) => {}
        ("vary", _) => bl::vary_packets(&mut p, PACKETS),
        ("write", false) => {
            black_box(bl::write_packets(&mut p, &mut out, PACKETS));
        }
        ("write", true) => write_srs(&mut p, &mut out, PACKETS),
        ("read", false) => bl::read_packets(&bl_bufs, len, PACKETS),
        ("read", true) => read_srs(&srs_bufs, len, PACKETS),
        ("measure", false) => {
            black_box(bl::measure_packets(&mut p, PACKETS));
        }
        ("measure", true) => measure_srs(&mut p, PACKETS),
        ("bp-write", false) => {
            for _ in 0..PASSES {
                black_box(bl::bp_write(&mut buf, &values));
            }
        }
        ("bp-write", true) => {
            for _ in 0..PASSES {
                black_box(bp_write_srs(&mut buf, &values));
            }
        }
        ("bp-read", false) => {
            bl::bp_write(&mut buf, &values);
            for _ in 0..PASSES {
                black_box(bl::bp_read(black_box(&buf)));
            }
        }
        ("bp-read", true) => {
            bp_write_srs(&mut buf, &values);
            for _ in 0..PASSES {
                black_box(bp_read_srs(black_box(&buf)));
            }
        }
        (m, _) => panic!("unknown mode {m:?}"),
    }
}
