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
use common::{N, Shape, fields, shapes, values, write_runtime};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let (vals, widths) = values();
    let items = fields(&vals);
    let expected = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let mut buf = vec![0u8; N * 4 + 8];
    let len = write_runtime(&mut buf, &vals, &widths);
    let packed = buf[..len].to_vec();
    let shapes = shapes(&vals, &widths, &items);
    let write = |shape: &Shape<'_>, buf: &mut [u8]| {
        let n = (shape.write)(buf);
        assert_eq!(&buf[..n], &packed[..]);
    };
    let read = |shape: &Shape<'_>| assert_eq!((shape.read)(black_box(&packed)), expected);
    if mode == "time" {
        for shape in &shapes {
            for dir in ["write", "read"] {
                let mut best = f64::MAX;
                for _ in 0..30 {
                    let t = std::time::Instant::now();
                    if dir == "write" {
                        write(shape, &mut buf);
                    } else {
                        read(shape);
                    }
                    best = best.min(t.elapsed().as_secs_f64());
                }
                let ns = best * 1e9 / N as f64;
                let m = format!("{dir}{}", shape.mode);
                println!("{m:12} {ns:.3} ns/value  ({dir}, {})", shape.name);
            }
        }
        return;
    }
    if mode == "none" {
        return;
    }
    let find = |suffix: Option<&str>| shapes.iter().find(|s| suffix == Some(s.mode));
    if let Some(shape) = find(mode.strip_prefix("write")) {
        write(shape, &mut buf);
    } else if let Some(shape) = find(mode.strip_prefix("read")) {
        read(shape);
    } else {
        panic!(
            "unknown mode {mode:?}: none, time, write, read, write-const, read-const, \
             write-runs or read-runs"
        );
    }
}
