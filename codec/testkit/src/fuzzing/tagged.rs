//! Fuzz harnesses for the tagged format, and the test types they use.
//!
//! The fuzz targets `tagged_read`, `tagged_roundtrip` and `tagged_compat` are one-line wrappers
//! over the functions here, and the stable corpus-replay test calls the same functions. A
//! harness panics only when it finds a bug.

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};

use bitlens_tagged::{self as tagged, DumpField, DumpValue, Tagged, Value};

/// A nested struct with an id gap and a fixed array.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
pub struct Inner {
    /// Id 0.
    #[tag(0)]
    pub id: u32,
    /// Id 3: ids 1 and 2 are skipped on purpose.
    #[tag(3)]
    pub name: String,
    /// Id 4.
    #[tag(4)]
    pub scale: f64,
    /// Id 5.
    #[tag(5)]
    pub flags: [bool; 2],
}

/// A struct with a field of every supported kind, for the round-trip and read harnesses.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
pub struct Rich {
    /// bool.
    #[tag(0)]
    pub flag: bool,
    /// u8.
    #[tag(1)]
    pub small: u8,
    /// i8.
    #[tag(2)]
    pub tiny: i8,
    /// u16.
    #[tag(3)]
    pub short: u16,
    /// i16.
    #[tag(4)]
    pub signed_short: i16,
    /// u32.
    #[tag(5)]
    pub word: u32,
    /// i32.
    #[tag(6)]
    pub signed_word: i32,
    /// u64.
    #[tag(7)]
    pub long: u64,
    /// i64.
    #[tag(8)]
    pub signed_long: i64,
    /// f32.
    #[tag(9)]
    pub single: f32,
    /// f64.
    #[tag(10)]
    pub double: f64,
    /// String.
    #[tag(11)]
    pub text: String,
    /// Byte string.
    #[tag(12)]
    pub blob: Vec<u8>,
    /// Array of signed varints.
    #[tag(13)]
    pub numbers: Vec<i64>,
    /// Fixed array.
    #[tag(14)]
    pub fixed: [u16; 3],
    /// Optional varint.
    #[tag(15)]
    pub maybe: Option<u32>,
    /// Optional string.
    #[tag(16)]
    pub maybe_text: Option<String>,
    /// Nested struct.
    #[tag(17)]
    pub inner: Inner,
    /// Array of structs.
    #[tag(18)]
    pub inners: Vec<Inner>,
    /// Map.
    #[tag(19)]
    pub map: BTreeMap<String, i32>,
    /// Array of pairs.
    #[tag(20)]
    pub pairs: Vec<(u8, String)>,
    /// Array of arrays.
    #[tag(21)]
    pub nested: Vec<Vec<u64>>,
    /// Optional struct after a gap of ids.
    #[tag(40)]
    pub far: Option<Inner>,
    /// A large id.
    #[tag(100000)]
    pub sparse: usize,
}

/// An item in the inventory, version 1.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
pub struct ItemV1 {
    /// What the item is.
    #[tag(0)]
    pub kind: u16,
    /// How many.
    #[tag(1)]
    pub count: u8,
}

/// Version 2 of an item: adds `durability`.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
pub struct ItemV2 {
    /// What the item is.
    #[tag(0)]
    pub kind: u16,
    /// How many.
    #[tag(1)]
    pub count: u8,
    /// Wear, negative when broken.
    #[tag(2)]
    pub durability: i16,
}

/// Version 3 of an item: removes `count` (id 1), adds `enchantment`.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
#[tag(removed(1))]
pub struct ItemV3 {
    /// Added in version 3, declared first: declaration order does not matter, ids do.
    #[tag(3)]
    pub enchantment: Option<u32>,
    /// What the item is.
    #[tag(0)]
    pub kind: u16,
    /// Wear, negative when broken.
    #[tag(2)]
    pub durability: i16,
}

