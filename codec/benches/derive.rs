//! The derive's zero-cost check: the demo packets written, read and measured by the derived
//! serialize functions (`DemoPacket`) and by the hand-written ones they replaced (`Hand`), side by
//! side in one run, so each pair's ratio is taken under the same load.
//! `cargo bench -p bitlens-codec --bench derive`; instruction counts: `examples/derive_count.rs`.

use bitlens_codec::packet::{measure_packet, read_packet, write_packet};
use bitlens_testkit::demo::{DemoPacket, MTU};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "common/handwritten_demo.rs"]
mod hand;
use hand::{Hand, packets};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("derive_vs_hand");
    for (name, packet) in packets() {
        let mut buf = [0u8; MTU];
        let n = write_packet(&mut packet.clone(), &mut buf).unwrap();
        let bytes = buf[..n].to_vec();
        let mut other = [0u8; MTU];
        let m = write_packet(&mut Hand(packet.clone()), &mut other).unwrap();
        assert_eq!(&other[..m], &bytes[..], "the two write the same bytes");
        g.bench_function(BenchmarkId::new(format!("{name}/write"), "derived"), |b| {
            let mut p = packet.clone();
            let mut out = [0u8; MTU];
            b.iter(|| black_box(write_packet(&mut p, &mut out).unwrap()))
        });
        g.bench_function(BenchmarkId::new(format!("{name}/write"), "hand"), |b| {
            let mut p = Hand(packet.clone());
            let mut out = [0u8; MTU];
            b.iter(|| black_box(write_packet(&mut p, &mut out).unwrap()))
        });
        g.bench_function(BenchmarkId::new(format!("{name}/read"), "derived"), |b| {
            b.iter(|| black_box(read_packet::<DemoPacket>(black_box(&bytes)).unwrap()))
        });
        g.bench_function(BenchmarkId::new(format!("{name}/read"), "hand"), |b| {
            b.iter(|| black_box(read_packet::<Hand>(black_box(&bytes)).unwrap()))
        });
        g.bench_function(
            BenchmarkId::new(format!("{name}/measure"), "derived"),
            |b| {
                let mut p = packet.clone();
                b.iter(|| black_box(measure_packet(&mut p).unwrap()))
            },
        );
        g.bench_function(BenchmarkId::new(format!("{name}/measure"), "hand"), |b| {
            let mut p = Hand(packet.clone());
            b.iter(|| black_box(measure_packet(&mut p).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
