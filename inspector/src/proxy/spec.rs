//! The small language of impairments and mutation rules: `key=value` lists on the command line
//! (`--drop p=5%,dir=to_server`, `--mutate packet=PlayerInput,field=aim.x,action=out_of_range`)
//! and the same keys as TOML tables in a rules file (`--rules FILE`):
//!
//! ```toml
//! seed = 7                                   # optional; --seed wins
//! [impair]
//! drop = { p = "5%", direction = "to_server" }
//! delay = { ms = 40, jitter_ms = 10 }        # p defaults to 1, direction to both
//! duplicate = { p = 0.01 }
//! reorder = { p = 0.02, hold_ms = 50 }
//!
//! [[mutate]]
//! name = "aim out of range"
//! packet = "PlayerInput"
//! direction = "to_server"                    # the default for rules
//! p = "1%"
//! field = "aim.x"
//! action = "out_of_range"
//! crc = "resign"                             # or "stale"
//! ```
//!
//! Waits are bounded when read: `ms`, `jitter_ms` and `hold_ms` at most 3600000 (one hour,
//! [`super::impair::MAX_WAIT_MS`]); larger values are refused with the key and the maximum.

use super::Directions;
use std::path::Path;

/// One table of keys, from the command line or a rules file, with where it came from (for
/// messages).
#[derive(Debug, Clone)]
pub struct Spec {
    origin: String,
    entries: Vec<(String, toml::Value)>,
}

