//! Reading the schema's TOML source with its spans: every value keeps where it was written, so
//! that every error names the file, line and column. Shared by the packet parser (`parse`) and
//! the `[batch]` parser (`batch`).

use crate::error::{SchemaError, SchemaWarning};
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

pub(crate) type Val<'i> = Spanned<DeValue<'i>>;

pub(crate) struct Parser<'t> {
    pub(crate) text: &'t str,
    pub(crate) file: &'t str,
    /// What loads but deserves a look, in the order found.
    pub(crate) warnings: std::cell::RefCell<Vec<SchemaWarning>>,
}

/// Line and column (both from 1) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
        + 1;
    (line, col)
}

impl<'t> Parser<'t> {
    /// Records a warning at `span`.
    pub(crate) fn warn(&self, span: &Range<usize>, message: impl Into<String>) {
        let (line, col) = line_col(self.text, span.start);
        self.warnings.borrow_mut().push(SchemaWarning {
            file: self.file.to_owned(),
            line,
            col,
            message: message.into(),
        });
    }

    /// Refuses `name` at `span` unless it is a plain identifier (SCHEMA.md, "Names"); `what`
    /// says what it names ("field name", "enum value name", ...).
    pub(crate) fn name(
        &self,
        span: &Range<usize>,
        name: &str,
        what: &str,
    ) -> Result<(), SchemaError> {
        crate::work::step();
        match crate::names::identifier(name) {
            None => Ok(()),
            Some(why) => Err(self.err(
                span,
                format!(
                    "{what} {} {why} ({})",
                    crate::names::shown(name),
                    crate::names::IDENTIFIER_RULE
                ),
            )),
        }
    }

    /// Refuses `count` entries of a list at `span` above [`MAX_COUNT`](crate::bounds::MAX_COUNT),
    /// before the list is read; `what` names the entries ("fields of struct P"): written only
    /// into the error (`format_args!`, no `String` on the way that loads).
    pub(crate) fn at_most(
        &self,
        span: &Range<usize>,
        count: usize,
        what: impl std::fmt::Display,
    ) -> Result<(), SchemaError> {
        use crate::bounds::MAX_COUNT;
        if count > MAX_COUNT {
            return Err(self.err(
                span,
                format!(
                    "{count} {what}, more than {MAX_COUNT} (SCHEMA.md, \"Bounds\": split it up)"
                ),
            ));
        }
        Ok(())
    }

    /// Refuses a body struct that holds an `end` field (`end_at`), at that field, naming where
    /// the body was chosen (`body`): "`end` inside the body of {of} (its body struct is named at
    /// line:col): {why}". A packet's and a yojimbo message's body are both followed by more bits.
    pub(crate) fn no_end_in_body(
        &self,
        end_at: Option<&Range<usize>>,
        body: &Range<usize>,
        of: &str,
        why: &str,
    ) -> Result<(), SchemaError> {
        let Some(at) = end_at else { return Ok(()) };
        let (l, c) = line_col(self.text, body.start);
        Err(self.err(
            at,
            format!("`end` inside the body of {of} (its body struct is named at {l}:{c}): {why}"),
        ))
    }

    pub(crate) fn err(&self, span: &Range<usize>, message: impl Into<String>) -> SchemaError {
        let (line, col) = line_col(self.text, span.start);
        SchemaError {
            file: self.file.to_owned(),
            line,
            col,
            message: message.into(),
        }
    }

    /// `v` as a table, else an error naming `what` (written only into the error).
    pub(crate) fn table<'a, 'i>(
        &self,
        v: &'a Val<'i>,
        what: impl std::fmt::Display,
    ) -> Result<&'a DeTable<'i>, SchemaError> {
        v.get_ref()
            .as_table()
            .ok_or_else(|| {
                self.err(
                    &v.span(),
                    format!("{what} must be a table (write it as `[name]` with keys below, or `{{ key = value }}`)"),
                )
            })
    }

    /// `v` as an array, else `why` at `v`.
    pub(crate) fn array<'a, 'i>(
        &self,
        v: &'a Val<'i>,
        why: &str,
    ) -> Result<&'a DeArray<'i>, SchemaError> {
        v.get_ref()
            .as_array()
            .ok_or_else(|| self.err(&v.span(), why))
    }

    /// The `fields` array of the struct `name` (at `name_span`) that `def` defines (`what`:
    /// "struct" or "batch struct"; `example`: a field type for the hint): a table of `fields`
    /// and an optional `doc`, holding at most [`MAX_COUNT`](crate::bounds::MAX_COUNT) fields.
    pub(crate) fn struct_fields<'a, 'i>(
        &self,
        name: &str,
        name_span: &Range<usize>,
        def: &'a Val<'i>,
        what: &str,
        example: &str,
    ) -> Result<&'a DeArray<'i>, SchemaError> {
        let t = self.table(def, format_args!("{what} {name}"))?;
        for (k, _) in t.iter() {
            if k.get_ref() != "fields" && k.get_ref() != "doc" {
                return Err(self.err(
                    &k.span(),
                    format!(
                        "unknown key \"{}\" in {what} {name} (a struct has `fields = [...]` and an optional `doc`)",
                        k.get_ref()
                    ),
                ));
            }
        }
        let fields = get(t, "fields").ok_or_else(|| {
            self.err(
                name_span,
                format!(
                    "{what} {name} has no fields (add `fields = [ {{ name = \"x\", type = \"{example}\" }} ]`)"
                ),
            )
        })?;
        let list = self.array(
            fields,
            "`fields` must be an array of tables (`[{ name = ..., type = ... }, ...]`)",
        )?;
        self.at_most(
            &fields.span(),
            list.len(),
            format_args!("fields in {what} {name}"),
        )?;
        Ok(list)
    }

