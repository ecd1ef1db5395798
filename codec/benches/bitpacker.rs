//! Bitpacker speed: 1M values of widths 3, 10, 24, 1, 32 repeating, written and read.
//! Peers in the same run: bitstream-io (runtime widths) and memcpy of the same bytes (the
//! physical limit). `cargo bench -p bitlens-codec --bench bitpacker`

use bitlens_codec::{BitReader, BitWriter};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const N: usize = 1_000_000;
const WIDTHS: [u32; 5] = [3, 10, 24, 1, 32];

fn values() -> (Vec<u32>, Vec<u32>) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let widths: Vec<u32> = (0..N).map(|i| WIDTHS[i % 5]).collect();
    let vals = widths
        .iter()
        .map(|&w| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x as u32) & (if w == 32 { u32::MAX } else { (1 << w) - 1 })
        })
        .collect();
    (vals, widths)
}

fn bench(c: &mut Criterion) {
    let (vals, widths) = values();
    let total_bits: usize = widths.iter().map(|&w| w as usize).sum();
    let bytes = total_bits.div_ceil(8);
    let mut buf = vec![0u8; bytes + 8];
    let mut g = c.benchmark_group("bitpacker_1M_values_3_10_24_1_32");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);

    g.bench_function(BenchmarkId::new("write", "bitlens"), |b| {
        b.iter(|| {
            let mut w = BitWriter::new(&mut buf);
            for (&v, &n) in vals.iter().zip(&widths) {
                w.write_bits(v, n).unwrap();
            }
            black_box(w.flush())
        })
    });
    let packed = buf[..bytes].to_vec();
    g.bench_function(BenchmarkId::new("read", "bitlens"), |b| {
        b.iter(|| {
            let mut r = BitReader::new(&packed);
            let mut acc = 0u32;
            for &n in &widths {
                acc = acc.wrapping_add(r.read_bits(n).unwrap());
            }
            black_box(acc)
        })
    });

    {
        use bitstream_io::{
            BitRead, BitReader as BsReader, BitWrite, BitWriter as BsWriter, LittleEndian,
        };
        let mut out = Vec::with_capacity(bytes + 8);
        g.bench_function(BenchmarkId::new("write", "bitstream-io"), |b| {
            b.iter(|| {
                out.clear();
                let mut w = BsWriter::endian(&mut out, LittleEndian);
                for (&v, &n) in vals.iter().zip(&widths) {
                    w.write_var::<u32>(n, v).unwrap();
                }
                w.byte_align().unwrap();
                black_box(out.len())
            })
        });
        g.bench_function(BenchmarkId::new("read", "bitstream-io"), |b| {
            b.iter(|| {
                let mut r = BsReader::endian(&packed[..], LittleEndian);
                let mut acc = 0u32;
                for &n in &widths {
                    acc = acc.wrapping_add(r.read_var::<u32>(n).unwrap());
                }
                black_box(acc)
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