impl Spec {
    /// Parses `key=value,key=value`; a lone value without `=` is the value of `bare_key`
    /// (`--drop 5%`). Values are integers, floats or strings (`5%` stays a string).
    ///
    /// # Errors
    /// An empty key or value, with `origin` in the message.
    pub fn from_cli(origin: &str, text: &str, bare_key: Option<&str>) -> Result<Self, String> {
        let mut entries = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = match (part.split_once('='), bare_key) {
                (Some((k, v)), _) => (k.trim(), v.trim()),
                (None, Some(bare)) if entries.is_empty() => (bare, part),
                (None, _) => {
                    return Err(format!(
                        "{origin} {text:?}: expected KEY=VALUE, found {part:?}"
                    ));
                }
            };
            if key.is_empty() || value.is_empty() {
                return Err(format!(
                    "{origin} {text:?}: {part:?} has an empty key or value"
                ));
            }
            let value = if let Ok(i) = value.parse::<i64>() {
                toml::Value::Integer(i)
            } else if let Ok(f) = value.parse::<f64>() {
                toml::Value::Float(f)
            } else {
                toml::Value::String(value.to_owned())
            };
            entries.push((key.to_owned(), value));
        }
        Ok(Spec {
            origin: format!("{origin} {text:?}"),
            entries,
        })
    }

    /// The keys of a TOML table.
    pub fn from_table(origin: String, table: &toml::Table) -> Self {
        Spec {
            origin,
            entries: table.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        }
    }

    /// Where this spec came from, for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    fn take(&mut self, keys: &[&str]) -> Option<toml::Value> {
        let i = self
            .entries
            .iter()
            .position(|(k, _)| keys.contains(&k.as_str()))?;
        Some(self.entries.remove(i).1)
    }

    fn error(&self, key: &str, what: &str) -> String {
        format!("{}: {key} {what}", self.origin)
    }

    /// A probability: a number in 0..=1 or a percentage string (`"5%"`), under any of `keys`.
    ///
    /// # Errors
    /// Anything else.
    pub fn probability(&mut self, keys: &[&str]) -> Result<Option<f64>, String> {
        let Some(v) = self.take(keys) else {
            return Ok(None);
        };
        let p = match &v {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            toml::Value::String(s) => s
                .strip_suffix('%')
                .and_then(|n| n.trim().parse::<f64>().ok())
                .map(|n| n / 100.0),
            _ => None,
        };
        match p {
            Some(p) if (0.0..=1.0).contains(&p) => Ok(Some(p)),
            _ => Err(self.error(
                keys[0],
                &format!(
                    "must be a probability: 0..1 or a percentage like \"5%\" (found {})",
                    show(&v)
                ),
            )),
        }
    }

    /// A direction: `to_server`, `to_client` or `both`.
    ///
    /// # Errors
    /// Any other value.
    pub fn direction(&mut self, keys: &[&str]) -> Result<Option<Directions>, String> {
        let Some(v) = self.take(keys) else {
            return Ok(None);
        };
        match v.as_str().and_then(Directions::parse) {
            Some(d) => Ok(Some(d)),
            None => Err(self.error(
                keys[0],
                &format!("must be to_server, to_client or both (found {})", show(&v)),
            )),
        }
    }

    /// A non-negative number (milliseconds and the like).
    ///
    /// # Errors
    /// A negative or non-numeric value.
    pub fn number(&mut self, keys: &[&str]) -> Result<Option<f64>, String> {
        let Some(v) = self.take(keys) else {
            return Ok(None);
        };
        match v {
            toml::Value::Float(f) if f >= 0.0 && f.is_finite() => Ok(Some(f)),
            toml::Value::Integer(i) if i >= 0 => Ok(Some(i as f64)),
            other => Err(self.error(
                keys[0],
                &format!("must be a number >= 0 (found {})", show(&other)),
            )),
        }
    }

    /// A non-negative number no larger than `max` (`max_text` says it in words for the
    /// message: `"3600000 (one hour)"`).
    ///
    /// # Errors
    /// A negative, non-numeric or too large value.
    pub fn number_at_most(
        &mut self,
        keys: &[&str],
        max: f64,
        max_text: &str,
    ) -> Result<Option<f64>, String> {
        match self.number(keys)? {
            Some(n) if n > max => Err(self.error(
                keys[0],
                &format!("must be at most {max_text} (found {})", number_text(n)),
            )),
            n => Ok(n),
        }
    }

    /// An integer (any sign: a value to write may lie outside the field's range).
    ///
    /// # Errors
    /// A non-integer value.
    pub fn integer(&mut self, keys: &[&str]) -> Result<Option<i128>, String> {
        let Some(v) = self.take(keys) else {
            return Ok(None);
        };
        match &v {
            toml::Value::Integer(i) => Ok(Some(i128::from(*i))),
            toml::Value::String(s) => parse_int(s).map(Some).ok_or_else(|| {
                self.error(keys[0], &format!("must be an integer (found {})", show(&v)))
            }),
            _ => Err(self.error(keys[0], &format!("must be an integer (found {})", show(&v)))),
        }
    }

    /// A string.
    ///
    /// # Errors
    /// A value of another type.
    pub fn string(&mut self, keys: &[&str]) -> Result<Option<String>, String> {
        let Some(v) = self.take(keys) else {
            return Ok(None);
        };
        match v {
            toml::Value::String(s) => Ok(Some(s)),
            toml::Value::Integer(i) => Ok(Some(i.to_string())),
            other => Err(self.error(
                keys[0],
                &format!("must be a string (found {})", show(&other)),
            )),
        }
    }

    /// Fails on keys nobody took.
    ///
    /// # Errors
    /// The first unknown key, with the known ones.
    pub fn finish(self, known: &str) -> Result<(), String> {
        match self.entries.first() {
            None => Ok(()),
            Some((k, _)) => Err(format!(
                "{}: unknown key {k:?} (known: {known})",
                self.origin
            )),
        }
    }
}

/// A value as a message shows it.
fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => number_text(*f),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) => "an array".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

/// A number as a message shows it: `1e300`, not three hundred digits.
pub fn number_text(f: f64) -> String {
    if f.is_finite() && f.abs() < 1e15 {
        f.to_string()
    } else {
        format!("{f:e}")
    }
}

/// An integer in decimal or `0x` hex, either sign.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => i128::from_str_radix(h, 16).ok()?,
        None => digits.parse::<i128>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// A rules file: its seed, its `[impair]` kinds and its `[[mutate]]` rules, as specs.
#[derive(Debug, Default)]
pub struct RulesFile {
    /// `seed = N`, if given.
    pub seed: Option<u64>,
    /// `(kind, spec)` of each `[impair]` entry: drop, delay, duplicate, reorder.
    pub impair: Vec<(String, Spec)>,
    /// Each `[[mutate]]` table.
    pub mutate: Vec<Spec>,
}

