//! The `[batch]` half of the export: a second protocol (`NAME_batch`) for the byte-aligned
//! message batches, with one Lua function per batch struct calling `batch.lua`'s primitives.
//!
//! Each batch field kind is one arm of [`Gen::node_of`] and one arm of [`Gen::call`], beside the
//! interpreter's arm in `schema/batch.rs`.

use super::lua::{Registry, Spec, Tables, WiresharkError, lua_str, segment};
use crate::batch::schema::{BKind, BatchSchema, Check, Prim};
use std::collections::HashMap;
use std::fmt::Write as _;

pub(super) struct Output {
    pub prelude: String,
    pub code: String,
}

const EXPERTS: &[(&str, &str, &str)] = &[
    ("past_end", "MALFORMED", "read past the end of the message"),
    ("out_of_range", "MALFORMED", "value out of range"),
    (
        "invalid_varint",
        "MALFORMED",
        "varint longer than 10 bytes or over 64 bits",
    ),
    ("invalid_utf8", "MALFORMED", "string is not UTF-8"),
    (
        "batch_length",
        "MALFORMED",
        "batch length does not match the datagram",
    ),
    (
        "body_length",
        "MALFORMED",
        "message body runs past the batch",
    ),
    (
        "trailing_body",
        "MALFORMED",
        "bytes left unread in a message body",
    ),
];

pub(super) fn generate(
    b: &BatchSchema,
    name: &str,
    ports: &[u16],
) -> Result<Output, WiresharkError> {
    let proto = format!("{name}_batch");
    let mut g = Gen {
        b,
        reg: Registry::new(&proto, "BF"),
        tables: Tables::new("B"),
        field_lists: HashMap::new(),
        functions: HashMap::new(),
        code: Vec::new(),
    };
    // The dissector's own fields (key in BX, filter name, display name, constructor).
    let metas = [
        (
            "status",
            "status",
            "status",
            "ProtoField.string(ABBR, NAME)",
        ),
        ("error", "error", "error", "ProtoField.string(ABBR, NAME)"),
        (
            "message",
            "message",
            "message",
            "ProtoField.string(ABBR, NAME)",
        ),
        ("header", "header", "header", "ProtoField.none(ABBR, NAME)"),
        (
            "type",
            "header.type",
            "type",
            "ProtoField.uint32(ABBR, NAME, base.DEC)",
        ),
        (
            "stage",
            "header.stage",
            "stage",
            "ProtoField.uint32(ABBR, NAME, base.DEC)",
        ),
        (
            "len",
            "header.len",
            "len",
            "ProtoField.uint32(ABBR, NAME, base.DEC)",
        ),
        (
            "batch_len",
            "batch_len",
            "batch_len",
            "ProtoField.uint32(ABBR, NAME, base.DEC)",
        ),
        ("body", "body", "body", "ProtoField.bytes(ABBR, NAME)"),
        (
            "missing",
            "missing",
            "unread",
            "ProtoField.none(ABBR, NAME)",
        ),
    ];
    let mut meta = Vec::new();
    for (key, path, label, ctor) in metas {
        meta.push((key, g.reg.field(path, label, Spec::Meta(ctor))?));
    }
    let mut messages = Vec::new();
    for m in &b.messages {
        let node = g.fields(m.body, "")?;
        let body = g.function(m.body);
        messages.push(format!(
            "[{}] = {{ name = {}, body = BS[{}], node = {node} }}",
            m.message_type,
            lua_str(m.name),
            body + 1
        ));
    }

    let prelude = format!(
        "\nlocal BPROTO = Proto({}, {})\nlocal BX, BF, BEXPERT, BATCH = {{}}, {{}}, {{}}, {{}}\n",
        lua_str(&proto),
        lua_str(&format!("{name} message batches (bitlens schema)"))
    );
    let mut code = String::from("\n-- ---- batch fields ----\n");
    code.push_str(&g.reg.emit("BPROTO", "WIDE"));
    for (key, id) in &meta {
        let _ = writeln!(code, "BX.{key} = {}", g.reg.expr(*id));
    }
    let mut experts = Vec::new();
    for (kind, group, summary) in EXPERTS {
        let _ = writeln!(
            code,
            "BEXPERT.{kind} = ProtoExpert.new({}, {}, expert.group.{group}, expert.severity.ERROR)",
            lua_str(&format!("{proto}.expert.{kind}")),
            lua_str(summary)
        );
        experts.push(format!("BEXPERT.{kind}"));
    }
    let _ = writeln!(code, "BPROTO.experts = {{ {} }}", experts.join(", "));
    code.push_str("\nlocal BC, BN, BS = {}, {}, {}\n");
    for (i, c) in g.tables.consts.iter().enumerate() {
        let _ = writeln!(code, "BC[{}] = {c}", i + 1);
    }
    for (i, n) in g.tables.nodes.iter().enumerate() {
        let _ = writeln!(code, "BN[{}] = {n}", i + 1);
    }
    for (i, f) in g.code.iter().enumerate() {
        let _ = writeln!(code, "BS[{}] = {f}", i + 1);
    }
    let stages: Vec<String> = (0..=255u8)
        .filter_map(|s| b.stage_name(s).map(|n| format!("[{s}] = {}", lua_str(n))))
        .collect();
    let _ = writeln!(
        code,
        "\nBATCH.label = {}\nBATCH.stages = {{ {} }}\nBATCH.messages = {{\n  {}\n}}",
        lua_str(&proto),
        stages.join(", "),
        messages.join(",\n  ")
    );
    code.push_str("\nDissectorTable.get(\"udp.port\"):add_for_decode_as(BPROTO)\nBPROTO.dissector = dissect_batch\n");
    if ports.is_empty() {
        code.push_str("BPROTO:register_heuristic(\"udp\", heuristic_batch)\n");
    } else {
        for port in ports {
            let _ = writeln!(code, "DissectorTable.get(\"udp.port\"):add({port}, BPROTO)");
        }
    }
    Ok(Output { prelude, code })
}

