//! The 1M values of widths 3, 10, 24, 1, 32 and the loops that pack and unpack them, shared by
//! `benches/bitpacker.rs` and `examples/bitpack_count.rs` so that the criterion times and the
//! instruction counts measure the same code. The loops are `#[inline(never)]`, so callgrind can
//! attribute them and the bench times exactly them.

use bitlens_codec::{BitReader, BitWriter};
use std::hint::black_box;

pub const N: usize = 1_000_000;
pub const WIDTHS: [u32; 5] = [3, 10, 24, 1, 32];

/// One serialized struct: the const-width shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields {
    pub a: u32,
    pub b: u32,
    pub c: u32,
    pub d: u32,
    pub e: u32,
}

pub fn values() -> (Vec<u32>, Vec<u32>) {
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

/// The values as the const-width shape: one struct per five values.
pub fn fields(vals: &[u32]) -> Vec<Fields> {
    vals.chunks_exact(5)
        .map(|c| Fields {
            a: c[0],
            b: c[1],
            c: c[2],
            d: c[3],
            e: c[4],
        })
        .collect()
}

#[inline(never)]
pub fn write_runtime(buf: &mut [u8], vals: &[u32], widths: &[u32]) -> usize {
    let mut w = BitWriter::new(buf);
    for (&v, &n) in vals.iter().zip(widths) {
        w.write_bits(v, n).unwrap();
    }
    w.flush()
}

#[inline(never)]
pub fn read_runtime(data: &[u8], widths: &[u32]) -> u32 {
    let mut r = BitReader::new(data);
    let mut acc = 0u32;
    for &n in widths {
        acc = acc.wrapping_add(r.read_bits(n).unwrap());
    }
    acc
}

#[inline(never)]
pub fn write_const(buf: &mut [u8], items: &[Fields]) -> usize {
    let mut w = BitWriter::new(buf);
    for f in items {
        w.write_bits(f.a, 3).unwrap();
        w.write_bits(f.b, 10).unwrap();
        w.write_bits(f.c, 24).unwrap();
        w.write_bits(f.d, 1).unwrap();
        w.write_bits(f.e, 32).unwrap();
    }
    w.flush()
}

#[inline(always)]
pub fn read_fields(r: &mut BitReader<'_>) -> Fields {
    Fields {
        a: r.read_bits(3).unwrap(),
        b: r.read_bits(10).unwrap(),
        c: r.read_bits(24).unwrap(),
        d: r.read_bits(1).unwrap(),
        e: r.read_bits(32).unwrap(),
    }
}

/// One struct through the run API: its five fields in one call.
#[inline(always)]
pub fn read_fields_run(r: &mut BitReader<'_>) -> Fields {
    let [a, b, c, d, e] = r.read_run(WIDTHS).unwrap();
    Fields { a, b, c, d, e }
}

pub fn sum(f: Fields) -> u32 {
    f.a.wrapping_add(f.b)
        .wrapping_add(f.c)
        .wrapping_add(f.d)
        .wrapping_add(f.e)
}

#[inline(never)]
pub fn read_const(data: &[u8], count: usize) -> u32 {
    let mut r = BitReader::new(data);
    let mut acc = 0u32;
    for _ in 0..count {
        acc = acc.wrapping_add(sum(read_fields(&mut r)));
    }
    acc
}

/// The const-width shape through the run API: each struct's five fields in one call.
#[inline(never)]
pub fn write_runs(buf: &mut [u8], items: &[Fields]) -> usize {
    let mut w = BitWriter::new(buf);
    for f in items {
        let [a, b, c, d, e] = WIDTHS;
        w.write_run([(f.a, a), (f.b, b), (f.c, c), (f.d, d), (f.e, e)])
            .unwrap();
    }
    w.flush()
}

#[inline(never)]
pub fn read_runs(data: &[u8], count: usize) -> u32 {
    let mut r = BitReader::new(data);
    let mut acc = 0u32;
    for _ in 0..count {
        acc = acc.wrapping_add(sum(read_fields_run(&mut r)));
    }
    acc
}

/// Packs the values into a buffer and returns the bytes used.
pub type WriteLoop<'a> = Box<dyn Fn(&mut [u8]) -> usize + 'a>;
/// Unpacks the values and returns their wrapping sum.
pub type ReadLoop<'a> = Box<dyn Fn(&[u8]) -> u32 + 'a>;

/// One shape of the workload: its name in the bench's rows (`write {name}`), its suffix in
/// `bitpack_count`'s modes (`write{mode}`), and its write and read loops over the shared values
/// (the values and widths behind `black_box`, so the loops cannot be specialised to them).
pub struct Shape<'a> {
    pub name: &'static str,
    /// Read by `bitpack_count` only (this file is compiled into the bench too).
    #[allow(dead_code)]
    pub mode: &'static str,
    pub write: WriteLoop<'a>,
    pub read: ReadLoop<'a>,
}

/// The three shapes: runtime widths, const widths, struct runs.
pub fn shapes<'a>(vals: &'a [u32], widths: &'a [u32], items: &'a [Fields]) -> [Shape<'a>; 3] {
    [
        Shape {
            name: "runtime widths",
            mode: "",
            write: Box::new(|buf| write_runtime(buf, black_box(vals), black_box(widths))),
            read: Box::new(|data| read_runtime(data, black_box(widths))),
        },
        Shape {
            name: "const widths",
            mode: "-const",
            write: Box::new(|buf| write_const(buf, black_box(items))),
            read: Box::new(|data| read_const(data, black_box(items.len()))),
        },
        Shape {
            name: "struct runs",
            mode: "-runs",
            write: Box::new(|buf| write_runs(buf, black_box(items))),
            read: Box::new(|data| read_runs(data, black_box(items.len()))),
        },
    ]
}
