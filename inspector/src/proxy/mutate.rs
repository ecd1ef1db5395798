//! Applying mutations: the [`Mutator`] draws which rule ([`super::rules`]) fires on a datagram,
//! finds its field through the decoder's field map and writes the datagram that is almost
//! right, with its CRC re-signed so that it reaches the server's parser (or deliberately left
//! stale); `--fuzz` draws mutations from each datagram's own fields.
//!
//! Every mutation is a list of [`Op`]s: bit windows with their old and new bits (a string of
//! `bits` binary digits, most significant first: value bit k is stream bit `bit + k`), and
//! truncations. [`apply_ops`] plays them on the original bytes: replay uses it, and it
//! reproduces the sent bytes exactly, without any decoder.

use super::Direction;
use super::dissect::{Field, FieldMap, Role, SessionDissector, wildcard_match};
use super::rules::{Action, Crc, Fuzz, Rule};
use crate::words::count;
use bitlens_codec::observe::Observation;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

impl Action {
    /// Whether this action can work on `f`, a field of a datagram of `total_bits` bits.
    fn fits(self, f: &Field, total_bits: usize) -> bool {
        match self {
            Action::Set(_) => f.bits > 0 && f.bits <= 64,
            Action::OutOfRange => out_of_range_band(f).is_some(),
            Action::Flip(n) => f.bits >= n as usize && n > 0,
            Action::Overclaim => matches!(f.role, Role::Length { .. }) && f.range.is_some(),
            Action::Truncate(_) => f.bit / 8 < total_bits / 8,
            Action::Desync => matches!(f.role, Role::Check | Role::Crc),
        }
    }
}

/// One edit of a mutation, as logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// `set`, `out_of_range`, `flip`, `overclaim`, `desync`, `resign` or `truncate`.
    pub action: String,
    /// The field's path (the check's label for markers, `crc32` for the CRC).
    #[serde(default)]
    pub field: Option<String>,
    /// First bit of the window (for `truncate`: the new end, in bits).
    pub bit: usize,
    /// Width of the window (for `truncate`: the bits cut off).
    pub bits: usize,
    /// The window's bits before, most significant first (absent for `truncate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The window's bits after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
    /// The field's wire integer before (ranged fields: `min` + the bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_value: Option<i128>,
    /// The field's wire integer after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_value: Option<i128>,
}

/// One mutated datagram, as logged: which rule, which edits, the bytes before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutation {
    /// The rule's name (`fuzz` for `--fuzz`).
    pub rule: String,
    /// The packet type of the original datagram.
    pub packet_type: Option<String>,
    /// `resigned`, `stale`, or `none` (a format without CRC).
    pub crc: String,
    /// The edits in order.
    pub ops: Vec<Op>,
    /// The datagram as received, hex.
    pub original: String,
    /// The datagram as sent, hex.
    pub sent: String,
}

/// Counts of what the mutator did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MutationStats {
    /// Datagrams mutated.
    pub mutated: u64,
    /// Rules that fired on a datagram without a field they could work on.
    pub not_applicable: u64,
}

/// The rules and the fuzzer; every draw comes from the stream the caller passes (one per
/// client and direction: [`super::ClientDraws`]).
pub struct Mutator {
    rules: Vec<Rule>,
    fuzz: Option<Fuzz>,
    /// Per rule: the draws that found nothing to work on, and why the first of them did.
    misses: Vec<(u64, Option<String>)>,
    /// What it did so far.
    pub stats: MutationStats,
}

/// How a mutated datagram is finished: its payload's CRC re-signed or left stale, and, when a
/// transport opened it, closed again with what the transports observed of it.
struct Sealing<'a> {
    crc: Crc,
    opened: bool,
    seen: &'a Observation,
    /// The datagram as received.
    original: Vec<u8>,
}

impl Mutator {
    /// A mutator with these rules and fuzzing.
    pub fn new(rules: Vec<Rule>, fuzz: Option<Fuzz>) -> Self {
        Mutator {
            misses: vec![(0, None); rules.len()],
            rules,
            fuzz,
            stats: MutationStats::default(),
        }
    }

    /// One line per rule that fired on datagrams it could not work on: how often, and why
    /// the first one could not (`name` is a string: overclaim works on its length,
    /// `name.len`), for the closing summary.
    pub fn misses(&self) -> Vec<String> {
        self.rules
            .iter()
            .zip(&self.misses)
            .filter(|(_, (n, _))| *n > 0)
            .map(|(r, (n, why))| {
                let why = why.as_deref().unwrap_or("no field to work on");
                let draws = if *n == 1 { "draw" } else { "draws" };
                format!(
                    "rule {}: {n} {draws} found nothing to work on: {why}",
                    r.name
                )
            })
            .collect()
    }