struct Gen<'b> {
    b: &'b BatchSchema,
    reg: Registry,
    tables: Tables,
    field_lists: HashMap<(usize, String), String>,
    functions: HashMap<usize, usize>,
    code: Vec<String>,
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        segment(name)
    } else if name.is_empty() {
        path.to_owned()
    } else {
        format!("{path}.{}", segment(name))
    }
}

fn prim_name(p: Prim) -> &'static str {
    match p {
        Prim::Bool => "bool",
        Prim::U8 => "u8",
        Prim::U16 => "u16",
        Prim::U32 => "u32",
        Prim::U64 => "u64",
        Prim::I8 => "i8",
        Prim::I16 => "i16",
        Prim::I32 => "i32",
        Prim::I64 => "i64",
        Prim::F32 => "f32",
        Prim::F64 => "f64",
    }
}

fn prim_spec(p: Prim) -> Spec {
    let int = |min: i128, max: i128| Spec::Int {
        min,
        max,
        names: None,
    };
    match p {
        Prim::Bool => Spec::Bool,
        Prim::U8 => int(0, u8::MAX.into()),
        Prim::U16 => int(0, u16::MAX.into()),
        Prim::U32 => int(0, u32::MAX.into()),
        Prim::U64 => Spec::U64,
        Prim::I8 => int(i8::MIN.into(), i8::MAX.into()),
        Prim::I16 => int(i16::MIN.into(), i16::MAX.into()),
        Prim::I32 => int(i32::MIN.into(), i32::MAX.into()),
        Prim::I64 => int(i64::MIN.into(), i64::MAX.into()),
        Prim::F32 => Spec::F32,
        Prim::F64 => Spec::F64,
    }
}

fn count_spec(max: usize) -> Spec {
    Spec::Int {
        min: 0,
        max: max as i128,
        names: None,
    }
}

