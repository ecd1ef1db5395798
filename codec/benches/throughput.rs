//! serialize.rs's throughput workload (its `benches/throughput.rs`) through bitlens: the raw
//! bitpacker over its 16 widths (227 bits a group) in a 64 KiB buffer, written and read, in
//! MiB/s; and its 12-field, 49-byte packet written, read and measured, in ns per packet (the
//! write and measure include the peer's per-packet LCG, as the peer's figures do).
//! `cargo bench -p bitlens-codec --bench throughput`
//!
//! serialize.rs is not in the package registry, so its figures come from the side-by-side
//! harness (`bash ../shared/peers/serialize-rs/run.sh`, BENCHMARKS.md). Before timing, every
//! variant reads back equal, and a bitpacker pass writes the bytes the read then sums.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "common/throughput.rs"]
mod common;
use common::*;

/// Runs `f(iters)` once and times it: each loop does its own `iters` iterations, so the time per
/// iteration has no per-call overhead of criterion's in it.
fn timed(iters: u64, f: impl FnOnce(u64)) -> Duration {
    let start = Instant::now();
    f(iters);
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let values = bp_values();
    let mut buf = vec![0u8; BP_SIZE + 8];
    let bytes = bp_write(&mut buf, &values);
    let expected: u64 = {
        let groups = (BP_SIZE * 8 - 255).div_ceil(227) as u64;
        groups * values.iter().map(|&v| u64::from(v)).sum::<u64>()
    };
    assert_eq!(bp_read(&buf), expected);

    let mut g = c.benchmark_group("serialize_rs_bitpacker_64KiB");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("write", |b| {
        let mut out = vec![0u8; BP_SIZE + 8];
        b.iter(|| black_box(bp_write(&mut out, black_box(&values))))
    });
    g.bench_function("read", |b| b.iter(|| black_box(bp_read(black_box(&buf)))));
    g.finish();

    let (bufs, len) = variants();
    let mut g = c.benchmark_group("serialize_rs_packet_49B");
    g.throughput(Throughput::Elements(1));
    g.bench_function("write", |b| {
        let mut p = Packet::init();
        let mut out = [0u8; 256];
        b.iter_custom(|n| {
            timed(n, |n| {
                black_box(write_packets(&mut p, &mut out, n));
            })
        })
    });
    g.bench_function("read", |b| {
        b.iter_custom(|n| timed(n, |n| read_packets(black_box(&bufs), len, n)))
    });
    g.bench_function("measure", |b| {
        let mut p = Packet::init();
        b.iter_custom(|n| {
            timed(n, |n| {
                black_box(measure_packets(&mut p, n));
            })
        })
    });
    g.bench_function("vary only (in write and measure)", |b| {
        let mut p = Packet::init();
        b.iter_custom(|n| timed(n, |n| vary_packets(&mut p, n)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
