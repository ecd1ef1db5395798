//! Packs and unpacks 1M values of widths 3, 10, 24, 1, 32 once: a fixed workload for
//! instruction counting, which is repeatable where wall-clock time on a shared machine is not:
//!
//!     cargo build --release -p bitlens-codec --example bitpack_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/bitpack_count write   # or: read, write-const, read-const
//!
//! Instructions per value = (total - baseline) / 1M, where the baseline is `none`.
//! `write`/`read` take the widths from a runtime array (as the bench's row that compares with
//! bitstream-io); `write-const`/`read-const` serialize 200k structs of fields {3, 10, 24, 1, 32}
//! bits, whose widths are constants at each call site, as in a `serialize` function.
//! `time` runs every mode 30 times and prints the fastest ns/value of each (a quick check, not a
//! substitute for the criterion bench).

use bitlens_codec::{BitReader, BitWriter};
use std::hint::black_box;

const N: usize = 1_000_000;
const WIDTHS: [u32; 5] = [3, 10, 24, 1, 32];

#[derive(Clone, Copy)]
struct Fields {
    a: u32,
    b: u32,
    c: u32,
    d: u32,
    e: u32,
}

#[inline(never)]
fn write_runtime(buf: &mut [u8], vals: &[u32], widths: &[u32]) -> usize {
    let mut w = BitWriter::new(buf);
    for (&v, &n) in vals.iter().zip(widths) {
        w.write_bits(v, n).expect("fits");
    }
    w.flush()
}

#[inline(never)]
fn read_runtime(data: &[u8], widths: &[u32]) -> u32 {
    let mut r = BitReader::new(data);
    let mut acc = 0u32;
    for &n in widths {
        acc = acc.wrapping_add(r.read_bits(n).expect("in range"));
    }
    acc
}

#[inline(never)]
fn write_const(buf: &mut [u8], items: &[Fields]) -> usize {
    let mut w = BitWriter::new(buf);
    for f in items {
        w.write_bits(f.a, 3).expect("fits");
        w.write_bits(f.b, 10).expect("fits");
        w.write_bits(f.c, 24).expect("fits");
        w.write_bits(f.d, 1).expect("fits");
        w.write_bits(f.e, 32).expect("fits");
    }
    w.flush()
}

#[inline(never)]
fn read_const(data: &[u8], count: usize) -> u32 {
    let mut r = BitReader::new(data);
    let mut acc = 0u32;
    for _ in 0..count {
        let f = Fields {
            a: r.read_bits(3).expect("in range"),
            b: r.read_bits(10).expect("in range"),
            c: r.read_bits(24).expect("in range"),
            d: r.read_bits(1).expect("in range"),
            e: r.read_bits(32).expect("in range"),
        };
        acc = acc
            .wrapping_add(f.a)
            .wrapping_add(f.b)
            .wrapping_add(f.c)
            .wrapping_add(f.d)
            .wrapping_add(f.e);
    }
    acc
}

fn main() {
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
    let items: Vec<Fields> = vals
        .chunks_exact(5)
        .map(|c| Fields {
            a: c[0],
            b: c[1],
            c: c[2],
            d: c[3],
            e: c[4],
        })
        .collect();
    let expected = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let mut buf = vec![0u8; N * 4 + 8];
    let len = write_runtime(&mut buf, &vals, &widths);
    let packed = buf[..len].to_vec();
    let run = |mode: &str, buf: &mut [u8]| match mode {
        "write" => {
            let n = write_runtime(buf, black_box(&vals), black_box(&widths));
            assert_eq!(&buf[..n], &packed[..]);
        }
        "read" => assert_eq!(
            read_runtime(black_box(&packed), black_box(&widths)),
            expected
        ),
        "write-const" => {
            let n = write_const(buf, black_box(&items));
            assert_eq!(&buf[..n], &packed[..]);
        }
        "read-const" => assert_eq!(
            read_const(black_box(&packed), black_box(items.len())),
            expected
        ),
        _ => {}
    };
    if mode == "time" {
        for m in ["write", "read", "write-const", "read-const"] {
            let mut best = f64::MAX;
            for _ in 0..30 {
                let t = std::time::Instant::now();
                run(m, &mut buf);
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!("{m:12} {:.3} ns/value", best * 1e9 / N as f64);
        }
    } else {
        run(&mode, &mut buf);
    }
}