/// A bound in Lua: a number below 2^53, else a UInt64.
fn bound(v: u64) -> String {
    if v < 1 << 53 {
        v.to_string()
    } else {
        format!("UInt64({}, {})", v & 0xFFFF_FFFF, v >> 32)
    }
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

    fn fields(&mut self, sid: usize, path: &str) -> Result<String, WiresharkError> {
        if let Some(n) = self.field_lists.get(&(sid, path.to_owned())) {
            return Ok(n.clone());
        }
        let b = self.b;
        let mut items = Vec::new();
        for f in &b.structs[sid].fields {
            items.push(self.node_of(&f.kind, &join(path, f.name), f.name)?);
        }
        let n = self.node(format!("{{ {} }}", items.join(", ")));
        self.field_lists.insert((sid, path.to_owned()), n.clone());
        Ok(n)
    }

    /// The ProtoFields of one batch field of `kind` at `path`.
    fn node_of(&mut self, kind: &BKind, path: &str, name: &str) -> Result<String, WiresharkError> {
        let at = |part: &str| format!("{path}.{part}");
        Ok(match kind {
            BKind::Prim(p, _) => self.pf(path, name, prim_spec(*p))?,
            // A signed varint's field holds the value it codes, which a packed_i32 reader may
            // find outside i32 (then refuses).
            BKind::Packed { signed: true, .. } => self.pf(path, name, prim_spec(Prim::I64))?,
            BKind::Packed { wide: true, .. } => self.pf(path, name, Spec::U64)?,
            BKind::Packed { wide: false, .. } => {
                self.pf(path, name, count_spec(u32::MAX as usize))?
            }
            BKind::Str { max_len } => {
                let pf = self.pf(path, name, Spec::Str)?;
                let len = self.pf(&at("len"), name, count_spec(*max_len))?;
                self.node(format!("{{ pf = {pf}, len = {len} }}"))
            }
            BKind::ByteVec { max_len } => {
                let pf = self.pf(path, name, Spec::Bytes)?;
                let len = self.pf(&at("len"), name, count_spec(*max_len))?;
                self.node(format!("{{ pf = {pf}, len = {len} }}"))
            }
            BKind::Bytes { .. } | BKind::Pod { .. } | BKind::PodStruct { .. } => {
                self.pf(path, name, Spec::Bytes)?
            }
            BKind::Struct(sid) => {
                let f = self.fields(*sid, path)?;
                let pf = self.pf(path, name, Spec::Scope)?;
                self.node(format!("{{ pf = {pf}, f = {f} }}"))
            }
            BKind::Array {
                max_len, element, ..
            } => {
                let e = self.node_of(element, path, name)?;
                let pf = self.pf(path, name, Spec::Scope)?;
                let len = self.pf(&at("len"), name, count_spec(*max_len))?;
                self.node(format!("{{ pf = {pf}, len = {len}, e = {e} }}"))
            }
        })
    }

    fn function(&mut self, sid: usize) -> usize {
        if let Some(&i) = self.functions.get(&sid) {
            return i;
        }
        let i = self.code.len();
        self.functions.insert(sid, i);
        self.code.push(String::new());
        let b = self.b;
        let fields = &b.structs[sid].fields;
        let guarded: Vec<usize> = fields.iter().filter_map(|f| f.guard.map(|g| g.0)).collect();
        let mut body = String::from("function(B, F)\n");
        if !guarded.is_empty() {
            body.push_str("  local v = {}\n");
        }
        for (k, f) in fields.iter().enumerate() {
            let name = lua_str(f.name);
            let call = self.call(&f.kind, &format!("F[{}]", k + 1), &name, &name);
            let stmt = if guarded.contains(&k) {
                format!("v[{}] = {call}", k + 1)
            } else {
                call
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

    /// The range check of an integer field, as a Lua constant (`nil` for none).
    fn check(&mut self, check: Check) -> String {
        match check {
            Check::None => "nil".into(),
            Check::Range { min, max } => self.constant(format!(
                "{{ min = {}, max = {}, mint = \"{min}\", maxt = \"{max}\" }}",
                bound(min),
                bound(max)
            )),
            Check::Abs(max) => self.constant(format!(
                "{{ abs = true, max = {}, maxt = \"{max}\" }}",
                bound(max)
            )),
        }
    }

    /// The fields of a pod struct, for the checks made when its bytes are read again.
    fn pod_fields(&mut self, sid: usize) -> String {
        let b = self.b;
        let mut items = Vec::new();
        for f in &b.structs[sid].fields {
            let name = lua_str(f.name);
            items.push(match &f.kind {
                BKind::Prim(p, c) => format!(
                    "{{ kind = \"prim\", name = {name}, p = \"{}\", k = {}, size = {} }}",
                    prim_name(*p),
                    self.check(*c),
                    p.size()
                ),
                BKind::Pod { element, len, check } => format!(
                    "{{ kind = \"pod\", name = {name}, p = \"{}\", len = {len}, k = {}, size = {} }}",
                    prim_name(*element),
                    self.check(*check),
                    element.size() * len
                ),
                BKind::PodStruct { sid, size } => format!(
                    "{{ kind = \"struct\", name = {name}, fields = {}, size = {size} }}",
                    self.pod_fields(*sid)
                ),
                BKind::Bytes { len } => format!("{{ kind = \"bytes\", name = {name}, size = {len} }}"),
                // `pod_size` refused every other kind when the schema loaded.
                _ => "{ kind = \"bytes\", size = 0 }".into(),
            });
        }
        self.constant(format!("{{ {} }}", items.join(", ")))
    }

    /// The runtime call reading one batch value of `kind` with ProtoFields `node`, named
    /// `name`, whose range errors name `err` (both Lua expressions).
    fn call(&mut self, kind: &BKind, node: &str, name: &str, err: &str) -> String {
        match kind {
            BKind::Prim(p, c) => {
                let k = self.check(*c);
                format!(
                    "bprim(B, {node}, {name}, \"{}\", {k}, {err})",
                    prim_name(*p)
                )
            }
            BKind::Packed {
                signed,
                wide,
                check,
            } => {
                let k = self.check(*check);
                let t = match (signed, wide) {
                    (false, false) => "u32",
                    (false, true) => "u64",
                    (true, false) => "i32",
                    (true, true) => "i64",
                };
                format!("bpacked(B, {node}, {name}, \"{t}\", {k}, {err})")
            }
            BKind::Str { max_len } => format!("bstring(B, {node}, {name}, {max_len})"),
            BKind::Bytes { len } => format!("bslice(B, {node}, {name}, {len}, false)"),
            BKind::ByteVec { max_len } => format!("bbytevec(B, {node}, {name}, {max_len})"),
            BKind::Pod {
                element,
                len,
                check,
            } => {
                let k = self.check(*check);
                format!(
                    "bpod(B, {node}, {name}, \"{}\", {len}, {k}, {err})",
                    prim_name(*element)
                )
            }
            BKind::PodStruct { sid, size } => {
                let fields = self.pod_fields(*sid);
                format!("bpodstruct(B, {node}, {name}, {size}, {fields})")
            }
            BKind::Struct(sid) => {
                let s = self.function(*sid);
                format!("bstruct(B, {node}, {name}, BS[{}])", s + 1)
            }
            BKind::Array {
                max_len,
                unit,
                element,
            } => {
                // Elements read with an empty name (label "[i]"); their range errors name the
                // array (schema/batch.rs passes the array's name as `err`).
                let read = self.call(element, "N", "\"\"", "err");
                let e = self.constant(format!("function(B, N, err) return {read} end"));
                format!("barray(B, {node}, {name}, {max_len}, {unit}, {e})")
            }
        }
    }
}
