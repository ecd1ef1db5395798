//! The tagged format (seed 001) against prost (protobuf) on the same save game: encode, decode,
//! size. `cargo bench -p bitlens-codec --bench tagged` (sizes print before the timings).
//!
//! Both sides get the same values; prost's struct is written by hand with `#[derive(Message)]`
//! (no protoc needed) and mirrors the tagged one field for field (u16/u8/i16 as protobuf's
//! uint32/int32 since protobuf has nothing narrower; f32 as float; strings; repeated messages;
//! a map as repeated pairs).

use bitlens_tagged::{decode_document, encode_document_into};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "common/save_game.rs"]
mod save_game;
use save_game::{PSave, Save, mirror, save};

fn bench(c: &mut Criterion) {
    use prost::Message as _;
    let mut data = save();
    let p = mirror(&data);
    let mut tagged = Vec::new();
    encode_document_into(&mut data, &mut tagged).unwrap();
    assert_eq!(decode_document::<Save>(&tagged).unwrap(), data);
    let proto = p.encode_to_vec();
    assert_eq!(PSave::decode(&proto[..]).unwrap(), p);
    println!(
        "save game sizes: tagged {} B, prost {} B ({:.3}x prost)",
        tagged.len(),
        proto.len(),
        tagged.len() as f64 / proto.len() as f64
    );

    let mut g = c.benchmark_group("tagged_vs_prost_save_game");
    g.throughput(Throughput::Elements(1));
    let mut out = Vec::with_capacity(4096);
    g.bench_function(BenchmarkId::new("encode", "tagged"), |b| {
        b.iter(|| {
            out.clear();
            encode_document_into(&mut data, &mut out).unwrap();
            black_box(out.len())
        })
    });
    g.bench_function(BenchmarkId::new("decode", "tagged"), |b| {
        b.iter(|| black_box(decode_document::<Save>(black_box(&tagged)).unwrap()))
    });
    g.bench_function(BenchmarkId::new("encode", "prost"), |b| {
        b.iter(|| {
            out.clear();
            p.encode(&mut out).unwrap();
            black_box(out.len())
        })
    });
    g.bench_function(BenchmarkId::new("decode", "prost"), |b| {
        b.iter(|| black_box(PSave::decode(black_box(&proto[..])).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
