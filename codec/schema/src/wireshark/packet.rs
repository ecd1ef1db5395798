//! The bit-packed half of the export: a `ProtoField` tree per packet type and one Lua function
//! per struct, calling `packet.lua`'s primitives in field order with the constants of each field.
//!
//! Each field kind is one arm of [`Gen::node_of`] (the `ProtoField`s it shows) and one arm of
//! [`Gen::call`] (the runtime call that reads it), beside the interpreter's own arm in
//! `schema/mod.rs`.

use super::lua::{Registry, Spec, Tables, WiresharkError, lua_num, lua_str, segment};
use crate::defs::{Field, Kind, Prev, element_previous};
use crate::schema::Schema;
use bitlens_codec::bits::{bits_required, bits_required128};
use bitlens_codec::checksum::{check_hash, packet_crc};
use bitlens_codec::quantize::{CompressedFloat, SmallestThree};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// The generated Lua: `prelude` goes before the runtime, `code` after it.
pub(super) struct Output {
    pub prelude: String,
    pub code: String,
}

/// The error kinds of the bit-packed reader, with the expert group and summary of each.
const EXPERTS: &[(&str, &str, &str)] = &[
    ("past_end", "MALFORMED", "read past the end of the datagram"),
    ("out_of_range", "MALFORMED", "value out of range"),
    ("nonzero_padding", "MALFORMED", "non-zero alignment padding"),
    (
        "check_mismatch",
        "PROTOCOL",
        "check marker mismatch (reader and writer desynced)",
    ),
    ("crc_mismatch", "CHECKSUM", "CRC32 mismatch"),
    ("invalid_utf8", "MALFORMED", "string is not UTF-8"),
    (
        "trailing_data",
        "MALFORMED",
        "data after the end of the packet",
    ),
    ("too_long", "MALFORMED", "datagram longer than the MTU"),
    ("invalid_utf16", "MALFORMED", "wide string is not UTF-16"),
    (
        "interior_nul",
        "MALFORMED",
        "NUL character inside a string or wide string",
    ),
    (
        "invalid_argument",
        "MALFORMED",
        "a relative integer after a previous value that is not an i32",
    ),
];

/// Integers whose range lies within ±2^51 are read as Lua numbers (exact below 2^53, with room
/// for min + raw of an out-of-range value); wider ones as Int64.
const SMALL: i64 = 1 << 51;

