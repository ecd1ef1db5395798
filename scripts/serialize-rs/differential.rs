//! (Run by scripts/serialize-rs/run.sh.)
//! Differential run: bitlens-codec against serialize.rs (the peer) on random operation
//! sequences. For each sequence: both write (bytes must be identical), each reads the other's
//! bytes (values must be the written ones, compressed floats the standard's decoded value),
//! both measure (bits must be equal: both charge 7 per aligning operation). Then the same ops
//! read arbitrary bytes in both (same verdict, same values). Disagreements are counted per
//! operation, and those at the two documented compressed float edges counted apart.
//! Usage: differential [SEQUENCES]

use bitlens_codec::{
    CompressedFloat, MeasureStream as BlMeasure, ReadStream as BlRead, Stream as BlStream,
    WriteStream as BlWrite,
};
use serialize::{MeasureStream, ReadStream, Stream, WriteStream};
use std::collections::BTreeMap;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn f01(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Bits(u32, u64),
    Int(i32, i32, i32),
    Int64(i64, i64, i64),
    Bool(bool),
    U64(u64),
    F32(u32),
    F64(u64),
    Bytes(Vec<u8>),
    Align,
    Str(usize, String),
    Cf(f32, f32, f32, u32),
    Rel(i32, i32),
}

impl Op {
    fn kind(&self) -> &'static str {
        match self {
            Op::Bits(n, _) if *n > 32 => "bits 33-64",
            Op::Bits(..) => "bits 1-32",
            Op::Int(..) => "int",
            Op::Int64(..) => "int (i64 bounds) vs int64",
            Op::Bool(_) => "bool",
            Op::U64(_) => "u64",
            Op::F32(_) => "f32",
            Op::F64(_) => "f64",
            Op::Bytes(_) => "bytes",
            Op::Align => "align",
            Op::Str(..) => "string",
            Op::Cf(..) => "compressed_float",
            Op::Rel(..) => "int_relative",
        }
    }
}

fn range_i32(rng: &mut Rng) -> (i32, i32) {
    let a = rng.next() as u32 as i32;
    let b = match rng.below(3) {
        0 => rng.next() as u32 as i32,
        1 => a.saturating_add(rng.below(1000) as i32),
        _ => a.saturating_add(rng.below(1 << 20) as i32),
    };
    (a.min(b), a.max(b))
}

/// Compressed float declarations: shaped (step counts from 1 to 2^32, magnitudes from tiny to
/// huge, resolutions that divide the range and ones that do not) and the suite's shapes.
fn cf_range(rng: &mut Rng) -> (f32, f32, f32) {
    loop {
        let (min, max, res) = match rng.below(4) {
            0 => {
                let fixed = [
                    (0.0, 10.0, 0.01),
                    (-512.0, 512.0, 0.01),
                    (-1000.0, 1000.0, 0.01),
                    (100.0, 200.0, 1e-5),
                    (0.0, 100000.0, 0.001),
                    (0.0, 12582911.0, 1.0),
                    (-3.3, 7.7, 0.0007),
                    (0.1, 0.7, 0.003),
                    (1000.0, 1001.0, 3e-5),
                    (0.0, 10.0, 0.3),
                    (0.0, 63.3, 1.0),
                    (0.0, 1e10, 1.0),
                    (-180.0, 180.0, 0.1),
                ];
                fixed[rng.below(fixed.len() as u64) as usize]
            }
            _ => {
                let exp = rng.below(60) as i32 - 30;
                let min = ((rng.f01() - 0.5) * 2.0 * 2f64.powi(exp)) as f32;
                let span = (2f64.powi(rng.below(60) as i32 - 30) * (1.0 + rng.f01())) as f32;
                let steps = 1u64 << rng.below(33);
                let steps = (steps + rng.below(steps)) as f32;
                let res = if rng.below(2) == 0 {
                    span / steps
                } else {
                    [1.0, 0.1, 0.01, 0.001, 1e-4, 1e-5][rng.below(6) as usize]
                };
                (min, min + span, res)
            }
        };
        if let Ok(q) = CompressedFloat::new(min, max, res) {
            let _ = q;
            return (min, max, res);
        }
    }
}

