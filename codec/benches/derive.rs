//! The derive's zero-cost check: the demo packets written, read and measured by the derived
//! serialize functions (`DemoPacket`) and by the hand-written ones they replaced (`Hand`), side by
//! side in one run, so each pair's ratio is taken under the same load; and the same for the
//! demo's batch messages (`#[derive(BatchStruct)]` against `handwritten_batch.rs`).
//! `cargo bench -p bitlens-codec --bench derive`; instruction counts: `examples/derive_count.rs`
//! and `examples/batch_derive_count.rs`.

use bitlens_codec::packet::{measure_packet, read_packet, write_packet};
use bitlens_testkit::demo::{DemoPacket, MTU};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "common/handwritten_demo.rs"]
mod hand;
use hand::{Hand, packets};

#[path = "common/handwritten_batch.rs"]
mod hand_batch;

use bitlens_batch::{
    BatchWriter, ByteCounter, MessageBody, UpdateStage, encode_message, max_body, read_batch,
};
use bitlens_testkit::batch_demo::DemoMessage;

/// `m` alone in a batch.
fn batch_of<M: MessageBody>(m: &mut M) -> Vec<u8> {
    let mut buf = vec![0u8; MTU];
    let mut w = BatchWriter::new(&mut buf).unwrap();
    assert!(w.push(UpdateStage::UPDATE, m).unwrap());
    let n = w.finish();
    buf.truncate(n);
    buf
}

/// Write, read and measure of one message type, `side` (derived or hand).
fn message_rows<M: MessageBody + Default + Clone>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    side: &str,
    m: M,
) {
    let batch = batch_of(&mut m.clone());
    g.bench_function(BenchmarkId::new(format!("{name}/write"), side), |b| {
        let mut m = m.clone();
        let mut out = [0u8; MTU];
        b.iter(|| {
            black_box(
                encode_message(
                    black_box(&mut out),
                    0,
                    UpdateStage::UPDATE,
                    &mut m,
                    max_body(MTU),
                )
                .unwrap(),
            )
        })
    });
    g.bench_function(BenchmarkId::new(format!("{name}/read"), side), |b| {
        let raw = read_batch(&batch).unwrap().next().unwrap().unwrap();
        let mut into = M::default();
        b.iter(|| black_box(&raw).decode_into(black_box(&mut into)).unwrap())
    });
    g.bench_function(BenchmarkId::new(format!("{name}/measure"), side), |b| {
        let mut m = m.clone();
        b.iter(|| {
            let mut c = ByteCounter::new();
            black_box(&mut m).serialize(&mut c).unwrap();
            black_box(c.bytes())
        })
    });
}

fn batch_bench(c: &mut Criterion) {
    use hand_batch::Hand;
    let mut g = c.benchmark_group("batch_derive_vs_hand");
    for (name, m) in hand_batch::messages() {
        macro_rules! both {
            ($x:expr) => {{
                let x = $x;
                assert_eq!(batch_of(&mut x.clone()), batch_of(&mut Hand(x.clone())));
                message_rows(&mut g, name, "derived", x.clone());
                message_rows(&mut g, name, "hand", Hand(x));
            }};
        }
        match m {
            DemoMessage::Spawn(x) => both!(x),
            DemoMessage::Move(x) => both!(x),
            DemoMessage::Chat(x) => both!(x),
            DemoMessage::Ping(x) => both!(x),
            DemoMessage::Pong(x) => both!(x),
            DemoMessage::Despawn(x) => both!(x),
        }
    }
    g.finish();
}

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

criterion_group!(benches, bench, batch_bench);
criterion_main!(benches);
