//! The entity table of `benches/entities.rs`, shared with `examples/entities_count/` so that
//! the instruction counts and the criterion times measure the same serialize function on the
//! same data.

use bitlens_codec::quantize::CompressedFloat;
use bitlens_codec::{Result, Stream};

pub const N: usize = 1000;

#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    bitcode::Encode,
    bitcode::Decode,
    bincode::Encode,
    bincode::Decode,
)]
pub struct Entity {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub health: u8,
    pub flags: bool,
    pub id: u32,
}

/// A constant, as a serialize function would declare its ranges (`CompressedFloat::new_const`):
/// the compiler folds the range's width and factors into the serialize function.
pub const POS: CompressedFloat =
    CompressedFloat::new_const(-1000.0, 1000.0, 0.01).expect("a valid range");

/// The fewest bits an entity takes: three 18-bit codes, 7 bits of health, the flag and a 1-bit
/// relative id (the array's `min_element_bits`).
pub const MIN_ENTITY_BITS: usize = 3 * POS.width() as usize + 7 + 1 + 1;

/// bitlens: one serialize function for the whole table.
pub fn serialize_table<S: Stream>(s: &mut S, table: &mut Vec<Entity>) -> Result<()> {
    let mut previous = -1i64;
    s.array("entities", table, N, MIN_ENTITY_BITS, |s, e| {
        s.compressed_f32("x", &mut e.x, &POS)?;
        s.compressed_f32("y", &mut e.y, &POS)?;
        s.compressed_f32("z", &mut e.z, &POS)?;
        s.int_as("health", &mut e.health, 0, 100)?;
        s.bool("flags", &mut e.flags)?;
        let mut id = i64::from(e.id);
        s.int_relative("id", previous, &mut id)?;
        e.id = id as u32;
        previous = id;
        Ok(())
    })
}

pub fn table() -> Vec<Entity> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut id = 1000u32;
    (0..N)
        .map(|_| {
            id += 1 + (next() % 3) as u32;
            let mut coord = || POS.decode((next() % (u64::from(POS.steps()) + 1)) as u32);
            let (x, y, z) = (coord(), coord(), coord());
            Entity {
                x,
                y,
                z,
                health: (next() % 101) as u8,
                flags: next() & 1 == 1,
                id,
            }
        })
        .collect()
}
