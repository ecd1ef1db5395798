//! The loader of a schema's `[batch]` section: TOML -> a checked [`BatchSchema`], every error
//! placed at a line and column.

use super::schema::{BField, BKind, BStruct, BatchSchema, Check, MessageDef, Prim, intern};
use crate::bounds::{Cost, MAX_DEPTH};
use crate::error::SchemaError;
use crate::source::{Parser, Val, cycle_error, duplicate_name, get, line_col, too_deep};
use bitlens_batch::message::{MAX_MTU, MESSAGE_HEADER_LEN, max_body};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use toml::Spanned;
use toml::de::DeValue;

const BATCH_KEYS: &[&str] = &["messages", "stages", "struct", "doc"];

/// The built-in type names of a field in a `[batch.struct.NAME]` (SCHEMA.md, "Message batches"): what
/// the loader accepts and refuses as a batch struct's name. The fixed-width ones among them
/// are those [`is_fixed_width`](super::is_fixed_width) names.
pub const BATCH_TYPES: &[&str] = &[
    "bool",
    "u8",
    "u16",
    "u32",
    "u64",
    "i8",
    "i16",
    "i32",
    "i64",
    "f32",
    "f64",
    "packed_u32",
    "packed_u64",
    "packed_i32",
    "packed_i64",
    "string",
    "bytes",
    "pod",
    "array",
];

const COMMON_KEYS: &[&str] = &["name", "type", "if", "unless", "doc"];

fn keys_of(ty: &str) -> &'static [&'static str] {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "packed_u32" | "packed_u64" => &["min", "max"],
        "i8" | "i16" | "i32" | "i64" | "packed_i32" | "packed_i64" => &["abs_max"],
        "string" => &["max_len"],
        "bytes" => &["len", "max_len"],
        "pod" => &["element", "len", "min", "max", "abs_max"],
        "array" => &["max_len", "element"],
        _ => &[],
    }
}

/// The largest `len` / `max_len` a batch field may declare: a message body never exceeds it.
const MAX_LEN: usize = max_body(MAX_MTU);

/// The most trace entries a batch struct may record per body byte it reads: array elements
/// repeat their cost, so this bounds the work a hostile count can buy per byte.
const MAX_ENTRIES_PER_BYTE: f64 = 64.0;

/// The most trace entries a batch struct may record beyond what its bytes pay for (scopes, and
/// fields that take no bytes): what a message's 4-byte header pays for at
/// [`MAX_ENTRIES_PER_BYTE`]. A datagram holds a message per 4 bytes, so the packet structs'
/// 4096 per datagram would let a 1,200-byte batch of empty messages record 1.2 million entries.
const MAX_FIXED_ENTRIES: u64 = MAX_ENTRIES_PER_BYTE as u64 * MESSAGE_HEADER_LEN as u64;

struct Ctx<'a, 't> {
    p: &'a Parser<'t>,
    ids: HashMap<String, usize>,
    /// Raw struct definitions: name, span, fields.
    raw: Vec<(Spanned<String>, &'a toml::de::DeArray<'a>)>,
    structs: Vec<Option<BStruct>>,
    active: Vec<usize>,
}

/// Parses and checks a `[batch]` section.
pub(crate) fn parse<'a>(p: &Parser<'_>, v: &'a Val<'a>) -> Result<BatchSchema, SchemaError> {
    let t = p.table(v, "[batch]")?;
    for (k, _) in t.iter() {
        if !BATCH_KEYS.contains(&k.get_ref().as_ref()) {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown key \"{}\" in [batch] (expected messages, stages, [batch.struct.NAME] or doc)",
                    k.get_ref()
                ),
            ));
        }
    }
    let mut cx = Ctx {
        p,
        ids: HashMap::new(),
        raw: Vec::new(),
        structs: Vec::new(),
        active: Vec::new(),
    };
    if let Some(section) = get(t, "struct") {
        cx.collect(section)?;
    }
    cx.structs = vec![None; cx.raw.len()];
    for i in 0..cx.raw.len() {
        cx.resolve(i, None)?;
    }
    let (messages, by_type) = messages(p, v, t, &cx.ids)?;
    let stages = stages(p, t)?;
    let structs = cx.structs.into_iter().flatten().collect();
    Ok(BatchSchema {
        messages,
        by_type,
        structs,
        stages,
    })
}

