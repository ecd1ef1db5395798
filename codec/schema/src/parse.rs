//! TOML text -> checked schema definitions, with every error placed at a line and column.

use crate::bounds::{
    Cost, MAX_COPIED_NAMES, MAX_COUNT, MAX_DEPTH, MAX_ENTRIES_PER_BIT, MAX_FIXED_ENTRIES,
    MAX_SCHEMA_BYTES,
};
use crate::defs::{EnumDef, Field, Kind, Prev, StructDef, UnionDef, UnionVariant};
use crate::error::SchemaError;
use crate::schema::Schema;
use bitlens_codec::bits::{bits_required, bits_required128};
use bitlens_codec::fixed::FixedPoint;
use bitlens_codec::packet::{Protocol, ProtocolId};
use bitlens_codec::quantize::{
    CompressedFloat, MAX_STABLE_STEPS, MAX_STEPS, STABLE_STEPS_BY_BOUND, SmallestThree,
};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::source::{Parser, Val, cycle_error, duplicate_name, get, line_col, too_deep};

impl Schema {
    /// Parses and checks a schema; `file` names it in errors.
    ///
    /// # Errors
    /// The first problem found: TOML syntax, an unknown type or key, `min > max`, a count or
    /// length without an upper bound, a duplicate name, a cycle of struct references, ...
    pub fn from_toml(text: &str, file: &str) -> Result<Schema, SchemaError> {
        parse(text, file)
    }

    /// Reads and parses a schema file.
    ///
    /// # Errors
    /// The file cannot be read (reported at 1:1), or as [`Schema::from_toml`].
    pub fn load(path: &Path) -> Result<Schema, SchemaError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SchemaError {
            file: file.clone(),
            line: 1,
            col: 1,
            message: format!("cannot read the schema: {e} (check the path)"),
        })?;
        Self::from_toml(&text, &file)
    }
}

/// The built-in type names of a field in a struct (SCHEMA.md, "Fields"): what the loader accepts,
/// lists in its "unknown type" hints and refuses as a name of the file's own types. Tools that
/// generate schemas (the `schema_load` fuzzer) take the list from here.
pub const BUILTINS: &[&str] = &[
    "bool",
    "int",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "bits",
    "f32",
    "f64",
    "compressed_float",
    "compressed_vector",
    "quaternion",
    "string",
    "bytes",
    "array",
    "sparse_array",
    "object_index",
    "int_relative",
    "check",
    "align",
    "end",
    "include",
    "int64",
    "int128",
    "u128",
    "fixed",
    "wstring",
    "bit_run",
];

const COMMON_KEYS: &[&str] = &["name", "type", "if", "unless", "doc"];

fn keys_of(ty: &str) -> &'static [&'static str] {
    match ty {
        "int" | "int64" | "int128" => &["min", "max"],
        "bits" | "quaternion" => &["bits"],
        "compressed_float" | "compressed_vector" => &[
            "min",
            "max",
            "resolution",
            "delta",
            "max_integer_value",
            "bits",
        ],
        "fixed" => &["integer_bits", "fraction_bits", "min", "max", "unsigned"],
        "string" | "wstring" => &["max_len"],
        "bytes" => &["len"],
        "array" => &["max_len", "element"],
        "sparse_array" => &["max_objects", "element", "index_name"],
        "object_index" => &["max_objects", "previous"],
        "int_relative" => &["previous"],
        "check" => &["label"],
        "include" => &["struct"],
        "bit_run" => &["by", "table"],
        _ => &[],
    }
}

/// The field a kind is made for: its keys, its span and its type name (what errors cite).
#[derive(Clone, Copy)]
struct Params<'a, 'i> {
    t: &'a DeTable<'i>,
    span: &'a Range<usize>,
    ty: &'a str,
}

/// A struct as written: its name, and its fields before type names are resolved.
type RawStruct<'i> = (Spanned<String>, Vec<RawField<'i>>);

/// A field as written, before type names are resolved.
struct RawField<'i> {
    span: Range<usize>,
    table: &'i DeTable<'i>,
    name: Option<Spanned<&'i str>>,
    ty: Spanned<&'i str>,
    guard: Option<(Spanned<&'i str>, bool)>,
}

/// Parses and checks a schema.
pub(crate) fn parse(text: &str, file: &str) -> Result<Schema, SchemaError> {
    let p = Parser {
        text,
        file,
        warnings: Default::default(),
    };
    let root = document(&p, text)?;
    let root_span = root.span();
    let root = root.get_ref();

    // ---- enums ----
    let mut enums = Vec::new();
    let mut type_names: HashMap<String, (Range<usize>, TypeRef)> = HashMap::new();
    let mut definitions = 0usize;
    for key in ["enum", "struct", "union"] {
        if let Some(section) = get(root, key) {
            definitions += p.table(section, format_args!("[{key}]"))?.len();
        }
    }
    p.at_most(&root_span, definitions, "structs, enums and unions")?;
    if let Some(section) = get(root, "enum") {
        for (name, def) in p.table(section, "[enum]")?.iter() {
            declare(&p, &mut type_names, name, TypeRef::Enum(enums.len()))?;
            enums.push(parse_enum(&p, name.get_ref(), def)?);
        }
    }

    // ---- structs: collect raw fields, then resolve with cycle detection ----
    let raw = raw_structs(&p, root, &mut type_names)?;

    let mut raw_unions: Vec<RawUnion<'_>> = Vec::new();
    if let Some(section) = get(root, "union") {
        for (name, def) in p.table(section, "[union]")?.iter() {
            declare(&p, &mut type_names, name, TypeRef::Union(raw_unions.len()))?;
            raw_unions.push(raw_union(&p, name.get_ref(), def)?);
        }
    }

    let mut r = Resolver {
        p: &p,
        raw: &raw,
        types: &type_names,
        enums: &enums,
        state: vec![State::Todo; raw.len()],
        structs: Vec::new(),
        stack: Vec::new(),
        raw_unions: &raw_unions,
        unions: vec![None; raw_unions.len()],
        copied: 0,
    };
    for i in 0..raw_unions.len() {
        r.union(i)?;
    }
    for i in 0..raw.len() {
        r.resolve(i, None)?;
    }
    let map: Vec<usize> = r
        .state
        .iter()
        .map(|s| match s {
            State::Done(i) => *i,
            _ => unreachable!("every struct was resolved"),
        })
        .collect();
    let structs = r.structs;
    let unions: Vec<UnionDef> = r.unions.into_iter().flatten().collect();

    // A yojimbo game has no bitlens packet framing: its schema may leave [protocol] out.
    let (protocol, packets) = match get(root, "yojimbo") {
        Some(_) if get(root, "protocol").is_none() && get(root, "batch").is_none() => {
            (crate::yojimbo::no_protocol(), Vec::new())
        }
        _ => protocol(&p, root, &root_span, &type_names, &map, &structs)?,
    };
    let struct_ids: HashMap<String, usize> = raw
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.get_ref().clone(), map[i]))
        .collect();
    let batch = get(root, "batch")
        .map(|v| crate::batch::parse::parse(&p, v))
        .transpose()?;
    let yojimbo = get(root, "yojimbo")
        .map(|v| crate::yojimbo::parse(&p, v, &struct_ids, &structs))
        .transpose()?;
    Ok(Schema {
        yojimbo,
        source: text.into(),
        warnings: {
            // A struct used in several places is checked once, but be sure.
            let mut w = p.warnings.into_inner();
            w.dedup();
            w
        },
        batch,
        protocol,
        structs,
        enums,
        unions,
        packets,
        struct_ids,
    })
}

/// The TOML document of a schema: refused when over [`MAX_SCHEMA_BYTES`], not TOML, or
/// holding a section the language does not have.
fn document<'t>(p: &Parser<'t>, text: &'t str) -> Result<Spanned<DeTable<'t>>, SchemaError> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(p.err(
            &(0..0),
            format!(
                "the schema is {} bytes, more than {MAX_SCHEMA_BYTES} (SCHEMA.md, \"Bounds\": split it up)",
                text.len()
            ),
        ));
    }
    let document = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        p.err(
            &span,
            format!("{} (fix the TOML syntax)", e.message().trim_end()),
        )
    })?;
    for (k, _) in document.get_ref().iter() {
        if !["protocol", "struct", "enum", "union", "batch", "yojimbo"]
            .contains(&k.get_ref().as_ref())
        {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown section [{}] (expected [protocol], [struct.NAME], [enum.NAME], [union.NAME], [batch] or [yojimbo])",
                    k.get_ref()
                ),
            ));
        }
    }
    Ok(document)
}

