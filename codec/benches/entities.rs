//! Game entities against the peers: {x, y, z: f32 on [-1000, 1000] at 0.01, health 0..=100,
//! flags bool, id u32}, 1000 per buffer, ids increasing (an entity table). ns per entity encoded
//! and decoded, and bytes per entity, for bitlens, bitcode, bincode 2, postcard and naia-serde.
//! `cargo bench -p bitlens-codec --bench entities` (the byte counts print before the timings).
//!
//! Every codec gets the same values, already on the 0.01 grid, and must give them back exactly
//! (checked before timing). bitlens sends positions as compressed floats, health as a ranged int
//! and ids relative to the previous one (the seeds' relative encoding); bitcode, bincode and
//! postcard get plain structs (their own packing); naia-serde gets its own fixed-point floats
//! (`SignedFloat<18, 2>`), 7-bit health and 32-bit ids, in MTU-sized packets as it requires.

use bitlens_codec::{ReadStream, WriteStream};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "common/entities.rs"]
mod common;
use common::{Entity, N, serialize_table, table};

mod naia {
    use super::Entity;
    use naia_serde::{
        BitReader, BitWrite, BitWriter, Serde, SerdeErr, SignedFloat, UnsignedInteger,
    };

    pub const PER_PACKET: usize = 30;

    pub fn ser(e: &Entity, w: &mut dyn BitWrite) {
        SignedFloat::<18, 2>::new(e.x).ser(w);
        SignedFloat::<18, 2>::new(e.y).ser(w);
        SignedFloat::<18, 2>::new(e.z).ser(w);
        UnsignedInteger::<7>::new(e.health).ser(w);
        e.flags.ser(w);
        e.id.ser(w);
    }

    pub fn de(r: &mut BitReader) -> Result<Entity, SerdeErr> {
        Ok(Entity {
            x: SignedFloat::<18, 2>::de(r)?.get(),
            y: SignedFloat::<18, 2>::de(r)?.get(),
            z: SignedFloat::<18, 2>::de(r)?.get(),
            health: UnsignedInteger::<7>::de(r)?.get() as u8,
            flags: bool::de(r)?,
            id: u32::de(r)?,
        })
    }

    pub fn encode(table: &[Entity]) -> Vec<Box<[u8]>> {
        table
            .chunks(PER_PACKET)
            .map(|chunk| {
                let mut w = BitWriter::new();
                for e in chunk {
                    ser(e, &mut w);
                }
                w.to_bytes()
            })
            .collect()
    }

    pub fn decode(packets: &[Box<[u8]>], out: &mut Vec<Entity>) {
        out.clear();
        for p in packets {
            let mut r = BitReader::new(p);
            let n = (out.len() + PER_PACKET).min(super::N) - out.len();
            for _ in 0..n {
                out.push(de(&mut r).unwrap());
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let data = table();
    let mut buf = vec![0u8; 64 * 1024];
    let bincode_cfg = bincode::config::standard();

    // Sizes, and exact round trips, before any timing.
    let mut t = data.clone();
    let mut w = WriteStream::new(&mut buf);
    serialize_table(&mut w, &mut t).unwrap();
    let bitlens_len = w.finish();
    let mut back = Vec::new();
    serialize_table(&mut ReadStream::new(&buf[..bitlens_len]), &mut back).unwrap();
    assert_eq!(back, data, "bitlens round trip");
    let bitcode_bytes = bitcode::encode(&data);
    assert_eq!(
        bitcode::decode::<Vec<Entity>>(&bitcode_bytes).unwrap(),
        data
    );
    let bincode_bytes = bincode::encode_to_vec(&data, bincode_cfg).unwrap();
    let postcard_bytes = postcard::to_allocvec(&data).unwrap();
    let naia_packets = naia::encode(&data);
    let mut naia_back = Vec::new();
    naia::decode(&naia_packets, &mut naia_back);
    let naia_ok = naia_back
        .iter()
        .zip(&data)
        .all(|(a, b)| (a.x - b.x).abs() < 0.006 && a.id == b.id);
    let naia_len: usize = naia_packets.iter().map(|p| p.len()).sum();
    println!("bytes per entity ({N} entities per buffer):");
    for (name, len) in [
        ("bitlens", bitlens_len),
        ("bitcode", bitcode_bytes.len()),
        ("bincode2", bincode_bytes.len()),
        ("postcard", postcard_bytes.len()),
        ("naia-serde", naia_len),
    ] {
        println!(
            "  {name:<11} {:>7.3} B/entity  ({:.3}x bitcode)",
            len as f64 / N as f64,
            len as f64 / bitcode_bytes.len() as f64
        );
    }
    println!(
        "  naia-serde round trip within 0.005: {naia_ok} (its floats round through f32 * 100)"
    );

    let mut g = c.benchmark_group("entities_1000");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(BenchmarkId::new("encode", "bitlens"), |b| {
        let mut t = data.clone();
        b.iter(|| {
            let mut w = WriteStream::new(&mut buf);
            serialize_table(&mut w, &mut t).unwrap();
            black_box(w.finish())
        })
    });
    let packed = {
        let mut t = data.clone();
        let mut out = vec![0u8; 64 * 1024];
        let mut w = WriteStream::new(&mut out);
        serialize_table(&mut w, &mut t).unwrap();
        let n = w.finish();
        out.truncate(n);
        out
    };
    g.bench_function(BenchmarkId::new("decode", "bitlens"), |b| {
        let mut t = Vec::with_capacity(N);
        b.iter(|| {
            serialize_table(&mut ReadStream::new(black_box(&packed)), &mut t).unwrap();
            black_box(t.len())
        })
    });
    let mut bc = bitcode::Buffer::new();
    g.bench_function(BenchmarkId::new("encode", "bitcode"), |b| {
        b.iter(|| black_box(bc.encode(black_box(&data)).len()))
    });
    g.bench_function(BenchmarkId::new("decode", "bitcode"), |b| {
        b.iter(|| {
            black_box(
                bc.decode::<Vec<Entity>>(black_box(&bitcode_bytes))
                    .unwrap()
                    .len(),
            )
        })
    });
    g.bench_function(BenchmarkId::new("encode", "bincode2"), |b| {
        b.iter(|| {
            black_box(bincode::encode_into_slice(black_box(&data), &mut buf, bincode_cfg).unwrap())
        })
    });
    g.bench_function(BenchmarkId::new("decode", "bincode2"), |b| {
        b.iter(|| {
            let (v, _): (Vec<Entity>, usize) =
                bincode::decode_from_slice(black_box(&bincode_bytes), bincode_cfg).unwrap();
            black_box(v.len())
        })
    });
    g.bench_function(BenchmarkId::new("encode", "postcard"), |b| {
        b.iter(|| {
            black_box(
                postcard::to_slice(black_box(&data), &mut buf)
                    .unwrap()
                    .len(),
            )
        })
    });
    g.bench_function(BenchmarkId::new("decode", "postcard"), |b| {
        b.iter(|| {
            black_box(
                postcard::from_bytes::<Vec<Entity>>(black_box(&postcard_bytes))
                    .unwrap()
                    .len(),
            )
        })
    });
    g.bench_function(BenchmarkId::new("encode", "naia-serde"), |b| {
        b.iter(|| black_box(naia::encode(black_box(&data)).len()))
    });
    g.bench_function(BenchmarkId::new("decode", "naia-serde"), |b| {
        let mut out = Vec::with_capacity(N);
        b.iter(|| {
            naia::decode(black_box(&naia_packets), &mut out);
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
