//! `--budget FILE`: limits a profile must stay within, for CI (`profile` and `check` exit 1
//! listing each thing over budget and by how much).
//!
//! ```toml
//! # The largest UDP payload of any datagram a dissector reads, in bytes.
//! largest_datagram = 1200
//!
//! # Bytes per second per direction: the busiest second, IP and UDP headers included.
//! [bytes_per_second]
//! to_server = 20000
//! from_server = 60000
//!
//! # Bits per occurrence (the mean over the capture) of packet types, message types and
//! # field paths, named as the profile's table names them.
//! [packet_type]
//! SceneUpdate = 600
//! [message_type]
//! MoveRigidBody = 300
//! [field]
//! "SceneUpdate.objects[].position.x" = 17
//! ```

use super::Profile;
use anyhow::{Result, anyhow};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The limits of a budget file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Bytes of UDP payload of the largest datagram.
    pub largest_datagram: Option<u64>,
    /// Bytes in the busiest second, per direction.
    #[serde(default)]
    pub bytes_per_second: Directions,
    /// Mean bits per packet of each packet type.
    #[serde(default)]
    pub packet_type: BTreeMap<String, u64>,
    /// Mean bits per message of each message type (header and body).
    #[serde(default)]
    pub message_type: BTreeMap<String, u64>,
    /// Mean bits per occurrence of each field path (`Type.path`).
    #[serde(default)]
    pub field: BTreeMap<String, u64>,
}

/// Bytes per second to and from the server ports.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Directions {
    /// To the server ports.
    pub to_server: Option<u64>,
    /// From the server ports.
    pub from_server: Option<u64>,
}

/// One thing over budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Over {
    /// What: `field SceneUpdate.objects[].position.x`.
    pub what: String,
    /// What the capture has.
    pub value: f64,
    /// The budget.
    pub budget: u64,
    /// The unit (`bits per occurrence`, `bytes`, `bytes per second`).
    pub unit: &'static str,
}

impl std::fmt::Display for Over {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let over = self.value - self.budget as f64;
        let share = if self.budget == 0 {
            String::new()
        } else {
            format!(", {:.1}%", over / self.budget as f64 * 100.0)
        };
        write!(
            f,
            "over budget: {}: {:.1} {}, budget {} (over by {over:.1}{share})",
            self.what, self.value, self.unit, self.budget
        )
    }
}

/// What a budget says of a profile: what is over, and the names it gives that the capture
/// does not have (likely a typo, or traffic the capture lacks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Each thing over its budget.
    pub over: Vec<Over>,
    /// Budgeted names not in the profile.
    pub missing: Vec<String>,
}

impl Budget {
    /// Reads a budget file.
    ///
    /// # Errors
    /// The file cannot be read, or is not a budget (the message names the file).
    pub fn load(path: &Path) -> Result<Budget> {
        let text = crate::files::read_text(path)?;
        Budget::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))
    }

    /// Parses a budget's TOML text.
    ///
    /// # Errors
    /// The text is not TOML, or has keys a budget does not.
    pub fn parse(text: &str) -> Result<Budget> {
        toml::from_str(text).map_err(|e| {
            // Where: the line and column the TOML error's span starts at.
            let at = e
                .span()
                .and_then(|span| text.get(..span.start))
                .map(|before| {
                    let line = before.matches('\n').count() + 1;
                    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!("line {line}, column {column}: ")
                })
                .unwrap_or_default();
            anyhow!("not a budget: {at}{}", e.message())
        })
    }

    /// Checks `p` against the budget.
    pub fn check(&self, p: &Profile) -> Verdict {
        let mut v = Verdict::default();
        if let (Some(budget), Some(l)) = (self.largest_datagram, p.largest_datagram)
            && l.bytes > budget
        {
            v.over.push(Over {
                what: format!("largest datagram (frame {})", l.frame),
                value: l.bytes as f64,
                budget,
                unit: "bytes",
            });
        }
        for (to, budget) in [
            (true, self.bytes_per_second.to_server),
            (false, self.bytes_per_second.from_server),
        ] {
            let Some(budget) = budget else { continue };
            let peak = p
                .seconds
                .iter()
                .map(|s| if to { s.to_server } else { s.from_server })
                .max()
                .unwrap_or(0);
            if peak / 8 > budget {
                v.over.push(Over {
                    what: format!("{} server, busiest second", if to { "to" } else { "from" }),
                    value: (peak / 8) as f64,
                    budget,
                    unit: "bytes per second",
                });
            }
        }
        let kinds = [
            ("packet type", &self.packet_type, &p.packet_types),
            ("message type", &self.message_type, &p.message_types),
        ];
        for (kind, budgets, rows) in kinds {
            for (name, &budget) in budgets {
                let row = rows.iter().find(|r| &r.name == name);
                check_mean(&mut v, kind, name, budget, row.map(|r| r.bits_per));
            }
        }
        for (name, &budget) in &self.field {
            let row = p.fields.iter().find(|r| &r.name == name);
            check_mean(
                &mut v,
                "field",
                name,
                budget,
                row.map(|r| r.totals.bits_per),
            );
        }
        v
    }
}

fn check_mean(v: &mut Verdict, kind: &str, name: &str, budget: u64, mean: Option<f64>) {
    match mean {
        None => v.missing.push(format!("{kind} {name}")),
        Some(mean) if mean > budget as f64 => v.over.push(Over {
            what: format!("{kind} {name}"),
            value: mean,
            budget,
            unit: "bits per occurrence",
        }),
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_line_and_column() {
        let e = Budget::parse("largest_datagram = 'x'")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not a budget: line 1, column 20: "), "{e}");
        let e = Budget::parse("largest_datagram = 1200\n\n[field]\n\"a.b\" = \"16\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4, column 9: "), "{e}");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        assert!(Budget::parse("largest = 3").is_err());
        assert!(Budget::parse("[field]\nx = \"big\"").is_err());
        assert!(Budget::parse("[bytes_per_second]\nup = 1").is_err());
        let b = Budget::parse("largest_datagram = 9\n[field]\n\"A.b\" = 3").unwrap();
        assert_eq!(b.largest_datagram, Some(9));
        assert_eq!(b.field.get("A.b"), Some(&3));
    }

    #[test]
    fn the_message_says_by_how_much() {
        let o = Over {
            what: "field A.b".into(),
            value: 17.0,
            budget: 16,
            unit: "bits per occurrence",
        };
        assert_eq!(
            o.to_string(),
            "over budget: field A.b: 17.0 bits per occurrence, budget 16 (over by 1.0, 6.2%)"
        );
    }
}