/// The `messages` list of a `[batch]` section `t` (at `v`): each type's definition, and by
/// type number its index among them.
fn messages(
    p: &Parser<'_>,
    v: &Val<'_>,
    t: &toml::de::DeTable<'_>,
    ids: &HashMap<String, usize>,
) -> Result<(Vec<MessageDef>, Vec<Option<usize>>), SchemaError> {
    let messages_v = get(t, "messages").ok_or_else(|| {
        p.err(
            &v.span(),
            "[batch] has no `messages` (add `messages = [{ type = 1, name = \"Chat\" }]`)",
        )
    })?;
    let list = p.array(messages_v, "`messages` must be an array of message entries (write `messages = [{ type = 1, name = \"Chat\" }]`)")?;
    if list.len() > 256 {
        return Err(p.err(
            &messages_v.span(),
            format!(
                "`messages` lists {} entries, more than the 256 message types a header's byte holds (list each type once)",
                list.len()
            ),
        ));
    }
    let mut messages: Vec<MessageDef> = Vec::new();
    let mut by_type: Vec<Option<usize>> = vec![None; 256];
    let mut spans: Vec<Range<usize>> = Vec::new();
    for entry in list.iter() {
        let e = p.table(entry, "a message entry")?;
        for (k, _) in e.iter() {
            if !["type", "name", "body", "doc"].contains(&k.get_ref().as_ref()) {
                return Err(p.err(
                    &k.span(),
                    format!(
                        "unknown key \"{}\" in a message entry (expected type, name, body, doc)",
                        k.get_ref()
                    ),
                ));
            }
        }
        let tv = get(e, "type").ok_or_else(|| {
            p.err(
                &entry.span(),
                "message entry has no type number (add `type = 1`)",
            )
        })?;
        let n = p.int(tv, "message type")?;
        let message_type = u8::try_from(n).map_err(|_| {
            p.err(
                &tv.span(),
                format!("message type {n} does not fit the header's byte (use 0..=255)"),
            )
        })?;
        let nv = get(e, "name").ok_or_else(|| {
            p.err(
                &entry.span(),
                "message entry has no name (add `name = \"...\"`)",
            )
        })?;
        let name = p.string(nv, "message name")?;
        p.name(&name.span(), name.get_ref(), "message name")?;
        let body = match get(e, "body") {
            Some(b) => p.string(b, "message body")?,
            None => name.clone(),
        };
        if let Some(i) = by_type[usize::from(message_type)] {
            let (l, c) = line_col(p.text, spans[i].start);
            return Err(p.err(
                &tv.span(),
                format!(
                    "duplicate message type {message_type}, first at {l}:{c} (give each message its own number)"
                ),
            ));
        }
        if messages.iter().any(|m| m.name == name.get_ref()) {
            return Err(p.err(
                &name.span(),
                format!(
                    "duplicate message name \"{}\" (each message type needs its own name)",
                    name.get_ref()
                ),
            ));
        }
        let sid = *ids.get(body.get_ref()).ok_or_else(|| {
            p.err(
                &body.span(),
                format!(
                    "message body \"{0}\" is not a batch struct defined in this file (add [batch.struct.{0}], or set `body`)",
                    body.get_ref()
                ),
            )
        })?;
        by_type[usize::from(message_type)] = Some(messages.len());
        spans.push(tv.span());
        messages.push(MessageDef {
            message_type,
            name: intern(name.get_ref()),
            body: sid,
        });
    }

    Ok((messages, by_type))
}

/// The optional `stages` names of a `[batch]` section `t`.
fn stages(
    p: &Parser<'_>,
    t: &toml::de::DeTable<'_>,
) -> Result<Option<Vec<Option<&'static str>>>, SchemaError> {
    Ok(match get(t, "stages") {
        None => None,
        Some(sv) => {
            let list = p.array(sv, "`stages` must be an array of stage names (write `stages = [\"init\", \"update\"]`, stage 0 first)")?;
            if list.len() > 256 {
                return Err(p.err(
                    &sv.span(),
                    "`stages` lists more than 256 names (list at most 256: the stage is one byte)",
                ));
            }
            let mut names = Vec::new();
            for item in list.iter() {
                let stage = p.string(item, "a stage name")?;
                p.name(&stage.span(), stage.get_ref(), "stage name")?;
                names.push(Some(intern(stage.get_ref())));
            }
            Some(names)
        }
    })
}

