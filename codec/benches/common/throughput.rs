//! serialize.rs's own throughput workload (its `benches/throughput.rs`, a port of the C++
//! library's `bench.cpp`) for bitlens: the raw bitpacker over its 16 widths in a 64 KiB buffer,
//! and its 12-field packet written, read and measured, the fields varied per packet by its LCG
//! and the reads cycling through 64 pre-encoded variants. Shared by `benches/throughput.rs`
//! (criterion) and `examples/throughput_count.rs` (instruction counts), so that both measure
//! the same code; the loops are `#[inline(never)]` so that callgrind can attribute them.
//!
//! The packet's serialize function is `#[inline(never)]` too: one out-of-line instance per
//! stream, as a serialize function of a real packet is, and as the peers' harness
//! (`../shared/peers/serialize-rs/`) compiles both libraries' functions in practice. Inlined into
//! the loop, a stream's measure folds to a constant and the loop measures the LCG alone.

use bitlens_codec::{BitReader, BitWriter, MeasureStream, ReadStream, Result, Stream, WriteStream};
use std::hint::black_box;

/// The bitpacker's buffer.
pub const BP_SIZE: usize = 64 * 1024;
/// The widths of one group, 227 bits (serialize.rs's and bench.cpp's table).
pub const BP_WIDTHS: [u32; 16] = [1, 32, 7, 13, 3, 25, 8, 19, 4, 28, 11, 16, 2, 30, 6, 22];
/// Pre-encoded packets the read cycles through.
pub const VARIANTS: usize = 64;
/// The bytes one packet takes (asserted when the variants are encoded).
pub const PACKET_BYTES: usize = 49;

/// The 16 values of a group: `0x9E3779B9 * (i + 1)` within each width, as the peer computes them.
pub fn bp_values() -> [u32; 16] {
    let mut values = [0u32; 16];
    for (i, (v, w)) in values.iter_mut().zip(BP_WIDTHS).enumerate() {
        let mask = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
        *v = 0x9E37_79B9u32.wrapping_mul(i as u32 + 1) & mask;
    }
    values
}

/// One pass of the bitpacker write: groups while 256 bits are free, then the flush.
#[inline(never)]
pub fn bp_write(buf: &mut [u8], values: &[u32; 16]) -> usize {
    bp_write_pass(buf, values)
}

/// The body of [`bp_write`], inlined where it is called (the placement study,
/// `benches/serialize_rs/placement.rs`, builds its own out-of-line copies, moved in memory).
#[inline(always)]
pub fn bp_write_pass(buf: &mut [u8], values: &[u32; 16]) -> usize {
    let mut w = BitWriter::new(&mut buf[..BP_SIZE]);
    while w.bits_available() >= 256 {
        for (&v, n) in values.iter().zip(BP_WIDTHS) {
            w.write_bits(v, n).unwrap();
        }
    }
    w.flush()
}

/// One pass of the bitpacker read: groups while 256 bits remain; the sum of the values.
#[inline(never)]
pub fn bp_read(buf: &[u8]) -> u64 {
    bp_read_pass(buf)
}

/// The body of [`bp_read`], inlined where it is called (as [`bp_write_pass`]).
#[inline(always)]
pub fn bp_read_pass(buf: &[u8]) -> u64 {
    let mut r = BitReader::new(&buf[..BP_SIZE]);
    let mut sum = 0u64;
    while r.bits_remaining() >= 256 {
        for n in BP_WIDTHS {
            sum += u64::from(r.read_bits(n).unwrap());
        }
    }
    sum
}

/// The peer's 12-field packet.
#[derive(Default, Clone, Debug, PartialEq)]
pub struct Packet {
    pub a: i32,
    pub b: i32,
    pub c: i32,
    pub bits7: u32,
    pub bits13: u32,
    pub bits23: u32,
    pub flag: bool,
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub big: u64,
    pub blob: [u8; 17],
}

impl Packet {
    /// The peer's starting values.
    pub fn init() -> Self {
        let mut p = Packet {
            a: -37,
            b: 12345,
            c: 987654,
            bits7: 97,
            bits13: 5000,
            bits23: 1234567,
            flag: true,
            x: 1.5,
            y: -3.25,
            z: 100.125,
            big: 0x1234_5678_9ABC_DEF0,
            ..Packet::default()
        };
        for (i, b) in p.blob.iter_mut().enumerate() {
            *b = (i as u32 * 31) as u8;
        }
        p
    }

