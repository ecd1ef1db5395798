//! Mutation rules: what a `--mutate` spec or a `[[mutate]]` table asks for, read and checked
//! ([`Rule::from_spec`]); `--fuzz` ([`Fuzz`]). Applying them is [`super::mutate`]: a datagram
//! that is almost right, with its CRC re-signed so that it reaches the server's parser (or
//! deliberately left stale).
//!
//! Actions (a rule's `action`):
//!
//! | action | what it writes |
//! |---|---|
//! | `set` (`value = V`) | the wire integer `V` raw into the field's bits: `V - min` for a ranged field, in range or not, as long as it fits the field's width |
//! | `out_of_range` | a value above the field's range that still fits its width (`health` is 0..=100 in 7 bits: 101..=127), drawn from the seed |
//! | `flip` (`bits = N`, default 1) | N distinct bits of the field inverted |
//! | `overclaim` | a length or count (`name.len`, `mice.len`) set to the smallest claim whose elements need more bits than remain after it (the largest the range allows, if that is smaller) |
//! | `truncate` (`value = BYTES`) | the datagram cut to BYTES bytes; with a field and no value, cut at the field's first byte; with neither, at a length drawn from the seed |
//! | `desync` | one bit of a check marker flipped: the reader finds another hash and reports check_mismatch |
//!
//! `crc = "resign"` (the default) computes the CRC again with the protocol id
//! (`SessionDissector::seal`); `crc = "stale"` leaves the old one, so the reader rejects the
//! datagram at the CRC.

use super::Directions;
use super::spec::Spec;

/// What a rule does to its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Write this wire integer.
    Set(i128),
    /// Write a value above the range that fits the width.
    OutOfRange,
    /// Invert this many distinct bits.
    Flip(u32),
    /// Claim more elements than remain.
    Overclaim,
    /// Cut the datagram (to this many bytes).
    Truncate(Option<usize>),
    /// Flip a bit of a check marker.
    Desync,
}

impl Action {
    /// Its name, as a rule's `action` says it.
    pub fn name(self) -> &'static str {
        match self {
            Action::Set(_) => "set",
            Action::OutOfRange => "out_of_range",
            Action::Flip(_) => "flip",
            Action::Overclaim => "overclaim",
            Action::Truncate(_) => "truncate",
            Action::Desync => "desync",
        }
    }
}

/// What happens to the CRC after a mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crc {
    /// Computed again with the protocol id: the datagram reaches the parser.
    Resign,
    /// Left as it was: the reader rejects the datagram at the CRC.
    Stale,
}

/// One mutation rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its name in the logs.
    pub name: String,
    /// Only datagrams of this packet type.
    pub packet: Option<String>,
    /// Only datagrams of these directions.
    pub directions: Directions,
    /// Probability per matching datagram.
    pub p: f64,
    /// The field's path (`*` wildcards); several matches: one drawn from the seed.
    pub field: Option<String>,
    /// What to do.
    pub action: Action,
    /// The CRC afterwards.
    pub crc: Crc,
}

const RULE_KEYS: &str =
    "name, packet, dir (or direction), p (or probability), field, action, value, bits, crc";

impl Rule {
    /// A rule from its spec (`--mutate` or a `[[mutate]]` table); `index` names unnamed rules.
    ///
    /// # Errors
    /// A missing or unknown action, a missing field or value, an unknown key, a bad value.
    pub fn from_spec(mut spec: Spec, index: usize) -> Result<Self, String> {
        let name = spec
            .string(&["name"])?
            .unwrap_or_else(|| format!("rule{index}"));
        let packet = spec.string(&["packet", "type"])?;
        let directions = spec
            .direction(&["dir", "direction"])?
            .unwrap_or(Directions::ToServer);
        let p = spec.probability(&["p", "probability"])?.unwrap_or(1.0);
        let field = spec.string(&["field"])?;
        let value = spec.integer(&["value"])?;
        let bits = spec.integer(&["bits"])?;
        let crc = match spec.string(&["crc"])?.as_deref() {
            None | Some("resign") => Crc::Resign,
            Some("stale") => Crc::Stale,
            Some(other) => {
                return Err(format!(
                    "{}: crc must be resign or stale (found {other:?})",
                    spec.origin()
                ));
            }
        };
        let origin = spec.origin().to_owned();
        let need_field = |what: &str| {
            if field.is_none() {
                Err(format!("{origin}: action {what} needs field=PATH"))
            } else {
                Ok(())
            }
        };
        let action = match spec.string(&["action"])?.as_deref() {
            Some("set") => {
                need_field("set")?;
                Action::Set(value.ok_or_else(|| format!("{origin}: action set needs value=V"))?)
            }
            Some("out_of_range") => {
                need_field("out_of_range")?;
                Action::OutOfRange
            }
            Some("flip") => {
                need_field("flip")?;
                let n = bits.unwrap_or(1);
                let n = u32::try_from(n)
                    .ok()
                    .filter(|&n| (1..=64).contains(&n))
                    .ok_or_else(|| format!("{origin}: bits must be 1..=64 (found {n})"))?;
                Action::Flip(n)
            }
            Some("overclaim") => Action::Overclaim,
            Some("truncate") => Action::Truncate(
                value
                    .map(|v| {
                        usize::try_from(v).map_err(|_| {
                            format!("{origin}: truncate value must be a byte count >= 0")
                        })
                    })
                    .transpose()?,
            ),
            Some("desync") => Action::Desync,
            Some(other) => {
                return Err(format!(
                    "{origin}: unknown action {other:?} (known: set, out_of_range, flip, overclaim, truncate, desync)"
                ));
            }
            None => {
                return Err(format!(
                    "{origin}: needs action=ACTION (set, out_of_range, flip, overclaim, truncate, desync)"
                ));
            }
        };
        spec.finish(RULE_KEYS)?;
        Ok(Rule {
            name,
            packet,
            directions,
            p,
            field,
            action,
            crc,
        })
    }
}

/// `--fuzz`: mutations drawn from each datagram's own fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fuzz {
    /// Probability per datagram.
    pub rate: f64,
    /// Which directions.
    pub directions: Directions,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Rule {
        Rule::from_spec(Spec::from_cli("--mutate", text, None).unwrap(), 1).unwrap()
    }

    #[test]
    fn rule_specs_are_checked() {
        let e =
            |t: &str| Rule::from_spec(Spec::from_cli("--mutate", t, None).unwrap(), 1).unwrap_err();
        assert!(e("field=a").contains("needs action"));
        assert!(e("action=set,field=a").contains("needs value"));
        assert!(e("action=flip").contains("needs field"));
        assert!(e("action=explode").contains("unknown action"));
        assert!(e("action=desync,crc=maybe").contains("crc must be"));
        assert!(e("action=desync,colour=1").contains("unknown key"));
        let r = rule("name=x,packet=PlayerInput,p=1%,field=aim.x,action=out_of_range,dir=both");
        assert_eq!(
            (r.p, r.directions, r.action),
            (0.01, Directions::Both, Action::OutOfRange)
        );
    }
}