/// Save game, version 1.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
pub struct SaveV1 {
    /// Player name.
    #[tag(0)]
    pub name: String,
    /// Level reached.
    #[tag(1)]
    pub level: u32,
    /// Gold (removed in version 2).
    #[tag(2)]
    pub gold: u64,
    /// Position in the world.
    #[tag(3)]
    pub position: [f32; 3],
    /// Inventory.
    #[tag(4)]
    pub inventory: Vec<ItemV1>,
    /// Permadeath (removed in version 3).
    #[tag(5)]
    pub hardcore: bool,
}

/// Save game, version 2: `gold` removed (id 2), `playtime_s` and `quests` added, declaration
/// order shuffled.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
#[tag(removed(2))]
pub struct SaveV2 {
    /// Quest progress by quest name (added in version 2).
    #[tag(7)]
    pub quests: BTreeMap<String, u8>,
    /// Level reached.
    #[tag(1)]
    pub level: u32,
    /// Player name.
    #[tag(0)]
    pub name: String,
    /// Inventory.
    #[tag(4)]
    pub inventory: Vec<ItemV2>,
    /// Position in the world.
    #[tag(3)]
    pub position: [f32; 3],
    /// Seconds played (added in version 2).
    #[tag(6)]
    pub playtime_s: u64,
    /// Permadeath.
    #[tag(5)]
    pub hardcore: bool,
}

/// Save game, version 3: `hardcore` removed (id 5), `difficulty` and `checkpoint` added.
#[derive(Tagged, Arbitrary, Clone, Debug, Default, PartialEq)]
#[tag(removed(2, 5))]
pub struct SaveV3 {
    /// Player name.
    #[tag(0)]
    pub name: String,
    /// Last checkpoint reached, if any (added in version 3).
    #[tag(9)]
    pub checkpoint: Option<String>,
    /// Difficulty from -2 (story) to 2 (nightmare) (added in version 3).
    #[tag(8)]
    pub difficulty: i8,
    /// Level reached.
    #[tag(1)]
    pub level: u32,
    /// Position in the world.
    #[tag(3)]
    pub position: [f32; 3],
    /// Inventory.
    #[tag(4)]
    pub inventory: Vec<ItemV3>,
    /// Seconds played.
    #[tag(6)]
    pub playtime_s: u64,
    /// Quest progress by quest name.
    #[tag(7)]
    pub quests: BTreeMap<String, u8>,
}

impl SaveV3 {
    /// The save game stored in `captures/savegame.tagged`.
    pub fn example() -> Self {
        SaveV3 {
            name: "Ayla".to_owned(),
            checkpoint: Some("north gate".to_owned()),
            difficulty: -1,
            level: 17,
            position: [12.5, -3.0, 0.0],
            inventory: vec![
                ItemV3 {
                    enchantment: None,
                    kind: 3,
                    durability: 100,
                },
                ItemV3 {
                    enchantment: Some(7),
                    kind: 300,
                    durability: -1,
                },
            ],
            playtime_s: 1 << 60,
            quests: [("dragon".to_owned(), 2), ("herbs".to_owned(), 255)]
                .into_iter()
                .collect(),
        }
    }
}

/// Every field of a schema-less walk, nested ones included (the walk opens structs lazily).
fn raw_field_count(fields: tagged::raw::RawFields<'_>) -> usize {
    fields
        .map(|f| match f.value {
            tagged::raw::RawValue::Sized {
                fields: Some(inner),
                ..
            } => 1 + raw_field_count(inner),
            _ => 1,
        })
        .sum()
}

/// Reads arbitrary bytes as a document: must never panic; what reads must re-encode stably.
pub fn tagged_read(data: &[u8]) {
    let raw = tagged::raw::parse_document(data);
    let raw_ok = raw.is_ok();
    if let Ok(fields) = raw {
        // At most one field header per input byte.
        assert!(raw_field_count(fields) <= data.len());
    }
    if let Ok(mut rich) = tagged::decode_document::<Rich>(data) {
        // Whatever the typed read accepts, the schema-less walk accepts too.
        assert!(
            raw_ok,
            "raw walk rejected a document the typed read accepted"
        );
        let first = tagged::encode_document(&mut rich).expect("a decoded value encodes");
        let mut again = tagged::decode_document::<Rich>(&first).expect("re-encoded bytes decode");
        let second = tagged::encode_document(&mut again).expect("a decoded value encodes");
        assert_eq!(first, second, "encoding is not stable after one read");
        tagged::raw::parse_document(&first).expect("raw walk accepts encoder output");
    }
    let _ = tagged::decode_document::<SaveV3>(data);
}