pub(super) fn generate(
    schema: &Schema,
    name: &str,
    ports: &[u16],
) -> Result<Output, WiresharkError> {
    let mut g = Gen {
        schema,
        reg: Registry::new(name, "PF"),
        tables: Tables::new(""),
        field_lists: HashMap::new(),
        functions: HashMap::new(),
        code: Vec::new(),
    };
    // The dissector's own fields first: they keep their names.
    let metas = [
        ("status", "status", "ProtoField.string(ABBR, NAME)"),
        ("packet", "packet type", "ProtoField.string(ABBR, NAME)"),
        ("error", "error", "ProtoField.string(ABBR, NAME)"),
        ("desync", "desync", "ProtoField.string(ABBR, NAME)"),
        ("check", "check", "ProtoField.string(ABBR, NAME)"),
        ("crc32", "crc32", "ProtoField.uint32(ABBR, NAME, base.HEX)"),
        (
            "padding",
            "padding",
            "ProtoField.uint32(ABBR, NAME, base.HEX)",
        ),
        ("partial", "unfinished", "ProtoField.none(ABBR, NAME)"),
    ];
    let mut meta_ids = Vec::new();
    for (path, label, ctor) in metas {
        meta_ids.push(g.reg.field(path, label, Spec::Meta(ctor))?);
    }
    let p = &schema.protocol;
    let types = p.packet_types.len();
    let ptype = if types > 1 {
        let names = p
            .packet_types
            .iter()
            .enumerate()
            .map(|(i, n)| (i as i64, n.clone()))
            .collect();
        let spec = Spec::Int {
            min: 0,
            max: types as i128 - 1,
            names: Some(names),
        };
        Some(g.reg.field("packet_type", "packet_type", spec)?)
    } else {
        None
    };
    let mut bodies = Vec::new();
    let mut roots = Vec::new();
    for &sid in &schema.packets {
        roots.push(g.fields(sid, "")?);
        bodies.push(g.function(sid));
    }

    let mut prelude = String::new();
    let _ = writeln!(
        prelude,
        "\nlocal PROTO = Proto({}, {})",
        lua_str(name),
        lua_str(&format!("{} (bitlens schema)", p.name))
    );
    let _ = writeln!(
        prelude,
        "local X, PF, EXPERT, FRAME = {{}}, {{}}, {{}}, {{}}\n\
         -- 1/sqrt(2) as an f32, and twice it (quantize.rs SmallestThree).\n\
         local SL, SL2 = {}, {}",
        lua_num(f64::from(std::f32::consts::FRAC_1_SQRT_2)),
        lua_num(f64::from(2.0f32 * std::f32::consts::FRAC_1_SQRT_2)),
    );

    let mut code = String::from("\n-- ---- fields ----\n");
    code.push_str(&g.reg.emit("PROTO", "WIDE"));
    for (key, id) in [
        "pad", "check", "crc", "partial", "status", "packet", "error", "desync",
    ]
    .iter()
    .zip([6, 4, 5, 7, 0, 1, 2, 3])
    {
        let _ = writeln!(code, "X.{key} = {}", g.reg.expr(meta_ids[id]));
    }
    let mut experts = Vec::new();
    for (kind, group, summary) in EXPERTS {
        let _ = writeln!(
            code,
            "EXPERT.{kind} = ProtoExpert.new({}, {}, expert.group.{group}, expert.severity.ERROR)",
            lua_str(&format!("{name}.expert.{kind}")),
            lua_str(summary)
        );
        experts.push(format!("EXPERT.{kind}"));
    }
    let _ = writeln!(code, "PROTO.experts = {{ {} }}", experts.join(", "));

    code.push_str(
        "\n-- ---- constants: compressed floats, quaternions, enums, wide ints, readers ----\n",
    );
    code.push_str("local C, N, S = {}, {}, {}\n");
    for (i, c) in g.tables.consts.iter().enumerate() {
        let _ = writeln!(code, "C[{}] = {c}", i + 1);
    }
    code.push_str("\n-- ---- field trees: the ProtoFields of each field, by path ----\n");
    for (i, n) in g.tables.nodes.iter().enumerate() {
        let _ = writeln!(code, "N[{}] = {n}", i + 1);
    }
    code.push_str("\n-- ---- structs: one function each, reading its fields in order ----\n");
    for (i, f) in g.code.iter().enumerate() {
        let _ = writeln!(code, "S[{}] = {f}", i + 1);
    }

    // The CRC of the id and a zeroed CRC field: the dissector continues it over the rest.
    let crc0 = packet_crc(p.id, &[0; 4]);
    let names: Vec<String> = p
        .packet_types
        .iter()
        .enumerate()
        .map(|(i, n)| format!("[{i}] = {}", lua_str(n)))
        .collect();
    let _ = writeln!(
        code,
        "\n-- ---- framing ----\n\
         FRAME.label = {}\nFRAME.mtu = {}\nFRAME.crc0 = 0x{crc0:08X}\nFRAME.ntypes = {types}\n\
         FRAME.type_w = {}\nFRAME.names = {{ {} }}\nFRAME.ptype = {}\n\
         FRAME.body = {{ {} }}\nFRAME.root = {{ {} }}",
        lua_str(&p.name),
        p.mtu,
        bits_required(0, types as i64 - 1),
        names.join(", "),
        ptype.map_or("false".into(), |id| g.reg.expr(id)),
        bodies
            .iter()
            .map(|b| format!("S[{}]", b + 1))
            .collect::<Vec<_>>()
            .join(", "),
        roots.join(", "),
    );
    code.push_str("\nDissectorTable.get(\"udp.port\"):add_for_decode_as(PROTO)\n");
    if ports.is_empty() {
        let _ = writeln!(
            code,
            "PROTO.dissector = dissect_packet\n\
             PROTO:register_heuristic(\"udp\", heuristic_packet)"
        );
    } else {
        code.push_str("PROTO.dissector = dissect_packet\n");
        for port in ports {
            let _ = writeln!(code, "DissectorTable.get(\"udp.port\"):add({port}, PROTO)");
        }
    }
    Ok(Output { prelude, code })
}

