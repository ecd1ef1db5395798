//! The floor: the entity table's bytes written and read by hand on the bit layer, with one
//! capacity or bounds check per entity for its five fixed-width fields
//! (`BitWriter::write_run`, `BitReader::read_run`) instead of the streams' one per field, and
//! nothing the wire promises left out (reference-exact floats, every code and the health
//! range-checked, the relative id's tiers and canonical checks). No `Stream`, no field names, no
//! error context: what any serialize API on this wire could reach at best.

use super::common::{Entity, N, POS};
use bitlens_codec::{BitReader, BitWriter, bits_required};

/// The relative id's tiers after `d = 1` (`Stream::int_relative`).
const TIERS: [(i64, i64); 5] = [(2, 6), (7, 23), (24, 280), (281, 4377), (4378, 69914)];
const LEN_BITS: u32 = bits_required(0, N as i64);

/// Anything the wire rejects (the floor names no field).
#[derive(Debug)]
pub struct Bad;

#[inline(always)]
fn write_relative(w: &mut BitWriter<'_>, previous: i64, current: i64) -> Result<(), Bad> {
    if current > i64::from(u32::MAX) || current <= previous {
        return Err(Bad);
    }
    match current - previous {
        1 => w.write_bits(1, 1).map_err(|_| Bad),
        d @ 2..=6 => w
            .write_bits(0b10 | ((d - 2) as u32) << 2, 5)
            .map_err(|_| Bad),
        d => write_relative_long(w, current, d),
    }
}

#[cold]
#[inline(never)]
fn write_relative_long(w: &mut BitWriter<'_>, current: i64, d: i64) -> Result<(), Bad> {
    w.write_bits(0, 1).map_err(|_| Bad)?;
    for (lo, hi) in TIERS {
        w.write_bits(u32::from(d <= hi), 1).map_err(|_| Bad)?;
        if d <= hi {
            return w
                .write_bits((d - lo) as u32, bits_required(lo, hi))
                .map_err(|_| Bad);
        }
    }
    w.write_bits(current as u32, 32).map_err(|_| Bad)
}

#[inline(always)]
fn read_relative(r: &mut BitReader<'_>, previous: i64) -> Result<i64, Bad> {
    let x = r.clone().read_bits(5);
    if let Ok(x) = x {
        let one = x & 1 == 1;
        let d = if one { 1 } else { 2 + i64::from(x >> 2) };
        let c = previous.saturating_add(d);
        if (one || (x & 0b10 != 0 && d <= 6)) && c <= i64::from(u32::MAX) {
            r.read_bits(if one { 1 } else { 5 }).map_err(|_| Bad)?;
            return Ok(c);
        }
    }
    read_relative_long(r, previous)
}

#[cold]
#[inline(never)]
fn read_relative_long(r: &mut BitReader<'_>, previous: i64) -> Result<i64, Bad> {
    if r.read_bits(1).map_err(|_| Bad)? == 1 {
        return Ok(previous.saturating_add(1));
    }
    for (lo, hi) in TIERS {
        if r.read_bits(1).map_err(|_| Bad)? == 1 {
            let d = lo + i64::from(r.read_bits(bits_required(lo, hi)).map_err(|_| Bad)?);
            if d > hi {
                return Err(Bad);
            }
            let c = previous.saturating_add(d);
            return if c > i64::from(u32::MAX) {
                Err(Bad)
            } else {
                Ok(c)
            };
        }
    }
    let v = i64::from(r.read_bits(32).map_err(|_| Bad)?);
    if v < previous.saturating_add(69915) {
        return Err(Bad);
    }
    Ok(v)
}

/// The floor's writer: the stream's bytes.
#[inline(never)]
pub fn encode(buf: &mut [u8], table: &[Entity]) -> Result<usize, Bad> {
    encode_with(buf, table, |v| POS.encode(v))
}

/// Not the wire: the low 18 bits of each float as they are, in place of its code. The same
/// writes, checks and ids as [`encode`] without the float quantization.
#[inline(never)]
pub fn encode_raw(buf: &mut [u8], table: &[Entity]) -> Result<usize, Bad> {
    encode_with(buf, table, raw_bits)
}

fn raw_bits(v: f32) -> u32 {
    v.to_bits() & 0x3_ffff
}

/// The writer with the float coder as a parameter: [`POS`]'s (the wire), or [`raw_bits`].
#[inline(always)]
fn encode_with(buf: &mut [u8], table: &[Entity], code: impl Fn(f32) -> u32) -> Result<usize, Bad> {
    let mut w = BitWriter::new(buf);
    w.write_bits(table.len() as u32, LEN_BITS)
        .map_err(|_| Bad)?;
    let mut previous = -1i64;
    for e in table {
        if e.health > 100 {
            return Err(Bad);
        }
        w.write_run([
            (code(e.x), 18),
            (code(e.y), 18),
            (code(e.z), 18),
            (u32::from(e.health), 7),
            (u32::from(e.flags), 1),
        ])
        .map_err(|_| Bad)?;
        let id = i64::from(e.id);
        write_relative(&mut w, previous, id)?;
        previous = id;
    }
    Ok(w.flush())
}

/// The floor's reader. Floats through the public `CompressedFloat::decode`: after the range
/// check the compiler folds its `code as f32 as f64` into one conversion, as the stream's
/// exact-range path has it.
#[inline(never)]
pub fn decode(data: &[u8], out: &mut Vec<Entity>) -> Result<(), Bad> {
    let mut r = BitReader::new(data);
    let len = r.read_bits(LEN_BITS).map_err(|_| Bad)? as usize;
    if len > N || len * 63 > r.bits_remaining() {
        return Err(Bad);
    }
    out.clear();
    out.resize(len, Entity::default());
    let steps = POS.steps();
    let mut previous = -1i64;
    for e in out.iter_mut() {
        let [x, y, z, health, flags] = r.read_run([18, 18, 18, 7, 1]).map_err(|_| Bad)?;
        if x > steps || y > steps || z > steps || health > 100 {
            return Err(Bad);
        }
        e.x = POS.decode(x);
        e.y = POS.decode(y);
        e.z = POS.decode(z);
        e.health = health as u8;
        e.flags = flags == 1;
        let id = read_relative(&mut r, previous)?;
        e.id = id as u32;
        previous = id;
    }
    Ok(())
}