    fn miss(&mut self, rule: usize, why: String) {
        self.stats.not_applicable += 1;
        if let Some((n, first)) = self.misses.get_mut(rule) {
            *n += 1;
            first.get_or_insert(why);
        }
    }

    /// True when a datagram of `dir` may be mutated.
    pub fn wants(&self, dir: Direction) -> bool {
        self.rules.iter().any(|r| r.directions.contains(dir))
            || self.fuzz.is_some_and(|f| f.directions.contains(dir))
    }

    /// The rules, for the start-up message.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .rules
            .iter()
            .map(|r| {
                format!(
                    "{}: {}% of {} {}: {} {}",
                    r.name,
                    r.p * 100.0,
                    r.packet.as_deref().unwrap_or("datagrams"),
                    r.directions.name(),
                    r.field.as_deref().unwrap_or("-"),
                    r.action.name()
                )
            })
            .collect();
        if let Some(f) = self.fuzz {
            parts.push(format!("fuzz {}% {}", f.rate * 100.0, f.directions.name()));
        }
        parts.join("; ")
    }

    /// Mutates `bytes` in place when a rule (the first that fires, in order) or the fuzzer
    /// draws it from `rng`; returns what it did. `seen` is what the session's transports observed of the
    /// datagram: behind a transport that encrypts, the payload is opened, mutated in plaintext
    /// and closed again (re-encrypted and signed with the session key and the packet's own
    /// sequence), so that the server's parser receives the mutation.
    pub fn mutate(
        &mut self,
        dir: Direction,
        bytes: &mut Vec<u8>,
        dis: &SessionDissector,
        seen: &Observation,
        rng: &mut ChaCha8Rng,
    ) -> Option<Mutation> {
        let mut packet_type: Option<Option<String>> = None;
        let mut map: Option<FieldMap> = None;
        for i in 0..self.rules.len() {
            let rule = &self.rules[i];
            if !rule.directions.contains(dir) {
                continue;
            }
            if let Some(want) = &rule.packet {
                let t = packet_type.get_or_insert_with(|| dis.packet_type(bytes, seen));
                if t.as_deref() != Some(want.as_str()) {
                    continue;
                }
            }
            if rng.random::<f64>() >= rule.p {
                continue;
            }
            let map = map.get_or_insert_with(|| dis.field_map(bytes, seen));
            let original = bytes.clone();
            let (action, crc) = (rule.action, rule.crc);
            let field = match &rule.field {
                Some(pattern) => {
                    let candidates: Vec<&Field> = map
                        .matching(pattern)
                        .filter(|f| action.fits(f, map.total_bits))
                        .collect();
                    if candidates.is_empty() {
                        let why = why_not(action, pattern, map);
                        self.miss(i, why);
                        continue;
                    }
                    Some(candidates[rng.random_range(0..candidates.len())].clone())
                }
                None => None,
            };
            let opened = dis.open(bytes, seen).map(|plain| *bytes = plain).is_some();
            match apply(action, field.as_ref(), map, bytes, rng) {
                Some(ops) => {
                    let name = rule.name.clone();
                    let sealing = Sealing {
                        crc,
                        opened,
                        seen,
                        original,
                    };
                    return Some(self.finish(name, map, ops, sealing, bytes, dis));
                }
                None => {
                    bytes.clone_from(&original);
                    let why = why_apply_failed(action, field.as_ref(), map);
                    self.miss(i, why);
                }
            }
        }
        let fuzz = self.fuzz.filter(|f| f.directions.contains(dir))?;
        if rng.random::<f64>() >= fuzz.rate {
            return None;
        }
        let map = map.get_or_insert_with(|| dis.field_map(bytes, seen));
        let original = bytes.clone();
        let opened = dis.open(bytes, seen).map(|plain| *bytes = plain).is_some();
        let Some(ops) = fuzz_one(map, bytes, rng) else {
            bytes.clone_from(&original);
            return None;
        };
        let sealing = Sealing {
            crc: Crc::Resign,
            opened,
            seen,
            original,
        };
        Some(self.finish("fuzz".into(), map, ops, sealing, bytes, dis))
    }

    /// The log entry of a datagram `rule` mutated with `ops` (its packet type from `map`),
    /// once its CRC and transport are seen to as `sealing` says.
    fn finish(
        &mut self,
        rule: String,
        map: &FieldMap,
        mut ops: Vec<Op>,
        sealing: Sealing<'_>,
        bytes: &mut [u8],
        dis: &SessionDissector,
    ) -> Mutation {
        let Sealing {
            crc,
            opened,
            seen,
            original,
        } = sealing;
        let packet_type = map.packet_type.clone();
        let crc = match crc {
            Crc::Stale => "stale",
            Crc::Resign => {
                let at = dis.crc_bit(bytes);
                let crc_at = |b: &[u8]| (b.len() * 8 >= at + 32).then(|| read_bits(b, at, 32));
                let before = crc_at(bytes);
                if dis.seal(bytes) {
                    ops.push(Op {
                        action: "resign".into(),
                        field: Some("crc32".into()),
                        bit: at,
                        bits: 32,
                        old: before.map(|b| bit_string(b, 32)),
                        new: crc_at(bytes).map(|b| bit_string(b, 32)),
                        old_value: None,
                        new_value: None,
                    });
                    "resigned"
                } else {
                    "none"
                }
            }
        };
        // An opened payload leaves encrypted and signed again, with the packet's own sequence.
        if opened && !dis.close(bytes, seen) {
            bytes.copy_from_slice(&original[..bytes.len().min(original.len())]);
        }
        self.stats.mutated += 1;
        Mutation {
            rule,
            packet_type,
            crc: crc.into(),
            ops,
            original: hex::encode(&original),
            sent: hex::encode(&*bytes),
        }
    }
}