/// The `[struct.NAME]` definitions with their fields as written, each name declared.
fn raw_structs<'i>(
    p: &Parser<'_>,
    root: &'i DeTable<'i>,
    type_names: &mut HashMap<String, (Range<usize>, TypeRef)>,
) -> Result<Vec<RawStruct<'i>>, SchemaError> {
    let mut raw: Vec<RawStruct<'i>> = Vec::new();
    if let Some(section) = get(root, "struct") {
        for (name, def) in p.table(section, "[struct]")?.iter() {
            declare(p, type_names, name, TypeRef::Struct(raw.len()))?;
            let list = p.struct_fields(name.get_ref(), &name.span(), def, "struct", "i32")?;
            let mut fields = Vec::with_capacity(list.len());
            for f in list.iter() {
                fields.push(raw_field(p, f)?);
            }
            raw.push((
                Spanned::new(name.span(), name.get_ref().to_string()),
                fields,
            ));
        }
    }
    Ok(raw)
}

/// Declares a type name defined in the file (an enum, struct or union): refused when it is a
/// built-in type's or another definition's.
fn declare(
    p: &Parser<'_>,
    type_names: &mut HashMap<String, (Range<usize>, TypeRef)>,
    name: &Spanned<toml::de::DeString<'_>>,
    r: TypeRef,
) -> Result<(), SchemaError> {
    let n = name.get_ref().to_string();
    p.name(&name.span(), &n, "type name")?;
    if BUILTINS.contains(&n.as_str()) {
        return Err(p.err(
            &name.span(),
            format!("type name \"{n}\" is a built-in type (rename it)"),
        ));
    }
    if let Some((other, _)) = type_names.get(&n) {
        // Report at the later of the two, citing the earlier.
        let (first, second) = if other.start < name.span().start {
            (other.clone(), name.span())
        } else {
            (name.span(), other.clone())
        };
        let (l, c) = line_col(p.text, first.start);
        return Err(p.err(
            &second,
            format!("duplicate type name \"{n}\", first defined at {l}:{c} (rename one of them)"),
        ));
    }
    type_names.insert(n, (name.span(), r));
    Ok(())
}

/// The `[protocol]` section: the framing, and per packet type its body struct (`map`: the index
/// in `structs` of each raw struct).
fn protocol(
    p: &Parser<'_>,
    root: &DeTable<'_>,
    root_span: &Range<usize>,
    type_names: &HashMap<String, (Range<usize>, TypeRef)>,
    map: &[usize],
    structs: &[StructDef],
) -> Result<(Protocol, Vec<usize>), SchemaError> {
    let proto_v = get(root, "protocol").ok_or_else(|| {
        p.err(
            root_span,
            "no [protocol] section (add `[protocol]` with name, id, mtu and packets; a schema of a yojimbo game has a [yojimbo] section instead)",
        )
    })?;
    let pt = p.table(proto_v, "[protocol]")?;
    const PROTO_KEYS: &[&str] = &["name", "id", "id_bits", "mtu", "packets", "doc"];
    for (k, _) in pt.iter() {
        if !PROTO_KEYS.contains(&k.get_ref().as_ref()) {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown key \"{}\" in [protocol] (expected one of {})",
                    k.get_ref(),
                    PROTO_KEYS.join(", ")
                ),
            ));
        }
    }
    let need = |key: &str, hint: &str| {
        get(pt, key).ok_or_else(|| {
            p.err(
                &proto_v.span(),
                format!("[protocol] has no `{key}` (add `{key} = {hint}`)"),
            )
        })
    };
    let name = p.string(need("name", "\"my-game\"")?, "protocol name")?;
    if let Some(why) = crate::names::protocol(name.get_ref(), get(root, "batch").is_some()) {
        return Err(p.err(
            &name.span(),
            format!(
                "protocol name {} {why} (SCHEMA.md, \"Names\")",
                crate::names::shown(name.get_ref())
            ),
        ));
    }
    let id_v = need("id", "0x12345678")?;
    let id = p.int(id_v, "protocol id")?;
    let id_bits = match get(pt, "id_bits") {
        Some(v) => p.int(v, "id_bits")?,
        None => 32,
    };
    let id = match id_bits {
        32 => ProtocolId::U32(u32::try_from(id).map_err(|_| {
            p.err(
                &id_v.span(),
                format!("protocol id {id:#x} does not fit 32 bits (set id_bits = 64, or use a smaller id)"),
            )
        })?),
        // TOML integers are signed 64-bit: ids above i64::MAX are written as negative numbers.
        64 => ProtocolId::U64(id as u64),
        w => {
            let span = get(pt, "id_bits").map_or(proto_v.span(), |v| v.span());
            return Err(p.err(
                &span,
                format!("id_bits = {w} (use 32 or 64)"),
            ));
        }
    };
    let mtu_v = need("mtu", "1200")?;
    let mtu = p.count(mtu_v, "mtu")?;
    if mtu < 5 {
        return Err(p.err(
            &mtu_v.span(),
            format!("mtu {mtu} cannot hold a packet (use at least 5 bytes; 1200 is usual)"),
        ));
    }
    let packets_v = need("packets", "[\"Hello\", \"State\"]")?;
    let (packet_types, packets) = packet_list(p, packets_v, type_names, map, structs)?;
    let protocol = Protocol {
        name: name.into_inner(),
        id,
        packet_types,
        mtu,
    };
    Ok((protocol, packets))
}

/// The `packets` list of `[protocol]`: per packet type its name and its body struct.
fn packet_list(
    p: &Parser<'_>,
    packets_v: &Val<'_>,
    type_names: &HashMap<String, (Range<usize>, TypeRef)>,
    map: &[usize],
    structs: &[StructDef],
) -> Result<(Vec<String>, Vec<usize>), SchemaError> {
    let list = p.array(
        packets_v,
        "`packets` must be an array of struct names (type 0 first)",
    )?;
    if list.is_empty() {
        return Err(p.err(
            &packets_v.span(),
            "`packets` is empty (list at least one struct name)",
        ));
    }
    p.at_most(&packets_v.span(), list.len(), "packet types")?;
    let mut packet_types = Vec::with_capacity(list.len());
    let mut packets = Vec::with_capacity(list.len());
    let mut packet_names: HashSet<String> = HashSet::with_capacity(list.len());
    for entry in list.iter() {
        let (pname, body) = match entry.get_ref() {
            DeValue::String(_) => {
                let s = p.string(entry, "packet")?;
                (s.clone(), s)
            }
            DeValue::Table(t) => {
                for (k, _) in t.iter() {
                    if k.get_ref() != "name" && k.get_ref() != "body" {
                        return Err(p.err(
                            &k.span(),
                            format!(
                                "unknown key \"{}\" in a packet entry (expected name and body)",
                                k.get_ref()
                            ),
                        ));
                    }
                }
                let n = get(t, "name").ok_or_else(|| {
                    p.err(
                        &entry.span(),
                        "packet entry has no name (add `name = \"...\"`)",
                    )
                })?;
                let b = get(t, "body").ok_or_else(|| {
                    p.err(
                        &entry.span(),
                        "packet entry has no body (add `body = \"StructName\"`)",
                    )
                })?;
                (p.string(n, "packet name")?, p.string(b, "packet body")?)
            }
            _ => {
                return Err(p.err(
                    &entry.span(),
                    "a packet entry is neither a struct name nor a table (write `\"Name\"` or `{ name = \"...\", body = \"Struct\" }`)",
                ));
            }
        };
        p.name(&pname.span(), pname.get_ref(), "packet name")?;
        crate::work::step();
        if !packet_names.insert(pname.get_ref().clone()) {
            return Err(p.err(
                &pname.span(),
                format!(
                    "duplicate packet name \"{}\" (each packet type needs its own name)",
                    pname.get_ref()
                ),
            ));
        }
        let sid = match type_names.get(body.get_ref()) {
            Some((_, TypeRef::Struct(i))) => map[*i],
            _ => {
                return Err(p.err(
                    &body.span(),
                    format!(
                        "packet body \"{}\" is not a struct defined in this file (add [struct.{}])",
                        body.get_ref(),
                        body.get_ref()
                    ),
                ));
            }
        };
        p.no_end_in_body(
            structs[sid].end_at.as_ref(),
            &body.span(),
            &format!("packet \"{}\"", pname.get_ref()),
            "the packet framing closes every body with its own check \"end of packet\" and then the end of the data, so an `end` before that check makes every packet unreadable (remove this field; the framing already rejects trailing bytes)",
        )?;
        packet_types.push(pname.into_inner());
        packets.push(sid);
    }
    Ok((packet_types, packets))
}

#[derive(Debug, Clone, Copy)]
enum TypeRef {
    Struct(usize),
    Enum(usize),
    Union(usize),
}

/// A union as written: its tag name, and per variant its name (with span) and body struct name.
struct RawUnion<'i> {
    name: String,
    tag: Arc<str>,
    variants: Vec<(Spanned<String>, Option<Spanned<String>>)>,
    _table: std::marker::PhantomData<&'i ()>,
}

