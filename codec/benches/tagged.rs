//! The tagged format (seed 001) against prost (protobuf) on the same save game: encode, decode,
//! size. `cargo bench -p bitlens-codec --bench tagged` (sizes print before the timings).
//!
//! Both sides get the same values; prost's struct is written by hand with `#[derive(Message)]`
//! (no protoc needed) and mirrors the tagged one field for field (u16/u8/i16 as protobuf's
//! uint32/int32 since protobuf has nothing narrower; f32 as float; strings; repeated messages;
//! a map as repeated pairs).

use bitlens_tagged::{Tagged, decode_document, encode_document_into};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[derive(Tagged, Clone, Debug, Default, PartialEq)]
struct Item {
    #[tag(0)]
    kind: u16,
    #[tag(1)]
    count: u8,
    #[tag(2)]
    durability: i16,
}

#[derive(Tagged, Clone, Debug, Default, PartialEq)]
struct Save {
    #[tag(0)]
    name: String,
    #[tag(1)]
    level: u32,
    #[tag(2)]
    position: [f32; 3],
    #[tag(3)]
    inventory: Vec<Item>,
    #[tag(4)]
    playtime_s: u64,
    #[tag(5)]
    quests: Vec<(u32, i32)>,
    #[tag(6)]
    checkpoint: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PItem {
    #[prost(uint32, tag = "1")]
    kind: u32,
    #[prost(uint32, tag = "2")]
    count: u32,
    #[prost(sint32, tag = "3")]
    durability: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PQuest {
    #[prost(uint32, tag = "1")]
    id: u32,
    #[prost(sint32, tag = "2")]
    state: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PSave {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(uint32, tag = "2")]
    level: u32,
    #[prost(float, repeated, tag = "3")]
    position: Vec<f32>,
    #[prost(message, repeated, tag = "4")]
    inventory: Vec<PItem>,
    #[prost(uint64, tag = "5")]
    playtime_s: u64,
    #[prost(message, repeated, tag = "6")]
    quests: Vec<PQuest>,
    #[prost(string, tag = "7")]
    checkpoint: String,
}

fn save() -> Save {
    Save {
        name: "Ayla the Unbroken".into(),
        level: 37,
        position: [1024.5, -12.25, 77.0],
        inventory: (0..40)
            .map(|i| Item {
                kind: 100 + i * 7,
                count: (i % 9) as u8 + 1,
                durability: 250 - (i as i16) * 13,
            })
            .collect(),
        playtime_s: 1_234_567,
        quests: (0..25).map(|i| (1000 + i, (i as i32 % 5) - 2)).collect(),
        checkpoint: "north gate, second bridge".into(),
    }
}

fn mirror(s: &Save) -> PSave {
    PSave {
        name: s.name.clone(),
        level: s.level,
        position: s.position.to_vec(),
        inventory: s
            .inventory
            .iter()
            .map(|i| PItem {
                kind: i.kind.into(),
                count: i.count.into(),
                durability: i.durability.into(),
            })
            .collect(),
        playtime_s: s.playtime_s,
        quests: s
            .quests
            .iter()
            .map(|&(id, state)| PQuest { id, state })
            .collect(),
        checkpoint: s.checkpoint.clone(),
    }
}

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