/// One mutation drawn from the datagram's fields: a field, then an action that suits it
/// (out of range or a bit flip for values, an overclaim for lengths, a desync for
/// markers); one time in eight a truncation instead.
fn fuzz_one(map: &FieldMap, bytes: &mut Vec<u8>, rng: &mut ChaCha8Rng) -> Option<Vec<Op>> {
    let fields: Vec<&Field> = map
        .fields
        .iter()
        .filter(|f| f.role != Role::Crc && f.bits > 0)
        .collect();
    if fields.is_empty() || rng.random_range(0..8) == 0 {
        return apply(Action::Truncate(None), None, map, bytes, rng);
    }
    let f = fields[rng.random_range(0..fields.len())].clone();
    let action = match f.role {
        Role::Length { .. } if Action::Overclaim.fits(&f, map.total_bits) => Action::Overclaim,
        Role::Check => Action::Desync,
        _ if Action::OutOfRange.fits(&f, map.total_bits) && rng.random::<bool>() => {
            Action::OutOfRange
        }
        _ => Action::Flip(1),
    };
    apply(action, Some(&f), map, bytes, rng)
}

/// Why no field that `pattern` matches suits `action`, as the summary says it: the fields
/// it names instead when the user pointed at a string or array rather than its length, the
/// range that fills its bits for `out_of_range`.
fn why_not(action: Action, pattern: &str, map: &FieldMap) -> String {
    let of = map
        .packet_type
        .as_deref()
        .map_or(String::new(), |t| format!(" of {t}"));
    let matched: Vec<&Field> = map.matching(pattern).collect();
    // A string or an array is a scope, not a field: its length is `PATTERN.len`.
    let len_path = format!("{pattern}.len");
    let has_len = map
        .matching(&len_path)
        .any(|f| matches!(f.role, Role::Length { .. }));
    let Some(f) = matched.first() else {
        return if has_len && action == Action::Overclaim {
            format!(
                "{pattern}{of} is a string or an array, not a length: overclaim works on its \
                 length, field={len_path}"
            )
        } else if has_len {
            format!("{pattern}{of} is a string or an array; its length is {len_path}")
        } else if map.elsewhere.iter().any(|p| wildcard_match(pattern, p)) {
            format!(
                "{pattern}{of}: the fields it matches were read from other datagrams (the earlier \
                 fragments of a reassembled packet, or a block's), not from this one: not mutated"
            )
        } else {
            format!("no field{of} matches {pattern:?}")
        };
    };
    let path = &f.path;
    match action {
        Action::OutOfRange => match f.range {
            Some((lo, hi)) if f.bits > 0 && f.bits <= 64 => format!(
                "{path}'s range {lo}..={hi} fills its {}: out_of_range has no value above \
                 the range to write (set writes a chosen value)",
                bits(f.bits)
            ),
            Some(_) => format!(
                "{path} is {} wide: out_of_range writes at most 64",
                bits(f.bits)
            ),
            None => format!("{path} has no range: out_of_range has nothing to exceed"),
        },
        Action::Overclaim => {
            let len = if has_len {
                format!(": overclaim works on its length, field={len_path}")
            } else {
                String::from(": overclaim works on the .len of a string or array")
            };
            format!("{path} is not a length or count{len}")
        }
        Action::Flip(n) => format!("{path} has {}, fewer than the {n} to flip", bits(f.bits)),
        Action::Set(_) => format!("{path} is {} wide: set writes 1 to 64", bits(f.bits)),
        Action::Truncate(_) => format!("{path} starts in the datagram's last byte"),
        Action::Desync => format!("{path} is not a check marker"),
    }
}