fn raw_union<'i>(
    p: &Parser<'_>,
    name: &str,
    def: &'i Val<'i>,
) -> Result<RawUnion<'i>, SchemaError> {
    let t = p.table(def, format_args!("union {name}"))?;
    for (k, _) in t.iter() {
        if !["variants", "tag_name", "doc"].contains(&k.get_ref().as_ref()) {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown key \"{}\" in union {name} (expected variants, tag_name or doc)",
                    k.get_ref()
                ),
            ));
        }
    }
    let tag: Arc<str> = match get(t, "tag_name") {
        Some(v) => {
            let tag = p.string(v, "tag_name")?;
            p.name(&tag.span(), tag.get_ref(), "tag_name")?;
            tag.into_inner().into()
        }
        None => "variant".into(),
    };
    let vv = get(t, "variants").ok_or_else(|| {
        p.err(
            &def.span(),
            format!(
                "union {name} has no variants (add `variants = [\"Body\", {{ name = \"None\" }}]`)"
            ),
        )
    })?;
    let list = p.array(
        vv,
        "`variants` is not an array (write `variants = [\"Body\", { name = \"None\" }]`)",
    )?;
    if list.is_empty() {
        return Err(p.err(
            &vv.span(),
            format!("union {name} has no variants (add one)"),
        ));
    }
    p.at_most(
        &vv.span(),
        list.len(),
        format_args!("variants in union {name}"),
    )?;
    let mut variants: Vec<(Spanned<String>, Option<Spanned<String>>)> =
        Vec::with_capacity(list.len());
    let mut seen: HashSet<String> = HashSet::with_capacity(list.len());
    for entry in list.iter() {
        let (vname, body) = match entry.get_ref() {
            DeValue::String(_) => {
                let s = p.string(entry, "variant")?;
                (s.clone(), Some(s))
            }
            DeValue::Table(vt) => {
                for (k, _) in vt.iter() {
                    if k.get_ref() != "name" && k.get_ref() != "body" {
                        return Err(p.err(
                            &k.span(),
                            format!(
                                "unknown key \"{}\" in a variant (expected name and body)",
                                k.get_ref()
                            ),
                        ));
                    }
                }
                let n = get(vt, "name").ok_or_else(|| {
                    p.err(&entry.span(), "variant has no name (add `name = \"...\"`)")
                })?;
                let b = get(vt, "body")
                    .map(|b| p.string(b, "variant body"))
                    .transpose()?;
                (p.string(n, "variant name")?, b)
            }
            _ => {
                return Err(p.err(
                    &entry.span(),
                    "a variant is neither a struct name nor a table (write `\"Body\"` or `{ name = \"V\", body = \"Body\" }`)",
                ));
            }
        };
        p.name(&vname.span(), vname.get_ref(), "variant name")?;
        crate::work::step();
        if !seen.insert(vname.get_ref().clone()) {
            return Err(p.err(
                &vname.span(),
                format!(
                    "duplicate variant name \"{}\" in union {name} (rename one)",
                    vname.get_ref()
                ),
            ));
        }
        variants.push((vname, body));
    }
    Ok(RawUnion {
        name: name.to_owned(),
        tag,
        variants,
        _table: std::marker::PhantomData,
    })
}

fn parse_enum(p: &Parser<'_>, name: &str, def: &Val<'_>) -> Result<EnumDef, SchemaError> {
    let t = p.table(def, format_args!("enum {name}"))?;
    let values_v = get(t, "values").ok_or_else(|| {
        p.err(
            &def.span(),
            format!("enum {name} has no values (add `values = [\"a\", \"b\"]` or `values = {{ a = 0, b = 5 }}`)"),
        )
    })?;
    for (k, _) in t.iter() {
        if k.get_ref() != "values" && k.get_ref() != "doc" {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown key \"{}\" in enum {name} (expected values)",
                    k.get_ref()
                ),
            ));
        }
    }
    let count = match values_v.get_ref() {
        DeValue::Array(a) => a.len(),
        DeValue::Table(tab) => tab.len(),
        _ => 0,
    };
    p.at_most(
        &values_v.span(),
        count,
        format_args!("values in enum {name}"),
    )?;
    let mut values: Vec<(i64, Arc<str>)> = Vec::with_capacity(count);
    let mut by_value: HashMap<i64, usize> = HashMap::with_capacity(count);
    let mut by_name: HashMap<Arc<str>, i64> = HashMap::with_capacity(count);
    let mut add = |span: Range<usize>, n: &str, v: i64| {
        p.name(&span, n, "enum value name")?;
        crate::work::step();
        if by_name.contains_key(n) {
            return Err(p.err(
                &span,
                format!("duplicate enum value name \"{n}\" in enum {name} (rename it)"),
            ));
        }
        if let Some(&i) = by_value.get(&v) {
            let m = &values[i].1;
            return Err(p.err(
                &span,
                format!(
                    "enum {name}: \"{n}\" and \"{m}\" both have the value {v} (give each its own)"
                ),
            ));
        }
        let n: Arc<str> = n.into();
        by_value.insert(v, values.len());
        by_name.insert(n.clone(), v);
        values.push((v, n));
        Ok(())
    };
    match values_v.get_ref() {
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                let n = p.str(item, "an enum value name")?;
                add(item.span(), n.get_ref(), i as i64)?;
            }
        }
        DeValue::Table(tab) => {
            for (k, v) in tab.iter() {
                let x = p.int(v, "an enum value")?;
                add(k.span(), k.get_ref(), x)?;
            }
        }
        _ => {
            return Err(p.err(
                &values_v.span(),
                "enum values are neither an array of names nor a table of numbers (write `values = [\"a\", \"b\"]` or `values = { a = 0, b = 5 }`)",
            ));
        }
    }
    if values.is_empty() {
        return Err(p.err(
            &values_v.span(),
            format!("enum {name} has no values (add one)"),
        ));
    }
    let min = values.iter().map(|v| v.0).min().unwrap_or(0);
    let max = values.iter().map(|v| v.0).max().unwrap_or(0);
    Ok(EnumDef {
        min,
        max,
        values,
        by_value,
        by_name,
    })
}

fn raw_field<'i>(p: &Parser<'_>, f: &'i Val<'i>) -> Result<RawField<'i>, SchemaError> {
    let t = p.table(f, "a field")?;
    let ty_v = get(t, "type").ok_or_else(|| {
        p.err(
            &f.span(),
            "field has no type (add `type = \"i32\"`, or a struct or enum name)",
        )
    })?;
    let ty = p.str(ty_v, "type")?;
    let name = get(t, "name").map(|v| p.str(v, "name")).transpose()?;
    let guard = match (get(t, "if"), get(t, "unless")) {
        (Some(_), Some(_)) => {
            return Err(p.err(&f.span(), "a field has both `if` and `unless` (keep one)"));
        }
        (Some(v), None) => Some((p.str(v, "if")?, true)),
        (None, Some(v)) => Some((p.str(v, "unless")?, false)),
        (None, None) => None,
    };
    Ok(RawField {
        span: f.span(),
        table: t,
        name,
        ty,
        guard,
    })
}

#[derive(Debug, Clone, Copy)]
enum State {
    Todo,
    Active,
    Done(usize),
}

struct Resolver<'a, 'i> {
    p: &'a Parser<'a>,
    raw: &'a [(Spanned<String>, Vec<RawField<'i>>)],
    types: &'a HashMap<String, (Range<usize>, TypeRef)>,
    enums: &'a [EnumDef],
    state: Vec<State>,
    structs: Vec<StructDef>,
    /// Structs being resolved, outermost first (for the cycle message).
    stack: Vec<usize>,
    raw_unions: &'a [RawUnion<'i>],
    /// Unions resolved so far, by their index among the raw ones.
    unions: Vec<Option<UnionDef>>,
    /// Field names copied so far (see [`MAX_COPIED_NAMES`]).
    copied: usize,
}

/// A struct's fields as they are resolved: its value layout, where each slot was named, and
/// by name the slot and the field that holds it (duplicate and sibling checks in O(1)).
#[derive(Default)]
struct Building {
    fields: Vec<Field>,
    layout: Vec<Arc<str>>,
    spans: Vec<Range<usize>>,
    slots: HashMap<Arc<str>, usize>,
    holders: Vec<usize>,
}

impl Building {
    /// Adds `f`; with `span` (where it is named) it holds a value: it takes the next slot,
    /// refused when a slot of that name exists.
    fn push(
        &mut self,
        p: &Parser<'_>,
        mut f: Field,
        span: Option<Range<usize>>,
    ) -> Result<(), SchemaError> {
        if let Some(span) = span {
            crate::work::step();
            if let Some(&i) = self.slots.get(&f.name) {
                return Err(duplicate_name(p, &self.spans[i], &f.name, &span));
            }
            f.slot = Some(self.layout.len());
            self.slots.insert(f.name.clone(), self.layout.len());
            self.holders.push(self.fields.len());
            self.layout.push(f.name.clone());
            self.spans.push(span);
        }
        self.fields.push(f);
        Ok(())
    }