fn random_op(rng: &mut Rng) -> Op {
    match rng.below(13) {
        0 | 1 => {
            let n = rng.below(64) as u32 + 1;
            let v = if n == 64 {
                rng.next()
            } else {
                rng.next() & ((1 << n) - 1)
            };
            Op::Bits(n, v)
        }
        2 => {
            let (min, max) = range_i32(rng);
            let span = (max as i64 - min as i64) as u64 + 1;
            Op::Int(min, max, (min as i64 + (rng.next() % span) as i64) as i32)
        }
        3 => {
            let a = rng.next() as i64;
            let b = if rng.below(2) == 0 {
                rng.next() as i64
            } else {
                a.saturating_add(rng.below(1 << 40) as i64)
            };
            let (min, max) = (a.min(b), a.max(b));
            let span = (max as u64).wrapping_sub(min as u64).wrapping_add(1);
            let off = if span == 0 {
                rng.next()
            } else {
                rng.next() % span
            };
            Op::Int64(min, max, (min as u64).wrapping_add(off) as i64)
        }
        4 => Op::Bool(rng.below(2) == 1),
        5 => Op::U64(rng.next()),
        6 => Op::F32(rng.next() as u32),
        7 => Op::F64(rng.next()),
        8 => Op::Bytes((0..rng.below(24)).map(|_| rng.next() as u8).collect()),
        9 => Op::Align,
        10 => {
            let size = 2 + rng.below(40) as usize;
            let pool = ['a', 'z', ' ', 'é', 'ж', '✓', '𝄞', '~'];
            let mut s = String::new();
            while s.len() < size - 1 {
                let c = pool[rng.below(pool.len() as u64) as usize];
                if s.len() + c.len_utf8() > size - 1 {
                    break;
                }
                s.push(c);
                if rng.below(6) == 0 {
                    break;
                }
            }
            Op::Str(size, s)
        }
        11 => {
            let (min, max, res) = cf_range(rng);
            let q = CompressedFloat::new(min, max, res).unwrap();
            let v = match rng.below(5) {
                0 => f32::from_bits(rng.next() as u32),
                1 => q.decode(rng.below(u64::from(q.steps()) + 1) as u32),
                2 => {
                    // near a midpoint: where roundings decide
                    let c = rng.below(u64::from(q.steps())) as f32;
                    let mut v = min + (c + 0.5) * (q.delta() / q.steps() as f32);
                    for _ in 0..rng.below(4) {
                        v = if rng.below(2) == 0 {
                            v.next_up()
                        } else {
                            v.next_down()
                        };
                    }
                    v
                }
                3 => [min, max, max.next_down(), min.next_up()][rng.below(4) as usize],
                _ => (f64::from(min) + rng.f01() * f64::from(q.delta())) as f32,
            };
            let v = if v.is_finite() { v } else { min };
            Op::Cf(min, max, res, v.to_bits())
        }
        _ => {
            let previous = rng.next() as u32 as i32;
            let gap = [1, 6, 23, 280, 4377, 69914, 1 << 24, 1 << 31][rng.below(8) as usize];
            let d = 1 + rng.below(gap) as i64;
            let current = i64::from(previous) + d;
            if current > i64::from(i32::MAX) {
                Op::Rel(i32::MIN, (i64::from(i32::MIN) + d) as i32)
            } else {
                Op::Rel(previous, current as i32)
            }
        }
    }
}

fn peer<S: Stream>(s: &mut S, ops: &mut [Op]) -> Result<(), S::Error> {
    for op in ops {
        match op {
            Op::Bits(n, v) => {
                if *n <= 32 {
                    let mut x = *v as u32;
                    s.serialize_bits(&mut x, *n)?;
                    *v = x.into();
                } else {
                    s.serialize_bits64(v, *n)?;
                }
            }
            Op::Int(a, b, v) => s.serialize_int(v, *a, *b)?,
            Op::Int64(a, b, v) => s.serialize_int64(v, *a, *b)?,
            Op::Bool(b) => s.serialize_bool(b)?,
            Op::U64(v) => s.serialize_u64(v)?,
            Op::F32(b) => {
                let mut x = f32::from_bits(*b);
                s.serialize_f32(&mut x)?;
                *b = x.to_bits();
            }
            Op::F64(b) => {
                let mut x = f64::from_bits(*b);
                s.serialize_f64(&mut x)?;
                *b = x.to_bits();
            }
            Op::Bytes(d) => s.serialize_bytes(d)?,
            Op::Align => s.serialize_align()?,
            Op::Str(size, v) => s.serialize_string(v, *size)?,
            Op::Cf(a, b, c, bits) => {
                let mut x = f32::from_bits(*bits);
                s.serialize_compressed_float(&mut x, *a, *b, *c)?;
                *bits = x.to_bits();
            }
            Op::Rel(p, v) => s.serialize_int_relative(*p, v)?,
        }
    }
    Ok(())
}