/// `n` bits, in the text a user reads: `1 bit`, `8 bits`.
fn bits(n: usize) -> String {
    count(n as u64, "bit")
}

/// Why `action` could not be done to `field` (or, without one, to the datagram).
fn why_apply_failed(action: Action, field: Option<&Field>, map: &FieldMap) -> String {
    let Some(f) = field else {
        return match action {
            Action::Overclaim => "the datagram has no length or count to overclaim".into(),
            Action::Desync => "the datagram has no check marker".into(),
            Action::Truncate(Some(n)) => {
                format!(
                    "the datagram is not longer than {}",
                    count(n as u64, "byte")
                )
            }
            _ => "the datagram is empty".into(),
        };
    };
    let path = &f.path;
    match action {
        Action::Set(v) => format!(
            "{path} cannot hold the wire value {v} ({} from {})",
            bits(f.bits),
            f.range.map_or(0, |r| r.0)
        ),
        Action::Overclaim => format!(
            "{path} cannot claim more elements than remain after it (its range ends at {})",
            f.range.map_or(0, |r| r.1)
        ),
        Action::Truncate(Some(n)) => format!(
            "the datagram is not longer than {} ({})",
            count(n as u64, "byte"),
            bits(map.total_bits)
        ),
        _ => format!("{path} lies outside the datagram's bytes"),
    }
}

/// The values above a field's range that its width can still hold, as raw bits.
fn out_of_range_band(f: &Field) -> Option<(u64, u64)> {
    let (lo, hi) = f.range?;
    if f.bits == 0 || f.bits > 64 {
        return None;
    }
    let max_raw = u64::MAX >> (64 - f.bits);
    let span = u64::try_from(hi - lo).ok()?;
    (span < max_raw).then_some((span + 1, max_raw))
}