    /// The slot of an earlier field named `g` whose kind passes `ok`.
    fn sibling(
        &self,
        p: &Parser<'_>,
        g: &Spanned<&str>,
        ok: impl Fn(&Kind) -> bool,
        what: &str,
    ) -> Result<usize, SchemaError> {
        crate::work::step();
        let found = self
            .slots
            .get(*g.get_ref())
            .map(|&slot| &self.fields[self.holders[slot]]);
        match found {
            Some(f) if ok(&f.kind) && f.guard.is_none() => Ok(f.slot.unwrap_or(0)),
            Some(_) => Err(p.err(
                &g.span(),
                format!(
                    "\"{}\" is not {what} field that is always present (refer to one)",
                    g.get_ref()
                ),
            )),
            None => Err(p.err(
                &g.span(),
                format!(
                    "no earlier field \"{}\" in this struct (refer to {what} field defined above this one)",
                    g.get_ref()
                ),
            )),
        }
    }
}

impl Resolver<'_, '_> {
    /// Resolves union `i` (its variants' body structs first); its index in the final list is
    /// `i` (every union is resolved, in order, before the list is built).
    fn union(&mut self, i: usize) -> Result<usize, SchemaError> {
        if self.unions[i].is_some() {
            return Ok(i);
        }
        let raw_unions = self.raw_unions;
        let ru = &raw_unions[i];
        let mut variants = Vec::with_capacity(ru.variants.len());
        let mut by_name = HashMap::with_capacity(ru.variants.len());
        let mut fewest = usize::MAX;
        for (vname, body) in &ru.variants {
            let (sid, layout) = match body {
                None => (None, vec![ru.tag.clone()]),
                Some(b) => {
                    let j = match self.types.get(b.get_ref()) {
                        Some((_, TypeRef::Struct(j))) => *j,
                        _ => {
                            return Err(self.p.err(
                                &b.span(),
                                format!(
                                    "variant body \"{}\" of union {} is not a struct defined in this file (add [struct.{}])",
                                    b.get_ref(),
                                    ru.name,
                                    b.get_ref()
                                ),
                            ));
                        }
                    };
                    let k = self.resolve(j, Some(&b.span()))?;
                    self.copy(&b.span(), self.structs[k].layout.len())?;
                    let body = &self.structs[k];
                    if body.layout.contains(&ru.tag) {
                        return Err(self.p.err(
                            &b.span(),
                            format!(
                                "struct {} has a field named \"{}\", which union {} uses for its tag (set tag_name = \"...\")",
                                b.get_ref(),
                                ru.tag,
                                ru.name
                            ),
                        ));
                    }
                    if let Some(at) = &body.end_at {
                        return Err(self.p.err(at, "`end` inside a union's variant (remove it)"));
                    }
                    let mut layout = vec![ru.tag.clone()];
                    layout.extend(body.layout.iter().cloned());
                    (Some(k), layout)
                }
            };
            fewest = fewest.min(sid.map_or(0, |k| self.structs[k].min_bits));
            let name: Arc<str> = vname.get_ref().as_str().into();
            crate::work::step();
            by_name.insert(name.clone(), variants.len());
            variants.push(UnionVariant {
                name,
                body: sid,
                layout: layout.into(),
            });
        }
        let n = variants.len() as i64;
        let tag_bits = bits_required(0, n - 1) as usize;
        let min_bits = tag_bits.saturating_add(fewest);
        let bodies = variants.iter().filter_map(|v| v.body);
        let cost = bodies
            .clone()
            .map(|k| self.structs[k].cost)
            .fold(Cost::flat(1, tag_bits), |c, body| {
                c.either(Cost::flat(1, tag_bits).then(body))
            });
        let depth = bodies.map(|k| self.structs[k].depth).max().unwrap_or(0);
        self.unions[i] = Some(UnionDef {
            tag: ru.tag.clone(),
            variants,
            by_name,
            min_bits,
            cost,
            depth,
        });
        Ok(i)
    }

    /// Resolves raw struct `i` and returns its index in `structs`; `from` is the span of the
    /// field that refers to it.
    fn resolve(&mut self, i: usize, from: Option<&Range<usize>>) -> Result<usize, SchemaError> {
        match self.state[i] {
            State::Done(j) => return Ok(j),
            State::Active => {
                return Err(cycle_error(
                    self.p,
                    self.raw,
                    &self.stack,
                    i,
                    from,
                    "struct",
                ));
            }
            State::Todo => {}
        }
        if self.stack.len() >= MAX_DEPTH {
            // Checked before recursing: the loader itself recurses once per level.
            return Err(too_deep(self.p, self.raw, &self.stack, i, from, "struct"));
        }
        self.state[i] = State::Active;
        self.stack.push(i);
        let mut b = Building::default();
        let mut end_at: Option<Range<usize>> = None;
        let raw = &self.raw[i].1;
        for rf in raw {
            let ty = *rf.ty.get_ref();
            if ty == "include" {
                self.include(i, rf, &mut b, &mut end_at)?;
                continue;
            }
            let kind = self.kind(rf, ty, &rf.ty.span(), Some(rf.table))?;
            if end_at.is_none() {
                end_at = match kind {
                    Kind::End => Some(rf.span.clone()),
                    _ => self.end_inside(&kind),
                };
            }
            let has_value = !matches!(kind, Kind::Align | Kind::Check(_) | Kind::End);
            let name: Arc<str> = match (&rf.name, &kind) {
                (Some(n), _) => {
                    self.p.name(&n.span(), n.get_ref(), "field name")?;
                    (*n.get_ref()).into()
                }
                (None, Kind::Check(label)) => label.as_str().into(),
                (None, Kind::Align) => "align".into(),
                (None, Kind::End) => "end".into(),
                (None, _) => {
                    return Err(self.p.err(
                        &rf.span,
                        format!("a {ty} field has no name (add `name = \"...\"`)"),
                    ));
                }
            };
            let guard = match &rf.guard {
                None => None,
                Some((g, when)) => {
                    let slot = b.sibling(self.p, g, |k| matches!(k, Kind::Bool), "a bool")?;
                    Some((slot, *when))
                }
            };
            let named_previous = get(rf.table, "previous")
                .filter(|v| v.get_ref().is_str())
                .map(|v| self.p.str(v, "previous"))
                .transpose()?;
            let kind = match (kind, named_previous) {
                (Kind::ObjectIndex { max_objects, .. }, Some(pv)) => Kind::ObjectIndex {
                    max_objects,
                    previous: Prev::Slot(b.sibling(self.p, &pv, is_integer, "an integer")?),
                },
                (Kind::IntRelative { .. }, Some(pv)) => Kind::IntRelative {
                    previous: Prev::Slot(b.sibling(self.p, &pv, is_integer, "an integer")?),
                },
                (Kind::BitRun { table, .. }, _) => {
                    let by_v = get(rf.table, "by").ok_or_else(|| {
                        self.p.err(
                            &rf.span,
                            "bit_run field without `by` (add `by = \"field\"`)",
                        )
                    })?;
                    let by = self.p.str(by_v, "by")?;
                    let by = b.sibling(self.p, &by, crate::bit_run::can_pick, "an integer")?;
                    Kind::BitRun { by, table }
                }
                (k, _) => k,
            };
            let span = has_value.then(|| rf.name.as_ref().map_or(rf.span.clone(), |n| n.span()));
            let field = Field {
                name,
                kind,
                guard,
                slot: None,
            };
            b.push(self.p, field, span)?;
        }
        self.stack.pop();
        let Building { fields, layout, .. } = b;
        let min_bits = fields
            .iter()
            .filter(|f| f.guard.is_none())
            .map(|f| min_bits_with(&f.kind, &self.structs, self.enums, &self.unions))
            .fold(0usize, usize::saturating_add);
        let cost = fields.iter().fold(Cost::default(), |c, f| {
            c.then(cost(&f.kind, &self.structs, self.enums, &self.unions))
        });
        let depth = fields
            .iter()
            .map(|f| depth(&f.kind, &self.structs, &self.unions))
            .max()
            .unwrap_or(0);
        self.bounded(i, cost, depth)?;
        let def = StructDef {
            fields,
            layout: layout.into(),
            min_bits,
            cost,
            depth,
            end_at,
        };
        self.structs.push(def);
        let j = self.structs.len() - 1;
        self.state[i] = State::Done(j);
        Ok(j)
    }

