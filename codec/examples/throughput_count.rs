//! serialize.rs's throughput workload through bitlens once, for instruction counting (the
//! criterion bench `benches/throughput.rs` times the same loops):
//!
//!     cargo build --release -p bitlens-codec --example throughput_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/throughput_count write   # or read, measure, vary, bp-write, bp-read
//!
//! Instructions per packet = (total - baseline) / 100,000 for `write`, `read`, `measure` and
//! `vary` (the LCG alone, included in `write` and `measure`), per 64 KiB pass = (total -
//! baseline) / 20 for `bp-write` and `bp-read`; the baseline is `none`. The same counts for
//! serialize.rs, in the same shapes, come from `bash benches/serialize_rs.sh count`.

use std::hint::black_box;

#[path = "../benches/common/throughput.rs"]
mod common;
use common::*;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let (bufs, len) = variants();
    let values = black_box(bp_values());
    let mut buf = vec![0u8; BP_SIZE + 8];
    bp_write(&mut buf, &values);
    let mut p = Packet::init();
    let mut out = [0u8; 256];
    const PACKETS: u64 = 100_000;
    const PASSES: usize = 20;
    match mode.as_str() {
        "none" => {}
        "write" => {
            black_box(write_packets(&mut p, &mut out, PACKETS));
        }
        "read" => read_packets(&bufs, len, PACKETS),
        "measure" => {
            black_box(measure_packets(&mut p, PACKETS));
        }
        "vary" => vary_packets(&mut p, PACKETS),
        "bp-write" => {
            for _ in 0..PASSES {
                black_box(bp_write(&mut buf, &values));
            }
        }
        "bp-read" => {
            for _ in 0..PASSES {
                black_box(bp_read(black_box(&buf)));
            }
        }
        m => panic!("unknown mode {m:?}: none, write, read, measure, vary, bp-write or bp-read"),
    }
}