fn bitlens<S: BlStream>(s: &mut S, ops: &mut [Op]) -> bitlens_codec::Result<()> {
    for op in ops {
        match op {
            Op::Bits(n, v) => s.bits("b", v, *n)?,
            Op::Int(a, b, v) => {
                let mut x = i64::from(*v);
                s.int("i", &mut x, (*a).into(), (*b).into())?;
                *v = x as i32;
            }
            Op::Int64(a, b, v) => s.int("i64", v, *a, *b)?,
            Op::Bool(b) => s.bool("b", b)?,
            Op::U64(v) => s.u64("u", v)?,
            Op::F32(b) => {
                let mut x = f32::from_bits(*b);
                s.f32("f", &mut x)?;
                *b = x.to_bits();
            }
            Op::F64(b) => {
                let mut x = f64::from_bits(*b);
                s.f64("d", &mut x)?;
                *b = x.to_bits();
            }
            Op::Bytes(d) => s.bytes("y", d)?,
            Op::Align => s.align("a")?,
            Op::Str(size, v) => s.string("s", v, *size - 1)?,
            Op::Cf(a, b, c, bits) => {
                let q = CompressedFloat::new(*a, *b, *c).unwrap();
                let mut x = f32::from_bits(*bits);
                s.compressed_f32("c", &mut x, &q)?;
                *bits = x.to_bits();
            }
            Op::Rel(p, v) => {
                let mut x = i64::from(*v);
                s.int_relative("r", (*p).into(), &mut x)?;
                *v = x as i32;
            }
        }
    }
    Ok(())
}

fn blank(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::Bits(n, _) => Op::Bits(*n, 0),
            Op::Int(a, b, _) => Op::Int(*a, *b, *a),
            Op::Int64(a, b, _) => Op::Int64(*a, *b, *a),
            Op::Bool(_) => Op::Bool(false),
            Op::U64(_) => Op::U64(0),
            Op::F32(_) => Op::F32(0),
            Op::F64(_) => Op::F64(0),
            Op::Bytes(d) => Op::Bytes(vec![0; d.len()]),
            Op::Align => Op::Align,
            Op::Str(n, _) => Op::Str(*n, String::new()),
            Op::Cf(a, b, c, _) => Op::Cf(*a, *b, *c, 0),
            Op::Rel(p, _) => Op::Rel(*p, 0),
        })
        .collect()
}

/// The values a reader gives for `ops` as written: compressed floats decoded (the standard's
/// value of the code bitlens writes).
fn expected(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .map(|op| match op {
            Op::Cf(a, b, c, bits) => {
                let q = CompressedFloat::new(*a, *b, *c).unwrap();
                Op::Cf(
                    *a,
                    *b,
                    *c,
                    q.decode(q.encode(f32::from_bits(*bits))).to_bits(),
                )
            }
            other => other.clone(),
        })
        .collect()
}

/// Whether a compressed float op sits at one of the two documented edges: the standard's
/// formula gives M + 1 (odd M in [2^23, 2^24), incl. M = 2^24 - 1).
fn at_edge(op: &Op) -> bool {
    if let Op::Cf(a, b, c, bits) = op {
        let q = CompressedFloat::new(*a, *b, *c).unwrap();
        let d = q.delta();
        let mut n = (f32::from_bits(*bits) - a) / d;
        if n.is_nan() || n < 0.0 {
            n = 0.0
        } else if n > 1.0 {
            n = 1.0
        }
        let code = (n * q.steps() as f32 + 0.5).floor() as u64;
        return code > u64::from(q.steps());
    }
    false
}

#[derive(Default)]
struct Tally {
    cases: u64,
    disagreements: u64,
    at_edges: u64,
    examples: Vec<String>,
}