struct Gen<'s> {
    schema: &'s Schema,
    reg: Registry,
    tables: Tables,
    /// The field list node of each (struct, path).
    field_lists: HashMap<(usize, String), String>,
    /// The `S[i]` function of each struct.
    functions: HashMap<usize, usize>,
    code: Vec<String>,
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        segment(name)
    } else {
        format!("{path}.{}", segment(name))
    }
}

fn int_spec(min: i64, max: i64) -> Spec {
    Spec::Int {
        min: min.into(),
        max: max.into(),
        names: None,
    }
}

fn is_small(min: i64, max: i64) -> bool {
    min > -SMALL && max < SMALL
}

/// Refuses to export a `bit_run` (named `name`) whose count is picked by a field (slot `by`)
/// whose values a Lua number may not hold exactly: the dissector takes that value modulo the
/// table's length, which must be exact. Returns 0 (the run has no `prev_min`).
fn exact_pick(name: &str, by: usize, fields: &[Field]) -> Result<i64, WiresharkError> {
    let kind = fields.iter().find(|f| f.slot == Some(by)).map(|f| &f.kind);
    match kind {
        Some(Kind::Int { min, max }) if is_small(*min, *max) => Ok(0),
        Some(Kind::Bits(n)) if *n <= 32 => Ok(0),
        _ => Err(WiresharkError(format!(
            "bit_run \"{name}\" takes its length from a field of more than 51 bits, which the Lua dissector cannot take modulo its table exactly (pick the length by an int within ±2^51 or bits of at most 32)"
        ))),
    }
}

/// The range of a relative index or integer's value, for its field's type: at least previous + 1.
fn relative_min(prev: Prev, fields: &[Field]) -> i64 {
    let lowest = match prev {
        Prev::Const(c) => c,
        Prev::Slot(s) => match fields.iter().find(|f| f.slot == Some(s)).map(|f| &f.kind) {
            Some(Kind::Int { min, .. }) => *min,
            _ => i64::from(i32::MIN),
        },
    };
    lowest.saturating_add(1).min(0)
}

