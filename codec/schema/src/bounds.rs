//! The loader's bounds on the work a schema can make a reader do (SCHEMA.md, "Bounds"): the
//! [`Cost`] of a value in trace entries, linear in the bits (or batch body bytes) it reads, and
//! the limits a struct's cost and nesting depth must stay within. Both schema languages, packet
//! structs (`parse.rs`) and batch structs (`batch.rs`), count with it.

/// The most trace entries a struct may record beyond what its bits pay for ([`Cost::fixed`]):
/// scopes, and fields that take no bits. Without a bound, structs that refer to one struct
/// twice, level after level, make a few lines of schema read 2^n fields for a few bytes.
pub(crate) const MAX_FIXED_ENTRIES: u64 = 4096;

/// The most trace entries a struct may record per bit it reads ([`Cost::per_unit`]): array
/// elements repeat their cost, so this bounds the work a hostile count can buy per bit. (Scopes
/// are paid by the bits inside them: 32 levels of structs around one bool take 33 per bit.)
pub(crate) const MAX_ENTRIES_PER_BIT: f64 = 64.0;

/// The deepest nesting of structs, unions and arrays: the loader and the reader recurse once per
/// level (a debug build's 2 MiB test thread overflowed at 70 levels of structs).
pub(crate) const MAX_DEPTH: usize = 32;

/// An upper bound on the entries a reader records (in a trace: one per value, scope, check and
/// padding; a read visits as many) for a value that consumes `units` (bits of a packet, bytes of
/// a batch message's body): `per_unit * units + fixed + unpaid`. Every entry of a complete value
/// is either paid for by what it reads, or counted in `fixed`; a read that stops inside the
/// value leaves at most `unpaid` more, so the bound is linear in the datagram whatever it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Cost {
    /// Entries per unit consumed.
    pub per_unit: f64,
    /// Entries on top of those, units or no units.
    pub fixed: u64,
    /// Entries a read that stops inside the value may add: those the units it did not read
    /// would have paid for (one failing field per level of nesting).
    pub unpaid: u64,
}

impl Cost {
    /// `entries` entries for a value of at least `min_units` units.
    pub(crate) fn flat(entries: u64, min_units: usize) -> Cost {
        if min_units == 0 {
            Cost {
                fixed: entries,
                ..Cost::default()
            }
        } else {
            Cost {
                per_unit: entries as f64 / min_units as f64,
                fixed: 0,
                unpaid: entries,
            }
        }
    }

    /// Two values one after the other (a read stops in one of them at most).
    pub(crate) fn then(self, o: Cost) -> Cost {
        Cost {
            per_unit: self.per_unit.max(o.per_unit),
            fixed: self.fixed.saturating_add(o.fixed),
            unpaid: self.unpaid.max(o.unpaid),
        }
    }

    /// One value or the other (a union's variants): the larger bound of each part.
    pub(crate) fn either(self, o: Cost) -> Cost {
        Cost {
            per_unit: self.per_unit.max(o.per_unit),
            fixed: self.fixed.max(o.fixed),
            unpaid: self.unpaid.max(o.unpaid),
        }
    }

    /// The cost under a scope of its own (a struct or union field): the scope entry is paid by
    /// the units the value takes when it takes some (`min_units`), else it is one more fixed
    /// entry.
    pub(crate) fn scoped(self, min_units: usize) -> Cost {
        if min_units == 0 {
            return self.plus(1);
        }
        Cost {
            per_unit: self.per_unit + 1.0 / min_units as f64,
            fixed: self.fixed,
            unpaid: self.unpaid.saturating_add(1),
        }
    }

    /// `n` more entries that read nothing (scopes).
    pub(crate) fn plus(self, n: u64) -> Cost {
        Cost {
            fixed: self.fixed.saturating_add(n),
            ..self
        }
    }

    /// Elements of cost `e` (each under an `[i]` scope, each at least `min_units` units), as
    /// many as the data allows, after `overhead` entries (the array's scope, its count): every
    /// complete element pays its `[i]` and its fixed entries with its units; the one a read
    /// stops in does not.
    pub(crate) fn repeated(e: Cost, min_units: usize, overhead: u64) -> Cost {
        let per_element = e.fixed.saturating_add(1);
        Cost {
            per_unit: e.per_unit + per_element as f64 / min_units.max(1) as f64,
            fixed: overhead,
            unpaid: per_element.saturating_add(e.unpaid),
        }
    }

    /// The bound for a value that reads at most `units` units.
    pub(crate) fn entries(self, units: usize) -> usize {
        let paid = (self.per_unit * units as f64).ceil();
        let paid = if paid >= usize::MAX as f64 {
            usize::MAX
        } else {
            paid as usize
        };
        let rest = self.fixed.saturating_add(self.unpaid);
        paid.saturating_add(usize::try_from(rest).unwrap_or(usize::MAX))
    }
}

/// The longest schema text the loader parses, in bytes (checked before the TOML parser runs).
pub(crate) const MAX_SCHEMA_BYTES: usize = 16 << 20;

/// The most entries of any one list a schema may hold: fields of a struct (its includes spliced
/// in) or of a batch struct, values of an enum, variants of a union, packet types, and the
/// structs, enums and unions it defines (checked before the list is read).
pub(crate) const MAX_COUNT: usize = 65_536;

/// The most field names the loader copies in all: the fields of every struct once its includes
/// are spliced in, and the value layouts of union variants and sparse array elements (each a
/// copy of its body struct's names). Each is below [`MAX_COUNT`], but one struct of 60,000
/// fields included in 60,000 others would copy 3.6 billion.
pub(crate) const MAX_COPIED_NAMES: usize = 1 << 20;

/// The longest name, in bytes (SCHEMA.md, "Names").
pub(crate) const MAX_NAME_LEN: usize = 128;