impl<'a> Ctx<'a, '_> {
    /// Collects the `[batch.struct.NAME]` definitions of `section`, unresolved.
    fn collect(&mut self, section: &'a Val<'a>) -> Result<(), SchemaError> {
        let p = self.p;
        let table = p.table(section, "[batch.struct]")?;
        p.at_most(&section.span(), table.len(), "batch structs")?;
        for (name, def) in table.iter() {
            p.name(&name.span(), name.get_ref(), "batch struct name")?;
            let list = p.struct_fields(name.get_ref(), &name.span(), def, "batch struct", "u32")?;
            let n = name.get_ref().to_string();
            if BATCH_TYPES.contains(&n.as_str()) {
                return Err(p.err(
                    &name.span(),
                    format!("type name \"{n}\" is a built-in type (rename it)"),
                ));
            }
            crate::work::step();
            self.ids.insert(n.clone(), self.raw.len());
            self.raw.push((Spanned::new(name.span(), n), list));
        }
        Ok(())
    }
}

impl<'a> Ctx<'a, '_> {
    fn resolve(&mut self, i: usize, from: Option<&Range<usize>>) -> Result<(), SchemaError> {
        if self.structs[i].is_some() {
            return Ok(());
        }
        if self.active.contains(&i) {
            return Err(cycle_error(
                self.p,
                &self.raw,
                &self.active,
                i,
                from,
                "batch struct",
            ));
        }
        if self.active.len() >= MAX_DEPTH {
            // Checked before recursing: the loader itself recurses once per level.
            return Err(too_deep(
                self.p,
                &self.raw,
                &self.active,
                i,
                from,
                "batch struct",
            ));
        }
        self.active.push(i);
        let p = self.p;
        let mut fields: Vec<BField> = Vec::new();
        let mut spans: Vec<Range<usize>> = Vec::new();
        // Field index by name: duplicate and guard checks.
        let mut index: HashMap<&str, usize> = HashMap::new();
        let list: &'a toml::de::DeArray<'a> = self.raw[i].1;
        for f in list.iter() {
            let t = p.table(f, "a field")?;
            let ty_v = get(t, "type").ok_or_else(|| {
                p.err(
                    &f.span(),
                    "field has no type (add `type = \"u32\"`, or a batch struct name)",
                )
            })?;
            let ty = p.string(ty_v, "type")?;
            let allowed = keys_of(ty.get_ref());
            for (k, _) in t.iter() {
                let k_ref: &str = k.get_ref();
                if !COMMON_KEYS.contains(&k_ref) && !allowed.contains(&k_ref) {
                    let mut all: Vec<&str> = COMMON_KEYS.to_vec();
                    all.extend(allowed);
                    return Err(p.err(
                        &k.span(),
                        format!(
                            "unknown key \"{k_ref}\" for a batch field of type {} (expected one of {})",
                            ty.get_ref(),
                            all.join(", ")
                        ),
                    ));
                }
            }
            let name = match get(t, "name") {
                Some(n) => p.str(n, "name")?,
                None => {
                    return Err(p.err(&f.span(), "field has no name (add `name = \"x\"`)"));
                }
            };
            p.name(&name.span(), name.get_ref(), "field name")?;
            crate::work::step();
            if let Some(&j) = index.get(*name.get_ref()) {
                return Err(duplicate_name(p, &spans[j], name.get_ref(), &name.span()));
            }
            let guard = match (get(t, "if"), get(t, "unless")) {
                (Some(_), Some(_)) => {
                    return Err(p.err(&f.span(), "a field has both `if` and `unless` (keep one)"));
                }
                (Some(g), None) => Some((p.str(g, "if")?, true)),
                (None, Some(g)) => Some((p.str(g, "unless")?, false)),
                (None, None) => None,
            };
            let guard = match guard {
                None => None,
                Some((flag, when)) => {
                    crate::work::step();
                    let j = index
                        .get(*flag.get_ref())
                        .copied()
                        .filter(|&j| {
                            let g = &fields[j];
                            matches!(g.kind, BKind::Prim(Prim::Bool, _)) && g.guard.is_none()
                        })
                        .ok_or_else(|| {
                            p.err(
                                &flag.span(),
                                format!(
                                    "\"{}\" is not an earlier unguarded bool field of this struct (a guard names one)",
                                    flag.get_ref()
                                ),
                            )
                        })?;
                    Some((j, when))
                }
            };
            let kind = self.kind(&ty, t, &f.span())?;
            spans.push(name.span());
            let interned = intern(name.get_ref());
            crate::work::step();
            index.insert(interned, fields.len());
            fields.push(BField {
                name: interned,
                kind,
                guard,
            });
        }
        let layout: Vec<Arc<str>> = fields.iter().map(|f| Arc::from(f.name)).collect();
        self.active.pop();
        let min_size = fields
            .iter()
            .filter(|f| f.guard.is_none())
            .map(|f| self.min_size(&f.kind))
            .fold(0usize, usize::saturating_add);
        let cost = fields
            .iter()
            .fold(Cost::default(), |c, f| c.then(self.cost(&f.kind)));
        let depth = fields
            .iter()
            .map(|f| self.depth(&f.kind))
            .max()
            .unwrap_or(0);
        self.bounded(i, cost, depth)?;
        self.structs[i] = Some(BStruct {
            fields,
            layout: layout.into(),
            min_size,
            cost,
            depth,
        });
        Ok(())
    }

    /// Refuses batch struct `i` when a reader could record too many entries for it, or when it
    /// nests too deep (as the packet structs: `crate::bounds::Cost`).
    fn bounded(&self, i: usize, cost: Cost, depth: usize) -> Result<(), SchemaError> {
        let name = &self.raw[i].0;
        let why = if cost.fixed > MAX_FIXED_ENTRIES {
            format!(
                "batch struct {} makes a reader record {} fields and scopes that take no bytes, \
                 more than {MAX_FIXED_ENTRIES}, what its message's header pays for: a datagram of \
                 empty messages would keep a reader busy (nest fewer struct references in it, or \
                 put repeated parts in an array)",
                name.get_ref(),
                cost.fixed
            )
        } else if cost.per_unit > MAX_ENTRIES_PER_BYTE {
            format!(
                "batch struct {} makes a reader record {:.1} fields per byte it reads, more than \
                 {MAX_ENTRIES_PER_BYTE}: its array elements hold many fields that take no bytes \
                 (give each element fewer of them, or a field that takes bytes)",
                name.get_ref(),
                cost.per_unit
            )
        } else if depth > MAX_DEPTH {
            format!(
                "batch struct {} nests structs and arrays {depth} levels deep, more than \
                 {MAX_DEPTH} (flatten some levels)",
                name.get_ref()
            )
        } else {
            return Ok(());
        };
        Err(self.p.err(&name.span(), why))
    }

    /// The most trace entries a value of `kind` records: one per value (two for a string or a
    /// byte vector: the length, then the bytes), a scope per struct and array, an `[i]` scope
    /// per element; a pod is one field of bytes.
    fn cost(&self, kind: &BKind) -> Cost {
        let flat = |entries| Cost::flat(entries, self.min_size(kind));
        match kind {
            BKind::Prim(..)
            | BKind::Packed { .. }
            | BKind::Bytes { .. }
            | BKind::Pod { .. }
            | BKind::PodStruct { .. } => flat(1),
            BKind::Str { .. } | BKind::ByteVec { .. } => flat(2),
            BKind::Struct(sid) => self.struct_cost(*sid).scoped(self.min_size(kind)),
            // The count and the array's scope; elements (a struct element has its own scope).
            BKind::Array { unit, element, .. } => Cost::repeated(self.cost(element), *unit, 2),
        }
    }

    fn struct_cost(&self, sid: usize) -> Cost {
        self.structs[sid]
            .as_ref()
            .map_or(Cost::default(), |s| s.cost)
    }

    /// Levels of structs and arrays inside a value of `kind`.
    fn depth(&self, kind: &BKind) -> usize {
        match kind {
            BKind::Struct(sid) | BKind::PodStruct { sid, .. } => {
                1 + self.structs[*sid].as_ref().map_or(0, |s| s.depth)
            }
            BKind::Array { element, .. } => 1 + self.depth(element),
            _ => 0,
        }
    }

    /// A length key `key` of a field of type `name` (at `span`), at most [`MAX_LEN`]; `None`
    /// when absent and not `required`.
    fn length(
        &self,
        t: &toml::de::DeTable<'_>,
        span: &Range<usize>,
        name: &str,
        key: &str,
        required: bool,
    ) -> Result<Option<usize>, SchemaError> {
        let p = self.p;
        match get(t, key) {
            Some(v) => {
                let n = p.count(v, key)?;
                if n > MAX_LEN {
                    return Err(p.err(
                        &v.span(),
                        format!(
                            "{key} {n} exceeds the largest message body, {MAX_LEN} bytes (use less)"
                        ),
                    ));
                }
                Ok(Some(n))
            }
            None if required => Err(p.err(
                span,
                format!(
                    "{name} field without `{key}` (add `{key} = 32`: a length needs an upper bound)"
                ),
            )),
            None => Ok(None),
        }
    }

    /// The kind of a field of type `ty`; `t` holds its keys. One method per family of types
    /// below.
    fn kind(
        &mut self,
        ty: &Spanned<String>,
        t: &toml::de::DeTable<'_>,
        span: &Range<usize>,
    ) -> Result<BKind, SchemaError> {
        let p = self.p;
        let name = ty.get_ref().as_str();
        if let Some(prim) = Prim::from_name(name) {
            return Ok(BKind::Prim(prim, self.check(prim, t)?));
        }
        Ok(match name {
            "packed_u32" | "packed_u64" | "packed_i32" | "packed_i64" => {
                let like = match name {
                    "packed_u32" => Prim::U32,
                    "packed_u64" => Prim::U64,
                    "packed_i32" => Prim::I32,
                    _ => Prim::I64,
                };
                BKind::Packed {
                    signed: like.signed(),
                    wide: like.size() == 8,
                    check: self.check(like, t)?,
                }
            }
            "string" => BKind::Str {
                max_len: self.length(t, span, name, "max_len", true)?.unwrap_or(0),
            },
            "bytes" => match (
                self.length(t, span, name, "len", false)?,
                self.length(t, span, name, "max_len", false)?,
            ) {
                (Some(len), None) => BKind::Bytes { len },
                (None, Some(max_len)) => BKind::ByteVec { max_len },
                _ => {
                    return Err(p.err(
                        span,
                        "bytes field with both or neither of `len` and `max_len` (keep one: `len` for a fixed length, not sent; `max_len` for a packed length first)",
                    ));
                }
            },
            "pod" => self.pod(t, span, name)?,
            "array" => self.array(t, span, name)?,
            _ => BKind::Struct(self.struct_ref(ty)?),
        })
    }

    /// `pod`: `len` primitives, or one struct of fixed-width fields, in one copy of bytes.
    fn pod(
        &mut self,
        t: &toml::de::DeTable<'_>,
        span: &Range<usize>,
        name: &str,
    ) -> Result<BKind, SchemaError> {
        let p = self.p;
        let ev = get(t, "element").ok_or_else(|| {
            p.err(
                span,
                "pod field without `element` (add `element = \"f32\", len = 3`, or a batch struct of fixed-width fields)",
            )
        })?;
        let e = p.string(ev, "element")?;
        let Some(element) = Prim::from_name(e.get_ref()) else {
            for key in ["len", "min", "max", "abs_max"] {
                if let Some(v) = get(t, key) {
                    return Err(p.err(
                        &v.span(),
                        format!("`{key}` applies to pod arrays of a primitive element, not to a pod struct (remove it)"),
                    ));
                }
            }
            let sid = self.struct_ref(&e)?;
            let size = self.pod_size(sid, &e)?;
            return Ok(BKind::PodStruct { sid, size });
        };
        let len = self.length(t, span, name, "len", true)?.unwrap_or(0);
        let bytes = element.size() * len;
        if bytes > MAX_LEN {
            let at = get(t, "len").map_or(span.clone(), |v| v.span());
            return Err(p.err(
                &at,
                format!(
                    "pod of {len} {} takes {bytes} bytes, more than the largest \
                     message body, {MAX_LEN} bytes (use len = {} at most)",
                    e.get_ref(),
                    MAX_LEN / element.size()
                ),
            ));
        }
        Ok(BKind::Pod {
            element,
            len,
            check: self.check(element, t)?,
        })
    }

    /// `array`: a packed count in `0..=max_len`, then the elements.
    fn array(
        &mut self,
        t: &toml::de::DeTable<'_>,
        span: &Range<usize>,
        name: &str,
    ) -> Result<BKind, SchemaError> {
        let p = self.p;
        let max_len = self.length(t, span, name, "max_len", true)?.unwrap_or(0);
        let ev = get(t, "element").ok_or_else(|| {
            p.err(
                span,
                "array field without `element` (add `element = \"u16\"` or `element = { type = \"u16\", max = 4095 }`)",
            )
        })?;
        let element = self.element(ev)?;
        // The reader bounds a count by `count x fewest bytes <= what remains`: an
        // element that can take no bytes would let a 3-byte body claim max_len of them
        // (the bit-packed loader refuses the same shape).
        let unit = self.min_size(&element);
        if unit == 0 {
            return Err(p.err(
                &ev.span(),
                "an array element that can take no bytes cannot be bounded by the \
                 message's size: a few bytes could claim max_len elements (give the \
                 element a field that takes bytes)",
            ));
        }
        Ok(BKind::Array {
            max_len,
            unit,
            element: Box::new(element),
        })
    }

    /// An array's `element`: a type name, or an inline table of a type and its keys.
    fn element(&mut self, ev: &Val<'_>) -> Result<BKind, SchemaError> {
        let p = self.p;
        match ev.get_ref() {
            DeValue::String(_) => {
                let e = p.string(ev, "element")?;
                self.kind(&e, &toml::de::DeTable::new(), &ev.span())
            }
            DeValue::Table(et) => {
                for (k, _) in et.iter() {
                    if k.get_ref() == "name" || k.get_ref() == "if" || k.get_ref() == "unless" {
                        return Err(p.err(
                            &k.span(),
                            format!("an array element takes no `{}` (elements are named `name[i]`)", k.get_ref()),
                        ));
                    }
                }
                let ety = get(et, "type").ok_or_else(|| {
                    p.err(&ev.span(), "element has no type (add `type = \"u16\"`)")
                })?;
                let ety = p.string(ety, "type")?;
                let allowed = keys_of(ety.get_ref());
                for (k, _) in et.iter() {
                    let k_ref: &str = k.get_ref();
                    if k_ref != "type" && k_ref != "doc" && !allowed.contains(&k_ref) {
                        return Err(p.err(
                            &k.span(),
                            format!(
                                "unknown key \"{k_ref}\" for an element of type {} (expected one of type, {})",
                                ety.get_ref(),
                                allowed.join(", ")
                            ),
                        ));
                    }
                }
                self.kind(&ety, et, &ev.span())
            }
            _ => Err(p.err(
                &ev.span(),
                "element is neither a type name nor a table (write `element = \"u16\"` or `element = { type = \"u16\", max = 4095 }`)",
            )),
        }
    }

    fn struct_ref(&mut self, ty: &Spanned<String>) -> Result<usize, SchemaError> {
        match self.ids.get(ty.get_ref()) {
            Some(&j) => {
                self.resolve(j, Some(&ty.span()))?;
                Ok(j)
            }
            None => Err(self.p.err(
                &ty.span(),
                format!(
                    "unknown type \"{}\" in a batch body (use a batch type: {}, or a [batch.struct.NAME])",
                    ty.get_ref(),
                    BATCH_TYPES.join(", ")
                ),
            )),
        }
    }

    /// The range keys of an integer field.
    fn check(&self, prim: Prim, t: &toml::de::DeTable<'_>) -> Result<Check, SchemaError> {
        let p = self.p;
        if prim.signed() {
            return match get(t, "abs_max") {
                None => Ok(Check::None),
                Some(v) => {
                    let n = p.int(v, "abs_max")?;
                    u64::try_from(n).map(Check::Abs).map_err(|_| {
                        p.err(
                            &v.span(),
                            format!("abs_max {n} is negative (use |v|'s largest allowed value)"),
                        )
                    })
                }
            };
        }
        let Some(type_max) = prim.unsigned_max() else {
            for key in ["min", "max", "abs_max"] {
                if let Some(v) = get(t, key) {
                    return Err(p.err(
                        &v.span(),
                        format!("`{key}` applies to integer fields only (remove it)"),
                    ));
                }
            }
            return Ok(Check::None);
        };
        if let Some(v) = get(t, "abs_max") {
            return Err(p.err(
                &v.span(),
                "`abs_max` applies to signed fields (use `min`/`max` for unsigned ones)",
            ));
        }
        let bound = |key: &str, default: u64| -> Result<(u64, Option<Range<usize>>), SchemaError> {
            match get(t, key) {
                None => Ok((default, None)),
                Some(v) => {
                    let n = p.int(v, key)?;
                    match u64::try_from(n) {
                        Ok(x) if x <= type_max => Ok((x, Some(v.span()))),
                        _ => Err(p.err(
                            &v.span(),
                            format!("{key} {n} is outside the type's range 0..={type_max} (use a value inside it)"),
                        )),
                    }
                }
            }
        };
        let (min, _) = bound("min", 0)?;
        let (max, max_span) = bound("max", type_max)?;
        if min > max {
            let span = max_span.unwrap_or(0..0);
            return Err(p.err(
                &span,
                format!("min {min} is greater than max {max} (swap them, or fix one)"),
            ));
        }
        if (min, max) == (0, type_max) {
            return Ok(Check::None);
        }
        Ok(Check::Range { min, max })
    }

    /// The fixed size of a pod struct: every field a fixed-width primitive or pod, unguarded.
    fn pod_size(&self, sid: usize, at: &Spanned<String>) -> Result<usize, SchemaError> {
        let sd = self.structs[sid]
            .as_ref()
            .map_or(&[][..], |s| &s.fields[..]);
        let mut size = 0;
        for f in sd {
            let n = match (&f.kind, f.guard) {
                (BKind::Prim(p, _), None) => p.size(),
                (BKind::Pod { element, len, .. }, None) => element.size() * len,
                (BKind::PodStruct { size, .. }, None) => *size,
                (BKind::Bytes { len }, None) => *len,
                _ => {
                    return Err(self.p.err(
                        &at.span(),
                        format!(
                            "batch struct {} is not plain old data: field \"{}\" has no fixed size (use fixed-width fields without `if`/`unless`, or type = \"{}\")",
                            at.get_ref(),
                            f.name,
                            at.get_ref()
                        ),
                    ));
                }
            };
            size += n;
            // A reader copies the whole struct into a buffer of its size: no larger than a body.
            if size > MAX_LEN {
                return Err(self.p.err(
                    &at.span(),
                    format!(
                        "pod struct {} takes at least {size} bytes, more than the largest \
                         message body, {MAX_LEN} bytes (make its fields smaller)",
                        at.get_ref()
                    ),
                ));
            }
        }
        Ok(size)
    }

    /// Fewest bytes a value of `kind` takes (a struct's is computed once, when it resolves).
    fn min_size(&self, kind: &BKind) -> usize {
        match kind {
            BKind::Prim(p, _) => p.size(),
            BKind::Packed { .. } | BKind::Str { .. } | BKind::ByteVec { .. } => 1,
            BKind::Array { .. } => 1,
            BKind::Bytes { len } => *len,
            BKind::Pod { element, len, .. } => element.size() * len,
            BKind::PodStruct { size, .. } => *size,
            BKind::Struct(sid) => self.structs[*sid].as_ref().map_or(0, |s| s.min_size),
        }
    }
}