    /// The peer's per-packet variation: its LCG, and the same fields derived from it.
    #[inline(always)]
    pub fn vary(&mut self, rng: u64) -> u64 {
        let rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.a = (((rng >> 8) & 63) as i32) - 32;
        self.b = ((rng >> 16) as u32 & 65535) as i32;
        self.c = (((rng >> 24) & 0xFFFFF) as i32) - 500000;
        self.bits7 = rng as u32 & 127;
        self.bits13 = (rng >> 3) as u32 & 8191;
        self.bits23 = (rng >> 5) as u32 & 8388607;
        self.flag = rng & 1 != 0;
        self.x = (rng as u32 & 0xFFFF) as f32;
        self.big = rng;
        self.blob[0] = (rng >> 32) as u8;
        rng
    }

    /// The same calls as the peer's `serialize`, field for field (the same 49 bytes).
    #[inline(never)]
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        self.fields(s)
    }

    /// The body of [`Packet::serialize`], inlined where it is called: `serialize` is its one
    /// out-of-line instance per stream, and the placement study
    /// (`benches/serialize_rs/placement.rs`) builds its own, moved in memory.
    #[inline(always)]
    pub fn fields<S: Stream>(&mut self, s: &mut S) -> Result<()> {
        s.int_as("a", &mut self.a, -100, 100)?;
        s.int_as("b", &mut self.b, 0, 65535)?;
        s.int_as("c", &mut self.c, -1000000, 1000000)?;
        bits_u32(s, "bits7", &mut self.bits7, 7)?;
        bits_u32(s, "bits13", &mut self.bits13, 13)?;
        bits_u32(s, "bits23", &mut self.bits23, 23)?;
        s.bool("flag", &mut self.flag)?;
        s.f32("x", &mut self.x)?;
        s.f32("y", &mut self.y)?;
        s.f32("z", &mut self.z)?;
        s.u64("big", &mut self.big)?;
        s.bytes("blob", &mut self.blob)
    }
}

/// [`Stream::bits`] for a `u32` field.
#[inline(always)]
fn bits_u32<S: Stream>(s: &mut S, name: &str, v: &mut u32, n: u32) -> Result<()> {
    let mut wide = u64::from(*v);
    s.bits(name, &mut wide, n)?;
    *v = wide as u32;
    Ok(())
}

/// The 64 variants the read cycles through (the first 64 packets of the write loop), each in a
/// 256-byte buffer, and the bytes a packet takes.
pub fn variants() -> (Vec<[u8; 256]>, usize) {
    let mut p = Packet::init();
    let mut rng = 1u64;
    let mut bufs = vec![[0u8; 256]; VARIANTS];
    let mut len = 0;
    for buf in &mut bufs {
        rng = p.vary(rng);
        let mut w = WriteStream::new(buf);
        p.serialize(&mut w).unwrap();
        len = w.finish();
        let mut back = Packet::default();
        back.serialize(&mut ReadStream::new(&buf[..len])).unwrap();
        assert_eq!(back, p);
    }
    assert_eq!(len, PACKET_BYTES);
    (bufs, len)
}

/// `n` packets varied and written into one buffer: the bytes of the last.
#[inline(never)]
pub fn write_packets(p: &mut Packet, buffer: &mut [u8; 256], n: u64) -> usize {
    let mut rng = 1u64;
    let mut len = 0;
    for _ in 0..n {
        rng = p.vary(rng);
        len = {
            let mut s = WriteStream::new(buffer);
            p.serialize(&mut s).unwrap();
            s.finish()
        };
        black_box(&buffer);
        black_box(len);
    }
    len
}

/// `n` packets read, cycling through the variants.
#[inline(never)]
pub fn read_packets(bufs: &[[u8; 256]], len: usize, n: u64) {
    for i in 0..n as usize {
        let mut s = ReadStream::new(&bufs[i & (VARIANTS - 1)][..len]);
        let mut q = Packet::default();
        q.serialize(&mut s).unwrap();
        black_box(&q);
    }
}

/// `n` packets varied and measured: the bits of the last.
#[inline(never)]
pub fn measure_packets(p: &mut Packet, n: u64) -> usize {
    let mut rng = 1u64;
    let mut bits = 0;
    for _ in 0..n {
        rng = p.vary(rng);
        let mut s = MeasureStream::new();
        p.serialize(&mut s).unwrap();
        bits = s.bits();
        black_box(bits);
    }
    bits
}

/// `n` iterations of the LCG and the packet's variation alone: the loop every write and measure
/// figure includes.
#[inline(never)]
pub fn vary_packets(p: &mut Packet, n: u64) {
    let mut rng = 1u64;
    for _ in 0..n {
        rng = p.vary(rng);
        black_box(&mut *p);
    }
}