fn main() {
    let sequences: u64 = std::env::args()
        .nth(1)
        .map_or(40_000, |s| s.parse().unwrap());
    let mut rng = Rng(0x5EED_2026);
    let mut tally: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut hostile: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let (mut seqs, mut measured_equal, mut measured) = (0u64, 0u64, 0u64);
    let (mut both_accept, mut both_refuse) = (0u64, 0u64);
    for _ in 0..sequences {
        seqs += 1;
        let len = 1 + rng.below(12) as usize;
        let ops: Vec<Op> = (0..len).map(|_| random_op(&mut rng)).collect();
        // Write with both.
        let mut bl_buf = vec![0u8; 4096];
        let mut w = BlWrite::new(&mut bl_buf);
        let mut o = ops.clone();
        bitlens(&mut w, &mut o).expect("bitlens writes valid ops");
        let bl_bits = w.bits_written();
        let bl_n = w.finish();
        let mut pr_buf = vec![0u8; 4096];
        let mut pw = WriteStream::new(&mut pr_buf);
        let mut o = ops.clone();
        let Ok(()) = peer(&mut pw, &mut o);
        pw.flush();
        let pr_n = pw.bytes_processed() as usize;
        // Measure with both.
        let mut bm = BlMeasure::new();
        bitlens(&mut bm, &mut ops.clone()).unwrap();
        let mut pm = MeasureStream::new();
        let Ok(()) = peer(&mut pm, &mut ops.clone());
        measured += 1;
        if bm.bits() as u64 == pm.bits_processed() && bm.bits() >= bl_bits {
            measured_equal += 1;
        }
        // Each reads the other's bytes, op by op: per-op verdicts.
        let want = expected(&ops);
        let mut pr_data = pr_buf[..pr_n].to_vec();
        pr_data.resize(pr_n + 8, 0);
        let same_bytes = bl_buf[..bl_n] == pr_buf[..pr_n];
        let mut bl_reads_peer = blank(&ops);
        let r1 = bitlens(&mut BlRead::new(&pr_buf[..pr_n]), &mut bl_reads_peer);
        let mut bl_data = bl_buf[..bl_n].to_vec();
        bl_data.resize(bl_n + 8, 0);
        let mut peer_reads_bl = blank(&ops);
        let r2 = peer(&mut ReadStream::new(&bl_data, bl_n), &mut peer_reads_bl);
        let _ = pr_data;
        for op in &ops {
            let t = tally.entry(op.kind()).or_default();
            t.cases += 1;
        }
        let ok = same_bytes
            && r1.is_ok()
            && r2.is_ok()
            && bl_reads_peer == want
            && peer_reads_bl == want;
        if !ok {
            // Blame the first op where anything differs.
            let first = (0..ops.len())
                .find(|&i| {
                    bl_reads_peer.get(i) != want.get(i) || peer_reads_bl.get(i) != want.get(i)
                })
                .unwrap_or(0);
            let edge = at_edge(&ops[first]);
            let t = tally.get_mut(ops[first].kind()).unwrap();
            if edge {
                t.at_edges += 1
            } else {
                t.disagreements += 1;
                if t.examples.len() < 3 {
                    t.examples.push(format!("{:?}: bytes bl {} peer {} | bl reads peer {r1:?} {:?} | peer reads bl {r2:?} {:?}",
                        ops[first], hex(&bl_buf[..bl_n]), hex(&pr_buf[..pr_n]), bl_reads_peer.get(first), peer_reads_bl.get(first)));
                }
            }
        }
        // Hostile: the same ops over arbitrary bytes.
        let n = rng.below(48) as usize;
        let data: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        let mut padded = data.clone();
        padded.resize(n + 8, 0);
        let mut a = blank(&ops);
        let ra = bitlens(&mut BlRead::new(&data), &mut a);
        let mut b = blank(&ops);
        let rb = peer(&mut ReadStream::new(&padded, n), &mut b);
        // Compare op by op up to the first refusal of either.
        let first_kind = ops[0].kind();
        let t = hostile.entry(first_kind).or_default();
        t.cases += 1;
        match (ra.is_ok(), rb.is_ok()) {
            (true, true) => both_accept += 1,
            (false, false) => both_refuse += 1,
            _ => {}
        }
        if ra.is_ok() != rb.is_ok() || (ra.is_ok() && a != b) {
            let culprit = (0..ops.len())
                .find(|&i| a.get(i) != b.get(i))
                .map_or(first_kind, |i| ops[i].kind());
            let t = hostile.entry(culprit).or_default();
            t.disagreements += 1;
            if t.examples.len() < 3 {
                t.examples.push(format!(
                    "ops {:?} bytes {} | bitlens {ra:?} {a:?} | peer {rb:?} {b:?}",
                    blank(&ops),
                    hex(&data)
                ));
            }
        }
    }
    let total: u64 = tally.values().map(|t| t.cases).sum();
    println!(
        "{seqs} sequences, {total} operations written by each, read by the other; measures equal (and >= bits written) on {measured_equal} of {measured}"
    );
    println!(
        "{:<28} {:>9} {:>14} {:>22}",
        "operation", "cases", "disagreements", "at the 2 known edges"
    );
    for (k, t) in &tally {
        println!(
            "{k:<28} {:>9} {:>14} {:>22}",
            t.cases, t.disagreements, t.at_edges
        );
        for e in &t.examples {
            println!("    {e}");
        }
    }
    let htotal: u64 = hostile.values().map(|t| t.cases).sum();
    let hdis: u64 = hostile.values().map(|t| t.disagreements).sum();
    println!(
        "hostile reads: {htotal} sequences of the same ops over arbitrary bytes (0-47 bytes): both accept {both_accept}, both refuse {both_refuse}, verdict or values differ {hdis}"
    );
    for (k, t) in &hostile {
        if t.disagreements > 0 {
            println!("  verdict or value differs at {k}: {}", t.disagreements);
            for e in &t.examples {
                println!("    {}", &e[..e.len().min(600)]);
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
