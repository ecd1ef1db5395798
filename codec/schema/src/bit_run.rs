//! The `bit_run` field (SCHEMA.md, "Lengths chosen by a table"): `n` raw bits whose count a
//! table gives by an earlier integer field, `n = table[by mod len(table)]`, sent as a C++ loop
//! of `serialize_bits` sends them: `n / 32` groups of 32 bits, then the `n % 32` bits left (none
//! when `n` is a multiple of 32). yojimbo's `TestMessage` pads itself this way
//! (YOJIMBO-NOTES.md). Its value is the list of groups (`[0, 0, 5]`); a trace shows them as
//! `name[i]` under the field's scope, as an array's elements without a count.
//!
//! Work is bounded by the data: a group is read, then kept, one at a time, so a run longer than
//! what remains stops at the first group past the end (past_end at that group), having
//! allocated for the groups the data held.

use std::sync::Arc;

use bitlens_codec::error::{Error, ErrorKind, Result};
use bitlens_codec::stream::Stream;
use toml::de::{DeTable, DeValue};

use crate::bounds::{Cost, MAX_COUNT};
use crate::defs::Kind;
use crate::error::SchemaError;
use crate::source::{Parser, get};
use crate::value::DynValue;

/// The longest run a table may give, in bits (what a `u32` count holds).
pub(crate) const MAX_RUN_BITS: i64 = u32::MAX as i64;

/// The width of each group of a run of `n` bits, in order.
pub(crate) fn groups(n: u32) -> impl Iterator<Item = u32> {
    let full = n / 32;
    let rest = n % 32;
    (0..full).map(|_| 32).chain((rest > 0).then_some(rest))
}

/// How many groups a run of `n` bits has.
pub(crate) fn group_count(n: u32) -> usize {
    n.div_ceil(32) as usize
}

/// The kind of a `bit_run` field as written (`t` holds its keys): its table checked, its `by`
/// field resolved by the caller (the struct's earlier fields), `by` = `usize::MAX` until then.
pub(crate) fn kind(
    p: &Parser<'_>,
    t: &DeTable<'_>,
    span: &std::ops::Range<usize>,
) -> Result<Kind, SchemaError> {
    if get(t, "by").is_none() {
        return Err(p.err(
            span,
            "bit_run field without `by` (name the earlier integer field whose value picks the count: `by = \"sequence\"`)",
        ));
    }
    let tv = get(t, "table").ok_or_else(|| {
        p.err(
            span,
            "bit_run field without `table` (give the bit counts, picked by `by` modulo their number: `table = [1, 320, 120]`)",
        )
    })?;
    let list = match tv.get_ref() {
        DeValue::Array(a) => a,
        _ => {
            return Err(p.err(
                &tv.span(),
                "`table` must be an array of bit counts (`table = [1, 320, 120]`)",
            ));
        }
    };
    if list.is_empty() {
        return Err(p.err(&tv.span(), "`table` is empty (give at least one bit count)"));
    }
    p.at_most(&tv.span(), list.len(), "bit counts in a bit_run table")?;
    debug_assert!(list.len() <= MAX_COUNT);
    let mut table = Vec::with_capacity(list.len());
    for v in list.iter() {
        let n = p.int(v, "a bit count")?;
        if !(0..=MAX_RUN_BITS).contains(&n) {
            return Err(p.err(
                &v.span(),
                format!("bit count {n} is not within 0..={MAX_RUN_BITS} (use a count of bits that fits 32 bits)"),
            ));
        }
        table.push(n as u32);
    }
    Ok(Kind::BitRun {
        by: usize::MAX,
        table: table.into(),
    })
}

/// Whether a field of `kind` can pick a run's count: an integer of at most 64 bits.
pub(crate) fn can_pick(kind: &Kind) -> bool {
    matches!(kind, Kind::Int { .. } | Kind::Bits(_) | Kind::U64)
}

/// The table index `by`'s value picks (`by mod len`, never negative); -1 for a value that is not
/// an integer (a write given the wrong kind of value for `by`: its own field reports it).
pub(crate) fn index(by: &DynValue, len: usize) -> i64 {
    let len = len.max(1);
    match by {
        DynValue::Int(v) => v.rem_euclid(len as i64),
        DynValue::U64(v) => (v % len as u64) as i64,
        _ => -1,
    }
}

/// The fewest bits a run takes: the smallest count of its table.
pub(crate) fn min_bits(table: &[u32]) -> usize {
    table.iter().copied().min().unwrap_or(0) as usize
}

/// The most trace entries a run records: its scope, then per group an `[i]` and its value, each
/// group at least one bit.
pub(crate) fn cost() -> Cost {
    Cost::repeated(Cost::flat(1, 1), 1, 1)
}

/// Serializes a run of `table[index]` bits named `name` on any stream: the groups from `src` on
/// a write (a list of exactly as many numbers), into the value returned on a read.
///
/// # Errors
/// A write given another kind of value or another number of groups (invalid_argument), a group
/// wider than its bits (out_of_range), a read past the end.
pub(crate) fn serialize<S: Stream>(
    s: &mut S,
    name: &str,
    table: &Arc<[u32]>,
    index: i64,
    src: &DynValue,
) -> Result<DynValue> {
    let Some(&n) = usize::try_from(index).ok().and_then(|i| table.get(i)) else {
        let why = "the field that picks this run's length has no integer value".to_owned();
        return Err(Error::new(
            ErrorKind::InvalidArgument(why),
            s.bit_position(),
            name,
        ));
    };
    let given: &[DynValue] = match src {
        DynValue::Array(items) if S::WRITING => items,
        _ if S::WRITING => {
            let why = format!("a run of {n} bits is a list of {} groups", group_count(n));
            return Err(Error::new(
                ErrorKind::InvalidArgument(why),
                s.bit_position(),
                name,
            ));
        }
        _ => &[],
    };
    if S::WRITING && given.len() != group_count(n) {
        let why = format!(
            "a run of {n} bits is {} groups (32 bits each, then the rest), not {}",
            group_count(n),
            given.len()
        );
        return Err(Error::new(
            ErrorKind::InvalidArgument(why),
            s.bit_position(),
            name,
        ));
    }
    s.scope(name, |s| {
        let mut out = Vec::new();
        for (i, w) in groups(n).enumerate() {
            let mut v = match given.get(i) {
                Some(DynValue::U64(v)) => *v,
                Some(DynValue::Int(v)) => u64::try_from(*v).unwrap_or(u64::MAX),
                _ => 0,
            };
            s.index(i, |s| s.bits("", &mut v, w))?;
            if S::READING {
                out.push(DynValue::U64(v));
            }
        }
        Ok(if S::READING {
            DynValue::Array(out)
        } else {
            DynValue::Null
        })
    })
}