    /// Refuses struct `i` when a reader could record too many entries for it (see [`Cost`]) or
    /// when it nests too deep.
    fn bounded(&self, i: usize, cost: Cost, depth: usize) -> Result<(), SchemaError> {
        let name = &self.raw[i].0;
        let why = if cost.fixed > MAX_FIXED_ENTRIES {
            format!(
                "struct {} makes a reader record {} fields and scopes that take no bits, more \
                 than {MAX_FIXED_ENTRIES}: a few bytes would keep it busy (nest fewer struct \
                 references in it, or put repeated parts in an array)",
                name.get_ref(),
                cost.fixed
            )
        } else if cost.per_unit > MAX_ENTRIES_PER_BIT {
            format!(
                "struct {} makes a reader record {:.1} fields per bit it reads, more than \
                 {MAX_ENTRIES_PER_BIT}: its array elements hold many fields that take no bits \
                 (give each element fewer of them, or a field that takes bits)",
                name.get_ref(),
                cost.per_unit
            )
        } else if depth > MAX_DEPTH {
            format!(
                "struct {} nests structs and arrays {depth} levels deep, more than {MAX_DEPTH} \
                 (flatten some levels)",
                name.get_ref()
            )
        } else {
            return Ok(());
        };
        Err(self.p.err(&name.span(), why))
    }

    /// Where an `end` field is inside a field of `kind` (a struct, or an array or sparse array
    /// of structs).
    fn end_inside(&self, kind: &Kind) -> Option<Range<usize>> {
        match kind {
            Kind::Struct(k) | Kind::Sparse { element: k, .. } => self.structs[*k].end_at.clone(),
            Kind::Array { element, .. } => self.end_inside(element),
            _ => None,
        }
    }

    /// Counts `n` more field names copied (an include, a union variant's or a sparse array
    /// element's layout), refused at `span` past [`MAX_COPIED_NAMES`] in all.
    fn copy(&mut self, span: &Range<usize>, n: usize) -> Result<(), SchemaError> {
        crate::work::steps(n);
        self.copied = self.copied.saturating_add(n);
        if self.copied > MAX_COPIED_NAMES {
            return Err(self.p.err(
                span,
                format!(
                    "the schema's includes, unions and sparse arrays copy more than \
                     {MAX_COPIED_NAMES} field names in all (SCHEMA.md, \"Bounds\": include large \
                     structs as a struct field instead)"
                ),
            ));
        }
        Ok(())
    }

    /// Splices the fields of the struct an `include` names (`rf`) into struct `i`'s fields.
    fn include(
        &mut self,
        i: usize,
        rf: &RawField<'_>,
        b: &mut Building,
        end_at: &mut Option<Range<usize>>,
    ) -> Result<(), SchemaError> {
        self.check_keys(rf, "include")?;
        if rf.name.is_some() || rf.guard.is_some() {
            return Err(self.p.err(
                &rf.span,
                "an include takes no name, if or unless (its fields keep their own)",
            ));
        }
        let sv = get(rf.table, "struct").ok_or_else(|| {
            self.p.err(
                &rf.span,
                "include without a struct (add `struct = \"Name\"`)",
            )
        })?;
        let sname = self.p.string(sv, "struct")?;
        let j = match self.types.get(sname.get_ref()) {
            Some((_, TypeRef::Struct(j))) => *j,
            _ => return Err(self.unknown_type(&sname)),
        };
        let k = self.resolve(j, Some(&sname.span()))?;
        let more = self.structs[k].fields.len();
        if b.fields.len() + more > MAX_COUNT {
            return Err(self.p.err(
                &sname.span(),
                format!(
                    "struct {} holds more than {MAX_COUNT} fields once {} is included \
                     (SCHEMA.md, \"Bounds\": split it up)",
                    self.raw[i].0.get_ref(),
                    sname.get_ref()
                ),
            ));
        }
        self.copy(&sname.span(), more)?;
        let inc = self.structs[k].clone();
        *end_at = end_at.take().or(inc.end_at.clone());
        let base = b.layout.len();
        for mut f in inc.fields {
            if let Some((g, _)) = &mut f.guard {
                *g += base;
            }
            match &mut f.kind {
                Kind::ObjectIndex {
                    previous: Prev::Slot(s),
                    ..
                }
                | Kind::IntRelative {
                    previous: Prev::Slot(s),
                }
                | Kind::BitRun { by: s, .. } => *s += base,
                _ => {}
            }
            // Its slot, `base` + its own, is the next one: `push` gives it.
            let span = f.slot.take().map(|_| sname.span());
            b.push(self.p, f, span)?;
        }
        Ok(())
    }

    fn unknown_type(&self, ty: &Spanned<String>) -> SchemaError {
        // At most 24 of the schema's own names: a schema may define 65,536 (one line of error).
        const LISTED: usize = 24;
        let mut user: Vec<&str> = self.types.keys().map(String::as_str).collect();
        user.sort_unstable();
        let more = user.len().saturating_sub(LISTED);
        user.truncate(LISTED);
        let user = match (user.is_empty(), more) {
            (true, _) => String::new(),
            (false, 0) => format!(", or one defined here: {}", user.join(", ")),
            (false, n) => format!(", or one defined here: {}, and {n} more", user.join(", ")),
        };
        self.p.err(
            &ty.span(),
            format!(
                "unknown type {} (use a built-in type: {}{user})",
                crate::names::shown(ty.get_ref()),
                BUILTINS.join(", ")
            ),
        )
    }

