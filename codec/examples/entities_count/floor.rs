//! The floor: the entity table's bytes written and read by hand on the bit layer, with one
//! capacity or bounds check per entity for its five fixed-width fields
//! (`BitWriter::write_run`, `BitReader::read_run`) instead of the streams' one per field (the
//! relative id keeps its own), and nothing the wire promises left out: the length's range and
//! the reader's length-fits check, reference-exact floats, every code and the health
//! range-checked, the relative id's tiers and range checks. No `Stream`, no field
//! names, no error context: what a scalar serialize function for this table, written by hand,
//! reaches on this wire.
//!
//! Written for a stable range (asserted at compile time), so that every table read re-encodes
//! to the same bytes; a reader takes every code up to `M`, as the stream does.

use super::common::{Entity, MIN_ENTITY_BITS, N, POS};
use bitlens_codec::bits::{Overflow, PastEnd};
use bitlens_codec::stream::RELATIVE_TIERS;
use bitlens_codec::{BitReader, BitWriter, bits_required};

/// Bits per float code.
pub const CODE_BITS: u32 = POS.width();
const _: () = assert!(POS.is_stable(), "every code up to M re-encodes");
/// The widths of an entity's fixed fields: x, y, z, health (0..=100), flags.
pub const FIXED: [u32; 5] = [CODE_BITS, CODE_BITS, CODE_BITS, 7, 1];

/// Bits of the table's length.
pub const LEN_BITS: u32 = bits_required(0, N as i64);

/// Anything the wire rejects (the floor names no field).
#[derive(Debug)]
pub struct Bad;

impl From<Overflow> for Bad {
    fn from(_: Overflow) -> Self {
        Bad
    }
}

impl From<PastEnd> for Bad {
    fn from(_: PastEnd) -> Self {
        Bad
    }
}

#[inline(always)]
fn write_relative(w: &mut BitWriter<'_>, previous: i64, current: i64) -> Result<(), Bad> {
    if previous < i64::from(i32::MIN) || current > i64::from(i32::MAX) || current <= previous {
        return Err(Bad);
    }
    match current - previous {
        1 => w.write_bits(1, 1)?,
        d @ 2..=6 => w.write_bits(0b10 | ((d - 2) as u32) << 2, 5)?,
        d => write_relative_long(w, current, d)?,
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn write_relative_long(w: &mut BitWriter<'_>, current: i64, d: i64) -> Result<(), Bad> {
    w.write_bits(0, 1)?;
    for (lo, hi) in RELATIVE_TIERS {
        w.write_bits(u32::from(d <= hi), 1)?;
        if d <= hi {
            w.write_bits((d - lo) as u32, bits_required(lo, hi))?;
            return Ok(());
        }
    }
    w.write_bits(current as u32, 32)?;
    Ok(())
}

/// `previous + d` where it is an `i32` (serialize 1.0: no wrapping).
fn relative_result(previous: i64, d: i64) -> Result<i64, Bad> {
    let c = previous.saturating_add(d);
    if c > i64::from(i32::MAX) {
        return Err(Bad);
    }
    Ok(c)
}

#[inline(always)]
fn read_relative(r: &mut BitReader<'_>, previous: i64) -> Result<i64, Bad> {
    if let Ok(x) = r.clone().read_bits(5) {
        let one = x & 1 == 1;
        let d = if one { 1 } else { 2 + i64::from(x >> 2) };
        let c = previous.saturating_add(d);
        if (one || (x & 0b10 != 0 && d <= 6)) && c <= i64::from(i32::MAX) {
            r.read_bits(if one { 1 } else { 5 })?;
            return Ok(c);
        }
    }
    read_relative_long(r, previous)
}

#[cold]
#[inline(never)]
fn read_relative_long(r: &mut BitReader<'_>, previous: i64) -> Result<i64, Bad> {
    if r.read_bits(1)? == 1 {
        return relative_result(previous, 1);
    }
    for (lo, hi) in RELATIVE_TIERS {
        if r.read_bits(1)? == 1 {
            let d = lo + i64::from(r.read_bits(bits_required(lo, hi))?);
            if d > hi {
                return Err(Bad);
            }
            return relative_result(previous, d);
        }
    }
    // Two's complement, and greater than `previous` (serialize 1.0's one check here).
    let v = i64::from(r.read_bits(32)? as i32);
    if v <= previous {
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
    v.to_bits() & ((1 << CODE_BITS) - 1)
}

/// The writer with the float coder as a parameter: [`POS`]'s (the wire), or [`raw_bits`].
#[inline(always)]
fn encode_with(buf: &mut [u8], table: &[Entity], code: impl Fn(f32) -> u32) -> Result<usize, Bad> {
    if table.len() > N {
        return Err(Bad);
    }
    let mut w = BitWriter::new(buf);
    w.write_bits(table.len() as u32, LEN_BITS)?;
    let mut previous = -1i64;
    for e in table {
        if e.health > 100 {
            return Err(Bad);
        }
        w.write_run([
            (code(e.x), FIXED[0]),
            (code(e.y), FIXED[1]),
            (code(e.z), FIXED[2]),
            (u32::from(e.health), FIXED[3]),
            (u32::from(e.flags), FIXED[4]),
        ])?;
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
    let len = r.read_bits(LEN_BITS)? as usize;
    if len > N || len * MIN_ENTITY_BITS > r.bits_remaining() {
        return Err(Bad);
    }
    out.clear();
    out.resize(len, Entity::default());
    let mut previous = -1i64;
    for i in 0..len {
        if let Err(bad) = read_entity(&mut r, &mut out[i], &mut previous) {
            // As the stream: the vector keeps the elements read before the error.
            out.truncate(i);
            return Err(bad);
        }
    }
    Ok(())
}

#[inline(always)]
fn read_entity(r: &mut BitReader<'_>, e: &mut Entity, previous: &mut i64) -> Result<(), Bad> {
    let steps = POS.steps();
    let [x, y, z, health, flags] = r.read_run(FIXED)?;
    if x > steps || y > steps || z > steps || health > 100 {
        return Err(Bad);
    }
    e.x = POS.decode(x);
    e.y = POS.decode(y);
    e.z = POS.decode(z);
    e.health = health as u8;
    e.flags = flags == 1;
    let id = read_relative(r, *previous)?;
    e.id = id as u32;
    *previous = id;
    Ok(())
}
