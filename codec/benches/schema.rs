//! Schema interpreter vs compiled code on the demo packets, in the same run.
//!
//! `cargo bench -p bitlens-codec --bench schema`

use bitlens_codec::packet::{read_packet, trace_packet, write_packet};
use bitlens_testkit::demo::{self, DemoPacket};
use bitlens_testkit::fuzzing::schema::{DEMO, demo_json};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut wire = Vec::new();
    for p in demo::samples() {
        let mut buf = [0u8; demo::MTU];
        let n = write_packet(&mut p.clone(), &mut buf).expect("writes");
        let (name, json) = demo_json(&p);
        let value = DEMO.value_from_json(name, &json).expect("converts");
        wire.push((p, name, value, buf[..n].to_vec()));
    }
    let mut g = c.benchmark_group("demo_samples");
    g.bench_function("read/compiled", |b| {
        b.iter(|| {
            for (_, _, _, bytes) in &wire {
                black_box(read_packet::<DemoPacket>(black_box(bytes)).expect("reads"));
            }
        })
    });
    g.bench_function("read/schema", |b| {
        b.iter(|| {
            for (_, _, _, bytes) in &wire {
                black_box(DEMO.read(black_box(bytes)).expect("reads"));
            }
        })
    });
    g.bench_function("write/compiled", |b| {
        let mut buf = [0u8; demo::MTU];
        let mut packets: Vec<DemoPacket> = wire.iter().map(|w| w.0.clone()).collect();
        b.iter(|| {
            for p in &mut packets {
                black_box(write_packet(black_box(p), &mut buf).expect("writes"));
            }
        })
    });
    g.bench_function("write/schema", |b| {
        let mut buf = [0u8; demo::MTU];
        b.iter(|| {
            for (_, name, value, _) in &wire {
                black_box(
                    DEMO.write(name, black_box(value), &mut buf)
                        .expect("writes"),
                );
            }
        })
    });
    g.bench_function("trace/compiled", |b| {
        b.iter(|| {
            for (_, _, _, bytes) in &wire {
                black_box(trace_packet::<DemoPacket>(black_box(bytes)));
            }
        })
    });
    g.bench_function("trace/schema", |b| {
        b.iter(|| {
            for (_, _, _, bytes) in &wire {
                black_box(DEMO.trace(black_box(bytes)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