    pub(crate) fn string(&self, v: &Val<'_>, what: &str) -> Result<Spanned<String>, SchemaError> {
        let s = self.str(v, what)?;
        Ok(Spanned::new(s.span(), (*s.get_ref()).to_owned()))
    }

    /// [`Parser::string`] borrowed from the document: for what the loader only reads (a field's
    /// type name, name and guard while it is resolved), no copy.
    pub(crate) fn str<'a>(
        &self,
        v: &'a Val<'_>,
        what: &str,
    ) -> Result<Spanned<&'a str>, SchemaError> {
        match v.get_ref().as_str() {
            Some(s) => Ok(Spanned::new(v.span(), s)),
            None => Err(self.err(
                &v.span(),
                format!("{what} must be a string (write it in quotes)"),
            )),
        }
    }

    pub(crate) fn int(&self, v: &Val<'_>, what: &str) -> Result<i64, SchemaError> {
        match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| {
                self.err(
                    &v.span(),
                    format!("{what} {i} does not fit a 64-bit integer (use a smaller number)"),
                )
            }),
            _ => Err(self.err(
                &v.span(),
                format!("{what} must be an integer (write it without quotes or decimals)"),
            )),
        }
    }

    pub(crate) fn count(&self, v: &Val<'_>, what: &str) -> Result<usize, SchemaError> {
        let n = self.int(v, what)?;
        usize::try_from(n)
            .map_err(|_| self.err(&v.span(), format!("{what} {n} is negative (use 0 or more)")))
    }

    /// A 128-bit integer: a TOML integer, or a string of decimal digits or `0x` hex (with an
    /// optional `-`) for values beyond 64 bits.
    pub(crate) fn int128(&self, v: &Val<'_>, what: &str) -> Result<i128, SchemaError> {
        match v.get_ref() {
            DeValue::String(text) => parse_i128(text).ok_or_else(|| {
                self.err(
                    &v.span(),
                    format!(
                        "{what} {text:?} is not a 128-bit integer (write decimal digits or 0x hex)"
                    ),
                )
            }),
            _ => Ok(i128::from(self.int(v, what)?)),
        }
    }

    /// A float as the nearest `f32` to the decimal written (not to its nearest `f64`).
    pub(crate) fn float(&self, v: &Val<'_>, what: &str) -> Result<f32, SchemaError> {
        let parsed = match v.get_ref() {
            DeValue::Float(f) => f.as_str().parse::<f32>().ok(),
            DeValue::Integer(_) => self.int(v, what).ok().map(|i| i as f32),
            _ => None,
        };
        parsed.ok_or_else(|| {
            self.err(
                &v.span(),
                format!("{what} must be a number (write it without quotes: `0.01`, `-512.0`)"),
            )
        })
    }
}

pub(crate) fn get<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a Val<'i>> {
    t.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

/// The error for a struct that contains itself: `stack` holds the structs being resolved,
/// outermost first, `i` the one met again, `from` the field that refers to it. `what` names the
/// kind of struct ("struct", "batch struct").
pub(crate) fn cycle_error<T>(
    p: &Parser<'_>,
    raw: &[(Spanned<String>, T)],
    stack: &[usize],
    i: usize,
    from: Option<&Range<usize>>,
    what: &str,
) -> SchemaError {
    let start = stack.iter().position(|&s| s == i).unwrap_or(0);
    let mut names: Vec<&str> = stack[start..]
        .iter()
        .map(|&s| raw[s].0.get_ref().as_str())
        .collect();
    names.push(raw[i].0.get_ref());
    let span = from.cloned().unwrap_or_else(|| raw[i].0.span());
    p.err(
        &span,
        format!(
            "{what} reference cycle {} (a struct cannot contain itself: remove one reference)",
            names.join(" -> ")
        ),
    )
}

/// The error for struct `i`, met `stack.len()` levels deep (`stack`: the structs being
/// resolved, outermost first; `from`: the field that refers to it).
pub(crate) fn too_deep<T>(
    p: &Parser<'_>,
    raw: &[(Spanned<String>, T)],
    stack: &[usize],
    i: usize,
    from: Option<&Range<usize>>,
    what: &str,
) -> SchemaError {
    let outer = stack.first().map_or("", |&s| raw[s].0.get_ref().as_str());
    let span = from.cloned().unwrap_or_else(|| raw[i].0.span());
    p.err(
        &span,
        format!(
            "{what} {} is nested {} levels deep in {outer}, more than {} (flatten some levels)",
            raw[i].0.get_ref(),
            stack.len() + 1,
            stack.len()
        ),
    )
}

/// The error for a second field named `name` (at `span`); the first is at `first`.
pub(crate) fn duplicate_name(
    p: &Parser<'_>,
    first: &Range<usize>,
    name: &str,
    span: &Range<usize>,
) -> SchemaError {
    let (l, c) = line_col(p.text, first.start);
    p.err(
        span,
        format!("duplicate field name \"{name}\", first at {l}:{c} (rename one of them)"),
    )
}

/// A decimal or `0x` hex integer, with an optional `-`, as an `i128`: how the schema language
/// and the vectors write 128-bit values. `None` for anything else or a value out of range.
pub fn parse_i128(text: &str) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.is_empty() && !hex.starts_with(['+', '-']) => {
            u128::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<u128>().ok()?
        }
        None => return None,
    };
    if negative {
        0i128.checked_sub_unsigned(magnitude)
    } else {
        i128::try_from(magnitude).ok()
    }
}

/// A decimal or `0x` hex integer as a `u128`; `None` for anything else.
pub fn parse_u128(text: &str) -> Option<u128> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && !hex.starts_with(['+', '-']) => {
            u128::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}
