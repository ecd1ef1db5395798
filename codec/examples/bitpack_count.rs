//! Packs and unpacks 1M values of widths 3, 10, 24, 1, 32 once: a fixed workload for
//! instruction counting, which is repeatable where wall-clock time on a shared machine is not:
//!
//!     cargo build --release -p bitlens-codec --example bitpack_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/bitpack_count write   # or: read
//!
//! Instructions per value = (total - baseline) / 1M, where the baseline is `none`.

use bitlens_codec::{BitReader, BitWriter};
use std::hint::black_box;

fn main() {
    const N: usize = 1_000_000;
    const WIDTHS: [u32; 5] = [3, 10, 24, 1, 32];
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let widths: Vec<u32> = (0..N).map(|i| WIDTHS[i % 5]).collect();
    let vals: Vec<u32> = widths
        .iter()
        .map(|&w| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x as u32) & (if w == 32 { u32::MAX } else { (1 << w) - 1 })
        })
        .collect();
    let mut buf = vec![0u8; N * 4 + 8];
    let mut w = BitWriter::new(&mut buf);
    for (&v, &n) in vals.iter().zip(&widths) {
        w.write_bits(v, n).expect("fits");
    }
    let len = w.flush();
    match mode.as_str() {
        "write" => {
            let mut w = BitWriter::new(&mut buf);
            for (&v, &n) in vals.iter().zip(&widths) {
                w.write_bits(black_box(v), n).expect("fits");
            }
            black_box(w.flush());
        }
        "read" => {
            let mut r = BitReader::new(&buf[..len]);
            let mut acc = 0u32;
            for &n in &widths {
                acc = acc.wrapping_add(r.read_bits(black_box(n)).expect("in range"));
            }
            black_box(acc);
        }
        _ => {}
    }
}
