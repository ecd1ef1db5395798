//! The checked definitions a schema is made of (structs, fields and their kinds, enums, tagged
//! unions): what the loader produces and the interpreter, the JSON conversion and the Wireshark
//! export read.

use crate::bounds::Cost;
use bitlens_codec::fixed::FixedPoint;
use bitlens_codec::quantize::{CompressedFloat, SmallestThree};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// A resolved struct: its fields with includes spliced in, and the names of its value slots.
#[derive(Debug, Clone)]
pub(crate) struct StructDef {
    pub fields: Vec<Field>,
    /// Names of the fields that carry a value, in order: the layout of its `DynStruct`.
    pub layout: Arc<[Arc<str>]>,
    /// Fewest bits the struct can take on the wire.
    pub min_bits: usize,
    /// The most trace entries its fields record (no scope of its own).
    pub cost: Cost,
    /// Levels of structs and arrays inside it (0: primitives only).
    pub depth: usize,
    /// Where the first `end` field inside the struct is (in it, or in a struct, array or
    /// include inside it): a packet body may not hold one.
    pub end_at: Option<Range<usize>>,
}

/// One field of a struct.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub name: Arc<str>,
    pub kind: Kind,
    /// Present only when the bool in slot `.0` equals `.1`.
    pub guard: Option<(usize, bool)>,
    /// Index in the struct's value layout; `None` for fields without a value (check, align).
    pub slot: Option<usize>,
}

/// Where a relative index or int finds its previous value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Prev {
    Const(i64),
    Slot(usize),
}

/// What a field is on the wire.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Bits(u32),
    U64,
    Int128 {
        min: i128,
        max: i128,
    },
    U128,
    Fixed(FixedPoint),
    WStr {
        max_len: usize,
    },
    F32,
    F64,
    CompressedFloat(CompressedFloat),
    CompressedVector(CompressedFloat),
    Quaternion(SmallestThree),
    Str {
        max_len: usize,
    },
    Bytes {
        len: usize,
    },
    Align,
    Check(String),
    End,
    ObjectIndex {
        max_objects: i64,
        previous: Prev,
    },
    IntRelative {
        previous: Prev,
    },
    Enum(usize),
    Struct(usize),
    /// A tagged union (`[union.NAME]`): its tag, then the variant's body fields.
    Union(usize),
    Array {
        max_len: usize,
        min_element_bits: usize,
        element: Box<Kind>,
    },
    Sparse {
        max_objects: i64,
        element: usize,
        layout: Arc<[Arc<str>]>,
    },
    /// A run of raw bits whose count `table` gives by the value in slot `by` (`bit_run.rs`).
    BitRun {
        by: usize,
        table: Arc<[u32]>,
    },
}

/// A resolved enum.
#[derive(Debug, Clone)]
pub(crate) struct EnumDef {
    pub min: i64,
    pub max: i64,
    pub values: Vec<(i64, Arc<str>)>,
    /// Index in `values` by value, and value by name: a read or write looks one up per field.
    pub by_value: HashMap<i64, usize>,
    pub by_name: HashMap<Arc<str>, i64>,
}

impl EnumDef {
    pub fn name_of(&self, v: i64) -> Option<&Arc<str>> {
        self.by_value.get(&v).map(|&i| &self.values[i].1)
    }

    pub fn value_of(&self, name: &str) -> Option<i64> {
        self.by_name.get(name).copied()
    }
}

/// A resolved tagged union: the tag's name, and per variant its name, its body struct and the
/// layout of its value (the tag, then the body's fields).
#[derive(Debug, Clone)]
pub(crate) struct UnionDef {
    pub tag: Arc<str>,
    pub variants: Vec<UnionVariant>,
    /// Index in `variants` by name.
    pub by_name: HashMap<Arc<str>, usize>,
    pub min_bits: usize,
    /// The most trace entries it records: the tag, then the largest variant's body fields (no
    /// scope of its own).
    pub cost: Cost,
    /// Levels of structs and arrays inside its largest variant.
    pub depth: usize,
}

#[derive(Debug, Clone)]
pub(crate) struct UnionVariant {
    pub name: Arc<str>,
    pub body: Option<usize>,
    pub layout: Arc<[Arc<str>]>,
}

/// The `previous` of a relative array element: its constant (a field's value is refused when the
/// schema loads: an element has no sibling fields), -1 when it declares none.
pub(crate) fn element_previous(k: &Kind) -> i64 {
    match k {
        Kind::ObjectIndex {
            previous: Prev::Const(c),
            ..
        }
        | Kind::IntRelative {
            previous: Prev::Const(c),
        } => *c,
        _ => -1,
    }
}