impl RulesFile {
    /// Reads and splits a rules file.
    ///
    /// # Errors
    /// An unreadable file, TOML syntax errors (with line and column), unknown top-level keys.
    pub fn load(path: &Path) -> Result<Self, String> {
        let name = path.display().to_string();
        let text = crate::files::read_text(path).map_err(|e| format!("{e:#}"))?;
        Self::parse(&name, &text)
    }

    /// Splits the text of a rules file.
    ///
    /// # Errors
    /// As [`RulesFile::load`].
    pub fn parse(name: &str, text: &str) -> Result<Self, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start].matches('\n').count() + 1;
                    let col = s.start - text[..s.start].rfind('\n').map_or(0, |i| i + 1) + 1;
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            format!("{name}{at}: {}", e.message())
        })?;
        let mut out = RulesFile::default();
        for (key, value) in &table {
            match (key.as_str(), value) {
                ("seed", toml::Value::Integer(s)) if *s >= 0 => out.seed = Some(*s as u64),
                ("seed", other) => {
                    return Err(format!(
                        "{name}: seed must be an integer >= 0 (found {})",
                        show(other)
                    ));
                }
                ("impair", toml::Value::Table(t)) => {
                    for (kind, v) in t {
                        let toml::Value::Table(inner) = v else {
                            return Err(format!(
                                "{name}: [impair] {kind} must be a table like {{ p = 0.05 }}"
                            ));
                        };
                        out.impair.push((
                            kind.clone(),
                            Spec::from_table(format!("{name}: [impair] {kind}"), inner),
                        ));
                    }
                }
                ("mutate", toml::Value::Array(rules)) => {
                    for (i, r) in rules.iter().enumerate() {
                        let toml::Value::Table(t) = r else {
                            return Err(format!("{name}: [[mutate]] #{} must be a table", i + 1));
                        };
                        out.mutate.push(Spec::from_table(
                            format!("{name}: [[mutate]] #{}", i + 1),
                            t,
                        ));
                    }
                }
                (other, _) => {
                    return Err(format!(
                        "{name}: unknown key {other:?} (known: seed, [impair], [[mutate]])"
                    ));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_specs_parse_like_tables() {
        let mut s = Spec::from_cli("--drop", "5%", Some("p")).unwrap();
        assert_eq!(s.probability(&["p"]).unwrap(), Some(0.05));
        s.finish("p").unwrap();
        let mut s = Spec::from_cli("--drop", "p=0.25, dir=to_client", Some("p")).unwrap();
        assert_eq!(s.probability(&["p", "probability"]).unwrap(), Some(0.25));
        assert_eq!(
            s.direction(&["dir", "direction"]).unwrap(),
            Some(Directions::ToClient)
        );
        assert!(s.finish("p, dir").is_ok());
        let mut s = Spec::from_cli("--drop", "p=150%", None).unwrap();
        assert!(s.probability(&["p"]).unwrap_err().contains("probability"));
        let s = Spec::from_cli("--drop", "p=1,colour=red", None).unwrap();
        let mut s2 = s.clone();
        s2.probability(&["p"]).unwrap();
        assert!(
            s2.finish("p")
                .unwrap_err()
                .contains("unknown key \"colour\"")
        );
        assert!(Spec::from_cli("--mutate", "a=1,b", None).is_err());
        let mut s = Spec::from_cli("--mutate", "value=-0x10", None).unwrap();
        assert_eq!(s.integer(&["value"]).unwrap(), Some(-16));
    }

    #[test]
    fn rules_files_split_and_report_positions() {
        let r = RulesFile::parse(
            "r.toml",
            "seed = 3\n[impair]\ndrop = { p = \"5%\" }\n[[mutate]]\nfield = \"aim.x\"\n",
        )
        .unwrap();
        assert_eq!(r.seed, Some(3));
        assert_eq!(r.impair.len(), 1);
        assert_eq!(r.mutate.len(), 1);
        let e = RulesFile::parse("r.toml", "seed = 3\nnope = = 1\n").unwrap_err();
        assert!(e.starts_with("r.toml:2:"), "{e}");
        let e = RulesFile::parse("r.toml", "sede = 3\n").unwrap_err();
        assert!(e.contains("unknown key \"sede\""), "{e}");
    }
}