/// Does `action` to `field` (or the datagram), returning the ops; `None` when it cannot.
fn apply(
    action: Action,
    field: Option<&Field>,
    map: &FieldMap,
    bytes: &mut Vec<u8>,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<Op>> {
    let window_op =
        |bytes: &mut Vec<u8>, f: &Field, bit: usize, bits: usize, new: u64, values: bool| {
            let old = read_bits(bytes, bit, bits);
            write_bits(bytes, bit, bits, new);
            let lo = f.range.map_or(0, |r| r.0);
            Op {
                action: action.name().into(),
                field: Some(f.path.clone()),
                bit,
                bits,
                old: Some(bit_string(old, bits)),
                new: Some(bit_string(new, bits)),
                old_value: values.then(|| lo + i128::from(old)),
                new_value: values.then(|| lo + i128::from(new)),
            }
        };
    let in_bytes = |f: &Field| f.bit + f.bits <= bytes.len() * 8;
    match action {
        Action::Set(v) => {
            let f = field?;
            if !in_bytes(f) || f.bits == 0 || f.bits > 64 {
                return None;
            }
            let raw = u64::try_from(v - f.range.map_or(0, |r| r.0)).ok()?;
            if f.bits < 64 && raw >> f.bits != 0 {
                return None;
            }
            Some(vec![window_op(bytes, f, f.bit, f.bits, raw, true)])
        }
        Action::OutOfRange => {
            let f = field?;
            let (a, b) = out_of_range_band(f)?;
            if !in_bytes(f) {
                return None;
            }
            let raw = rng.random_range(a..=b);
            Some(vec![window_op(bytes, f, f.bit, f.bits, raw, true)])
        }
        Action::Flip(n) => {
            let f = field?;
            if !in_bytes(f) || f.bits < n as usize {
                return None;
            }
            let picks = rand::seq::index::sample(rng, f.bits, n as usize);
            if f.bits <= 64 {
                let old = read_bits(bytes, f.bit, f.bits);
                let mask = picks.iter().fold(0u64, |m, k| m | 1 << k);
                let values = f.range.is_some();
                Some(vec![window_op(bytes, f, f.bit, f.bits, old ^ mask, values)])
            } else {
                let mut ops = Vec::new();
                let mut picks = picks.into_vec();
                picks.sort_unstable();
                for k in picks {
                    let old = read_bits(bytes, f.bit + k, 1);
                    ops.push(window_op(bytes, f, f.bit + k, 1, old ^ 1, false));
                }
                Some(ops)
            }
        }
        Action::Overclaim => {
            let f = field.or_else(|| {
                let lengths: Vec<&Field> = map
                    .fields
                    .iter()
                    .filter(|f| Action::Overclaim.fits(f, map.total_bits))
                    .collect();
                (!lengths.is_empty()).then(|| lengths[rng.random_range(0..lengths.len())])
            })?;
            let (lo, hi) = f.range?;
            let Role::Length { unit_bits } = f.role else {
                return None;
            };
            if !in_bytes(f) {
                return None;
            }
            let remaining = map.total_bits.saturating_sub(f.bit + f.bits);
            let unit = unit_bits.unwrap_or(1).max(1);
            let claim = (i128::try_from(remaining / unit).ok()? + 1).min(hi);
            if Some(claim) == f.wire || claim < lo {
                return None;
            }
            let raw = u64::try_from(claim - lo).ok()?;
            Some(vec![window_op(bytes, f, f.bit, f.bits, raw, true)])
        }
        Action::Truncate(to) => {
            let len = bytes.len();
            let to = match (to, field) {
                (Some(n), _) => n,
                (None, Some(f)) => f.bit / 8,
                (None, None) if len > 0 => rng.random_range(0..len),
                (None, None) => return None,
            };
            if to >= len {
                return None;
            }
            bytes.truncate(to);
            Some(vec![Op {
                action: "truncate".into(),
                field: field.map(|f| f.path.clone()),
                bit: to * 8,
                bits: (len - to) * 8,
                old: None,
                new: None,
                old_value: Some(len as i128),
                new_value: Some(to as i128),
            }])
        }
        Action::Desync => {
            let f = field.or_else(|| {
                let checks: Vec<&Field> = map
                    .fields
                    .iter()
                    .filter(|f| f.role == Role::Check)
                    .collect();
                (!checks.is_empty()).then(|| checks[rng.random_range(0..checks.len())])
            })?;
            if !in_bytes(f) || f.bits == 0 || f.bits > 64 {
                return None;
            }
            let k = rng.random_range(0..f.bits);
            let old = read_bits(bytes, f.bit, f.bits);
            Some(vec![window_op(
                bytes,
                f,
                f.bit,
                f.bits,
                old ^ (1 << k),
                false,
            )])
        }
    }
}

/// `bits` bits (at most 64) from stream bit `bit` (LSB first: value bit k is stream bit
/// `bit + k`). The caller checks that they are inside `bytes`.
pub fn read_bits(bytes: &[u8], bit: usize, bits: usize) -> u64 {
    (0..bits).fold(0u64, |v, k| {
        let b = bit + k;
        v | u64::from(bytes[b / 8] >> (b % 8) & 1) << k
    })
}

/// Writes the low `bits` bits of `v` at stream bit `bit`.
pub fn write_bits(bytes: &mut [u8], bit: usize, bits: usize, v: u64) {
    for k in 0..bits {
        let b = bit + k;
        let mask = 1u8 << (b % 8);
        if v >> k & 1 == 1 {
            bytes[b / 8] |= mask;
        } else {
            bytes[b / 8] &= !mask;
        }
    }
}

/// `v`'s low `bits` bits as binary digits, most significant first.
pub fn bit_string(v: u64, bits: usize) -> String {
    (0..bits)
        .rev()
        .map(|k| if v >> k & 1 == 1 { '1' } else { '0' })
        .collect()
}

fn parse_bit_string(s: &str, bits: usize) -> Option<u64> {
    if s.len() != bits || bits > 64 || !s.bytes().all(|c| c == b'0' || c == b'1') {
        return None;
    }
    if bits == 0 {
        return Some(0);
    }
    u64::from_str_radix(s, 2).ok()
}

/// Plays logged ops on the original bytes: the bytes the proxy sent. Every bit window is
/// checked to hold its `old` bits first, so a log that does not belong to these bytes is refused.
///
/// # Errors
/// A window outside the bytes, old bits that differ, a malformed op.
pub fn apply_ops(original: &[u8], ops: &[Op]) -> Result<Vec<u8>, String> {
    let mut bytes = original.to_vec();
    for (i, op) in ops.iter().enumerate() {
        let which = format!("op {} ({})", i + 1, op.action);
        // Checked: a crafted `bit` near usize::MAX must not wrap past the bounds checks.
        let end = op.bit.checked_add(op.bits);
        let total = bytes.len().checked_mul(8);
        if op.action == "truncate" {
            if op.bit % 8 != 0 || op.bits == 0 || end.is_none() || end != total {
                return Err(format!(
                    "{which}: cuts {} at bit {} of a {}-byte datagram",
                    bits(op.bits),
                    op.bit,
                    bytes.len()
                ));
            }
            bytes.truncate(op.bit / 8);
            continue;
        }
        let inside = end.zip(total).is_some_and(|(end, total)| end <= total);
        if op.bits > 64 || !inside {
            return Err(format!(
                "{which}: {} at bit {} {} not inside the {}-byte datagram",
                bits(op.bits),
                op.bit,
                if op.bits == 1 { "is" } else { "are" },
                bytes.len()
            ));
        }
        let parse = |s: &Option<String>, what: &str| {
            s.as_deref()
                .and_then(|s| parse_bit_string(s, op.bits))
                .ok_or_else(|| {
                    let digits = count(op.bits as u64, "binary digit");
                    format!("{which}: {what} is not {digits}")
                })
        };
        let (old, new) = (parse(&op.old, "old")?, parse(&op.new, "new")?);
        let found = read_bits(&bytes, op.bit, op.bits);
        if found != old {
            return Err(format!(
                "{which}: bits {}..{} are {} here, the log says {}",
                op.bit,
                op.bit + op.bits,
                bit_string(found, op.bits),
                bit_string(old, op.bits)
            ));
        }
        write_bits(&mut bytes, op.bit, op.bits, new);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissectors::shipped;
    use crate::proxy::Directions;
    use crate::proxy::spec::Spec;
    use bitlens_codec::ErrorKind;
    use bitlens_codec::packet::{read_packet, write_packet};
    use bitlens_testkit::demo::{self, DemoPacket};
    use rand::SeedableRng;

    fn dis() -> SessionDissector {
        SessionDissector::new(shipped(), "127.0.0.1:40000".parse().unwrap())
    }

    fn robocat() -> Vec<u8> {
        let mut p = demo::samples().pop().unwrap();
        let mut buf = [0u8; 1200];
        let n = write_packet(&mut p, &mut buf).unwrap();
        buf[..n].to_vec()
    }

    fn rule(text: &str) -> Rule {
        Rule::from_spec(Spec::from_cli("--mutate", text, None).unwrap(), 1).unwrap()
    }

    fn mutate_once(text: &str, seed: u64) -> (Vec<u8>, Mutation) {
        let mut m = Mutator::new(vec![rule(text)], None);
        let mut bytes = robocat();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mutation = m
            .mutate(
                Direction::ToServer,
                &mut bytes,
                &dis(),
                &Observation::NONE,
                &mut rng,
            )
            .expect("fires");
        (bytes, mutation)
    }

    fn kind_of(bytes: &[u8]) -> String {
        read_packet::<DemoPacket>(bytes)
            .unwrap_err()
            .kind()
            .name()
            .to_owned()
    }

    #[test]
    fn bits_read_and_write_lsb_first() {
        let mut b = vec![0u8; 3];
        write_bits(&mut b, 3, 9, 0b1_0110_0101);
        assert_eq!(b, [0b0010_1000, 0b0000_1011, 0]);
        assert_eq!(read_bits(&b, 3, 9), 0b1_0110_0101);
        assert_eq!(bit_string(5, 4), "0101");
        assert_eq!(parse_bit_string("0101", 4), Some(5));
    }

    #[test]
    fn out_of_range_lands_raw_with_a_valid_crc() {
        let (bytes, m) = mutate_once("packet=RoboCat,field=health,action=out_of_range", 1);
        let op = &m.ops[0];
        assert_eq!(
            (op.field.as_deref(), op.bit, op.bits),
            (Some("health"), 35, 7)
        );
        assert_eq!(op.old_value, Some(87));
        let new = op.new_value.unwrap();
        assert!((101..=127).contains(&new), "{new}");
        assert_eq!(m.crc, "resigned");
        let e = read_packet::<DemoPacket>(&bytes).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::OutOfRange {
                value: new,
                min: 0,
                max: 100
            }
        );
        assert_eq!(e.field(), "health");
        assert_eq!(
            apply_ops(&hex::decode(&m.original).unwrap(), &m.ops).unwrap(),
            bytes
        );
        assert_eq!(hex::encode(&bytes), m.sent);
    }

    #[test]
    fn each_action_gives_the_reader_error_it_aims_at() {
        for (spec, kind) in [
            ("field=location.x,action=set,value=20001", "out_of_range"),
            ("field=location.x,action=set,value=-20000", "none"),
            ("field=name.len,action=overclaim", "past_end"),
            ("field=stats,action=desync", "check_mismatch"),
            ("action=desync", "check_mismatch"),
            (
                "field=health,action=set,value=100,crc=stale",
                "crc_mismatch",
            ),
            ("field=mice.len,action=truncate", "past_end"),
            ("action=truncate,value=3", "past_end"),
        ] {
            let (bytes, m) = mutate_once(spec, 5);
            let got = read_packet::<DemoPacket>(&bytes)
                .err()
                .map_or("none".into(), |e| e.kind().name().to_owned());
            assert_eq!(got, kind, "{spec}: {m:?}");
            assert_eq!(
                apply_ops(&hex::decode(&m.original).unwrap(), &m.ops).unwrap(),
                bytes,
                "{spec}"
            );
        }
    }

    #[test]
    fn overclaim_claims_one_more_than_fits() {
        // 3 mice of 12 bits: the claim is the fewest mice that no longer fit what remains.
        let (bytes, m) = mutate_once("field=mice.len,action=overclaim", 1);
        let op = &m.ops[0];
        let remaining = bytes.len() * 8 - (op.bit + op.bits);
        assert_eq!(op.old_value, Some(3));
        assert_eq!(op.new_value, Some((remaining / 12 + 1) as i128));
        assert!(op.new_value.unwrap() * 12 > remaining as i128);
        assert!(op.new_value.unwrap() - 1 <= (remaining / 12) as i128);
        assert_eq!(kind_of(&bytes), "past_end");
        let (bytes, m) = mutate_once("field=name.len,action=overclaim", 1);
        let op = &m.ops[0];
        let remaining = bytes.len() * 8 - (op.bit + op.bits);
        assert_eq!(op.new_value, Some((remaining / 8 + 1) as i128));
        assert_eq!(kind_of(&bytes), "past_end");
    }

    #[test]
    fn rules_that_cannot_apply_are_counted_not_forced() {
        // x of PacketA fills its 32 bits: nothing lies above its range.
        let mut m = Mutator::new(
            vec![
                rule("field=health,action=out_of_range"),
                rule("field=nope,action=flip"),
            ],
            None,
        );
        let mut a = {
            let mut p = demo::samples().remove(0);
            let mut buf = [0u8; 64];
            let n = write_packet(&mut p, &mut buf).unwrap();
            buf[..n].to_vec()
        };
        let before = a.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(
            m.mutate(
                Direction::ToServer,
                &mut a,
                &dis(),
                &Observation::NONE,
                &mut rng
            )
            .is_none()
        );
        assert_eq!(a, before);
        assert_eq!(m.stats.not_applicable, 2);
        assert!(
            m.mutate(
                Direction::ToClient,
                &mut a,
                &dis(),
                &Observation::NONE,
                &mut rng
            )
            .is_none()
        );
    }

    #[test]
    fn a_rule_that_misses_says_why() {
        let mut m = Mutator::new(
            vec![
                rule("name=over,packet=RoboCat,field=name,action=overclaim"),
                rule("name=oob,packet=PacketA,field=x,action=out_of_range"),
                rule("name=oob2,field=health,action=out_of_range"),
                rule("name=none,field=nope,action=flip"),
            ],
            None,
        );
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for mut bytes in [robocat(), robocat(), {
            let mut p = demo::samples().remove(0);
            let mut buf = [0u8; 64];
            let n = write_packet(&mut p, &mut buf).unwrap();
            buf[..n].to_vec()
        }] {
            m.mutate(
                Direction::ToServer,
                &mut bytes,
                &dis(),
                &Observation::NONE,
                &mut rng,
            );
        }
        let misses = m.misses();
        assert_eq!(
            misses[0],
            "rule over: 2 draws found nothing to work on: name of RoboCat is a string or an \
             array, not a length: overclaim works on its length, field=name.len"
        );
        assert_eq!(
            misses[1],
            "rule oob: 1 draw found nothing to work on: x's range -2147483648..=2147483647 \
             fills its 32 bits: out_of_range has no value above the range to write (set writes \
             a chosen value)"
        );
        // On the RoboCat, health's range leaves room: the rule fires and the later rule is not
        // drawn; on the PacketA it has no health field.
        assert_eq!(
            misses[2],
            "rule oob2: 1 draw found nothing to work on: no field of PacketA matches \"health\""
        );
        assert_eq!(
            misses[3],
            "rule none: 1 draw found nothing to work on: no field of PacketA matches \"nope\""
        );
        assert_eq!(misses.len(), 4, "{misses:?}");
        assert_eq!(m.stats.not_applicable, 5);
    }

    #[test]
    fn fuzzing_repeats_with_its_seed_and_replays() {
        let run = |seed| {
            let mut m = Mutator::new(
                vec![],
                Some(Fuzz {
                    rate: 0.5,
                    directions: Directions::Both,
                }),
            );
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..200)
                .map(|_| {
                    let mut b = robocat();
                    let mu = m.mutate(
                        Direction::ToClient,
                        &mut b,
                        &dis(),
                        &Observation::NONE,
                        &mut rng,
                    );
                    if let Some(mu) = &mu {
                        assert_eq!(
                            apply_ops(&hex::decode(&mu.original).unwrap(), &mu.ops).unwrap(),
                            b
                        );
                    }
                    mu
                })
                .collect::<Vec<_>>()
        };
        let a = run(3);
        assert_eq!(a, run(3));
        let n = a.iter().flatten().count();
        assert!((70..130).contains(&n), "{n}");
        let actions: std::collections::BTreeSet<_> = a
            .iter()
            .flatten()
            .map(|m| m.ops[0].action.clone())
            .collect();
        assert!(actions.len() >= 4, "{actions:?}");
    }

    #[test]
    fn replay_refuses_ops_that_do_not_fit_the_bytes() {
        let (_, m) = mutate_once("field=health,action=set,value=3", 1);
        let mut other = robocat();
        other[4] ^= 0xff;
        assert!(
            apply_ops(&other, &m.ops)
                .unwrap_err()
                .contains("the log says")
        );
        assert!(
            apply_ops(&other[..2], &m.ops)
                .unwrap_err()
                .contains("not inside")
        );
    }

    /// Issue 31.5: a count of one is singular in the reasons a user reads.
    #[test]
    fn one_bit_and_one_byte_are_singular() {
        let op = |action: &str, bit: usize, bits: usize, old: &str| Op {
            action: action.into(),
            field: None,
            bit,
            bits,
            old: Some(old.into()),
            new: Some("1".into()),
            old_value: None,
            new_value: None,
        };
        let e = apply_ops(&[0u8; 4], &[op("flip", 40, 1, "0")]).unwrap_err();
        assert_eq!(
            e,
            "op 1 (flip): 1 bit at bit 40 is not inside the 4-byte datagram"
        );
        let e = apply_ops(&[0u8; 4], &[op("set", 0, 1, "01")]).unwrap_err();
        assert_eq!(e, "op 1 (set): old is not 1 binary digit");
        let e = apply_ops(&[0u8; 4], &[op("truncate", 24, 1, "")]).unwrap_err();
        assert!(
            e.starts_with("op 1 (truncate): cuts 1 bit at bit 24"),
            "{e}"
        );
        let map = FieldMap {
            fields: vec![Field {
                path: "alive".into(),
                bit: 0,
                bits: 1,
                range: None,
                wire: Some(1),
                role: Role::Value,
            }],
            total_bits: 8,
            ..FieldMap::default()
        };
        assert_eq!(
            why_not(Action::Flip(2), "alive", &map),
            "alive has 1 bit, fewer than the 2 to flip"
        );
        assert_eq!(
            why_apply_failed(Action::Truncate(Some(1)), None, &map),
            "the datagram is not longer than 1 byte"
        );
        assert_eq!(
            why_apply_failed(Action::Set(2), Some(&map.fields[0]), &map),
            "alive cannot hold the wire value 2 (1 bit from 0)"
        );
    }

    #[test]
    fn crafted_ops_cannot_wrap_past_the_bounds() {
        let op = |action: &str, bit: usize, bits: usize, old: &str, new: &str| Op {
            action: action.into(),
            field: None,
            bit,
            bits,
            old: (!old.is_empty()).then(|| old.into()),
            new: (!new.is_empty()).then(|| new.into()),
            old_value: None,
            new_value: None,
        };
        let bytes = [0u8; 4];
        // bit + bits wraps to 0: the window must be refused, not indexed.
        let e = apply_ops(
            &bytes,
            &[op("set", usize::MAX - 7, 8, "00000000", "11111111")],
        )
        .unwrap_err();
        assert!(e.starts_with("op 1 (set): 8 bits at bit"), "{e}");
        assert!(e.contains("not inside"), "{e}");
        let e = apply_ops(&bytes, &[op("flip", usize::MAX, 1, "0", "1")]).unwrap_err();
        assert!(e.contains("not inside"), "{e}");
        // A truncation whose bit + bits wraps to the datagram's length, and one that cuts
        // nothing: refused, never sent uncut.
        let wrap = usize::MAX - 7;
        let e = apply_ops(&bytes, &[op("truncate", wrap, 8 + 32, "", "")]).unwrap_err();
        assert!(e.starts_with("op 1 (truncate): cuts"), "{e}");
        let e = apply_ops(&bytes, &[op("truncate", 32, 0, "", "")]).unwrap_err();
        assert!(e.contains("cuts 0 bits"), "{e}");
        // The honest truncation still plays.
        assert_eq!(
            apply_ops(&bytes, &[op("truncate", 8, 24, "", "")]).unwrap(),
            [0]
        );
    }
}