impl Gen<'_> {
    fn node(&mut self, lua: String) -> String {
        self.tables.node(lua)
    }

    fn pf(&mut self, path: &str, name: &str, spec: Spec) -> Result<String, WiresharkError> {
        let id = self.reg.field(path, name, spec)?;
        Ok(self.reg.expr(id))
    }

    fn constant(&mut self, lua: String) -> String {
        self.tables.constant(lua)
    }

    /// The field list node (`F` of the struct's function) of struct `sid` at `path`.
    fn fields(&mut self, sid: usize, path: &str) -> Result<String, WiresharkError> {
        if let Some(n) = self.field_lists.get(&(sid, path.to_owned())) {
            return Ok(n.clone());
        }
        let schema = self.schema;
        let sd = &schema.structs[sid];
        let mut items = Vec::with_capacity(sd.fields.len());
        for f in &sd.fields {
            let prev_min = match &f.kind {
                Kind::ObjectIndex { previous, .. } | Kind::IntRelative { previous } => {
                    relative_min(*previous, &sd.fields)
                }
                Kind::BitRun { by, .. } => exact_pick(&f.name, *by, &sd.fields)?,
                _ => 0,
            };
            items.push(self.node_of(&f.kind, &join(path, &f.name), &f.name, prev_min)?);
        }
        let n = self.node(format!("{{ {} }}", items.join(", ")));
        self.field_lists.insert((sid, path.to_owned()), n.clone());
        Ok(n)
    }

    /// The ProtoFields of one field of `kind` at `path`, as a Lua expression: a field, a table
    /// of them for a field with parts, or `false` for a field that shows none.
    fn node_of(
        &mut self,
        kind: &Kind,
        path: &str,
        name: &str,
        prev_min: i64,
    ) -> Result<String, WiresharkError> {
        let schema = self.schema;
        let at = |part: &str| format!("{path}.{}", segment(part));
        Ok(match kind {
            // A tagged union: its tag (named by the variants), then each variant's body fields,
            // all at the union's path (a variant has no scope of its own).
            Kind::Union(u) => {
                let def = &schema.unions[*u];
                let names = def
                    .variants
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as i64, v.name.to_string()))
                    .collect();
                let spec = Spec::Int {
                    min: 0,
                    max: def.variants.len() as i128 - 1,
                    names: Some(names),
                };
                let tag = self.pf(&at(&def.tag), &def.tag, spec)?;
                let mut bodies = Vec::with_capacity(def.variants.len());
                for v in &def.variants {
                    bodies.push(match v.body {
                        Some(sid) => self.fields(sid, path)?,
                        None => "false".into(),
                    });
                }
                let pf = self.pf(path, name, Spec::Scope)?;
                self.node(format!(
                    "{{ pf = {pf}, tag = {tag}, v = {{ {} }} }}",
                    bodies.join(", ")
                ))
            }
            Kind::Bool => self.pf(path, name, Spec::Bool)?,
            Kind::Int { min, max } => self.pf(path, name, int_spec(*min, *max))?,
            Kind::Enum(e) => {
                let def = &schema.enums[*e];
                let names = def
                    .values
                    .iter()
                    .map(|(v, n)| (*v, n.to_string()))
                    .collect();
                let spec = Spec::Int {
                    min: def.min.into(),
                    max: def.max.into(),
                    names: Some(names),
                };
                self.pf(path, name, spec)?
            }
            // Within i64 an int128 is an int; wider, its value is decimal text.
            Kind::Int128 { min, max } => match (i64::try_from(*min), i64::try_from(*max)) {
                (Ok(min), Ok(max)) => self.pf(path, name, int_spec(min, max))?,
                _ => self.pf(path, name, Spec::Str)?,
            },
            Kind::U128 => self.pf(path, name, Spec::Str)?,
            Kind::Fixed(_) => self.pf(path, name, Spec::F64)?,
            Kind::WStr { max_len } => {
                // The code units first: they keep the name `NAME.utf16` (their scope does not).
                let unit = self.pf(&at("utf16"), "utf16", int_spec(0, i64::from(u16::MAX)))?;
                let utf16 = self.pf(&at("utf16"), "utf16", Spec::Scope)?;
                let pf = self.pf(path, name, Spec::Str)?;
                let len = self.pf(&at("len"), "len", int_spec(0, count_max(*max_len)))?;
                self.node(format!(
                    "{{ pf = {pf}, len = {len}, utf16 = {utf16}, unit = {unit} }}"
                ))
            }
            Kind::Bits(64) | Kind::U64 => self.pf(path, name, Spec::U64)?,
            Kind::Bits(n) => self.pf(path, name, int_spec(0, (1i64 << n) - 1))?,
            Kind::F32 | Kind::CompressedFloat(_) => self.pf(path, name, Spec::F32)?,
            Kind::F64 => self.pf(path, name, Spec::F64)?,
            Kind::CompressedVector(_) => {
                let pf = self.pf(path, name, Spec::Scope)?;
                let x = self.pf(&at("x"), "x", Spec::F32)?;
                let y = self.pf(&at("y"), "y", Spec::F32)?;
                let z = self.pf(&at("z"), "z", Spec::F32)?;
                self.node(format!("{{ pf = {pf}, x = {x}, y = {y}, z = {z} }}"))
            }
            Kind::Quaternion(q) => {
                let pf = self.pf(path, name, Spec::Scope)?;
                let largest = self.pf(&at("largest"), "largest", int_spec(0, 3))?;
                let max = i64::from(q.max_code());
                let a = self.pf(&at("a"), "a", int_spec(0, max))?;
                let b = self.pf(&at("b"), "b", int_spec(0, max))?;
                let c = self.pf(&at("c"), "c", int_spec(0, max))?;
                self.node(format!(
                    "{{ pf = {pf}, largest = {largest}, a = {a}, b = {b}, c = {c} }}"
                ))
            }
            Kind::Str { max_len } => {
                let pf = self.pf(path, name, Spec::Str)?;
                let len = self.pf(&at("len"), "len", int_spec(0, count_max(*max_len)))?;
                let utf8 = self.pf(&at("utf8"), "utf8", Spec::Bytes)?;
                self.node(format!("{{ pf = {pf}, len = {len}, utf8 = {utf8} }}"))
            }
            Kind::Bytes { .. } => self.pf(path, name, Spec::Bytes)?,
            Kind::BitRun { .. } => {
                // The groups first: they keep the field's name, as an array's elements do.
                let e = self.pf(path, name, int_spec(0, i64::from(u32::MAX)))?;
                let pf = self.pf(path, name, Spec::Scope)?;
                self.node(format!("{{ pf = {pf}, e = {e} }}"))
            }
            Kind::Align | Kind::Check(_) | Kind::End => "false".into(),
            Kind::ObjectIndex { max_objects, .. } => {
                self.relative_node(path, name, prev_min, *max_objects, false)?
            }
            Kind::IntRelative { .. } => {
                self.relative_node(path, name, prev_min, i64::from(u32::MAX), true)?
            }
            Kind::Struct(sid) => {
                let f = self.fields(*sid, path)?;
                let pf = self.pf(path, name, Spec::Scope)?;
                self.node(format!("{{ pf = {pf}, f = {f} }}"))
            }
            Kind::Array {
                max_len, element, ..
            } => {
                // The elements first: they keep the array's name when the two kinds differ.
                let prev_min = relative_min(Prev::Const(element_previous(element)), &[]);
                let e = self.node_of(element, path, name, prev_min)?;
                let pf = self.pf(path, name, Spec::Scope)?;
                let len = self.pf(&at("len"), "len", int_spec(0, count_max(*max_len)))?;
                self.node(format!("{{ pf = {pf}, len = {len}, e = {e} }}"))
            }
            Kind::Sparse {
                max_objects,
                element,
                layout,
            } => {
                let f = self.fields(*element, path)?;
                let pf = self.pf(path, name, Spec::Scope)?;
                let index =
                    self.relative_node(&at(&layout[0]), &layout[0], 0, *max_objects, false)?;
                self.node(format!("{{ pf = {pf}, index = {index}, f = {f} }}"))
            }
        })
    }

    /// A relative object index (`max` = max_objects) or relative integer: the value and its
    /// flags, `d` and (integers) the absolute `value`.
    fn relative_node(
        &mut self,
        path: &str,
        name: &str,
        min: i64,
        max: i64,
        integer: bool,
    ) -> Result<String, WiresharkError> {
        let at = |part: &str| format!("{path}.{}", segment(part));
        let pf = self.pf(path, name, int_spec(min, max))?;
        let d1 = self.pf(&at("d=1"), "d=1", Spec::Bool)?;
        let tiers: &[i64] = if integer {
            &[6, 23, 280, 4377, 69914]
        } else {
            &[5, 13, 29, 61, 125]
        };
        let mut t = Vec::new();
        for hi in tiers {
            let flag = format!("d<={hi}");
            t.push(self.pf(&at(&flag), &flag, Spec::Bool)?);
        }
        let d_max = if integer {
            69914
        } else {
            max.saturating_add(1).max(125)
        };
        let d = self.pf(&at("d"), "d", int_spec(2, d_max))?;
        let value = if integer {
            let v = self.pf(&at("value"), "value", int_spec(0, i64::from(u32::MAX)))?;
            format!(", value = {v}")
        } else {
            String::new()
        };
        Ok(self.node(format!(
            "{{ pf = {pf}, d1 = {d1}, t = {{ {} }}, d = {d}{value} }}",
            t.join(", ")
        )))
    }

    /// The index of struct `sid`'s function in `S`, generating it (and those it calls) once.
    fn function(&mut self, sid: usize) -> usize {
        if let Some(&i) = self.functions.get(&sid) {
            return i;
        }
        let i = self.code.len();
        self.functions.insert(sid, i);
        self.code.push(String::new());
        let schema = self.schema;
        let sd = &schema.structs[sid];
        // Slots that a guard or a `previous` reads back.
        let mut refs = BTreeSet::new();
        for f in &sd.fields {
            if let Some((g, _)) = f.guard {
                refs.insert(g);
            }
            if let Kind::ObjectIndex {
                previous: Prev::Slot(p),
                ..
            }
            | Kind::IntRelative {
                previous: Prev::Slot(p),
            }
            | Kind::BitRun { by: p, .. } = f.kind
            {
                refs.insert(p);
            }
        }
        let mut body = String::from("function(R, F)\n");
        if !refs.is_empty() {
            body.push_str("  local v = {}\n");
        }
        for (k, f) in sd.fields.iter().enumerate() {
            let prev = match f.kind {
                Kind::ObjectIndex { previous, .. } | Kind::IntRelative { previous } => {
                    match previous {
                        Prev::Const(c) => c.to_string(),
                        Prev::Slot(p) => format!("num(v[{}])", p + 1),
                    }
                }
                _ => "-1".into(),
            };
            let name = match &f.kind {
                Kind::Check(label) => label.clone(),
                Kind::End => "end".into(),
                _ => f.name.to_string(),
            };
            let call = self.call(&f.kind, &format!("F[{}]", k + 1), &lua_str(&name), &prev);
            let stmt = match f.slot {
                Some(s) if refs.contains(&s) => format!("v[{}] = {call}", s + 1),
                _ => call,
            };
            match f.guard {
                Some((g, when)) => {
                    let _ = writeln!(body, "  if v[{}] == {when} then {stmt} end", g + 1);
                }
                None => {
                    let _ = writeln!(body, "  {stmt}");
                }
            }
        }
        body.push_str("end");
        self.code[i] = body;
        i
    }

    /// The runtime call that reads one value of `kind` whose ProtoFields are `node`, named
    /// `name` (a Lua string), with `prev` the previous value of a relative index or integer.
    fn call(&mut self, kind: &Kind, node: &str, name: &str, prev: &str) -> String {
        let schema = self.schema;
        match kind {
            Kind::Union(u) => {
                let def = &schema.unions[*u];
                let last = def.variants.len() as i64 - 1;
                let names: Vec<String> = def
                    .variants
                    .iter()
                    .enumerate()
                    .map(|(i, v)| format!("[{i}] = {}", lua_str(&v.name)))
                    .collect();
                let names = self.constant(format!("{{ {} }}", names.join(", ")));
                // The variants' bodies by index into `S` (defined after the constants).
                let bodies: Vec<String> = def
                    .variants
                    .iter()
                    .map(|v| match v.body {
                        Some(sid) => (self.function(sid) + 1).to_string(),
                        None => "false".into(),
                    })
                    .collect();
                let c = self.constant(format!(
                    "{{ tag = {}, last = {last}, w = {}, names = {names}, bodies = {{ {} }} }}",
                    lua_str(&def.tag),
                    bits_required(0, last),
                    bodies.join(", ")
                ));
                format!("union(R, {node}, {name}, {c}, S)")
            }
            Kind::Bool => format!("rbool(R, {node}, {name})"),
            Kind::Int { min, max } => self.int_call(node, name, *min, *max, None),
            Kind::Enum(e) => {
                let def = &schema.enums[*e];
                let names: Vec<String> = def
                    .values
                    .iter()
                    .map(|(v, n)| format!("[{v}] = {}", lua_str(n)))
                    .collect();
                let names = self.constant(format!("{{ {} }}", names.join(", ")));
                self.int_call(node, name, def.min, def.max, Some(&names))
            }
            Kind::Bits(n) => {
                let max = (1u128 << n) - 1;
                format!("rbits(R, {node}, {name}, {n}, \"{max}\")")
            }
            Kind::U64 => format!("ru64(R, {node}, {name})"),
            Kind::Int128 { min, max } => match (i64::try_from(*min), i64::try_from(*max)) {
                // The same bits, checks and trace as an int over the same bounds.
                (Ok(min), Ok(max)) => self.int_call(node, name, min, max, None),
                _ => {
                    let w = self.wide(*min, *max);
                    format!("int128(R, {node}, {name}, {w})")
                }
            },
            Kind::U128 => format!("ru128(R, {node}, {name})"),
            Kind::Fixed(q) => {
                let w = self.wide(q.raw_min(), q.raw_max());
                let q = self.constant(format!("{{ f = {}, W = {w} }}", q.fraction_bits()));
                format!("fixed(R, {node}, {name}, {q})")
            }
            Kind::WStr { max_len } => {
                let len = self.count_reader(*max_len);
                format!("wstr(R, {node}, {name}, {len})")
            }
            Kind::F32 => format!("rf32(R, {node}, {name})"),
            Kind::F64 => format!("rf64(R, {node}, {name})"),
            Kind::CompressedFloat(c) => {
                let c = self.compressed(c);
                format!("cf(R, {node}, {name}, {c})")
            }
            Kind::CompressedVector(c) => {
                let c = self.compressed(c);
                format!("vec(R, {node}, {name}, {c})")
            }
            Kind::Quaternion(q) => {
                let q = self.quaternion(q);
                format!("quat(R, {node}, {name}, {q})")
            }
            Kind::Str { max_len } => {
                let len = self.count_reader(*max_len);
                format!("str(R, {node}, {name}, {len})")
            }
            Kind::Bytes { len } => format!("rbytes(R, {node}, {name}, {len})"),
            Kind::BitRun { by, table } => {
                let counts: Vec<String> = table.iter().map(u32::to_string).collect();
                let t = self.constant(format!("{{ {} }}", counts.join(", ")));
                format!("bitrun(R, {node}, {name}, v[{}], {t})", by + 1)
            }
            Kind::Align => format!("padding(R, {name})"),
            Kind::Check(label) => format!("check(R, {name}, 0x{:08X})", check_hash(label)),
            Kind::End => format!("finish(R, {name})"),
            Kind::ObjectIndex { max_objects, .. } => format!(
                "oidx(R, {node}, {name}, {prev}, {max_objects}, {})",
                top_width(*max_objects)
            ),
            Kind::IntRelative { .. } => format!("rel(R, {node}, {name}, {prev})"),
            Kind::Struct(sid) => {
                let s = self.function(*sid);
                format!("struct(R, {node}, {name}, S[{}])", s + 1)
            }
            Kind::Array {
                max_len,
                min_element_bits,
                element,
            } => {
                let len = self.count_reader(*max_len);
                // Array elements read with an empty name (their label is "[i]") and, for
                // relative elements, after their constant previous, as the interpreter's
                // `element` does.
                let prev = element_previous(element).to_string();
                let read = self.call(element, "N", "\"\"", &prev);
                let e = self.constant(format!("function(R, N) return {read} end"));
                let min_bits = (*min_element_bits).max(1);
                let min_bits = if min_bits < 1 << 50 {
                    min_bits.to_string()
                } else {
                    let m = min_bits as u64;
                    format!("UInt64({}, {})", m & 0xFFFF_FFFF, m >> 32)
                };
                format!("array(R, {node}, {name}, {len}, {min_bits}, {e})")
            }
            Kind::Sparse {
                max_objects,
                element,
                layout,
            } => {
                let s = self.function(*element);
                format!(
                    "sparse(R, {node}, {name}, {}, {max_objects}, {}, S[{}])",
                    lua_str(&layout[0]),
                    top_width(*max_objects),
                    s + 1
                )
            }
        }
    }

    fn int_call(
        &mut self,
        node: &str,
        name: &str,
        min: i64,
        max: i64,
        names: Option<&str>,
    ) -> String {
        let w = bits_required(min, max);
        let names = names.map_or(String::new(), |n| format!(", {n}"));
        if is_small(min, max) {
            return format!("int(R, {node}, {name}, {min}, {max}, {w}{names})");
        }
        let b = self.big(min, max);
        format!("int_big(R, {node}, {name}, {b}, {w}{names})")
    }

    /// The constant of a wide range: min's bits and the span as UInt64, both ends as text.
    fn big(&mut self, min: i64, max: i64) -> String {
        let u = min as u64;
        let span = (max as u64).wrapping_sub(min as u64);
        self.constant(format!(
            "{{ umin = UInt64({}, {}), span = UInt64({}, {}), min = \"{min}\", max = \"{max}\" }}",
            u & 0xFFFF_FFFF,
            u >> 32,
            span & 0xFFFF_FFFF,
            span >> 32
        ))
    }

    /// The constant of a 128-bit range for `int128` (packet.lua): its width, the span, min as
    /// limbs of its two's complement and of its magnitude, both ends as text.
    fn wide(&mut self, min: i128, max: i128) -> String {
        // Eight 16-bit limbs, least significant first, and a ninth (bits 128..144) of 0.
        let limbs = |v: u128| {
            let l: Vec<String> = (0..8)
                .map(|i| ((v >> (16 * i)) & 0xFFFF).to_string())
                .collect();
            format!("{{ {}, 0 }}", l.join(", "))
        };
        self.constant(format!(
            "{{ w = {}, span = {}, min = {}, neg = {}, mag = {}, mint = \"{min}\", maxt = \"{max}\" }}",
            bits_required128(min, max),
            limbs((max as u128).wrapping_sub(min as u128)),
            limbs(min as u128),
            min < 0,
            limbs(min.unsigned_abs()),
        ))
    }

    /// A reader of a count (`len`) in 0..=max: `function(R, pf, leaf)`.
    fn count_reader(&mut self, max: usize) -> String {
        let call = self.int_call("pf", "leaf", 0, count_max(max), None);
        self.constant(format!("function(R, pf, leaf) return {call} end"))
    }

    fn compressed(&mut self, c: &CompressedFloat) -> String {
        let m = c.steps();
        self.constant(format!(
            "{{ M = {m}, Mf = {}, w = {}, min = {}, delta = {}, rng = \", 0..={m}\" }}",
            lua_num(f64::from(m as f32)),
            c.width(),
            lua_num(f64::from(c.min())),
            lua_num(f64::from(c.delta())),
        ))
    }

    fn quaternion(&mut self, q: &SmallestThree) -> String {
        let max = q.max_code();
        self.constant(format!(
            "{{ bits = {}, max = {max}, maxf = {} }}",
            q.bits(),
            lua_num(f64::from(max as f32))
        ))
    }
}

/// A count's largest value as the reader sends it (`max_len.min(i64::MAX)`).
fn count_max(max_len: usize) -> i64 {
    max_len.min(i64::MAX as usize) as i64
}

/// Bits of the last tier of a relative object index: `d` in 126..=max_objects + 1.
fn top_width(max_objects: i64) -> u32 {
    let top = max_objects.saturating_add(1);
    if top < 126 {
        0
    } else {
        bits_required(126, top)
    }
}