/// Writes an arbitrary `Rich` value, reads it back, and checks that nothing changed.
pub fn tagged_roundtrip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(mut value) = Rich::arbitrary(&mut u) else {
        return;
    };
    let bytes = tagged::encode_document(&mut value).expect("every Rich value encodes");
    let mut back = tagged::decode_document::<Rich>(&bytes).expect("encoder output decodes");
    // Debug, not PartialEq: NaN is not equal to itself but prints the same.
    assert_eq!(format!("{value:?}"), format!("{back:?}"));
    let again = tagged::encode_document(&mut back).expect("a decoded value encodes");
    assert_eq!(bytes, again);
}

/// Writes an arbitrary save game as one version and reads it as another: the read must succeed,
/// shared fields must keep their values, and fields the writer did not know must be zero.
pub fn tagged_compat(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let (Ok(from), Ok(to)) = (u.int_in_range(1u8..=3), u.int_in_range(1u8..=3)) else {
        return;
    };
    let bytes = match from {
        1 => SaveV1::arbitrary(&mut u).map(|mut v| (tagged::dump(&mut v), encode(&mut v))),
        2 => SaveV2::arbitrary(&mut u).map(|mut v| (tagged::dump(&mut v), encode(&mut v))),
        _ => SaveV3::arbitrary(&mut u).map(|mut v| (tagged::dump(&mut v), encode(&mut v))),
    };
    let Ok((written, bytes)) = bytes else {
        return;
    };
    let read = match to {
        1 => read_as::<SaveV1>(&bytes),
        2 => read_as::<SaveV2>(&bytes),
        _ => read_as::<SaveV3>(&bytes),
    };
    assert_compatible(&written.fields, &read.fields);
}

fn encode<T: Tagged>(value: &mut T) -> Vec<u8> {
    tagged::encode_document(value).expect("every save game encodes")
}

fn read_as<T: Tagged>(bytes: &[u8]) -> tagged::Dump {
    let mut value = tagged::decode_document::<T>(bytes).expect("every version reads the others");
    tagged::dump(&mut value)
}

/// Checks that `read` holds what `written` held for the ids they share, and zeros elsewhere.
pub fn assert_compatible(written: &[DumpField], read: &[DumpField]) {
    for field in read {
        match written.iter().find(|w| w.id == field.id) {
            Some(w) => assert_same(&w.value, &field.value, field.id),
            None => assert!(
                is_zero_dump(&field.value),
                "field {} ({}) unknown to the writer but read as {:?}",
                field.id,
                field.name,
                field.value
            ),
        }
    }
}

fn assert_same(written: &DumpValue, read: &DumpValue, id: u64) {
    match (written, read) {
        (DumpValue::Struct(w), DumpValue::Struct(r)) => assert_compatible(w, r),
        (DumpValue::List(w), DumpValue::List(r)) => {
            assert_eq!(w.len(), r.len(), "field {id}: array length changed");
            for (w, r) in w.iter().zip(r) {
                assert_same(w, r, id);
            }
        }
        (w, r) => assert_eq!(w, r, "field {id} changed"),
    }
}

fn is_zero_dump(value: &DumpValue) -> bool {
    match value {
        DumpValue::Scalar(s) => matches!(s.as_str(), "0" | "false" | "0.0" | "\"\"" | "None"),
        DumpValue::Struct(fields) => fields.iter().all(|f| is_zero_dump(&f.value)),
        DumpValue::List(items) => items.is_empty() || items.iter().all(is_zero_dump),
    }
}

/// The zero value of `T`, as a typed dump (used by tests of missing fields).
pub fn zero_dump<T: Tagged>() -> tagged::Dump {
    tagged::dump(&mut <T as Value>::zero())
}
