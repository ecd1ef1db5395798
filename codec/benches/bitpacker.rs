//! Bitpacker speed: 1M values of widths 3, 10, 24, 1, 32 repeating, written and read.
//!
//! Three shapes of the same values and bytes:
//! - `runtime widths`: the width of each value comes from an array, as bitstream-io's
//!   `write_var` / `read_var` take it: the fair comparison with that peer.
//! - `const widths`: 200k structs of fields {3, 10, 24, 1, 32} bits, each written or read by its
//!   own call with a constant width, as a `serialize` function does (bitstream-io's
//!   `write::<BITS, _>` / `read::<BITS, _>` alongside).
//! - `struct runs`: the same structs, each written or read by one `write_run` / `read_run` call
//!   (one capacity or bounds check per struct, fields at constant offsets).
//!
//! memcpy of the same packed bytes is the physical limit. Every row is checked outside the
//! timing (bytes equal to the reference, values read back equal to the values written) and
//! inside it (the sum of the values read, and every write's length).
//! `cargo bench -p bitlens-codec --bench bitpacker`

use bitlens_codec::BitReader;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "common/bitpacker.rs"]
mod common;
use common::*;

fn bench(c: &mut Criterion) {
    let (vals, widths) = values();
    let items = fields(&vals);
    let expected = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let total_bits: usize = widths.iter().map(|&w| w as usize).sum();
    let bytes = total_bits.div_ceil(8);
    let mut buf = vec![0u8; bytes + 8];

    // The reference bytes (bitstream-io's), and every bitlens path checked against them.
    let packed = {
        use bitstream_io::{BitWrite, BitWriter as BsWriter, LittleEndian};
        let mut out = Vec::new();
        let mut w = BsWriter::endian(&mut out, LittleEndian);
        for (&v, &n) in vals.iter().zip(&widths) {
            w.write_var::<u32>(n, v).unwrap();
        }
        w.byte_align().unwrap();
        out
    };
    assert_eq!(packed.len(), bytes);
    let shapes = shapes(&vals, &widths, &items);
    for shape in &shapes {
        buf.fill(0);
        assert_eq!((shape.write)(&mut buf), bytes, "{}", shape.name);
        assert_eq!(&buf[..bytes], &packed[..], "{}", shape.name);
    }
    {
        let mut r = BitReader::new(&packed);
        for (&v, &n) in vals.iter().zip(&widths) {
            assert_eq!(r.read_bits(n), Ok(v));
        }
        let mut r = BitReader::new(&packed);
        for f in &items {
            assert_eq!(read_fields(&mut r), *f);
        }
        let mut r = BitReader::new(&packed);
        for f in &items {
            assert_eq!(read_fields_run(&mut r), *f);
        }
    }

    let mut g = c.benchmark_group("bitpacker_1M_values_3_10_24_1_32");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);

    for shape in &shapes {
        buf.fill(0);
        g.bench_function(
            BenchmarkId::new(format!("write {}", shape.name), "bitlens"),
            |b| {
                b.iter(|| {
                    let n = (shape.write)(&mut buf);
                    assert_eq!(n, bytes);
                    black_box(&buf[..n]);
                })
            },
        );
        assert_eq!(&buf[..bytes], &packed[..]);
        g.bench_function(
            BenchmarkId::new(format!("read {}", shape.name), "bitlens"),
            |b| b.iter(|| assert_eq!((shape.read)(black_box(&packed)), expected)),
        );
    }

    {
        use bitstream_io::{
            BitRead, BitReader as BsReader, BitWrite, BitWriter as BsWriter, LittleEndian,
        };
        let mut out = Vec::with_capacity(bytes + 8);
        g.bench_function(
            BenchmarkId::new("write runtime widths", "bitstream-io"),
            |b| {
                b.iter(|| {
                    out.clear();
                    let mut w = BsWriter::endian(&mut out, LittleEndian);
                    for (&v, &n) in black_box(&vals).iter().zip(black_box(&widths)) {
                        w.write_var::<u32>(n, v).unwrap();
                    }
                    w.byte_align().unwrap();
                    assert_eq!(out.len(), bytes);
                })
            },
        );
        assert_eq!(out, packed);
        g.bench_function(
            BenchmarkId::new("read runtime widths", "bitstream-io"),
            |b| {
                b.iter(|| {
                    let mut r = BsReader::endian(black_box(&packed[..]), LittleEndian);
                    let mut acc = 0u32;
                    for &n in black_box(&widths) {
                        acc = acc.wrapping_add(r.read_var::<u32>(n).unwrap());
                    }
                    assert_eq!(acc, expected);
                })
            },
        );
        g.bench_function(
            BenchmarkId::new("write const widths", "bitstream-io"),
            |b| {
                b.iter(|| {
                    out.clear();
                    let mut w = BsWriter::endian(&mut out, LittleEndian);
                    for f in black_box(&items) {
                        w.write::<3, u32>(f.a).unwrap();
                        w.write::<10, u32>(f.b).unwrap();
                        w.write::<24, u32>(f.c).unwrap();
                        w.write::<1, u32>(f.d).unwrap();
                        w.write::<32, u32>(f.e).unwrap();
                    }
                    w.byte_align().unwrap();
                    assert_eq!(out.len(), bytes);
                })
            },
        );
        assert_eq!(out, packed);
        g.bench_function(BenchmarkId::new("read const widths", "bitstream-io"), |b| {
            b.iter(|| {
                let mut r = BsReader::endian(black_box(&packed[..]), LittleEndian);
                let mut acc = 0u32;
                for _ in 0..black_box(items.len()) {
                    let f = Fields {
                        a: r.read::<3, u32>().unwrap(),
                        b: r.read::<10, u32>().unwrap(),
                        c: r.read::<24, u32>().unwrap(),
                        d: r.read::<1, u32>().unwrap(),
                        e: r.read::<32, u32>().unwrap(),
                    };
                    acc = acc.wrapping_add(sum(f));
                }
                assert_eq!(acc, expected);
            })
        });
    }

    let mut dst = vec![0u8; bytes];
    g.bench_function(BenchmarkId::new("copy", "memcpy"), |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&packed));
            black_box(dst[bytes / 2])
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
