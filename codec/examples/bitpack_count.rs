//! Packs and unpacks 1M values of widths 3, 10, 24, 1, 32 once: a fixed workload for
//! instruction counting, which is repeatable where wall-clock time on a shared machine is not:
//!
//!     cargo build --release -p bitlens-codec --example bitpack_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/bitpack_count write   # or: read, write-const, read-const, write-runs, read-runs
//!
//! Instructions per value = (total - baseline) / 1M, where the baseline is `none`.
//! `write`/`read` take the widths from a runtime array (as the bench's row that compares with
//! bitstream-io); `write-const`/`read-const` serialize 200k structs of fields {3, 10, 24, 1, 32}
//! bits, whose widths are constants at each call site, as in a `serialize` function.
//! `write-runs`/`read-runs` serialize the same structs with one `write_run`/`read_run` call each.
//! `time` runs every mode 30 times and prints the fastest ns/value of each (a quick check, not a
//! substitute for the criterion bench).

use std::hint::black_box;

#[path = "../benches/common/bitpacker.rs"]
mod common;
use common::{N, fields, shapes, values, write_runtime};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let (vals, widths) = values();
    let items = fields(&vals);
    let expected = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let mut buf = vec![0u8; N * 4 + 8];
    let len = write_runtime(&mut buf, &vals, &widths);
    let packed = buf[..len].to_vec();
    let shapes = shapes(&vals, &widths, &items);
    let run = |mode: &str, buf: &mut [u8]| {
        for shape in &shapes {
            if mode.strip_prefix("write") == Some(shape.mode) {
                let n = (shape.write)(buf);
                assert_eq!(&buf[..n], &packed[..]);
            } else if mode.strip_prefix("read") == Some(shape.mode) {
                assert_eq!((shape.read)(black_box(&packed)), expected);
            }
        }
    };
    if mode == "time" {
        for shape in &shapes {
            for dir in ["write", "read"] {
                let m = format!("{dir}{}", shape.mode);
                let mut best = f64::MAX;
                for _ in 0..30 {
                    let t = std::time::Instant::now();
                    run(&m, &mut buf);
                    best = best.min(t.elapsed().as_secs_f64());
                }
                let ns = best * 1e9 / N as f64;
                println!("{m:12} {ns:.3} ns/value  ({dir}, {})", shape.name);
            }
        }
    } else {
        run(&mode, &mut buf);
    }
}