    fn check_keys(&self, rf: &RawField<'_>, ty: &str) -> Result<(), SchemaError> {
        let extra = keys_of(ty);
        for (k, _) in rf.table.iter() {
            let k_s: &str = k.get_ref();
            if !COMMON_KEYS.contains(&k_s) && !extra.contains(&k_s) {
                let mut allowed: Vec<&str> = COMMON_KEYS.to_vec();
                allowed.extend_from_slice(extra);
                return Err(self.p.err(
                    &k.span(),
                    format!(
                        "unknown key \"{k_s}\" for a field of type {ty} (expected one of {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The value of `key`, which a field of this type must have (`why`: how to add it).
    fn need<'a, 'i>(
        &self,
        f: Params<'a, 'i>,
        key: &str,
        why: &str,
    ) -> Result<&'a Val<'i>, SchemaError> {
        get(f.t, key).ok_or_else(|| {
            self.p
                .err(f.span, format!("{} field without `{key}` ({why})", f.ty))
        })
    }

    /// The kind of a field of type `ty`; `t` holds its parameters (`None` for an array element
    /// given by a bare type name). One method per family of types below.
    fn kind(
        &mut self,
        rf_span_src: &RawField<'_>,
        ty: &str,
        ty_span: &Range<usize>,
        t: Option<&DeTable<'_>>,
    ) -> Result<Kind, SchemaError> {
        if t.is_some() {
            self.check_keys(rf_span_src, ty)?;
        }
        if let Some(kind) = plain_kind(ty) {
            return Ok(kind);
        }
        let empty = DeTable::new();
        let f = Params {
            t: t.unwrap_or(&empty),
            span: &rf_span_src.span,
            ty,
        };
        match ty {
            "int" | "int64" => self.int_range(f),
            "int128" => self.int128_range(f),
            "fixed" => self.fixed_point(f),
            "bits" => self.bits(f),
            "compressed_float" | "compressed_vector" => {
                let spec = self.compressed_params(f)?;
                Ok(if ty == "compressed_float" {
                    Kind::CompressedFloat(spec)
                } else {
                    Kind::CompressedVector(spec)
                })
            }
            "quaternion" => self.quaternion(f),
            "string" | "wstring" | "bytes" => self.text(f),
            "array" => self.array(rf_span_src, f),
            "sparse_array" => self.sparse_array(f),
            "object_index" | "int_relative" => self.relative(f),
            "check" => self.check_label(f),
            "bit_run" => crate::bit_run::kind(self.p, f.t, f.span),
            _ => match self.types.get(ty) {
                Some((_, TypeRef::Enum(e))) => Ok(Kind::Enum(*e)),
                Some((_, TypeRef::Union(u))) => {
                    let u = *u;
                    Ok(Kind::Union(self.union(u)?))
                }
                Some((_, TypeRef::Struct(j))) => {
                    let j = *j;
                    Ok(Kind::Struct(self.resolve(j, Some(ty_span))?))
                }
                None => Err(self.unknown_type(&Spanned::new(ty_span.clone(), ty.to_owned()))),
            },
        }
    }

    /// `min <= max`, else an error at `min`.
    fn ordered<T: PartialOrd + std::fmt::Display>(
        &self,
        min_v: &Val<'_>,
        min: T,
        max: T,
    ) -> Result<(), SchemaError> {
        if min > max {
            return Err(self.p.err(
                &min_v.span(),
                format!("min {min} is greater than max {max} (swap them, or fix one)"),
            ));
        }
        Ok(())
    }

    /// `int` and `int64`: an integer in `min..=max` within 64 bits.
    fn int_range(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let p = self.p;
        let min_v = self.need(f, "min", "give the smallest value: `min = 0`")?;
        let max_v = self.need(f, "max", "give the largest value: `max = 100`")?;
        let min = p.int(min_v, "min")?;
        let max = p.int(max_v, "max")?;
        self.ordered(min_v, min, max)?;
        Ok(Kind::Int { min, max })
    }

    /// `int128`: an integer in `min..=max` within 128 bits.
    fn int128_range(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let p = self.p;
        let min_v = self.need(
            f,
            "min",
            "give the smallest value: `min = 0`, or a string of digits beyond 64 bits",
        )?;
        let max_v = self.need(
            f,
            "max",
            "give the largest value: `max = 100`, or a string of digits beyond 64 bits",
        )?;
        let min = p.int128(min_v, "min")?;
        let max = p.int128(max_v, "max")?;
        self.ordered(min_v, min, max)?;
        Ok(Kind::Int128 { min, max })
    }

    /// `fixed`: a Q-format number of `integer_bits` and `fraction_bits` in whole-unit bounds.
    fn fixed_point(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let Params { t, .. } = f;
        let p = self.p;
        let ib_v = self.need(
            f,
            "integer_bits",
            "give the Q format's integer bits, sign included: `integer_bits = 8` for Q8.8",
        )?;
        let fb_v = self.need(
            f,
            "fraction_bits",
            "give the Q format's fraction bits: `fraction_bits = 8` for Q8.8",
        )?;
        let min_v = self.need(
            f,
            "min",
            "give the smallest value in whole units: `min = -100`",
        )?;
        let max_v = self.need(
            f,
            "max",
            "give the largest value in whole units: `max = 100`",
        )?;
        let unsigned = match get(t, "unsigned") {
            Some(v) => v
                .get_ref()
                .as_bool()
                .ok_or_else(|| p.err(&v.span(), "unsigned must be true or false"))?,
            None => false,
        };
        let ib = p.count(ib_v, "integer_bits")?;
        let fb = p.count(fb_v, "fraction_bits")?;
        let min = p.int(min_v, "min")?;
        let max = p.int(max_v, "max")?;
        let bits = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let spec = FixedPoint::new(bits(ib), bits(fb), !unsigned, min, max)
            .map_err(|e| p.err(&ib_v.span(), e))?;
        Ok(Kind::Fixed(spec))
    }

    /// `bits`: an unsigned value of 1 to 64 bits.
    fn bits(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let p = self.p;
        let v = self.need(f, "bits", "give the width: `bits = 12`")?;
        let n = p.int(v, "bits")?;
        if !(1..=64).contains(&n) {
            return Err(p.err(&v.span(), format!("bits = {n} (use 1 to 64)")));
        }
        Ok(Kind::Bits(n as u32))
    }

    /// `quaternion`: smallest-three with `bits` per component.
    fn quaternion(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let p = self.p;
        let v = self.need(f, "bits", "give the bits per component: `bits = 10`")?;
        let n = p.int(v, "bits")?;
        let spec = u32::try_from(n)
            .map_err(|_| n.to_string())
            .and_then(SmallestThree::new)
            .map_err(|e| {
                p.err(
                    &v.span(),
                    format!("quaternion bits = {n}: {e} (use 2 to 16 bits; 9 to 12 is usual)"),
                )
            })?;
        Ok(Kind::Quaternion(spec))
    }

    /// `string`, `wstring` (bounded by `max_len`) and `bytes` (of a fixed `len`).
    fn text(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let Params { ty, .. } = f;
        let p = self.p;
        match ty {
            "string" => {
                let v = self.need(
                    f,
                    "max_len",
                    "a string's length needs an upper bound: add `max_len = 31`",
                )?;
                let max_len = p.count(v, "max_len")?;
                Ok(Kind::Str { max_len })
            }
            "wstring" => {
                let v = self.need(f, "max_len",
                    "a wide string's length in UTF-16 units needs an upper bound (buffer_size - 1): add `max_len = 31`",
                )?;
                Ok(Kind::WStr {
                    max_len: p.count(v, "max_len")?,
                })
            }
            _ => {
                let v = self.need(f, "len", "give the fixed length in bytes: `len = 16`")?;
                let len = p.count(v, "len")?;
                if len > 1 << 24 {
                    return Err(p.err(
                        &v.span(),
                        format!("bytes len {len} is beyond any packet (use at most 16777216)"),
                    ));
                }
                Ok(Kind::Bytes { len })
            }
        }
    }

    /// `array`: a count in `0..=max_len`, then that many elements of one kind.
    fn array(
        &mut self,
        rf_span_src: &RawField<'_>,
        f: Params<'_, '_>,
    ) -> Result<Kind, SchemaError> {
        let p = self.p;
        let v = self.need(
            f,
            "max_len",
            "an array count needs an upper bound: add `max_len = 32`",
        )?;
        let max_len = p.count(v, "max_len")?;
        let ev = self.need(f, "element", "give the element type: `element = \"u8\"` or `element = { type = \"int\", min = 0, max = 9 }`")?;
        let element = self.element(rf_span_src, ev)?;
        if matches!(element, Kind::BitRun { .. }) {
            return Err(p.err(
                &ev.span(),
                "an array element cannot be a bit_run (its count comes from a field of the struct: make the element a struct holding that field and the run)",
            ));
        }
        if matches!(
            element,
            Kind::ObjectIndex {
                previous: Prev::Slot(_),
                ..
            } | Kind::IntRelative {
                previous: Prev::Slot(_)
            }
        ) {
            return Err(p.err(
                &ev.span(),
                "an array element cannot take `previous` from a field (use a constant)",
            ));
        }
        let min_element_bits = min_bits_with(&element, &self.structs, self.enums, &self.unions);
        if min_element_bits == 0 {
            return Err(p.err(
                &ev.span(),
                "an array element that can take no bits cannot be bounded by the packet's \
                 size: a few bytes could claim max_len elements (give the element a field \
                 that takes bits)",
            ));
        }
        Ok(Kind::Array {
            max_len,
            min_element_bits,
            element: Box::new(element),
        })
    }

    /// An array's `element`: a type name, or an inline table of a type and its keys.
    fn element(&mut self, rf_span_src: &RawField<'_>, ev: &Val<'_>) -> Result<Kind, SchemaError> {
        let p = self.p;
        match ev.get_ref() {
            DeValue::String(_) => {
                let et = p.str(ev, "element")?;
                if matches!(*et.get_ref(), "check" | "align" | "end" | "include") {
                    return Err(p.err(
                        &et.span(),
                        format!(
                            "an array element cannot be {} (use a value type)",
                            et.get_ref()
                        ),
                    ));
                }
                let inner = RawField {
                    span: ev.span(),
                    table: rf_span_src.table,
                    name: None,
                    ty: et.clone(),
                    guard: None,
                };
                self.kind(&inner, et.get_ref(), &et.span(), None)
            }
            DeValue::Table(et) => {
                let inner = raw_field(p, ev)?;
                if inner.name.is_some() || inner.guard.is_some() {
                    return Err(
                        p.err(&ev.span(), "an array element takes no name, if or unless (remove them: elements are named `name[i]`)")
                    );
                }
                let ty = *inner.ty.get_ref();
                if matches!(ty, "check" | "align" | "end" | "include") {
                    return Err(p.err(
                        &inner.ty.span(),
                        format!("an array element cannot be {ty} (use a value type)"),
                    ));
                }
                self.kind(&inner, ty, &inner.ty.span(), Some(et))
            }
            _ => Err(p.err(
                &ev.span(),
                "element is neither a type name nor a table (write `element = \"u8\"` or `element = { type = \"int\", min = 0, max = 9 }`)",
            )),
        }
    }

    /// `sparse_array`: relative object indices and a struct's fields, up to a sentinel.
    fn sparse_array(&mut self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let Params { t, .. } = f;
        let p = self.p;
        let v = self.need(
            f,
            "max_objects",
            "give the number of object slots (the end-of-list sentinel): `max_objects = 4096`",
        )?;
        let max_objects = p.int(v, "max_objects")?;
        if !(1..=i64::from(i32::MAX)).contains(&max_objects) {
            return Err(p.err(
                &v.span(),
                format!("max_objects = {max_objects} (use 1 to 2147483647)"),
            ));
        }
        let ev = self.need(
            f,
            "element",
            "give the element struct: `element = \"RigidBody\"`",
        )?;
        let en = p.string(ev, "element")?;
        let j = match self.types.get(en.get_ref()) {
            Some((_, TypeRef::Struct(j))) => *j,
            _ => {
                return Err(p.err(&en.span(), format!("sparse_array element \"{}\" is not a struct defined in this file (define [struct.{}])", en.get_ref(), en.get_ref())));
            }
        };
        let k = self.resolve(j, Some(&en.span()))?;
        let index_name: Arc<str> = match get(t, "index_name") {
            Some(v) => {
                let n = p.string(v, "index_name")?;
                p.name(&n.span(), n.get_ref(), "index_name")?;
                n.into_inner().into()
            }
            None => "index".into(),
        };
        self.copy(&en.span(), self.structs[k].layout.len())?;
        let elem = &self.structs[k];
        if elem.layout.contains(&index_name) {
            return Err(p.err(&en.span(), format!("struct {} has a field named \"{index_name}\", which the sparse array uses for the object index (set index_name = \"...\")", en.get_ref())));
        }
        let mut layout = vec![index_name];
        layout.extend(elem.layout.iter().cloned());
        Ok(Kind::Sparse {
            max_objects,
            element: k,
            layout: layout.into(),
        })
    }

    /// `object_index` and `int_relative`: values sent relative to a `previous` one.
    fn relative(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let Params { t, ty, .. } = f;
        let p = self.p;
        if ty == "object_index" {
            let v = self.need(
                f,
                "max_objects",
                "give the number of object slots: `max_objects = 4096`",
            )?;
            let max_objects = p.int(v, "max_objects")?;
            if !(0..=i64::from(i32::MAX)).contains(&max_objects) {
                return Err(p.err(
                    &v.span(),
                    format!("max_objects = {max_objects} (use 0 to 2147483647)"),
                ));
            }
            return Ok(Kind::ObjectIndex {
                max_objects,
                previous: self.previous(t)?,
            });
        }
        let previous = self.previous(t)?;
        if let (Prev::Const(c), Some(v)) = (&previous, get(t, "previous"))
            && i32::try_from(*c).is_err()
        {
            return Err(p.err(
                &v.span(),
                format!(
                    "previous = {c} is not a 32-bit signed integer (int_relative is \
                     serialize 1.0's: use -2147483648 to 2147483647)"
                ),
            ));
        }
        Ok(Kind::IntRelative { previous })
    }

    /// `check`: a marker with a short label.
    fn check_label(&self, f: Params<'_, '_>) -> Result<Kind, SchemaError> {
        let p = self.p;
        let v = self.need(f, "label", "give the marker's label: `label = \"header\"`")?;
        let label = p.string(v, "label")?;
        if let Some(why) = crate::names::label(label.get_ref()) {
            return Err(p.err(
                &label.span(),
                format!(
                    "check label {} {why} (write a short label on one line)",
                    crate::names::shown(label.get_ref())
                ),
            ));
        }
        Ok(Kind::Check(label.into_inner()))
    }

    /// Keys that one form of a compressed float takes and the other does not: an error at the
    /// first of `keys` that `t` holds.
    fn refuse_keys(
        &self,
        t: &DeTable<'_>,
        keys: [&str; 2],
        why: fn(&str) -> String,
    ) -> Result<(), SchemaError> {
        for key in keys {
            if let Some(v) = get(t, key) {
                return Err(self.p.err(&v.span(), why(key)));
            }
        }
        Ok(())
    }

    /// The parameters of every compressed form (`compressed_float`, `compressed_vector`):
    /// either the range (`min`, `max`, `resolution`) or serialize 1.0's precomputed wire
    /// constants (`min`, `delta`, `max_integer_value` and, optionally, `bits`, checked against
    /// `max_integer_value`). A range that is not stable is a warning.
    fn compressed_params(&self, f: Params<'_, '_>) -> Result<CompressedFloat, SchemaError> {
        let Params { t, span, .. } = f;
        let precomputed = get(t, "max_integer_value").is_some();
        let (refused, other): ([&str; 2], fn(&str) -> String) = if precomputed {
            (["max", "resolution"], |key: &str| {
                format!(
                    "`{key}` with `max_integer_value`: give either the range (`max`, `resolution`) or its precomputed constants (`delta`, `max_integer_value`), not both"
                )
            })
        } else {
            (["delta", "bits"], |key: &str| {
                format!(
                    "`{key}` is a precomputed constant: give it with `max_integer_value` (and `min`, `delta`), or use `max` and `resolution`"
                )
            })
        };
        self.refuse_keys(t, refused, other)?;
        let min_v = self.need(f, "min", "give the smallest value: `min = -512.0`")?;
        let (spec, at, res) = if precomputed {
            let spec = self.compressed_constants(f, min_v)?;
            let step = spec.delta() / spec.steps() as f32;
            (spec, span.clone(), step)
        } else {
            let (spec, res) = self.compressed_range(f, min_v)?;
            (spec, min_v.span(), res)
        };
        if !spec.is_stable() {
            self.p.warn(&at, unstable_range(&spec, res));
        }
        Ok(spec)
    }

    /// A compressed float's range form: `max` and `resolution` after `min`; the spec and its
    /// resolution.
    fn compressed_range(
        &self,
        f: Params<'_, '_>,
        min_v: &Val<'_>,
    ) -> Result<(CompressedFloat, f32), SchemaError> {
        let p = self.p;
        let max_v = self.need(f, "max", "give the largest value: `max = 512.0`")?;
        let res_v = self.need(f, "resolution", "give the step: `resolution = 0.01`")?;
        let min = p.float(min_v, "min")?;
        let max = p.float(max_v, "max")?;
        let res = p.float(res_v, "resolution")?;
        self.ordered(min_v, min, max)?;
        // A resolution too fine for a 32-bit code first: said with one that fits (the
        // constructor would refuse the infinite counts among them without it).
        if let Some(coarsest) = too_fine(min, max, res) {
            return Err(p.err(
                &res_v.span(),
                format!(
                    "resolution {} asks for {} steps of {}..={}, more than the {} a \
                     compressed float's 32-bit code holds (use `resolution = \
                     {coarsest}` or coarser)",
                    short(res),
                    match (max - min) / res {
                        steps if steps.is_finite() => short(steps),
                        _ => format!("over {}", short(f32::MAX)),
                    },
                    short(min),
                    short(max),
                    MAX_STEPS as u32
                ),
            ));
        }
        let spec = CompressedFloat::new(min, max, res).map_err(|e| {
            p.err(
                &min_v.span(),
                format!("{e} (use finite bounds, min < max, resolution > 0)"),
            )
        })?;
        Ok((spec, res))
    }

    /// A compressed float's precomputed form: `delta`, `max_integer_value` and `bits` after
    /// `min` (serialize 1.0's precomputed entry point).
    fn compressed_constants(
        &self,
        f: Params<'_, '_>,
        min_v: &Val<'_>,
    ) -> Result<CompressedFloat, SchemaError> {
        let Params { t, .. } = f;
        let p = self.p;
        let delta_v = self.need(f, "delta", "give max - min as an f32: `delta = 1024.0`")?;
        let m_v = get(t, "max_integer_value").unwrap_or(min_v);
        let min = p.float(min_v, "min")?;
        let delta = p.float(delta_v, "delta")?;
        let m = p.count(m_v, "max_integer_value")?;
        let max_integer_value = u32::try_from(m).map_err(|_| {
            p.err(
                &m_v.span(),
                format!("max_integer_value {m} (use 1 to 4294967040)"),
            )
        })?;
        let bits = match get(t, "bits") {
            Some(v) => u32::try_from(p.count(v, "bits")?).unwrap_or(u32::MAX),
            None => bits_required(0, i64::from(max_integer_value)),
        };
        let params = bitlens_codec::quantize::CompressedFloatParams {
            max_integer_value,
            bits,
            delta,
        };
        CompressedFloat::from_params(min, params).map_err(|e| {
            let at = get(t, "bits").filter(|_| e.contains("bits")).unwrap_or(m_v);
            p.err(
                &at.span(),
                format!("{e} (give the constants a schema compiler derives)"),
            )
        })
    }

    /// `previous = -1` (a constant) or `previous = "field"` (resolved by the caller).
    fn previous(&self, t: &DeTable<'_>) -> Result<Prev, SchemaError> {
        match get(t, "previous") {
            None => Ok(Prev::Const(-1)),
            Some(v) if v.get_ref().is_str() => Ok(Prev::Slot(usize::MAX)),
            Some(v) => Ok(Prev::Const(self.p.int(v, "previous")?)),
        }
    }
}

/// The kind of a built-in type that takes no parameters, `None` for every other type.
fn plain_kind(ty: &str) -> Option<Kind> {
    let full = |min: i64, max: i64| Kind::Int { min, max };
    Some(match ty {
        "bool" => Kind::Bool,
        "i8" => full(i8::MIN.into(), i8::MAX.into()),
        "i16" => full(i16::MIN.into(), i16::MAX.into()),
        "i32" => full(i32::MIN.into(), i32::MAX.into()),
        "i64" => full(i64::MIN, i64::MAX),
        "u8" => full(0, u8::MAX.into()),
        "u16" => full(0, u16::MAX.into()),
        "u32" => full(0, u32::MAX.into()),
        "u64" => Kind::U64,
        "u128" => Kind::U128,
        "f32" => Kind::F32,
        "f64" => Kind::F64,
        "align" => Kind::Align,
        "end" => Kind::End,
        _ => return None,
    })
}

/// The warning for a compressed float range that is not stable, with a resolution that is.
fn unstable_range(spec: &CompressedFloat, res: f32) -> String {
    let (min, max) = (spec.min(), spec.max());
    let why = if spec.steps() > MAX_STABLE_STEPS {
        format!(
            "its {} steps are more than 2^23 + 1, and some codes are never written",
            spec.steps()
        )
    } else {
        format!(
            "some of its {} codes read back as a value that writes another code",
            spec.steps()
        )
    };
    // The finest resolution the cheap bound proves stable: at most 2^20 steps of at least 4
    // ulps of the largest magnitude, rounded up to two digits (and up again until it holds).
    let largest = min.abs().max(max.abs());
    let ulp = f32::from_bits(largest.to_bits() + 1) - largest;
    let finest = f64::from((4.0 * ulp).max(spec.delta() / STABLE_STEPS_BY_BOUND as f32));
    let unit = 10f64.powi(finest.log10().floor() as i32 - 1);
    let mut digits = (finest / unit).ceil();
    let mut stable = (digits * unit) as f32;
    for _ in 0..64 {
        match CompressedFloat::new(min, max, stable) {
            Ok(c) if c.is_stable_by_bound() => break,
            _ => {
                digits += 1.0;
                stable = (digits * unit) as f32;
            }
        }
    }
    format!(
        "compressed float {min}..={max} at {} is not stable ({why}): a packet read with it may \
         not re-encode to the same bytes (a resolution of {} or coarser is stable; see WIRE.md, \
         \"Compressed floats\")",
        short(res),
        short(stable)
    )
}

/// For a compressed float whose resolution asks for more steps than a 32-bit code holds
/// ([`MAX_STEPS`]; the codec would clamp them silently), a resolution that fits, written as the
/// schema should say it: two significant digits, rounded up. `None` when `res` fits.
fn too_fine(min: f32, max: f32, res: f32) -> Option<String> {
    // Only for a range and a step that are numbers: with a NaN or an infinity nothing fits, and
    // the search below would never end (the schema_load corpus found `max = nan`); the caller
    // refuses those otherwise.
    if ![min, max, res, max - min].iter().all(|x| x.is_finite()) || res <= 0.0 {
        return None;
    }
    // The codec's own count: one `f32` division (quantize.rs).
    let fits = |r: f32| (max - min) / r <= MAX_STEPS;
    if fits(res) {
        return None;
    }
    let least = f64::from(max - min) / f64::from(MAX_STEPS);
    let unit = 10f64.powi(least.log10().floor() as i32 - 1);
    let mut digits = (least / unit).ceil();
    // At most a few steps: the rounding of `digits * unit` to f32 may land just below.
    let mut r = (digits * unit) as f32;
    for _ in 0..64 {
        if fits(r) {
            break;
        }
        digits += 1.0;
        r = (digits * unit) as f32;
    }
    Some(short(r))
}

/// A float as a schema writes it: plain between 1e-4 and 1e6, in exponent form (`2.4e-10`, valid
/// TOML) outside.
fn short(x: f32) -> String {
    if x == 0.0 || (1e-4..1e6).contains(&x.abs()) || !x.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn is_integer(k: &Kind) -> bool {
    matches!(
        k,
        Kind::Int { .. }
            | Kind::Int128 { .. }
            | Kind::ObjectIndex { .. }
            | Kind::IntRelative { .. }
    )
}

/// An object index or a relative integer: a scope, a one-bit flag per tier tried, then the
/// difference (which may take no bits: `int(126, 126)`), so `k + 2` entries for at least `k`
/// bits, `k >= 1`: two per bit, and two more for a read that stops inside it. (Counted as one
/// entry before, the `schema_load` target found a sparse array of 32 objects whose trace held 42
/// entries over a bound of 37.)
const RELATIVE: Cost = Cost {
    per_unit: 2.0,
    fixed: 0,
    unpaid: 2,
};

/// The most trace entries a value of `kind` records (see [`Cost`]), counted as the interpreter
/// and the streams record them: a scope per struct, union, array, string, vector and
/// quaternion, an `[i]` scope per element, padding before bytes and checks (`unions`: those
/// resolved so far).
pub(crate) fn cost(
    kind: &Kind,
    structs: &[StructDef],
    enums: &[EnumDef],
    unions: &[Option<UnionDef>],
) -> Cost {
    let flat = |entries| Cost::flat(entries, min_bits_with(kind, structs, enums, unions));
    let union = |u: usize| unions.get(u).and_then(Option::as_ref).map(|d| d.cost);
    match kind {
        Kind::Bool
        | Kind::Int { .. }
        | Kind::Enum(_)
        | Kind::Bits(_)
        | Kind::U64
        | Kind::F32
        | Kind::F64
        | Kind::CompressedFloat(_)
        | Kind::Align
        | Kind::End => flat(1),
        Kind::ObjectIndex { .. } | Kind::IntRelative { .. } => RELATIVE,
        // Up to two groups of 64 bits; padding and the bytes, or the check.
        Kind::Int128 { .. } | Kind::U128 | Kind::Fixed(_) | Kind::Bytes { .. } | Kind::Check(_) => {
            flat(2)
        }
        // A scope, its length, padding and the bytes.
        Kind::Str { .. } => flat(4),
        // A scope, its length, the `utf16` scope; per 32-bit code unit an `[i]` and its value.
        Kind::WStr { .. } => Cost::repeated(Cost::flat(1, 32), 32, 3),
        Kind::BitRun { .. } => crate::bit_run::cost(),
        // A scope and three components.
        Kind::CompressedVector(_) => flat(4),
        // A scope, `largest` and three codes.
        Kind::Quaternion(_) => flat(5),
        Kind::Struct(s) => structs[*s].cost.scoped(structs[*s].min_bits),
        Kind::Union(u) => union(*u)
            .unwrap_or_default()
            .scoped(min_bits_with(kind, structs, enums, unions)),
        Kind::Array {
            element,
            min_element_bits,
            ..
        } => {
            // A struct's or union's element fields go straight into its `[i]` scope.
            let e = match **element {
                Kind::Struct(s) => structs[s].cost,
                Kind::Union(u) => union(u).unwrap_or_default(),
                ref k => cost(k, structs, enums, unions),
            };
            // The array's scope and its count.
            Cost::repeated(e, *min_element_bits, 2)
        }
        Kind::Sparse { element, .. } => {
            // Per element an `[i]` scope, the object index, the struct's fields; the sentinel
            // index under its own `[i]`.
            let e = RELATIVE.then(structs[*element].cost);
            let bits = 1 + structs[*element].min_bits;
            // The array's scope, the sentinel's `[i]`, and its index's scope and value (its
            // flags are paid by their bits, as an element's).
            Cost::repeated(e, bits, 4)
        }
    }
}

/// Levels of structs, unions and arrays inside a value of `kind`.
pub(crate) fn depth(kind: &Kind, structs: &[StructDef], unions: &[Option<UnionDef>]) -> usize {
    match kind {
        Kind::Struct(s) | Kind::Sparse { element: s, .. } => 1 + structs[*s].depth,
        Kind::Union(u) => {
            1 + unions
                .get(*u)
                .and_then(Option::as_ref)
                .map_or(0, |d| d.depth)
        }
        Kind::Array { element, .. } => 1 + depth(element, structs, unions),
        Kind::BitRun { .. } => 1,
        _ => 0,
    }
}

/// Fewest bits a value of `kind` takes: a lower bound the array reader checks against the bits
/// that remain before it allocates (`unions`: those resolved so far).
pub(crate) fn min_bits_with(
    kind: &Kind,
    structs: &[StructDef],
    enums: &[EnumDef],
    unions: &[Option<UnionDef>],
) -> usize {
    match kind {
        Kind::Bool => 1,
        Kind::Int { min, max } => bits_required(*min, *max) as usize,
        Kind::Bits(n) => *n as usize,
        Kind::U64 | Kind::F64 => 64,
        Kind::Int128 { min, max } => bits_required128(*min, *max) as usize,
        Kind::U128 => 128,
        Kind::Fixed(q) => q.width() as usize,
        Kind::WStr { max_len } => {
            bits_required(0, (*max_len).min(i64::MAX as usize) as i64) as usize
        }
        Kind::F32 => 32,
        Kind::CompressedFloat(c) => c.width() as usize,
        Kind::CompressedVector(c) => 3 * c.width() as usize,
        Kind::Quaternion(q) => q.width() as usize,
        Kind::Str { max_len } => {
            bits_required(0, (*max_len).min(i64::MAX as usize) as i64) as usize
        }
        Kind::Bytes { len } => len.saturating_mul(8),
        Kind::BitRun { table, .. } => crate::bit_run::min_bits(table),
        Kind::Align | Kind::End => 0,
        Kind::Check(_) => 32,
        Kind::ObjectIndex { .. } | Kind::IntRelative { .. } | Kind::Sparse { .. } => 1,
        Kind::Enum(e) => bits_required(enums[*e].min, enums[*e].max) as usize,
        Kind::Struct(s) => structs[*s].min_bits,
        Kind::Union(u) => unions
            .get(*u)
            .and_then(|d| d.as_ref())
            .map_or(1, |d| d.min_bits),
        Kind::Array { max_len, .. } => {
            bits_required(0, (*max_len).min(i64::MAX as usize) as i64) as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::line_col;

    #[test]
    fn lines_and_columns_count_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
