//! The showcase protocol: a packet set that uses every attribute of `#[derive(BitPacked)]` and
//! `#[derive(PacketSet)]`, for the differential test and the `derive_vs_schema` fuzz target
//! (the derived serialize and the schema interpreter running the derived schema agree on every
//! value and every input).
//!
//! | type | packet | attributes |
//! |---|---|---|
//! | 0 | [`Scalars`] | plain integers, `range` (up to `int128`), `bits`, a zero-bit range, `[u8; N]`, `u64`, `f32`, `f64`, `i128`, `u128` |
//! | 1 | [`Floats`] | `compressed(min, max, resolution)` (float and vector), precomputed `compressed`, `quaternion`, `fixed` (signed and unsigned) |
//! | 2 | [`Texts`] | `max_len` strings, `wstring`, `len` bytes, arrays of ranged ints, enums and structs |
//! | 3 | [`Relatives`] | `object_index` and `int_relative` after a field and a constant, and as array elements after a constant |
//! | 4 | [`Optional`] | `if`, `unless`, `Option` behind its own flag and behind a guard, `skip` |
//! | 5 | [`Layout`] | `align`, `align_after`, `check`, `check_after`, `sparse`, `flatten`, `name` |
//! | 6 | `Checked` | check markers around a variant's body |
//! | 7 | `Inline` | a variant with named fields |
//! | 8 | `Tuple` | a variant with unnamed fields |
//! | 9 | `Empty` | a variant without fields |
//! | 10 | [`Shapes`] | tagged unions (enums with data) |

use bitlens_codec::{BitPacked, PacketSet};

/// The showcase protocol's MTU in bytes.
pub const MTU: usize = 1200;

/// A unit enum numbered from 0 (the schema's `values = [...]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BitPacked)]
pub enum Weapon {
    /// 0.
    #[default]
    Fists,
    /// 1.
    Pistol,
    /// 2.
    Rifle,
}

/// A unit enum with explicit numbers (the schema's `values = { ... }`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, BitPacked)]
pub enum Team {
    /// 1.
    #[default]
    Red = 1,
    /// 2.
    Blue = 2,
    /// 3.
    #[bitlens(name = "spectator")]
    Spectator = 3,
}

/// Every integer and raw form.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Scalars {
    /// Full-range `i8` (no attribute).
    pub a: i8,
    /// Full-range `u32`.
    pub b: u32,
    /// A ranged `i16`.
    #[bitlens(range = -5..=300)]
    pub small: i16,
    /// A ranged `i64` wider than 32 bits.
    #[bitlens(range = -1_000_000_000_000..=1_000_000_000_000)]
    pub big: i64,
    /// A ranged `u64` (`int128` on the wire).
    #[bitlens(range = 10..=(1u64 << 40))]
    pub wide: u64,
    /// A ranged `i128` beyond 64 bits.
    #[bitlens(range = -(1i128 << 80)..(1i128 << 80))]
    pub huge: i128,
    /// A range of one value: no bits.
    #[bitlens(range = 7..=7)]
    pub constant: u8,
    /// Six raw bits.
    #[bitlens(bits = 6)]
    pub buttons: u8,
    /// A bool as one raw bit.
    #[bitlens(bits = 1)]
    pub raw_flag: bool,
    /// Raw `u64`.
    pub raw: u64,
    /// Raw `f32`.
    pub f: f32,
    /// Raw `f64`.
    pub d: f64,
    /// Full-range `i128`.
    pub full: i128,
    /// Raw `u128`.
    pub unsigned: u128,
    /// Four aligned bytes.
    pub key: [u8; 4],
}

/// Compressed floats, quaternions and fixed point.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Floats {
    /// A compressed float.
    #[bitlens(compressed(min = -180.0, max = 180.0, resolution = 0.1))]
    pub yaw: f32,
    /// A compressed vector.
    #[bitlens(compressed(min = -1024.0, max = 1024.0, resolution = 0.01))]
    pub position: [f32; 3],
    /// A compressed float from precomputed constants.
    #[bitlens(compressed(min = -1.0, delta = 2.0, max_integer_value = 1000))]
    pub throttle: f32,
    /// A compressed float from a constant.
    #[bitlens(compressed = crate::demo::LINEAR_VELOCITY)]
    pub speed: f32,
    /// Smallest three at 9 bits.
    #[bitlens(quaternion(bits = 9))]
    pub rotation: [f32; 4],
    /// Q8.8 over -100..=100.
    #[bitlens(fixed(integer_bits = 8, fraction_bits = 8, min = -100, max = 100))]
    pub q8: i16,
    /// Unsigned Q16.16 over 0..=1000.
    #[bitlens(fixed(integer_bits = 16, fraction_bits = 16, min = 0, max = 1000, unsigned))]
    pub uq16: u32,
}

/// A point, nested in scopes and arrays.
#[derive(Debug, Clone, Copy, Default, PartialEq, BitPacked)]
pub struct Point {
    /// X.
    #[bitlens(range = -100..=100)]
    pub x: i32,
    /// Y.
    #[bitlens(range = -100..=100)]
    pub y: i32,
}

/// Strings, bytes and arrays.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Texts {
    /// Up to 31 bytes of UTF-8.
    #[bitlens(max_len = 31)]
    pub name: String,
    /// Up to 15 UTF-16 units.
    #[bitlens(wstring, max_len = 15)]
    pub wide: String,
    /// Three raw bytes.
    #[bitlens(len = 3)]
    pub tag: Vec<u8>,
    /// Ranged elements.
    #[bitlens(max_len = 8, element(range = 0..=4095))]
    pub ids: Vec<u16>,
    /// Enum elements.
    #[bitlens(max_len = 4)]
    pub weapons: Vec<Weapon>,
    /// Struct elements.
    #[bitlens(max_len = 3)]
    pub points: Vec<Point>,
    /// An enum field.
    pub team: Team,
}

/// Relative indices and integers.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Relatives {
    /// The base the next two are relative to.
    #[bitlens(range = 0..=1000)]
    pub base: u32,
    /// An object index after `base`.
    #[bitlens(object_index(max_objects = 2000, previous = base))]
    pub next: u32,
    /// A relative integer after `base`.
    #[bitlens(int_relative(previous = base))]
    pub later: u32,
    /// A relative integer after the constant 100.
    #[bitlens(int_relative(previous = 100))]
    pub after_hundred: u64,
    /// An object index after -1.
    #[bitlens(object_index(max_objects = 64))]
    pub first: u8,
    /// Object indices, each after the constant 10 (an element's `previous` is every element's).
    #[bitlens(max_len = 4, element(object_index(max_objects = 100, previous = 10)))]
    pub ids: Vec<u8>,
    /// Relative integers, each after the constant 1000.
    #[bitlens(max_len = 3, element(int_relative(previous = 1000)))]
    pub stamps: Vec<u32>,
}

/// Optional fields.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Optional {
    /// The guard.
    pub alive: bool,
    /// Sent while alive.
    #[bitlens(if = alive, range = 0..=100)]
    pub health: u8,
    /// Sent while dead.
    #[bitlens(unless = "alive", range = 0..=600)]
    pub respawn: u16,
    /// Behind its own flag `has_target`.
    pub target: Option<Point>,
    /// Behind its own flag, named.
    #[bitlens(flag = "scored", range = 0..=9999)]
    pub score: Option<u16>,
    /// `Some` exactly while alive.
    #[bitlens(if = alive)]
    pub weapon: Option<Weapon>,
    /// Not sent.
    #[bitlens(skip)]
    pub cache: u32,
}

/// An element of a sparse array.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Entity {
    /// Its slot.
    #[bitlens(sparse_index, name = "slot")]
    pub index: u8,
    /// Health.
    #[bitlens(range = 0..=100)]
    pub health: u8,
    /// Team.
    pub team: Team,
}

/// Alignment, check markers, sparse arrays, flattening, renaming.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Layout {
    /// After an align and a check.
    #[bitlens(align, check = "start", range = 0..=5)]
    pub a: u8,
    /// Before an align and a check.
    #[bitlens(align_after, check_after = "middle")]
    pub b: bool,
    /// Sparse entities.
    #[bitlens(sparse(max_objects = 64))]
    pub entities: Vec<Entity>,
    /// A point's fields inline.
    #[bitlens(flatten)]
    pub point: Point,
    /// Named otherwise on the wire.
    #[bitlens(name = "renamed", range = 0..=3)]
    pub c: u8,
}

/// A tagged union.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub enum Shape {
    /// No shape.
    #[default]
    Nothing,
    /// A circle: a struct's fields.
    Circle(Point),
    /// A box: named fields.
    Rect {
        /// Width.
        #[bitlens(range = 1..=64)]
        w: u8,
        /// Height.
        #[bitlens(range = 1..=64)]
        h: u8,
    },
    /// A label: an unnamed field.
    Label(#[bitlens(max_len = 12)] String),
}

/// Tagged unions in fields and arrays.
#[derive(Debug, Clone, Default, PartialEq, BitPacked)]
pub struct Shapes {
    /// One shape.
    pub main: Shape,
    /// Several.
    #[bitlens(max_len = 3)]
    pub others: Vec<Shape>,
}

/// The showcase packet set.
#[derive(Debug, Clone, Default, PartialEq, PacketSet)]
#[bitlens(protocol = "showcase", id = 0x5348_4f57, mtu = 1200)]
pub enum Showcase {
    /// Type 0.
    Scalars(Scalars),
    /// Type 1.
    Floats(Floats),
    /// Type 2.
    Texts(Texts),
    /// Type 3.
    Relatives(Relatives),
    /// Type 4.
    Optional(Optional),
    /// Type 5.
    Layout(Layout),
    /// Type 6: check markers around the body.
    #[bitlens(check = "before", check_after = "after")]
    Checked(Point),
    /// Type 7: named fields.
    Inline {
        /// A level.
        #[bitlens(range = 0..=9)]
        level: u8,
        /// A message.
        #[bitlens(max_len = 8)]
        motd: String,
    },
    /// Type 8: unnamed fields.
    Tuple(#[bitlens(range = 1..=6)] u8, bool),
    /// Type 9: no fields.
    #[default]
    Empty,
    /// Type 10: tagged unions.
    Shapes(Shapes),
}
